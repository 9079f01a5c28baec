"""The errors srctrans raises.

Every error about the user's program is a [`SrcTransError`][srctrans.SrcTransError] that names
where the problem is (file and line), what construct it is, and what to do
instead. Errors about how the API was called (a wrong ``wrt``, a cotangent of
the wrong shape) are subclasses too, without a location.
"""


class SrcTransError(Exception):
    """Base class of every error srctrans raises on purpose.

    Args:
      message: what is wrong, in one sentence.
      location: a [`Location`][srctrans.errors.Location] in the user's source, or None.
      hint: what to do instead, or None.
    """

    def __init__(self, message, location=None, hint=None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._render())

    def _render(self):
        text = self.message
        if self.location is not None:
            text = f"{self.location}: {text}"
        if self.hint:
            text = f"{text}\n  hint: {self.hint}"
        return text


class Location:
    """A place in the user's source: file, line, and the function it is in."""

    __slots__ = ("filename", "lineno", "function")

    def __init__(self, filename, lineno, function=None):
        self.filename = filename
        self.lineno = lineno
        self.function = function

    def __str__(self):
        where = f"{self.filename}:{self.lineno}"
        if self.function:
            where = f"{where} (in {self.function})"
        return where


class UnsupportedSyntaxError(SrcTransError):
    """The function uses Python syntax srctrans cannot differentiate."""


class NoSourceError(SrcTransError):
    """A function srctrans must read has no Python source (a builtin, a lambda
    defined in an interactive session, a C extension)."""


class MissingRuleError(SrcTransError):
    """A call to a function that has neither a derivative rule nor Python source."""


class NonDifferentiableError(SrcTransError):
    """A value that cannot carry a gradient (an int, a bool) was selected."""


class ShapeError(SrcTransError):
    """A cotangent or tangent does not match the shape it stands for."""


class UnsupportedArrayError(SrcTransError):
    """A derivative that needs NumPy arrays was given an array of another library (a Dask or
    CuPy array): computing it would turn that array into a NumPy array."""


class UsageError(SrcTransError):
    """The srctrans API was called with arguments that make no sense."""


class CallError(UsageError, TypeError):
    """A derivative was called with arguments its function's signature does not take.

    Also a TypeError, the error calling the function itself raises.
    """


class InternalError(SrcTransError):
    """srctrans itself failed (a bug to report); ``internal`` holds the original exception.

    Set ``SRCTRANS_TRACEBACK=full`` to see the original exception and every frame instead.
    """

    internal = None

"""What every build runs under: recursion of the user's functions refused at the call,
headroom for the passes' own recursion over deep expressions, and errors put where the
user can find them.

Requires: the function being built, and the location of the call that asked for it (None
for a function differentiated itself).
Guarantees: :func:`building` raises :class:`UnsupportedSyntaxError` at ``location`` for a
build that re-enters one in progress (a recursive call), and raises the recursion limit for
the function's deepest expression while it runs; :func:`with_location` reports a callee
without source at its call site and a failure of srctrans itself as an ``InternalError``
at the function's definition.
"""

import contextlib
import sys

from srctrans.errors import NoSourceError, SrcTransError, UnsupportedSyntaxError
from srctrans.outputs import refuse_missing_return
from srctrans.parse.source import nesting_depth
from srctrans.reporting import definition, internal_failure

in_progress: set = set()      # the code objects of the functions being built now


def refuse_missing_return_here(fn, location):
    """A function differentiated itself (not called, ``location`` None) must return a value."""
    if location is None:
        with_location(refuse_missing_return, fn, None)


@contextlib.contextmanager
def building(fn, location):
    """While ``fn`` is being built: a call that re-enters its build is recursion (an error
    at ``location``), and the passes get recursion headroom for its deepest expression."""
    code = fn.__code__
    if code in in_progress:
        raise recursion_error(fn, location)
    in_progress.add(code)
    try:
        with _recursion_headroom(nesting_depth(fn)):
            yield
    finally:
        in_progress.discard(code)


def recursion_error(fn, location):
    return UnsupportedSyntaxError(
        f"recursive call of {fn.__qualname__} cannot be differentiated", location,
        "srctrans cannot differentiate recursion; compute the result without the function "
        "calling itself")


# Python frames the passes use per level of syntax-tree nesting, with a margin.
_FRAMES_PER_LEVEL = 10


@contextlib.contextmanager
def _recursion_headroom(depth):
    """Raise the recursion limit for a build whose trees nest ``depth`` deep."""
    old = sys.getrecursionlimit()
    needed = old + _FRAMES_PER_LEVEL * depth if depth * _FRAMES_PER_LEVEL > old // 2 else old
    if needed > old:
        sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        if needed > old and sys.getrecursionlimit() == needed:
            sys.setrecursionlimit(old)


def with_location(step, fn, location, *args):
    """``step(fn, *args)``; a callee without source is reported at its call site, and a
    failure of srctrans itself is an InternalError at the function's definition."""
    try:
        return step(fn, *args)
    except NoSourceError as error:
        if location is None or getattr(error, "at_call", False):
            raise                                   # already reported at the innermost call
        where = f" (defined at {error.location})" if error.location is not None else ""
        located = NoSourceError(f"cannot differentiate this call: {error.message}{where}",
                                location, error.hint)
        located.at_call = True
        raise located from None
    except SrcTransError:
        raise
    except Exception as error:
        raise internal_failure(error, location or definition(fn)) from error

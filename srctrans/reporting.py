"""How an exception leaves srctrans: the user's frames, at the user's line, never an internal type.

Every public entry point (``grad(f)(...)``, ``vjp``, ``jvp``, ``hessian``, ...)
passes what it raises through :func:`for_user`:

* a :class:`~srctrans.errors.SrcTransError` (about the user's code or call)
  loses srctrans's own frames (the compiler, the runtime, generated code),
  as JAX filters its tracebacks: the user sees their call and the message;
* an exception raised by an operation of the user's program while generated
  code runs (NumPy's error for mismatched shapes, say) is the one calling the
  function itself would raise: it passes unchanged but for srctrans's frames
  (generated code's frames stay) and a note naming the user's line;
* any other exception is srctrans's own failure: it becomes an
  :class:`~srctrans.errors.InternalError` naming the user's line, with the
  original kept as ``error.internal``.

``SRCTRANS_TRACEBACK=full`` in the environment turns all of this off: every
frame is shown and internal failures keep their own type.
"""

import functools
import inspect
import os

from srctrans import outputs, runtime
from srctrans.emit.compile import GENERATED_PREFIX, generated_origin
from srctrans.errors import CallError, InternalError, Location, SrcTransError, UsageError
from srctrans.runtime import effects, objects

_OWN_DIRECTORIES = tuple(os.path.dirname(os.path.abspath(str(module.__file__))) + os.sep
                         for module in (runtime, __import__("srctrans")))
_REPORTED = "__srctrans_reported__"
_STAND_INS = os.path.join(_OWN_DIRECTORIES[0], "linalg_kernels.py")   # rt.cholesky's and others'


def full_tracebacks():
    """Whether the user asked for every frame (``SRCTRANS_TRACEBACK=full``)."""
    return os.environ.get("SRCTRANS_TRACEBACK", "").lower() == "full"


def for_user(error, called=None, args=(), kwargs=None):
    """The exception to raise in place of ``error``, which escaped a public entry point.

    ``called``, ``args`` and ``kwargs``: the user's function and the arguments the entry
    point called it (its generated code) with; a TypeError because they do not fit its
    signature is the user's, as calling the function itself would raise it.
    """
    if full_tracebacks():
        return error
    if getattr(error, "about_output", False) and called is not None:
        outputs.locate(error, called, args, kwargs)      # at the user's return
    frames = _frames(error.__traceback__)
    if getattr(error, _REPORTED, False):          # reported by an inner entry point already
        return _reported(error, [f for f in frames if not _is_own(f)])
    origin = _origin(frames)                      # raised while generated code ran: its user line
    if isinstance(error, SrcTransError):
        if error.location is None and (origin is not None or _raised_in_generated(frames)):
            error.location = definition(called) if origin is None else Location(
                origin.filename, origin.lineno, origin.function)
            error.args = (error._render(),)
        return _reported(error, [f for f in frames if _is_user(f)])
    if isinstance(error, TypeError) and called is not None and not _fits(called, args,
                                                                         kwargs or {}):
        return _reported(_call_error(error, called), [f for f in frames if _is_user(f)])
    ours = [i for i, f in enumerate(frames) if not _is_user(f)]
    last = ours[-1] if ours else None
    raised_by_user = last is None or any(_is_user(f) and not _is_library(f)
                                         for f in frames[last + 1:])
    if raised_by_user or _is_generated(frames[last]) or _stands_for_numpy(frames[last]):
        if origin is not None and hasattr(error, "add_note"):
            error.add_note(f"srctrans: raised by line {origin.lineno} of {origin.filename} "
                           f"(in {origin.function}), run as generated code: {origin.text}")
        return _reported(error, [f for f in frames if not _is_own(f)])
    where = definition(called) if origin is None else Location(
        origin.filename, origin.lineno, origin.function)
    wrapped = _internal_error(error, "srctrans failed", where)
    wrapped.__suppress_context__ = True
    return _reported(wrapped, [f for f in frames if _is_user(f)])


def definition(called):
    """The :class:`Location` of the ``def`` of the function ``called`` stands for (a bound
    method's function), or None."""
    fn = getattr(called, "__func__", called)
    code = getattr(fn, "__code__", None)
    return Location(code.co_filename, code.co_firstlineno, fn.__qualname__) if code else None


def _call_error(error, called):
    """A :class:`CallError` (also a TypeError) for arguments that do not fit ``called``."""
    where = definition(called)
    try:
        signature = f"{getattr(called, '__name__', 'f')}{inspect.signature(called)}"
    except (TypeError, ValueError):
        signature = None
    wrapped = CallError(str(error), where,
                        f"call it as its signature says: {signature}" if signature else None)
    wrapped.__suppress_context__ = True
    return wrapped


def _fits(called, args, kwargs):
    try:
        inspect.signature(called).bind(*args, **kwargs)
    except TypeError:
        return False
    except ValueError:               # no signature to check against
        return True
    return True


def internal_failure(error, location):
    """An :class:`InternalError` for ``error``, raised while building a derivative of the
    function at ``location``; ``error`` itself under ``SRCTRANS_TRACEBACK=full``."""
    if full_tracebacks() or isinstance(error, SrcTransError):
        return error
    return _internal_error(error, "srctrans failed while building this derivative", location)


def _internal_error(error, what, location):
    """The :class:`InternalError` reporting ``error`` (kept as ``internal``) at ``location``."""
    wrapped = InternalError(
        f"{what} ({type(error).__name__}: {error})", location,
        "this is a bug in srctrans, not in your code; please report it with the "
        "traceback printed when SRCTRANS_TRACEBACK=full is set")
    wrapped.internal = error
    return wrapped


def _frames(tb):
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    return frames


def _reported(error, kept):
    """``error`` with only the traceback entries ``kept``, marked as reported."""
    for before, after in zip(kept, kept[1:]):
        before.tb_next = after
    if kept:
        kept[-1].tb_next = None
    error.__traceback__ = kept[0] if kept else None
    try:
        setattr(error, _REPORTED, True)
    except AttributeError:         # an exception type without a __dict__
        pass
    return error


def _filename(tb):
    return tb.tb_frame.f_code.co_filename


def _is_generated(tb):
    return _filename(tb).startswith(GENERATED_PREFIX)


def _is_own(tb):
    """srctrans's own Python files (compiler, runtime) and its repeat guards."""
    name = _filename(tb)
    return name.startswith(_OWN_DIRECTORIES) or name.startswith(GENERATED_PREFIX + "repeat guard")


def _stands_for_numpy(tb):
    """A frame of a runtime function that specialised code calls in place of NumPy's
    (``rt.cholesky`` for ``np.linalg.cholesky``): NumPy's error raised there is the program's."""
    return _filename(tb) == _STAND_INS


def _is_user(tb):
    return not _is_own(tb) and not _is_generated(tb)


def _is_library(tb):
    """A frame of an installed package (NumPy raising for the generated code)."""
    name = _filename(tb)
    return "site-packages" in name or "dist-packages" in name or name.startswith("<frozen")


def _raised_in_generated(frames):
    return any(_is_generated(tb) for tb in frames)


def _origin(frames):
    """The user's line behind the innermost generated frame that stands for the user's code,
    or None: a derivative srctrans generated of its own runtime (``np.gradient``'s, a
    decomposition's at second order) or of a derivative (at second order) stands for the
    user's line that called it."""
    for tb in reversed(frames):
        if _is_generated(tb):
            origin = generated_origin(_filename(tb), tb.tb_lineno)
            if origin is None or not str(origin.filename).startswith(
                    (*_OWN_DIRECTORIES, GENERATED_PREFIX)):     # (a derivative of a derivative)
                return origin
    return None


def user_facing(function=None, *, keeps=(), calls=None, fast=None):
    """``function`` (a public entry point) raising what :func:`for_user` makes of its errors,
    but those of the classes ``keeps`` (``check_grads``'s AssertionError) as they are.

    ``calls(*args, **kwargs)`` gives ``(f, f's args, f's kwargs)`` for an entry point that
    calls the user's ``f`` (``vjp``), so that arguments not fitting ``f`` are a CallError.
    ``fast(args, kwargs)``, tried first, returns the result of a call it can shorten, else
    None.
    """
    if function is None:
        return functools.partial(user_facing, keeps=keeps, calls=calls, fast=fast)

    @functools.wraps(function)
    def entry(*args, **kwargs):
        try:
            if fast is not None:
                result = fast(args, kwargs)
                if result is not None:
                    return result
            return noting_callees(function, args, kwargs)
        except Exception as error:
            if isinstance(error, keeps):
                raise
            if isinstance(error, TypeError) and _raised_calling(error, noting_callees):
                # the call itself did not fit the entry point's signature (st.hvp(f))
                raise CallError(f"srctrans.{function.__name__}: {error}".replace(
                    f"{function.__name__}() ", ""),
                    hint=f"see help(srctrans.{function.__name__}) for its arguments") from None
            called = calls(*args, **kwargs) if calls is not None else (None, (), None)
            raise for_user(error, *called) from chained_cause(error)
    return entry


def calls_with_primals(f, primals=(), *rest, **options):
    """``calls`` for an entry point taking ``(f, primals, ...)``: f and its arguments."""
    return f, tuple(primals) if isinstance(primals, (tuple, list)) else (), {}


def calls_of(f):
    """``calls`` for the function a transform of ``f`` returns, called with f's arguments."""
    return lambda *args, **kwargs: (f, args, kwargs)


# How many new kinds of callee one call may meet through values (each costs a rebuild).
MAX_NEW_CALLEES = 64


def noting_callees(function, args, kwargs):
    """``function(*args, **kwargs)``, run again after each call through a value that met a
    kind of callee its derivative was not compiled for (``runtime.objects``): the kind is
    recorded, so the next run rebuilds the derivative with a branch for it."""
    noted, met = None, []
    for _ in range(MAX_NEW_CALLEES):
        start = effects.effects_noted()
        try:
            return function(*args, **kwargs)
        except objects.UnseenCallee as seen:
            noted = seen
            objects.note_callee(seen, keep=met)
            met.append(seen.kind)
            refusal = rerun_refusal(start, seen)
            if refusal is not None:
                raise refusal from None
        except BaseException:
            if noted is not None:    # the kind just noted may be what failed: do not keep it,
                objects.forget_callee(noted)      # or every later build of the site fails too
            raise
    raise UsageError(f"one call met more than {MAX_NEW_CALLEES} new kinds of callee through "
                     "values (objects or functions passed in and called)",
                     hint="call fewer distinct classes and functions through values in one "
                          "differentiated function, or call them by name")


def rerun_refusal(start, seen):
    """None when no call of a user's function that may write ran since the count of such
    calls was ``start`` (``runtime.effects``, read before a call's run); else the error to
    raise instead of running the call again to compile the kind of callee ``seen``
    (``objects.UnseenCallee``) met: the objects that call changed are not what the call was
    given, and a run again would differentiate another computation. (Specialised code, the
    other code a call may run again, is not made for a function that calls such a function:
    ``assumed.link_callees``.)"""
    if effects.effects_noted() == start:
        return None
    filename, line = _site_place(seen.site)
    return UsageError(
        "a call through a value met a kind of callee its derivative was not compiled for, "
        "after the call had run a function of yours that may change what it is passed (one "
        "srctrans calls as it is: its value needs no derivative); srctrans compiles the new "
        "kind by running the call again, which would start from the objects that function "
        "changed: srctrans stops rather than differentiate another computation",
        Location(filename, line) if line is not None else None,
        hint="the derivative now has the new kind: call it again with the objects as they "
             "were before this call; or have that function return what it computes rather "
             "than change its arguments")


def _site_place(site):
    """``(file, line)`` of a site ``"file:line:column"`` (a method's ends ``.name``), or
    ``(site, None)``."""
    parts = site.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return parts[0], int(parts[1])
    return site, None


def _raised_calling(error, caller):
    """Whether ``error`` was raised by ``caller``'s call itself (not inside what it called)."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code is caller.__code__


def chained_cause(error):
    """What to chain the reported exception to: the internal one only in full tracebacks."""
    return error.__cause__ if not isinstance(error, InternalError) else None

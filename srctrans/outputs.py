"""Which ``return`` gave the output that has no derivative.

Requires: the user's function, with source. Guarantees:

* :func:`refuse_missing_return` raises ``NonDifferentiableError`` at the
  ``def`` of a function that never returns a value (its output is always
  None), before anything else about its body is judged: a forgotten
  ``return`` is the mistake to report, not what the last line does;
* :func:`locate` gives an error about the output (``about_output``: raised by
  ``runtime.seeding.check_output``, or a has-aux function's result that is not
  a pair) the file and line of the user's ``return`` that produced the value:
  the only one, or, where there are several, the one the call took (found by
  running the function once more under a profiler that records the line it
  returned from; if that run fails, the ``def`` and a list of the lines).
"""

import inspect
import sys
import types

from srctrans.errors import NonDifferentiableError
from srctrans.normalize.auxiliary import own_returns
from srctrans.parse.source import parse_function
from srctrans.runtime.custom import CustomGradient

_NOT_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def refuse_missing_return(fn):
    """Raise ``NonDifferentiableError`` at ``fn``'s ``def`` when no ``return`` of ``fn``
    gives a value."""
    if fn.__code__.co_flags & _NOT_PLAIN:     # a generator or coroutine: refused as such
        return
    parsed = parse_function(fn, shared=True)
    if any(r.value is not None for r in own_returns(parsed.node)):
        return
    raise NonDifferentiableError(
        f"{parsed.name} has no return statement with a value, so its output is None, which "
        "has no derivative", parsed.location(parsed.node),
        "return the value to differentiate (return loss)")


def locate(error, called, args, kwargs):
    """Give the output error ``error`` the location of the ``return`` of the user's function
    behind ``called`` (a function, a bound method, a derivative of one) that the call with
    ``args`` and ``kwargs`` took; nothing when that function has no source."""
    fn, bound = _user_function(called)
    if fn is None:
        return
    try:
        parsed = parse_function(fn, shared=True)
    except Exception:               # no source: the message stands without a line
        return
    returns = own_returns(parsed.node)
    kind = getattr(error, "output_type", None)     # None: not a derivative's complaint
    if not any(r.value is not None for r in returns):
        where = parsed.location(parsed.node)
        if kind is not None:
            error.message = (f"{parsed.name} has no return statement with a value, so its "
                             "output is None, which has no derivative")
    else:
        lines = sorted({r.lineno for r in returns})
        taken = lines[0] if len(lines) == 1 else _line_returned_from(fn, bound, args, kwargs)
        if taken in lines:
            where, place = parsed.location_of_line(taken), "here"
        else:
            where, place = parsed.location(parsed.node), (
                f"at one of lines {', '.join(map(str, lines))}")
        if kind is not None:
            error.message = f"{parsed.name} returns {kind} {place}, which has no derivative"
    error.location = where
    error.args = (error._render(),)
    error.about_output = False      # located: an outer entry point leaves it as it is


def _user_function(called):
    """(the plain function the user wrote behind ``called``, its bound object or None)."""
    bound = None
    for _ in range(16):          # derivatives of derivatives wrap the function a few times
        if isinstance(called, types.MethodType):
            called, bound = called.__func__, called.__self__
        elif isinstance(called, CustomGradient):
            called = called.function
        elif hasattr(called, "_f") and callable(called._f):      # grad(f), value_and_grad(f)
            called = called._f
        else:
            break
    return (called, bound) if isinstance(called, types.FunctionType) else (None, None)


def _line_returned_from(fn, bound, args, kwargs):
    """The line ``fn`` returned from when called with ``args`` and ``kwargs`` (``bound``
    first, if not None), or None when the call raises."""
    code, lines = fn.__code__, []

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is code:
            lines.append(frame.f_lineno)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn(*((bound,) if bound is not None else ()), *args, **(kwargs or {}))
    except Exception:
        return None
    finally:
        sys.setprofile(previous)
    return lines[-1] if lines else None

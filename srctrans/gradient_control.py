"""Controlling gradients: where they stop, what they are, and code that runs on them.

  stop_gradient(x)             the identity; its result carries no gradient
  with stop_recording(): ...   the statements of the block contribute no gradient
  with grad_of(h) as dh: ...   code the backward pass runs once ``dh`` is complete
  checkpointed(range(T), s)    a loop that keeps at most ``s`` of its states and
                               runs its steps again in the backward pass
  custom_gradient(f)           ``f`` returns ``(y, backward)``; ``backward(dy)``
                               gives the input gradients
  register_vjp(fn, rule)       the user's vector-Jacobian product of any callable
  register_jvp(fn, rule)       the user's Jacobian-vector product (forward mode)
  nondifferentiable(fn)        ``fn``'s results are constants

``stop_gradient``, ``stop_recording`` and ``grad_of`` are recognised in the
source of a differentiated function, whatever name srctrans was imported
under; the ``with`` forms are the only ``with`` statements srctrans accepts.
Rules registered here are kept in the one rule registry
(`rules`), and every derivative built before a registration
is rebuilt on its next call. docs/controlling.md shows each of them with the
code srctrans generates.
"""

import types
import warnings

from srctrans.runtime.checkpoints import checkpointed
from srctrans.runtime.custom import CustomGradient, grad_of, stop_gradient, stop_recording
from srctrans import cache
from srctrans.errors import UsageError
from srctrans.interface import CHECKPOINTED
from srctrans.rules import REGISTRY
from srctrans.hints import Any, Callable, Function

__all__ = ["stop_gradient", "stop_recording", "grad_of", "custom_gradient", "checkpoint", "checkpointed",
           "register_vjp", "register_jvp", "nondifferentiable"]


def checkpoint(f: Function) -> Function:
    """Decorator: a derivative that calls ``f`` recomputes ``f``'s intermediates instead of
    keeping them (JAX's ``checkpoint``, also called rematerialisation).

    The reverse pass of a function that calls ``f`` runs ``f`` itself in the
    forward pass, keeping only its arguments, and runs ``f``'s forward pass
    again in the backward pass, just before ``f``'s backward pass needs what it
    saves. The gradient is the same; the memory a call of ``f`` holds between
    the two passes drops to its arguments, for the price of running ``f``
    twice. Forward mode and plain calls are unaffected.

    Returns ``f`` itself, marked; apply it where ``f`` is defined (a derivative
    built before the mark does not see it).

    >>> @checkpoint
    ... def block(h, W):
    ...     return np.tanh(h @ W)
    """
    if not isinstance(f, types.FunctionType):
        raise UsageError(f"checkpoint expects a function defined with def, not "
                         f"{type(f).__name__}", hint="decorate the def of the function")
    setattr(f, CHECKPOINTED, True)
    return f


def custom_gradient(f: Function) -> Function:
    """Decorator: a function that computes its own gradient, TensorFlow-style.

    Args:
      f: a function returning ``(y, backward)``, where ``backward(dy)``
        returns the cotangent of ``f``'s positional argument given ``dy``,
        the cotangent of ``y`` (a tuple of cotangents when ``f`` has several
        positional arguments; ``None`` for an argument without one).

    Returns:
      A callable that returns ``y`` alone. Differentiated code that calls it
      runs ``f`` in the forward pass and ``backward`` in the backward pass,
      in place of differentiating ``f``. Keyword arguments are passed to
      ``f`` but receive no gradient: a value that carries one must be passed
      positionally (srctrans says so when it is not). ``st.grad`` of the
      decorated function itself works too.

    >>> import numpy as np
    >>> @custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return dy * min(1.0, 0.5 / np.linalg.norm(dy))
    ...     return y, backward
    >>> clip_gradients(4.0)
    4.0
    """
    if not callable(f):
        raise UsageError(f"custom_gradient expects a function, not {type(f).__name__}")
    if isinstance(f, CustomGradient):
        return f
    return CustomGradient(f)


def register_vjp(fn: Callable[..., Any], rule: Function) -> None:
    """Register ``rule`` as the vector-Jacobian product of ``fn``.

    Args:
      fn: any callable: a Python function (the rule overrides differentiating
        its source), a NumPy function (the rule overrides srctrans's own), a
        C function, an ``np.vectorize`` object, a ``scipy.special`` ufunc.
      rule: ``rule(g, ans, *args, **kwargs)``, called in the backward pass
        with the output's cotangent ``g``, the output ``ans`` and the
        arguments of the call as it was written (defaults are not filled in).
        It returns a tuple with one cotangent per positional argument, each
        shaped like its argument, ``None`` where there is none; keyword
        arguments receive no cotangent. With one positional argument the
        cotangent may also be returned bare.

    Registering a rule for the same ``fn`` again replaces it, with a
    ``UserWarning``. A function declared with [`nondifferentiable`][srctrans.nondifferentiable] (or
    in srctrans's table, such as ``np.round``) becomes differentiable by its
    rule.

    >>> import numpy as np
    >>> def cube(x):
    ...     return x ** 3
    >>> register_vjp(cube, lambda g, ans, x: (g * 3 * x ** 2,))
    """
    _check_registrable(fn, rule, "register_vjp")
    if REGISTRY.set_custom_vjp(fn, rule):
        warnings.warn(f"replacing the VJP rule registered for {_describe(fn)}", UserWarning,
                      stacklevel=2)
    cache.clear()


def register_jvp(fn: Callable[..., Any], rule: Function) -> None:
    """Register ``rule`` as the Jacobian-vector product of ``fn`` (for forward mode).

    Args:
      fn: any callable, as for [`register_vjp`][srctrans.register_vjp].
      rule: ``rule(tangents, ans, *args, **kwargs)``, where ``tangents`` is a
        tuple with one tangent per positional argument (zeros for those that
        carry none) and ``ans`` the output; it returns the output's tangent.

    Registering again replaces the rule, with a ``UserWarning``. Reverse mode
    does not use JVP rules: a function without Python source needs a rule
    from [`register_vjp`][srctrans.register_vjp] there.
    """
    _check_registrable(fn, rule, "register_jvp")
    if REGISTRY.set_custom_jvp(fn, rule):
        warnings.warn(f"replacing the JVP rule registered for {_describe(fn)}", UserWarning,
                      stacklevel=2)
    cache.clear()


def nondifferentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Declare that ``fn``'s results carry no derivative; returns ``fn`` (usable as a decorator).

    Calls of ``fn`` in differentiated code give constants, like ``np.argmax``:
    no gradient flows back to their arguments, and srctrans does not read
    ``fn``'s source. A rule registered for ``fn`` before is dropped, with a
    ``UserWarning``.
    """
    if not callable(fn):
        raise UsageError(f"nondifferentiable expects a callable, not {type(fn).__name__}")
    _check_hashable(fn, "nondifferentiable")
    if REGISTRY.nondifferentiable(fn, by_user=True):
        warnings.warn(f"{_describe(fn)} is now non-differentiable: its registered rules are dropped",
                      UserWarning, stacklevel=2)
    cache.clear()
    return fn


def differentiate_through(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Let srctrans differentiate ``fn`` by reading its source; returns ``fn``.

    Functions of installed packages (SciPy's, the standard library's: any file
    under site-packages or the standard library) are primitives by default,
    like NumPy's: a call of one without a rule is a ``MissingRuleError``,
    because srctrans cannot vouch for code it was not written for. Declaring
    a function here makes srctrans read and differentiate its source like
    one of the user's own (its own calls must be differentiable in turn).
    """
    if not isinstance(fn, types.FunctionType):
        raise UsageError(f"differentiate_through expects a function defined with def, "
                         f"not {type(fn).__name__}",
                         hint="register a rule for it instead: st.register_vjp(fn, rule)")
    REGISTRY.differentiate_through(fn, by_user=True)
    cache.clear()
    return fn


def _check_registrable(fn, rule, what):
    if not callable(fn):
        raise UsageError(f"{what} expects a callable as its first argument, not {type(fn).__name__}")
    if not callable(rule):
        raise UsageError(f"{what}: the rule for {_describe(fn)} must be callable, "
                         f"not {type(rule).__name__}")
    _check_hashable(fn, what)


def _check_hashable(fn, what):
    try:
        hash(fn)
    except TypeError:
        raise UsageError(f"{what}: {_describe(fn)} cannot carry a rule (it is not hashable)",
                         hint="register the function itself, not an object wrapping it") from None


def _describe(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)

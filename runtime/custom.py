"""Gradient control: the markers users write, and what user-written gradients return.

A user's function calls [`stop_gradient`][srctrans.stop_gradient] and opens ``with``
[`stop_recording`][srctrans.stop_recording] or [`grad_of`][srctrans.grad_of] blocks; srctrans recognises these
objects when it compiles the function (by identity, whatever name they were
imported under). Called without differentiation they do what the function
means when nothing is differentiated: ``stop_gradient`` returns its argument,
``stop_recording`` does nothing, and a ``grad_of`` block runs once with
zeros for the gradient (nothing depends on the value yet).

`CustomGradient` is the object ``@st.custom_gradient`` makes; the
generated forward pass calls its ``forward`` and keeps the backward function it
returns. `custom_cotangents` checks what a user-written
backward function or VJP rule returned, in the generated backward pass.
"""

import contextlib
import typing
import weakref

import numpy as np

from .accumulate import zeros_like
from .containers import is_container
from .refusals import error


_T = typing.TypeVar("_T")


def stop_gradient(x: _T) -> _T:
    """Returns ``x``; differentiated code treats the result as a constant."""
    return x


def valued(value, differentiated):
    """Returns ``value``; differentiated code takes its derivative from ``differentiated``
    (equal to ``value`` up to rounding: a batched sum of a loop's terms,
    ``optimise/row_loops.py``)."""
    return value


class _NotRecording:
    """The context manager of ``with st.stop_recording():`` outside differentiation."""

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return False

    def __repr__(self):
        return "stop_recording()"


_NOT_RECORDING = _NotRecording()


def stop_recording() -> contextlib.AbstractContextManager[None]:
    """``with stop_recording():`` -- the statements of the block contribute no gradient."""
    return _NOT_RECORDING


class _GradientOf:
    """The context manager of ``with st.grad_of(h) as dh:`` outside differentiation."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return zeros_like(self.value)

    def __exit__(self, *exc_info):
        return False


def grad_of(value: typing.Any) -> contextlib.AbstractContextManager[typing.Any]:
    """``with grad_of(h) as dh:`` -- a block the backward pass runs once ``dh`` is complete."""
    return _GradientOf(value)


class CustomGradient:
    """A function whose gradient the user wrote (made by ``st.custom_gradient``).

    ``function(*args, **kwargs)`` returns ``(y, backward)``; calling the
    object returns ``y`` alone. Differentiated code calls `forward` in
    the forward pass and ``backward(dy)`` in the backward pass.
    """

    def __init__(self, function):
        self.function = function
        for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
            if hasattr(function, attribute):
                setattr(self, attribute, getattr(function, attribute))
        _WRAPPERS[function] = self

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)[0]

    def forward(self, *args, **kwargs):
        """``(y, backward)``: what the forward pass of differentiated code calls."""
        return _checked_pair(self, self.function(*args, **kwargs))

    def __repr__(self):
        return f"<custom_gradient {getattr(self, '__qualname__', self.function)!r}>"


# function -> the CustomGradient wrapping it, while that object lives
_WRAPPERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def custom_gradient_of(function):
    """The `CustomGradient` made of ``function``, or None."""
    try:
        return _WRAPPERS.get(function)
    except TypeError:                 # unhashable
        return None


def _checked_pair(custom, result):
    """``result`` checked to be the ``(y, backward)`` pair a custom-gradient function returns."""
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        raise error("UsageError",
                    f"{_name(custom)} is decorated with custom_gradient, so it must return "
                    f"(value, backward function), not {type(result).__name__}",
                    "end it with `return y, backward` where backward(dy) returns the input "
                    "gradients")
    return result


def custom_cotangents(cotangents, args, rule, single=False):
    """The cotangents a user-written gradient returned, one per positional argument.

    Args:
      cotangents: what the rule returned: a tuple or list with one entry per
        positional argument (None for no derivative); with one argument, or
        when ``single``, the one cotangent itself.
      args: the positional arguments of the call, None in place of those
        that carry no derivative (their entries are passed through unread).
      rule: the name of the function the rule belongs to, for errors.
      single: the rule returns its only cotangent bare (``custom_gradient``
        with one input).

    Returns a tuple with one entry per argument: an argument's cotangent, or
    zeros of its shape where the rule returned None for it.

    Raises:
      ShapeError: the rule returned the wrong number of entries, or a
        cotangent whose shape differs from its argument's.
    """
    cotangents = rule_entries(cotangents, len(args), rule, single)
    finished = []
    for index, (cotangent, arg) in enumerate(zip(cotangents, args)):
        if arg is None:
            finished.append(cotangent)
        elif cotangent is None:
            finished.append(zeros_like(arg))
        else:
            if not is_container(arg):
                check_cotangent_shape(np.shape(cotangent), np.shape(arg), index, rule)
            finished.append(cotangent)
    return tuple(finished)


def rule_entries(cotangents, count, rule, single=False):
    """What a user-written gradient returned, as a tuple of ``count`` entries (see
    :func:`custom_cotangents`); raises ShapeError for another count."""
    if single:
        cotangents = (cotangents,)
    elif isinstance(cotangents, (tuple, list)) and not hasattr(cotangents, "_fields"):
        cotangents = tuple(cotangents)
    elif count == 1:
        cotangents = (cotangents,)
    else:
        _fail(f"the gradient of {rule} must return a tuple of {count} cotangents "
              f"(one per positional argument), not {type(cotangents).__name__}")
    if len(cotangents) != count:
        _fail(f"the gradient of {rule} returned {len(cotangents)} cotangents for "
              f"{count} positional arguments")
    return cotangents


def check_cotangent_shape(shape, arg_shape, index, rule):
    """Raise ShapeError unless a rule's cotangent of argument ``index`` has its shape."""
    if shape != arg_shape:
        _fail(f"the gradient of {rule} returned a cotangent of shape "
              f"{shape} for argument {index}, whose shape is {arg_shape}")


def _name(obj):
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)


def _fail(message):
    raise error("ShapeError", message, "return one cotangent per positional argument, each "
                "shaped like its argument (None for no derivative)")

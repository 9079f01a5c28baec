"""Summing a gradient back to the shape of an input that NumPy broadcast.

When ``z = x + y`` broadcasts ``x`` from shape ``(3,)`` to ``(2, 3)``, each
element of ``x`` was used twice, so its gradient is the sum of the two
matching elements of the output gradient. :func:`unbroadcast` does that sum.

It runs after almost every elementwise operation of a backward pass, so the
common case (two arrays of one shape, nothing was broadcast) is tested first:
two type tests, a tuple comparison and a dtype's kind.
"""

import numpy as np

from .complex_numbers import is_complex_value
from .refusals import unsupported

_REAL = np.dtype(np.float64)
_ARRAY = np.ndarray


def unbroadcast(g, x):
    """Return ``g`` summed down to the shape of ``x``.

    Args:
      g: the gradient of an operation's output; its shape is the broadcast of
        ``x``'s shape with the other operands' shapes.
      x: the input the gradient is for: an ndarray, a NumPy scalar, or a
        Python int or float (shape ``()``).

    Returns:
      ``g`` itself when it already has ``x``'s shape (its real part when ``g`` is
      complex and ``x`` real: docs/complex.md). Otherwise ``g`` summed
      over its leading axes that ``x`` lacks and over the axes where ``x`` has
      length 1 (keeping them), so the result has exactly ``x``'s shape; for a
      scalar ``x`` that is the total sum, a NumPy scalar. A ``g`` with fewer
      elements than ``x`` along an axis (say a scalar zero) is broadcast up to
      ``x``'s shape as a read-only view.

    Raises:
      ValueError: the two shapes are not broadcast-compatible.

    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3)))
    array([[2., 2., 2.]])
    >>> unbroadcast(np.ones((2, 3)), 5.0)
    np.float64(6.0)
    """
    if type(g) is _ARRAY and type(x) is _ARRAY and g.shape == x.shape \
            and (g.dtype is x.dtype or g.dtype.kind != "c" or x.dtype.kind == "c"):
        return g            # two arrays of one shape, the common case: no call, no getattr
    x_shape = getattr(x, "shape", None)
    if x_shape is None:
        if isinstance(x, (list, tuple)) and not (
                isinstance(g, (list, tuple)) and len(g) == len(x)):
            _refuse_sequence_operand()    # concatenated or repeated, not a list's own cotangent
        x_shape = ()
    if getattr(g, "dtype", _REAL).kind == "c" and not is_complex_value(x):
        g = np.real(g)       # a real operand of a complex result: its cotangent is real
    if getattr(g, "shape", ()) == x_shape:
        return g
    return _sum_to_shape(g, x_shape)


def _refuse_sequence_operand():
    """A list or tuple reached an arithmetic rule: it was concatenated or repeated (``+``,
    ``*``), or NumPy made an array of it, where srctrans could not see which."""
    unsupported("`+` or `*` with a list or tuple operand srctrans cannot tell is one "
                "(concatenation and repetition of sequences differ from NumPy's arithmetic "
                "on them)",
                "show srctrans the kinds: list(xs) + list(ys), tuple(t) * 2, or "
                "np.asarray(xs) for arithmetic")


def _sum_to_shape(g, shape):
    g_shape = getattr(g, "shape", None)
    if g_shape is not None and g_shape[len(g_shape) - len(shape):] == shape and len(g_shape) > len(shape):
        # the common case, a bias: only leading axes were added
        lead = len(g_shape) - len(shape)
        return g.sum(axis=0) if lead == 1 else g.sum(axis=tuple(range(lead)))
    extra = np.ndim(g) - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    if extra >= 0:
        g_shape = np.shape(g)
        stretched = tuple(axis for axis, length in enumerate(shape)
                          if length == 1 and g_shape[axis] != 1)
        if stretched:
            g = np.sum(g, axis=stretched, keepdims=True)
    if np.shape(g) != shape:
        g = np.broadcast_to(g, shape)
    return g


# Python numbers, which arithmetic with a float array leaves at the array's dtype (NumPy 2's
# promotion rules, NEP 50: NumPy 1 looked at their values)
_WEAK = (float, int) if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else ()


def float_dtype(*values):
    """The dtype arithmetic on ``values`` produces, float64 if not floating.

    A list or tuple (``np.sum([1, x, 2])``) counts as the array NumPy makes of it.
    """
    for array in values:
        if type(array) is np.ndarray:
            break
    if type(array) is np.ndarray and array.dtype.kind == "f":    # the common case: a float
        dtype = array.dtype                                   # array and numbers or its likes
        for v in values:
            if not (type(v) in _WEAK or (type(v) is np.ndarray or type(v) is np.float64)
                    and v.dtype is dtype):
                break
        else:
            return dtype
    if any(isinstance(v, (list, tuple)) for v in values):
        values = [np.asarray(v) if isinstance(v, (list, tuple)) else v for v in values]
    dtype = np.result_type(*values)
    return dtype if dtype.kind in "fc" else _REAL

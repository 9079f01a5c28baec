"""``np.gradient`` written so that srctrans can differentiate it: plain NumPy, no writes.

srctrans computes ``np.gradient(f, *varargs, axis=..., edge_order=...)`` with
:func:`gradient` (``srctrans/rules/reductions.py`` maps the one to the other, and
registers this module with ``differentiate_through``), so every derivative of
it, with respect to ``f`` and to the spacings, in both modes and to any
order, is srctrans's own derivative of this source. Along one axis of a uniform
grid (a number for the spacing, or none) it calls ``runtime.scans.uniform_gradient``,
NumPy's own ``np.gradient``, whose rules transpose its stencil directly.

The values are NumPy's: the same central differences inside and one-sided
differences of ``edge_order`` 1 or 2 at the ends, computed with the same
operations for a uniform (scalar) spacing. For a coordinate array the
non-uniform formulas are used even where its steps happen to be equal (NumPy
switches to the scalar formulas there, which agree in value up to rounding
but not in their derivative with respect to the coordinates).
"""

import numpy as np

from .scans import axis_length, uniform_gradient

# NumPy's errors
EDGE_ORDER_ERROR = "'edge_order' greater than 2 not supported"
TOO_SHORT_ERROR = ("Shape of array too small to calculate a numerical gradient, at least "
                   "(edge_order + 1) elements are required.")


def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient(f, *varargs, axis=axis, edge_order=edge_order)``."""
    axes = gradient_axes(np.ndim(f), axis)
    spread = spacing_is_shared(varargs, len(axes))
    if _kind(f) in "biu":
        f = np.asarray(f).astype(np.float64)
    if len(axes) == 1 and (len(varargs) == 0 or spread):      # one axis, a uniform grid
        if edge_order not in (1, 2):          # (raised here, in the code srctrans generates)
            raise ValueError(EDGE_ORDER_ERROR)
        if axis_length(f, axes[0]) < edge_order + 1:
            raise ValueError(TOO_SHORT_ERROR)
        return uniform_gradient(f, spacing_of(varargs), axes[0], edge_order)
    outs = []
    for k in range(len(axes)):
        if len(varargs) == 0:
            spacing = 1.0
        elif spread:
            spacing = varargs[0]
        else:
            spacing = varargs[k]
        outs.append(_along(f, spacing, axes[k], edge_order))
    if len(axes) == 1:
        return outs[0]
    return tuple(outs)


def spacing_of(varargs):
    """The one spacing of a uniform grid: the number given, else 1."""
    if len(varargs) == 0:
        return 1.0
    return varargs[0]


def _kind(value):
    """The dtype kind of ``value``, without converting an array of another library."""
    dtype = getattr(value, "dtype", None)
    return (dtype if dtype is not None else np.asarray(value).dtype).kind


def gradient_axes(ndim, axis):
    """The axes ``np.gradient`` differentiates along, as a tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim if -ndim <= a < ndim else _bad_axis(a, ndim) for a in axes)


def _bad_axis(axis, ndim):
    raise np.exceptions.AxisError(axis, ndim)


def spacing_is_shared(varargs, count):
    """Whether the one spacing given serves every one of the ``count`` axes (else there is one
    per axis, a number or a 1-D array of coordinates); NumPy's errors for any other form."""
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return True
    if len(varargs) != count and len(varargs) != 0:
        raise TypeError("invalid number of arguments")
    for spacing in varargs:
        if np.ndim(spacing) > 1:
            raise ValueError("distances must be either scalars or 1d")
    return False


def _along(f, spacing, axis, edge_order):
    """The derivative of ``f`` along ``axis`` (moved first and back)."""
    if edge_order not in (1, 2):
        raise ValueError(EDGE_ORDER_ERROR)
    g = np.moveaxis(f, axis, 0)
    n = np.shape(g)[0]
    if n < edge_order + 1:
        raise ValueError(TOO_SHORT_ERROR)
    if np.ndim(spacing) == 0:
        pieces = _uniform(g, spacing, edge_order)
    else:
        if np.shape(spacing)[0] != n:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        pieces = _coordinates(g, spacing, edge_order)
    return np.moveaxis(np.concatenate(pieces, axis=0), 0, axis)


def _uniform(g, h, edge_order):
    inner = (g[2:] - g[:-2]) / (2.0 * h)
    if edge_order == 1:
        return [(g[1:2] - g[0:1]) / h, inner, (g[-1:] - g[-2:-1]) / h]
    first = (-1.5 / h) * g[0:1] + (2.0 / h) * g[1:2] + (-0.5 / h) * g[2:3]
    last = (0.5 / h) * g[-3:-2] + (-2.0 / h) * g[-2:-1] + (1.5 / h) * g[-1:]
    return [first, inner, last]


def _coordinates(g, x, edge_order):
    dx = np.diff(np.asarray(x, dtype=np.float64) if _kind(x) in "biu" else x)
    column = (-1,) + (1,) * (np.ndim(g) - 1)            # broadcasts along the first axis
    dx1 = np.reshape(dx[:-1], column)
    dx2 = np.reshape(dx[1:], column)
    inner = (-dx2 / (dx1 * (dx1 + dx2)) * g[:-2] + (dx2 - dx1) / (dx1 * dx2) * g[1:-1]
             + dx1 / (dx2 * (dx1 + dx2)) * g[2:])
    if edge_order == 1:
        return [(g[1:2] - g[0:1]) / dx[0], inner, (g[-1:] - g[-2:-1]) / dx[-1]]
    a1, a2 = dx[0], dx[1]
    first = (-(2.0 * a1 + a2) / (a1 * (a1 + a2)) * g[0:1] + (a1 + a2) / (a1 * a2) * g[1:2]
             - a1 / (a2 * (a1 + a2)) * g[2:3])
    b1, b2 = dx[-2], dx[-1]
    last = (b2 / (b1 * (b1 + b2)) * g[-3:-2] - (b2 + b1) / (b1 * b2) * g[-2:-1]
            + (2.0 * b2 + b1) / (b2 * (b1 + b2)) * g[-1:])
    return [first, inner, last]

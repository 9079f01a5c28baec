"""Masks, weights and factors for the gradients of clip, maximum, minimum and power.

At the points where these functions are not differentiable the conventions
are: ``np.clip`` passes the gradient at the bounds (``x == lo`` counts as
inside), and ``np.maximum``/``np.minimum`` split it equally between tied
arguments. ``x ** y`` has derivative 0 in ``x`` where ``y == 0`` and 0 in
``y`` where ``x == 0`` (the limits), rather than NaN.

The constants are Python floats so that multiplying a float32 gradient by
them keeps it float32 (a NumPy float64 scalar would promote it).
"""

import math

import numpy as np

from .broadcast import float_dtype as _float_dtype
from .complex_numbers import real_only
from .foreign import as_array, is_array

LN2 = math.log(2.0)
LN10 = math.log(10.0)


def clip_mask(x, lo, hi, min=None, max=None):
    """Boolean mask of where ``np.clip(x, lo, hi)`` passes ``x`` through.

    Args:
      x: the clipped array.
      lo, hi: the bounds, arrays or scalars broadcastable with ``x``; either
        may be None (no bound on that side).
      min, max: NumPy 2.1's keyword spellings of ``lo`` and ``hi``
        (``np.clip(x, min=0)``); used when ``lo`` or ``hi`` is None.

    Returns:
      A boolean array of the broadcast shape of ``x``, ``lo`` and ``hi``:
      True where ``lo <= x <= hi``. NaN in ``x`` gives False.

    >>> clip_mask(np.array([-2., 0., 1., 3.]), 0., 1.)
    array([False,  True,  True, False])
    """
    lo = min if lo is None else lo
    hi = max if hi is None else hi
    inside = np.ones(np.shape(x), dtype=bool)
    if lo is not None:
        inside = inside & np.greater_equal(x, lo)
    if hi is not None:
        inside = inside & np.less_equal(x, hi)
    return inside


def tie_weight(x, y):
    """The share of the gradient of ``np.maximum(x, y)`` that goes to ``x``.

    Returns:
      A float array of the broadcast shape of ``x`` and ``y``: 1 where
      ``x > y``, 0.5 where ``x == y``, 0 where ``x < y``. Its dtype is the
      floating dtype of ``x`` and ``y`` (float64 for integers). The share of
      ``np.minimum(x, y)`` that goes to ``x`` is ``tie_weight(y, x)``.

    >>> tie_weight(np.array([3., 2., 1.]), 2.)
    array([1. , 0.5, 0. ])
    """
    if type(x) is np.ndarray and x.ndim and x.dtype.kind == "f" and type(y) in (int, float) \
            and y == 0:                     # np.maximum(x, 0), a ReLU: one ufunc, the step
        share = np.heaviside(x, 0.5)        # of x with 0.5 at 0 (NaN where x is NaN)
        if math.isfinite(np.vdot(share, share)):
            return share                    # (a NaN: the path below gives 0 there)
    dtype = _float_dtype(x, y)
    greater = np.greater(x, y)
    if type(greater) is np.ndarray:              # NumPy's arrays: the ties set in place
        share = greater.astype(dtype)
        share[np.equal(x, y)] = 0.5
        return share
    greater = as_array(greater, dtype=dtype)     # a number, or another library's array
    return np.where(np.equal(x, y), dtype.type(0.5), greater)


def power_base_factor(x, y):
    """``d(x ** y) / dx = y * x ** (y - 1)``, and 0 where ``y == 0``.

    ``x ** 0`` is constant, so its derivative is 0 even at ``x == 0``, where
    ``x ** -1`` would divide by zero.

    >>> power_base_factor(np.array([0., 2.]), 0)
    array([0., 0.])
    >>> power_base_factor(np.array([0., 2.]), np.array([0., 3.]))
    array([ 0., 12.])
    """
    if not is_array(y):                        # a Python or NumPy scalar exponent
        if y == 0:
            return np.zeros(np.broadcast_shapes(np.shape(x), np.shape(y)), dtype=_float_dtype(x, y))
        return y * np.power(x, y - 1)
    return y * np.power(x, np.where(np.equal(y, 0), 1, y - 1))


def power_exponent_factor(ans, x):
    """``d(x ** y) / dy = x ** y * log(x)`` given ``ans = x ** y``, and 0 where ``x == 0``.

    At ``x == 0`` the limit of ``x ** y * log(x)`` is 0 for ``y > 0``; the
    logarithm alone would be ``-inf`` and the product NaN. The result has the
    dtype of ``ans`` even when ``x`` is a Python float.

    >>> power_exponent_factor(np.array([0., 4.]), np.array([0., 2.]))
    array([0.        , 2.77258872])
    """
    if not is_array(x):                        # a Python or NumPy scalar base
        return ans * (float(np.log(x)) if x != 0 else 0.0)
    return ans * np.log(np.where(np.equal(x, 0), 1, x))


def nan_tie_weight(x, y):
    """The share of the gradient of ``np.fmax(x, y)`` that goes to ``x``: as
    :func:`tie_weight`, but a NaN loses (``fmax`` returns the other argument)."""
    return np.where(np.isnan(y), 1.0, np.where(np.isnan(x), 0.0, tie_weight(x, y))).astype(
        _float_dtype(x, y))


def polygamma(n, x):
    """``scipy.special.polygamma(n, x)`` for integer orders ``n >= 1``, from SciPy's ufuncs.

    SciPy's own ``polygamma`` is a Python function that turns ``x`` into a NumPy
    array; written with the ufuncs ``zeta`` and ``gamma`` it stays lazy on a Dask
    array. (The derivatives of ``digamma`` and ``polygamma`` need only ``n >= 1``.)
    Float64 whatever the dtype of ``x``, as SciPy's. SciPy's ``zeta`` takes real numbers
    only, so a complex ``x`` (digamma's derivative, gamma's second) is refused.
    """
    import scipy.special
    real_only(x, "scipy.special.digamma (polygamma)", "complex numbers",
              "SciPy's polygamma takes real numbers only; differentiate with respect to a real "
              "argument")
    return (-1.0) ** (n + 1) * scipy.special.gamma(n + 1.0) * scipy.special.zeta(n + 1.0, x)

"""Masks and weights for the gradients of clip, maximum and minimum.

At the points where these functions are not differentiable the conventions
are: ``np.clip`` passes the gradient at the bounds (``x == lo`` counts as
inside), and ``np.maximum``/``np.minimum`` split it equally between tied
arguments.
"""

import numpy as np


def clip_mask(x, lo, hi):
    """Boolean mask of where ``np.clip(x, lo, hi)`` passes ``x`` through.

    Args:
      x: the clipped array.
      lo, hi: the bounds, arrays or scalars broadcastable with ``x``; either
        may be None (no bound on that side).

    Returns:
      A boolean array of the broadcast shape of ``x``, ``lo`` and ``hi``:
      True where ``lo <= x <= hi``. NaN in ``x`` gives False.

    >>> clip_mask(np.array([-2., 0., 1., 3.]), 0., 1.)
    array([False,  True,  True, False])
    """
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
    dtype = _float_dtype(x, y)
    greater = np.asarray(np.greater(x, y), dtype=dtype)
    return np.where(np.equal(x, y), dtype.type(0.5), greater)


def _float_dtype(*values):
    """The dtype arithmetic on ``values`` produces, float64 if not floating."""
    dtype = np.result_type(*values)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)

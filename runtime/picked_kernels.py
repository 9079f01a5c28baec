"""One operand's cotangent of a helper that computes every operand's, for specialised code.

Specialised generated code (``optimise/picked_cotangents.py``) calls these where it reads
one entry of a helper's tuple of cotangents; each gives that entry's value (up to rounding)
for every call, taking a short path for the plain case and the helper itself otherwise.
They are never differentiated (specialised code is not).
"""

import math

import numpy as np

from .composites import interp_grads


def interp_values_grad(g, x, xp, fp):
    """``interp_grads(g, x, xp, fp)[2]``: the cotangent of the values ``fp`` of
    ``np.interp(x, xp, fp)`` alone. For float64 vectors (``g`` of ``x``'s shape) whose
    points fall in segments of positive width, each point's share goes to the two ends of its
    segment (a point outside ``xp`` all to the nearest end) by ``np.bincount``, where the
    helper also computes ``x``'s and ``xp``'s cotangents and adds with ``np.add.at``.

    >>> interp_values_grad(np.ones(3), np.array([0.25, 1.0, 5.0]), np.array([0.0, 1.0, 2.0]),
    ...                    np.zeros(3))
    array([0.75, 1.25, 1.  ])
    """
    if _plain(g, x, xp, fp):
        n = xp.shape[0]
        i = np.searchsorted(xp, x, side="right") - 1
        np.clip(i, 0, n - 2, out=i)
        width = xp[i + 1] - xp[i]
        if width.min() > 0:                        # (a segment of width 0: the helper's path)
            t = (x - xp[i]) / width
            np.clip(t, 0.0, 1.0, out=t)
            if math.isfinite(t.sum()):             # (a NaN point likewise)
                share = g * t
                return np.bincount(i, g - share, n) + np.bincount(i + 1, share, n)
    return interp_grads(g, x, xp, fp)[2]


def _plain(g, x, xp, fp):
    return (type(g) is np.ndarray and type(x) is np.ndarray and type(xp) is np.ndarray
            and type(fp) is np.ndarray and g.dtype == x.dtype == xp.dtype == fp.dtype
            == np.float64 and x.ndim == 1 and g.shape == x.shape and xp.ndim == 1
            and fp.shape == xp.shape and xp.shape[0] >= 2)

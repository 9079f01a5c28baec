"""Log-sum-exp's derivatives, and the softmax that is its gradient, in plain NumPy.

Like ``composites``, every function here is registered with ``differentiate_through``
(``srctrans/rules/linalg.py``): second derivatives come from srctrans reading this source.
"""

import numpy as np

from .complex_numbers import real_only
from .composites import _kept


def _logsumexp_weight(ans, a, axis, keepdims, return_sign):
    """``sign * exp(a - log|sum|)``, the share of each term (the sign 1 without
    ``return_sign``), and ``log|sum|``."""
    value, sign = ans, 1.0
    if return_sign:
        real_only(a, "scipy.special.logsumexp with return_sign=True", "complex values",
                  "a complex sum's sign is complex too; without return_sign, logsumexp of "
                  "complex values is differentiated")
        value, sign = ans
        sign = _kept(sign, axis, keepdims)
    return sign * np.exp(a - _kept(value, axis, keepdims)), value


def logsumexp_share(g, ans, a, axis=None, keepdims=False, return_sign=False):
    """``g * sign * exp(a - ans)`` for ``scipy.special.logsumexp(a, axis, b, keepdims,
    return_sign)``: the cotangent of ``b`` (summed to its shape), and of ``a`` once
    multiplied by ``b``. With ``return_sign``, ``ans`` is ``(log|sum|, sign)`` and ``g``
    their cotangents; the sign is piecewise constant."""
    weight, value = _logsumexp_weight(ans, a, axis, keepdims, return_sign)
    g_value = g[0] if return_sign else g
    if g_value is None:
        g_value = np.zeros(np.shape(value))
    return _kept(g_value, axis, keepdims) * weight


def logsumexp_jvp(da, db, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    """The tangent of logsumexp: of ``log|sum|``, and a zero for the sign with ``return_sign``."""
    weight, _ = _logsumexp_weight(ans, a, axis, keepdims, return_sign)
    tangent = da * weight if b is None else (da * b + db) * weight
    tangent = np.sum(tangent, axis=axis, keepdims=keepdims)
    if return_sign:
        tangent = (tangent, np.zeros_like(ans[1]))
    return tangent


def softmax_share(g, a, axis=None, keepdims=False):
    """``logsumexp_share(g, logsumexp(a, axis, keepdims=keepdims), a, axis, keepdims)``
    without the log-sum-exp: ``g`` times the softmax of ``a`` along ``axis``,
    ``e / e.sum(axis)`` with ``e = exp(a - max(a))`` (any shift along ``axis`` gives the
    same weights; the maximum keeps them finite). ``g`` is shaped like the log-sum-exp, or
    a number, which multiplies every weight alike."""
    if type(a) is np.ndarray:             # (the methods skip the functions' dispatch)
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        weight = e / e.sum(axis=axis, keepdims=True)
    else:
        e = np.exp(a - np.max(a, axis=axis, keepdims=True))
        weight = e / np.sum(e, axis=axis, keepdims=True)
    if type(g) is float or np.ndim(g) == 0:
        return weight if type(g) is float and g == 1.0 else g * weight   # (1.0 * w is w)
    return _kept(g, axis, keepdims) * weight

"""A softmax computed as probabilities, its log, and their derivatives in closed form.

``normalize/softmax_logs.py`` turns ``np.log(p)``, where ``p = e / e.sum(axis=k,
keepdims=True)`` and ``e = np.exp(a)``, into ``log_of_softmax(p, a, k)``, whose value is
``np.log(p)``: the program's own. Its derivatives are those of the log-softmax of ``a``
along ``k``: the cotangent ``g`` sends ``g - p * g.sum(axis=k, keepdims=True)`` to ``a``
and nothing to ``p`` (whose dependence on ``a`` that term already holds), where the chain
through ``log``, the division, the sum and ``exp`` took eight operations and two guards of
``g / p``. ``log_of_softmax`` has rules (``srctrans/rules/softmax_log_helpers.py``); the
other functions here are plain NumPy whose second derivatives srctrans gets by reading
this source.

The same pass turns ``p = e / s`` itself into ``softmax_ratio(e, s, a, k)``, whose value is
``e / s``: its cotangent ``g`` sends ``p * (g - (g * p).sum(axis=k, keepdims=True))`` to
``a`` and nothing to ``e`` or ``s`` (the chain through the division, the sum and ``exp``
took five operations and a guard of ``g / s``), and the tangent ``da`` of ``a`` gives the
same expression of ``da``: the softmax's Jacobian is symmetric.
"""

import numpy as np


def log_of_softmax(p, a, axis):
    """``np.log(p)``, ``p`` being the softmax of ``a`` along ``axis`` (``a`` is read by the
    derivatives only)."""
    return np.log(p)


def log_of_softmax_grad(g, p, axis):
    """The cotangent of ``a`` in :func:`log_of_softmax` for the cotangent ``g`` of its
    result: ``g - p * g.sum(axis, keepdims=True)``."""
    g = _spread(g, p)
    return g - p * g.sum(axis=axis, keepdims=True)


def log_of_softmax_tangent(da, p, axis):
    """The tangent of :func:`log_of_softmax`'s result along the tangent ``da`` of ``a``:
    ``da - (p * da).sum(axis, keepdims=True)``."""
    return da - (p * _spread(da, p)).sum(axis=axis, keepdims=True)


def softmax_ratio(e, s, a, axis):
    """``e / s``, ``e`` being ``np.exp(a)`` and ``s`` its sum along ``axis`` (kept): the
    softmax of ``a`` (``a`` is read by the derivatives only)."""
    return e / s


def softmax_ratio_grad(g, p, axis):
    """The cotangent of ``a`` in :func:`softmax_ratio` for the cotangent ``g`` of its result
    ``p``, and the tangent of ``p`` along a tangent ``g`` of ``a`` (the Jacobian is
    symmetric): ``p * (g - (g * p).sum(axis, keepdims=True))``."""
    g = _spread(g, p)
    return p * (g - (g * p).sum(axis=axis, keepdims=True))


def _spread(g, p):
    """``g`` over ``p``'s shape: itself when it has it, else (a number, a seed that
    broadcasts) added to zeros of ``p``'s shape."""
    return g if getattr(g, "shape", None) == p.shape else g + np.zeros_like(p)

"""The log of a softmax computed as probabilities, and its derivatives in closed form.

``normalize/softmax_logs.py`` turns ``np.log(p)``, where ``p = e / e.sum(axis=k,
keepdims=True)`` and ``e = np.exp(a)``, into ``log_of_softmax(p, a, k)``, whose value is
``np.log(p)``: the program's own. Its derivatives are those of the log-softmax of ``a``
along ``k``: the cotangent ``g`` sends ``g - p * g.sum(axis=k, keepdims=True)`` to ``a``
and nothing to ``p`` (whose dependence on ``a`` that term already holds), where the chain
through ``log``, the division, the sum and ``exp`` took eight operations and two guards of
``g / p``. ``log_of_softmax`` has rules (``srctrans/rules/softmax_log_helpers.py``); the
other functions here are plain NumPy whose second derivatives srctrans gets by reading
this source.
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


def _spread(g, p):
    """``g`` over ``p``'s shape: itself when it has it, else (a number, a seed that
    broadcasts) added to zeros of ``p``'s shape."""
    return g if getattr(g, "shape", None) == p.shape else g + np.zeros_like(p)

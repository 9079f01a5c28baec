"""The two terms of a softplus written the stable way, and the derivative they make together.

``normalize/softplus_terms.py`` finds ``np.maximum(z, 0)`` and ``np.log1p(np.exp(-np.abs(z)))``
(or ``np.log(1 + np.exp(-np.abs(z)))``) added with the same sign in one sum: the softplus
``log(1 + exp(z))`` as binary cross-entropies and VAE losses write it
(``max(z, 0) - z * y + log1p(exp(-|z|))``). Its derivative is the sigmoid of ``z``, where the
two terms' rules take ten operations (the tie of the maximum, the sign of ``|z|``, the chain
through ``log1p`` and ``exp``). The terms become :func:`relu_of_softplus` and
:func:`log1p_tail` (or :func:`log_tail`), whose values are the program's own; the tail's
rule sends the whole sigmoid to ``z`` and the maximum's sends nothing
(``srctrans/rules/softplus_helpers.py``). :func:`sigmoid_from_tail` is plain NumPy whose
derivatives srctrans gets by reading this source.
"""

import numpy as np


def relu_of_softplus(z, zero):
    """``np.maximum(z, zero)``: a softplus's first term, whose derivative its tail's rule
    carries (this one has none)."""
    return np.maximum(z, zero)


def log1p_tail(e, z):
    """``np.log1p(e)``, ``e`` being ``np.exp(-np.abs(z))`` (``z`` is read by the derivatives
    only)."""
    return np.log1p(e)


def log_tail(p, e, z):
    """``np.log(p)``, ``p`` being ``1 + e`` and ``e`` being ``np.exp(-np.abs(z))`` (``e`` and
    ``z`` are read by the derivatives only)."""
    return np.log(p)


def sigmoid_from_tail(e, z):
    """The sigmoid of ``z`` from ``e = np.exp(-np.abs(z))``: ``1 / (1 + e)`` where ``z >= 0``,
    ``e / (1 + e)`` elsewhere (no overflow, and exact in both tails). The numerator is
    ``np.exp(np.minimum(z, 0.0))``, which is ``e`` where ``z < 0`` (``-|z|`` is ``z`` there) and 1
    elsewhere: a third of the time of ``np.where(z >= 0, 1.0, e)``."""
    return np.exp(np.minimum(z, 0.0)) / (1.0 + e)

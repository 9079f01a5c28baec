"""Derivatives of ``scipy.spatial.distance``'s ``cdist``, ``pdist`` (the ``"euclidean"`` and
``"sqeuclidean"`` metrics) and ``squareform``.

Imported only through ``rt.scipy_distance``, by generated code of a program that uses
SciPy; plain NumPy and SciPy that srctrans differentiates again (registered with
``differentiate_through`` in ``srctrans/rules/scipy_distance.py``).

With ``D = cdist(A, B)``, ``dD_ij = <a_i - b_j, da_i - db_j> / D_ij`` (``/ 1`` and times 2
for the squared metric); where two points coincide the Euclidean distance has no
derivative, and its rule gives the one-sided limit 0 (as ``np.linalg.norm``'s does). A
condensed ``pdist(X)`` is ``cdist(X, X)`` read above the diagonal, through ``squareform``.
"""

import numpy as np
import scipy.spatial.distance as distance

from .refusals import unsupported

METRICS = ("euclidean", "sqeuclidean")


def _metric(metric):
    if metric not in METRICS:
        unsupported(f"the derivative of a distance with metric={metric!r}",
                    "use metric='euclidean' or 'sqeuclidean', or compute the distances "
                    "with NumPy (np.sqrt(np.sum((a[:, None] - b[None]) ** 2, -1)))")
    return metric


def _weights(g, D, metric):
    """The factor of ``a_i - b_j`` in the cotangent: ``g / D`` (0 where D is 0) or ``2 g``."""
    if _metric(metric) == "sqeuclidean":
        return 2.0 * g
    safe = np.where(D > 0, D, 1.0)
    return np.where(D > 0, g / safe, 0.0)


def cdist_grads(g, D, XA, XB, metric="euclidean"):
    """The cotangents of ``XA`` and ``XB`` for ``D = cdist(XA, XB, metric)``."""
    W = _weights(g, D, metric)
    dA = W.sum(axis=1)[:, None] * XA - W @ XB
    dB = W.sum(axis=0)[:, None] * XB - W.T @ XA
    return dA, dB


def cdist_jvp(dA, dB, D, XA, XB, metric="euclidean"):
    """The tangent of ``D = cdist(XA, XB, metric)``."""
    diff = XA[:, None, :] - XB[None, :, :]
    ddiff = dA[:, None, :] - dB[None, :, :]
    inner = np.sum(diff * ddiff, axis=-1)
    if _metric(metric) == "sqeuclidean":
        return 2.0 * inner
    safe = np.where(D > 0, D, 1.0)
    return np.where(D > 0, inner / safe, 0.0)


def pdist_grad(g, d, X, metric="euclidean"):
    """The cotangent of ``X`` for ``d = pdist(X, metric)``."""
    G = distance.squareform(g, checks=False)
    D = distance.squareform(d, checks=False)
    W = _weights(G, D, metric)
    return W.sum(axis=1)[:, None] * X - W @ X


def pdist_jvp(dX, d, X, metric="euclidean"):
    """The tangent of ``d = pdist(X, metric)``."""
    D = distance.squareform(d, checks=False)
    full = cdist_jvp(dX, dX, D, X, X, metric)
    return distance.squareform(full, checks=False)


def squareform_grad(g, X, force="no"):
    """The cotangent of ``X`` for ``squareform(X, force)``: of a condensed vector, the sum of
    both triangles' entries; of a square matrix, the entries above the diagonal."""
    g = np.asarray(g)
    if g.ndim == 2:                      # vector -> matrix
        summed = g + g.T
        return summed[np.triu_indices(g.shape[0], 1)]
    n = np.shape(X)[0]                   # matrix -> vector
    out = np.zeros((n, n), dtype=g.dtype)
    out[np.triu_indices(n, 1)] = g
    return out


def squareform_jvp(dX, ans, X, force="no"):
    """The tangent of ``squareform(X, force)``: linear in ``X``."""
    return distance.squareform(dX, force=force, checks=False)

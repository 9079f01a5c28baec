"""A Cholesky factor's solves and log-diagonal, differentiated as functions of the matrix factored.

``normalize/cholesky_terms.py`` finds, for ``L = np.linalg.cholesky(a)``, the two solves
``np.linalg.solve(L.T, np.linalg.solve(L, b))`` (``a``'s inverse times ``b``) and the log of
the factor's diagonal ``np.log(np.diag(L))`` (half of ``log det a``, summed): a Gaussian
process's likelihood, a multivariate normal's density. They become :func:`cholesky_solve`
and :func:`cholesky_log_diagonal`, whose values are the program's own, and whose rules
(``srctrans/rules/cholesky_helpers.py``) send their derivatives to ``a`` directly, none to
``L``: the chain through both solves, the diagonal and the factor's own derivative (two
solves, a diagonal matrix, four products and two triangles) is, for one matrix,

- ``x = a^-1 b``: ``b`` gets ``w = a^-1 g``, ``a`` gets ``-(w x^T + x w^T)``;
- ``v = log diag L``: ``a`` gets ``L^-T diag(g) L^-1``,

each kept to ``a``'s lower triangle with its diagonal halved (``tril_halved``: the entries
``np.linalg.cholesky`` reads, an entry below the diagonal standing for its mirror image as
well), as ``rt.cholesky_grad`` keeps them. Here ``a`` means the symmetric matrix
``L @ L.T``, whose lower triangle is ``a``'s. Any other operands (a stack of factors, a
complex factor, a cotangent broadcast to the solution) take the chain itself.

Plain NumPy: srctrans differentiates the helpers through their source (second derivatives).
"""

import numpy as np

from .composites import diag_grad
from .decompositions import cholesky_grad, cholesky_jvp
from .linalg import solve_column, solve_grads, solve_uncolumn, tril_halved
from .singular import zero_guard


def cholesky_solve(L, b, a):
    """``np.linalg.solve(L.T, np.linalg.solve(L, b))``, ``L`` being ``np.linalg.cholesky(a)``
    (``a`` is read by the derivatives only)."""
    return np.linalg.solve(L.T, np.linalg.solve(L, b))


def cholesky_log_diagonal(d, L, a):
    """``np.log(d)``, ``d`` being ``np.diag(L)`` and ``L`` being ``np.linalg.cholesky(a)``
    (``L`` and ``a`` are read by the derivatives only)."""
    return np.log(d)


def cholesky_log_diagonal_sum(d, L, a):
    """``np.sum(np.log(d))``, ``d`` being ``np.diag(L)`` and ``L`` being
    ``np.linalg.cholesky(a)``: half of ``log det a`` (``L`` and ``a`` are read by the
    derivatives only)."""
    return np.sum(np.log(d))


_NUMBERS = (float, np.float64)       # a sum's cotangent: the fused gradient's 1.0, or a float64


def _one_real_matrix(L):
    return type(L) is np.ndarray and L.ndim == 2 and L.dtype.kind == "f"


def cholesky_solve_grad(g, x, L, b, inverse=None):
    """The cotangent of ``a`` for ``x = cholesky_solve(L, b, a)`` given ``x``'s cotangent ``g``
    (``b``'s is ``cholesky_solve(L, g, a)``); ``inverse`` is ``L``'s, when a backward pass
    computes it anyway."""
    if (_one_real_matrix(L) and type(g) is np.ndarray and type(x) is np.ndarray
            and g.shape == x.shape == np.shape(b) and 1 <= x.ndim <= 2
            and x.shape[0] == L.shape[0]):
        w = np.linalg.solve(L.T, np.linalg.solve(L, g)) if inverse is None \
            else inverse.T @ (inverse @ g)
        outer = w[:, None] * x if x.ndim == 1 else w @ x.T
        return -tril_halved(outer + outer.T)
    z = np.linalg.solve(L, b)                       # the chain, as the program computes x
    d_transposed, dz = solve_grads(g, x, L.T, z)
    return cholesky_grad(solve_grads(dz, z, L, b)[0] + np.transpose(d_transposed), L)


def cholesky_solve_tangent(da, x, L, b):
    """The tangent of ``x = cholesky_solve(L, b, a)`` along ``da`` (``b`` held): the chain
    through the factor's tangent and the two solves."""
    dL = cholesky_jvp(da, L)
    transposed = L.T
    z = np.linalg.solve(L, b)
    dz = -solve_uncolumn(np.linalg.solve(L, dL @ solve_column(z, L, b)), L, b)
    return np.linalg.solve(transposed, dz) - solve_uncolumn(
        np.linalg.solve(transposed, dL.T @ solve_column(x, transposed, z)), transposed, z)


def cholesky_log_diagonal_grad(g, L, inverse=None):
    """The cotangent of ``a`` for ``v = cholesky_log_diagonal(d, L, a)`` (or its sum,
    :func:`cholesky_log_diagonal_sum`) given ``v``'s cotangent ``g``; ``inverse`` is ``L``'s,
    when a backward pass computes it anyway."""
    if _one_real_matrix(L) and (type(g) in _NUMBERS or type(g) is np.ndarray and g.ndim <= 1):
        inverse = np.linalg.inv(L) if inverse is None else inverse
        if type(g) in _NUMBERS:                       # a sum's: g times a's inverse
            product = inverse.T @ inverse
            return tril_halved(product if g == 1.0 else g * product)
        return tril_halved(inverse.T @ (g[:, None] * inverse if g.ndim else g * inverse))
    return cholesky_grad(diag_grad(zero_guard(g, g / np.diag(L)), L, 0), L)     # the chain


def cholesky_terms_grad(c, g, x, L, b, inverse):
    """``cholesky_log_diagonal_grad(c, L, inverse) + cholesky_solve_grad(g, x, L, b,
    inverse)``: both terms of a Gaussian likelihood (``c`` a sum's cotangent), through one
    product ``inverse.T @ inverse`` (``a``'s inverse) and one triangle
    (``optimise/cholesky_solves.py`` writes the call where a backward pass adds the two)."""
    if (type(c) in _NUMBERS and _one_real_matrix(L) and type(inverse) is np.ndarray
            and type(g) is np.ndarray and type(x) is np.ndarray
            and g.shape == x.shape == np.shape(b) and 1 <= x.ndim <= 2
            and x.shape[0] == L.shape[0]):
        a_inverse = inverse.T @ inverse
        w = a_inverse @ g
        outer = w[:, None] * x if x.ndim == 1 else w @ x.T
        return tril_halved((a_inverse if c == 1.0 else c * a_inverse) - outer - outer.T)
    return cholesky_log_diagonal_grad(c, L, inverse) + cholesky_solve_grad(g, x, L, b, inverse)


def cholesky_log_diagonal_tangent(da, d, L):
    """The tangent of ``v = cholesky_log_diagonal(d, L, a)`` along ``da``: the chain through
    the factor's tangent, its diagonal and the log."""
    dd = np.diag(cholesky_jvp(da, L))
    return zero_guard(dd, dd / d)

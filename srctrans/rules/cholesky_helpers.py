"""Derivative rules of a Cholesky factor's two solves and log-diagonal
(``normalize/cholesky_terms.py``): ``rt.cholesky_solve(L, b, a)`` and
``rt.cholesky_log_diagonal(d, L, a)`` send their derivatives to the matrix ``a`` factored,
none to the factor ``L`` or its diagonal ``d`` (``runtime/cholesky_terms.py``)."""

import numpy as np

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY
from srctrans.runtime import cholesky_terms

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


# ``L`` (and ``d``) get no cotangent and their tangents are not read: ``a``'s holds the
# derivative through them (``L`` is ``np.linalg.cholesky(a)``)
@vjp(rt.cholesky_solve)
def cholesky_solve(g, ans, L, b, a):
    return None, rt.cholesky_solve(L, g, a), rt.cholesky_solve_grad(g, ans, L, b)

@jvp(rt.cholesky_solve)
def cholesky_solve_jvp(db, da, ans, L, b, a):
    return rt.cholesky_solve(L, db, a), rt.cholesky_solve_tangent(da, ans, L, b)


@vjp(rt.cholesky_log_diagonal)
def cholesky_log_diagonal(g, ans, d, L, a):
    return None, None, rt.cholesky_log_diagonal_grad(g, L)

@jvp(rt.cholesky_log_diagonal)
def cholesky_log_diagonal_jvp(da, ans, d, L, a):
    return rt.cholesky_log_diagonal_tangent(da, d, L)


@vjp(rt.cholesky_log_diagonal_sum)
def cholesky_log_diagonal_sum(g, ans, d, L, a):
    return None, None, rt.cholesky_log_diagonal_grad(g, L)

@jvp(rt.cholesky_log_diagonal_sum)
def cholesky_log_diagonal_sum_jvp(da, ans, d, L, a):
    return np.sum(rt.cholesky_log_diagonal_tangent(da, d, L))


# The helpers' own derivatives: srctrans reads their source (plain NumPy).
REGISTRY.differentiate_through_module(
    cholesky_terms,
    except_=(rt.cholesky_solve, rt.cholesky_log_diagonal, rt.cholesky_log_diagonal_sum))

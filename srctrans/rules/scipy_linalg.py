"""Derivative rules of ``scipy.linalg``: solve, solve_triangular, inv, det, cho_factor and
cho_solve, lu_factor and lu_solve, expm, sqrtm and solve_sylvester.

Loaded on demand, once the user has imported ``scipy.linalg`` (see
``scipy_special.py``). The formulas are in ``runtime/scipy_linalg.py``, plain
NumPy and SciPy that srctrans differentiates again for second derivatives; its
docstring says how each function's matrix is read. Stacked matrices work as
SciPy accepts them. ``overwrite_a=``/``overwrite_b=`` are refused (the call does
not bind: the parameters after them are keyword-only here): an overwritten
argument could not be read by the backward pass. ``check_finite=`` is accepted
and changes nothing.
"""


import scipy.linalg as linalg

from srctrans import runtime as rt
from srctrans.runtime import scipy_linalg as formulas
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


@vjp(linalg.solve_triangular)
def solve_triangular(g, ans, a, b, trans=0, lower=False, unit_diagonal=False, *,
                     check_finite=True):
    return (*rt.scipy_linalg.solve_triangular_grads(g, ans, a, b, trans, lower, unit_diagonal),
            None, None, None, None)

@jvp(linalg.solve_triangular)
def solve_triangular_jvp(da, db, ans, a, b, trans=0, lower=False, unit_diagonal=False, *,
                         check_finite=True):
    return (rt.scipy_linalg.solve_triangular_jvp_a(da, ans, a, b, trans, lower, unit_diagonal),
            rt.scipy_linalg.solve_triangular_jvp_b(db, a, trans, lower, unit_diagonal))

@vjp(linalg.solve)
def solve(g, ans, a, b, lower=False, *, check_finite=True, assume_a=None, transposed=False):
    return (*rt.scipy_linalg.solve_grads(g, ans, a, b, lower, assume_a, transposed),
            None, None, None, None)

@jvp(linalg.solve)
def solve_jvp(da, db, ans, a, b, lower=False, *, check_finite=True, assume_a=None,
              transposed=False):
    return (rt.scipy_linalg.solve_jvp_a(da, ans, a, b, lower, assume_a, transposed),
            rt.scipy_linalg.solve_jvp_b(db, a, b, lower, assume_a, transposed))

@vjp(linalg.inv)
def inv(g, ans, a, *, check_finite=True, assume_a=None, lower=False):
    return rt.scipy_linalg.inv_grad(g, ans, assume_a, lower)

@jvp(linalg.inv)
def inv_jvp(da, ans, a, *, check_finite=True, assume_a=None, lower=False):
    return rt.scipy_linalg.inv_jvp(da, ans, assume_a, lower)

@vjp(linalg.det)
def det(g, ans, a, *, check_finite=True):
    return rt.det_grad(g, ans, a)

@jvp(linalg.det)
def det_jvp(da, ans, a, *, check_finite=True):
    return rt.det_jvp(da, ans, a)

# (c, lower): c holds the factor in one triangle and a's entries in the other
@vjp(linalg.cho_factor)
def cho_factor(g, ans, a, lower=False, *, check_finite=True):
    return rt.scipy_linalg.cho_factor_grad(g, ans, a, lower)

@jvp(linalg.cho_factor)
def cho_factor_jvp(da, ans, a, lower=False, *, check_finite=True):
    return rt.scipy_linalg.cho_factor_jvp(da, ans, a, lower)

@vjp(linalg.cho_solve)
def cho_solve(g, ans, c_and_lower, b, *, check_finite=True):
    return (*rt.scipy_linalg.cho_solve_grads(g, ans, c_and_lower, b), None)

@jvp(linalg.cho_solve)
def cho_solve_jvp(dc_and_lower, db, ans, c_and_lower, b, *, check_finite=True):
    return (rt.scipy_linalg.cho_solve_jvp_c(dc_and_lower, ans, c_and_lower, b),
            rt.scipy_linalg.cho_solve_jvp_b(db, c_and_lower, b))

# (lu, piv): L (unit diagonal, not stored) and U packed in lu, and the row interchanges
@vjp(linalg.lu_factor)
def lu_factor(g, ans, a, *, check_finite=True):
    return rt.scipy_linalg.lu_factor_grad(g, ans, a)

@jvp(linalg.lu_factor)
def lu_factor_jvp(da, ans, a, *, check_finite=True):
    return rt.scipy_linalg.lu_factor_jvp(da, ans, a)

@vjp(linalg.lu_solve)
def lu_solve(g, ans, lu_and_piv, b, trans=0, *, check_finite=True):
    return (*rt.scipy_linalg.lu_solve_grads(g, ans, lu_and_piv, b, trans), None, None)

@jvp(linalg.lu_solve)
def lu_solve_jvp(dlu_and_piv, db, ans, lu_and_piv, b, trans=0, *, check_finite=True):
    return (rt.scipy_linalg.lu_solve_jvp_lu(dlu_and_piv, ans, lu_and_piv, b, trans),
            rt.scipy_linalg.lu_solve_jvp_b(db, lu_and_piv, b, trans))

REGISTRY.returns_tuple(linalg.cho_factor, linalg.lu_factor)

@vjp(linalg.expm)
def expm(g, ans, A):
    return rt.scipy_linalg.expm_grad(g, A)

@jvp(linalg.expm)
def expm_jvp(dA, ans, A):
    return rt.scipy_linalg.expm_frechet(A, dA)

@vjp(linalg.sqrtm)
def sqrtm(g, ans, A):
    return rt.scipy_linalg.sqrtm_grad(g, ans)

@jvp(linalg.sqrtm)
def sqrtm_jvp(dA, ans, A):
    return rt.scipy_linalg.sqrtm_jvp(dA, ans)

@vjp(linalg.solve_sylvester)
def solve_sylvester(g, ans, a, b, q):
    return (*rt.scipy_linalg.solve_sylvester_grads(g, ans, a, b),)

@jvp(linalg.solve_sylvester)
def solve_sylvester_jvp(da, db, dq, ans, a, b, q):
    return rt.scipy_linalg.solve_sylvester_jvp(da, db, dq, ans, a, b)


# second derivatives: srctrans differentiates the formulas' source (they call only
# functions with rules); the row order of lu_factor's interchanges is integers
REGISTRY.differentiate_through_module(formulas)
REGISTRY.nondifferentiable(formulas._permutation, formulas._is_lower, formulas._kind,
                           formulas._transposes)

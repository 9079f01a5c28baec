"""Derivative rules of products (matmul ``@``, dot, inner, outer, tensordot, einsum) and of
``np.linalg`` (inv, det, slogdet, norm, solve, cholesky, eigh, eigvalsh, svd, qr, pinv,
lstsq, matrix_power, multi_dot, tensorinv, tensorsolve), ``np.cross``, ``np.kron``,
``np.polyval``, ``np.convolve`` and ``np.correlate``.

Each product has a VJP rule and, right below it, its JVP: products are
linear in each operand, so the tangent is the product with one operand
replaced by its tangent, summed over the operands.
"""


import numpy as np

from srctrans import runtime as rt
from srctrans.runtime import (composites, decompositions, log_sum_exp, selections,
                              shared_inverses)
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


@vjp(np.matmul)
def matmul(g, ans, x, y):
    return rt.matmul_lhs(g, x, y), rt.matmul_rhs(g, x, y)

@jvp(np.matmul)
def matmul_jvp(dx, dy, ans, x, y):
    return dx @ y, x @ dy

@vjp(np.dot)
def dot(g, ans, a, b):
    return rt.dot_lhs(g, a, b), rt.dot_rhs(g, a, b)

@jvp(np.dot)
def dot_jvp(da, db, ans, a, b):
    return np.dot(da, b), np.dot(a, db)

# sum(conj(a) * b) over the flattened arrays: conjugate-linear in a
@vjp(np.vdot)
def vdot(g, ans, a, b):
    return (*rt.vdot_grads(g, a, b),)

@jvp(np.vdot)
def vdot_jvp(da, db, ans, a, b):
    return np.vdot(da, b), np.vdot(a, db)

@vjp(np.inner)
def inner(g, ans, a, b):
    return rt.inner_lhs(g, a, b), rt.inner_rhs(g, a, b)

@jvp(np.inner)
def inner_jvp(da, db, ans, a, b):
    return np.inner(da, b), np.inner(a, db)

@vjp(np.outer)
def outer(g, ans, a, b):
    return rt.outer_lhs(g, a, b), rt.outer_rhs(g, a, b)

@jvp(np.outer)
def outer_jvp(da, db, ans, a, b):
    return np.outer(da, b), np.outer(a, db)

@vjp(np.tensordot)
def tensordot(g, ans, a, b, axes=2):
    return rt.tensordot_lhs(g, a, b, axes), rt.tensordot_rhs(g, a, b, axes), None

@jvp(np.tensordot)
def tensordot_jvp(da, db, ans, a, b, axes=2):
    return np.tensordot(da, b, axes), np.tensordot(a, db, axes)

@vjp(np.einsum)
def einsum(g, ans, subscripts, *operands):
    return (None, *rt.einsum_grads(g, subscripts, operands))

@jvp(np.einsum)
def einsum_jvp(doperands, ans, subscripts, *operands):
    return rt.einsum_jvp(doperands, ans, subscripts, operands)


# the cross product of 3-vectors, in the last axes or those axisa=, axisb=, axisc= (or axis=)
# name; linear in each argument
@vjp(np.cross)
def cross(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return (*rt.cross_grads(g, a, b, axisa, axisb, axisc, axis), None, None, None, None)

REGISTRY.differentiate_through(rt.cross_grads)    # plain NumPy: its second derivative

@jvp(np.cross)
def cross_jvp(da, db, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return (np.cross(da, b, axisa, axisb, axisc, axis),
            np.cross(a, db, axisa, axisb, axisc, axis))

# -- np.linalg: stacked matrices in the last two axes -------------------------
@vjp(np.linalg.inv)
def inv(g, ans, a):
    return -np.swapaxes(ans, -1, -2) @ g @ np.swapaxes(ans, -1, -2)

@jvp(np.linalg.inv)
def inv_jvp(da, ans, a):
    return -ans @ da @ ans

# the cofactor matrix det(a) inv(a).T, through the SVD at a singular a (runtime/decompositions.py)
@vjp(np.linalg.det)
def det(g, ans, a):
    return rt.det_grad(g, ans, a)

@jvp(np.linalg.det)
def det_jvp(da, ans, a):
    return rt.det_jvp(da, ans, a)

# (sign, log|det|), a named tuple: the sign is piecewise constant, and the tangent is
# a result of the same kind with a zero sign (rt.getitem_grad places the entry)
@vjp(np.linalg.slogdet)
def slogdet(g, ans, a):
    return np.expand_dims(g[1], (-2, -1)) * np.swapaxes(
        np.linalg.inv(rt.real_only(a, "np.linalg.slogdet")), -1, -2)

@jvp(np.linalg.slogdet)
def slogdet_jvp(da, ans, a):
    return rt.getitem_grad(np.trace(np.linalg.inv(rt.real_only(a, "np.linalg.slogdet")) @ da,
                                    axis1=-2, axis2=-1), ans, 1)

REGISTRY.returns_tuple(np.linalg.slogdet, np.linalg.eigh, np.linalg.eig, np.linalg.svd,
                       np.linalg.qr, np.linalg.lstsq)

# Norms of every order NumPy has, for vectors and matrices (runtime/composites.py):
# at a zero vector the cotangent is zero; ties of inf-norms and of the columns or rows
# of 1- and inf-norms share it equally; ord=2 and nuc of matrices go through the SVD.
@vjp(np.linalg.norm)
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    return rt.norm_grad(g, ans, x, ord, axis, keepdims)

@jvp(np.linalg.norm)
def norm_jvp(dx, ans, x, ord=None, axis=None, keepdims=False):
    return rt.norm_jvp(dx, ans, x, ord, axis, keepdims)

# b is read as vectors or as matrices as NumPy reads it (rt.solve_column)
@vjp(np.linalg.solve)
def solve(g, ans, a, b):
    return (*rt.solve_grads(g, ans, a, b),)

@jvp(np.linalg.solve)
def solve_jvp(da, db, ans, a, b):
    return (-rt.solve_uncolumn(np.linalg.solve(a, da @ rt.solve_column(ans, a, b)), a, b),
            np.linalg.solve(a, db))

# what specialised code calls without np.linalg's wrapper (runtime/linalg_kernels.py)
REGISTRY.same_rules_as(np.linalg.inv, rt.inv)
REGISTRY.same_rules_as(np.linalg.solve, rt.solve)
REGISTRY.same_rules_as(np.linalg.cholesky, rt.cholesky)

# np.linalg.cholesky reads only the lower triangle of a: an entry below the diagonal
# stands for itself and its mirror image, so its cotangent counts both.
@vjp(np.linalg.cholesky)
def cholesky(g, ans, a):
    return rt.cholesky_grad(g, ans)

@jvp(np.linalg.cholesky)
def cholesky_jvp(da, ans, a):
    return rt.cholesky_jvp(da, ans)

# -- decompositions (runtime/decompositions.py: formulas, and what happens at repeated
# eigenvalues or singular values) ---------------------------------------------
# eigh and eigvalsh read one triangle of a (UPLO), as cholesky does.
@vjp(np.linalg.eigh)
def eigh(g, ans, a, UPLO="L"):
    return rt.eigh_grad(g, ans, UPLO)

@jvp(np.linalg.eigh)
def eigh_jvp(da, ans, a, UPLO="L"):
    return rt.eigh_jvp(da, ans, UPLO)

# eig and eigvals of general matrices: complex eigenvalues and eigenvectors (docs/complex.md);
# eigenvectors keep LAPACK's normalisation (unit length, largest entry real)
@vjp(np.linalg.eig)
def eig(g, ans, a):
    return rt.eig_grad(g, ans, a)

@jvp(np.linalg.eig)
def eig_jvp(da, ans, a):
    return rt.eig_jvp(da, ans)

@vjp(np.linalg.eigvals)
def eigvals(g, ans, a):
    return rt.eigvals_grad(g, a)

@jvp(np.linalg.eigvals)
def eigvals_jvp(da, ans, a):
    return rt.eigvals_jvp(da, a)

@vjp(np.linalg.eigvalsh)
def eigvalsh(g, ans, a, UPLO="L"):
    return rt.eigvalsh_grad(g, a, UPLO)

@jvp(np.linalg.eigvalsh)
def eigvalsh_jvp(da, ans, a, UPLO="L"):
    return rt.eigvalsh_jvp(da, a, UPLO)

# hermitian=True is refused: the call does not bind
@vjp(np.linalg.svd)
def svd(g, ans, a, full_matrices=True, compute_uv=True):
    return rt.svd_grad(g, ans, a, full_matrices, compute_uv)

@jvp(np.linalg.svd)
def svd_jvp(da, ans, a, full_matrices=True, compute_uv=True):
    return rt.svd_jvp(da, ans, a, full_matrices, compute_uv)

@vjp(np.linalg.qr)
def qr(g, ans, a, mode="reduced"):
    return rt.qr_grad(g, ans, a, mode)

@jvp(np.linalg.qr)
def qr_jvp(da, ans, a, mode="reduced"):
    return rt.qr_jvp(da, ans, a, mode)

# the rank must not change near a (full rank); rcond= and hermitian= are refused
@vjp(np.linalg.pinv)
def pinv(g, ans, a):
    return rt.pinv_grad(g, ans, a)

@jvp(np.linalg.pinv)
def pinv_jvp(da, ans, a):
    return rt.pinv_jvp(da, ans, a)

@vjp(np.linalg.lstsq)
def lstsq(g, ans, a, b, rcond=None):
    return (*rt.lstsq_grads(g, ans, a, b), None)

@jvp(np.linalg.lstsq)
def lstsq_jvp(da, db, ans, a, b, rcond=None):
    return rt.lstsq_jvp(da, db, ans, a, b)

@vjp(np.linalg.matrix_power)
def matrix_power(g, ans, a, n):
    return rt.matrix_power_grad(g, a, n), None

@jvp(np.linalg.matrix_power)
def matrix_power_jvp(da, ans, a, n):
    return rt.matrix_power_jvp(da, a, n)

@vjp(np.linalg.multi_dot)
def multi_dot(g, ans, arrays):
    return rt.multi_dot_grads(g, arrays)

@jvp(np.linalg.multi_dot)
def multi_dot_jvp(darrays, ans, arrays):
    return rt.multi_dot_jvp(darrays, arrays)

# Their second derivatives: srctrans differentiates the helpers' source (plain NumPy),
# all but tuple_like, which rebuilds NumPy's named tuples, and the SVD's cofactor matrix,
# whose second derivative is refused (rules/runtime_helpers.py);
# the same holds for runtime/composites.py, runtime/selections.py, runtime/log_sum_exp.py
# and runtime/shared_inverses.py.
for _module in (decompositions, composites, selections, log_sum_exp, shared_inverses):
    REGISTRY.differentiate_through_module(_module,
                                         except_=(rt.tuple_like, decompositions._cofactor))
REGISTRY.nondifferentiable(rt.unsupported)       # raises: a refusal has no derivative
REGISTRY.nondifferentiable(rt.numpy_only)       # a check that raises or returns None


@vjp(np.kron)
def kron(g, ans, a, b):
    return (*rt.kron_grads(g, a, b),)

@jvp(np.kron)
def kron_jvp(da, db, ans, a, b):
    return np.kron(da, b), np.kron(a, db)

@vjp(np.polyval)
def polyval(g, ans, p, x):
    return (*rt.polyval_grads(g, p, x),)

@jvp(np.polyval)
def polyval_jvp(dp, dx, ans, p, x):
    return np.polyval(dp, x), dx * np.polyval(rt.polyder_coefficients(p), x)

# 1-D convolution and correlation of real arrays, in every mode
@vjp(np.convolve)
def convolve(g, ans, a, v, mode="full"):
    return (*rt.convolve_grads(g, a, v, mode), None)

@jvp(np.convolve)
def convolve_jvp(da, dv, ans, a, v, mode="full"):
    return np.convolve(da, v, mode), np.convolve(a, dv, mode)

@vjp(np.correlate)
def correlate(g, ans, a, v, mode="valid"):
    return (*rt.correlate_grads(g, a, v, mode), None)

@jvp(np.correlate)
def correlate_jvp(da, dv, ans, a, v, mode="valid"):
    return np.correlate(da, v, mode), np.correlate(a, dv, mode)

@vjp(np.linalg.tensorinv)
def tensorinv(g, ans, a, ind=2):
    return rt.tensorinv_grad(g, ans, a, ind), None

@jvp(np.linalg.tensorinv)
def tensorinv_jvp(da, ans, a, ind=2):
    return rt.tensorinv_jvp(da, ans, a, ind)

@vjp(np.linalg.tensorsolve)
def tensorsolve(g, ans, a, b, axes=None):
    return (*rt.tensorsolve_grads(g, ans, a, b, axes), None)

@jvp(np.linalg.tensorsolve)
def tensorsolve_jvp(da, db, ans, a, b, axes=None):
    return rt.tensorsolve_jvp(da, db, ans, a, b, axes)

"""Derivatives of the matrix decompositions and products of ``np.linalg``.

The functions here are plain NumPy written so that srctrans can differentiate
them again: for second derivatives it reads their source (they are registered
with ``differentiate_through`` in ``srctrans/rules/linalg.py``), so only
:func:`tuple_like` needs rules of its own.

Every function works on stacked matrices in the last two axes, as NumPy's do.
The formulas are the standard ones (Giles 2008; Townsend 2016 for the SVD;
Walter et al. for QR): each VJP is the transpose of the JVP beside it, which
the tests check. Where a decomposition is not differentiable the result says
so rather than guessing:

- eigenvectors (``eigh``) and singular vectors (``svd``) at repeated
  eigenvalues or singular values have no derivative: their terms divide by
  zero and come out infinite or NaN. Eigenvalues and singular values alone
  stay differentiable there (their derivative does not divide), and a
  derivative that does not read the vectors never touches those terms.
- the columns of ``svd(..., full_matrices=True)`` beyond ``min(m, n)`` are
  any orthonormal completion LAPACK picks: a derivative that reads them is NaN.
- ``pinv`` and ``lstsq`` assume the rank does not change near the point,
  which holds for matrices of full rank.
"""

import numpy as np

from .refusals import unsupported
from .complex_numbers import is_complex_value, real_for, real_only
from .foreign import as_array, is_foreign
from .linalg import symmetric_sum, tril_halved


def _t(x):
    return np.swapaxes(x, -1, -2)


def _diag(v):
    """Stacked diagonal matrices with ``v`` (last axis) on the diagonal."""
    return v[..., :, None] * np.eye(v.shape[-1], dtype=v.dtype)


def tuple_like(ans, parts):
    """A tangent or cotangent with ``ans``'s kind of tuple (NumPy's named tuples included).

    Linear in ``parts``; it has rules of its own (the functions around it are
    differentiated through their source, and a type's call is not)."""
    kind = type(ans)
    return kind(*parts) if hasattr(ans, "_fields") else kind(parts)


def _is_zero(x):
    return x is None or not np.any(x)


def _gaps(w):
    """``1 / (w_j - w_i)`` off the diagonal and 0 on it (infinite where two values are equal)."""
    diff = w[..., None, :] - w[..., :, None]
    eye = np.eye(w.shape[-1], dtype=bool)
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


# -- symmetric matrices read from one triangle ------------------------------------------

def _triangle_halved(x, uplo):
    return tril_halved(x) if uplo.upper() == "L" else _t(tril_halved(_t(x)))


def symmetric_from_triangle(da, uplo="L"):
    """The symmetric matrix ``eigh(a, UPLO)`` decomposes, as a linear function of ``a``."""
    half = _triangle_halved(da, uplo)
    return half + _t(half)


def symmetric_from_triangle_transpose(m, uplo="L"):
    """The transpose of :func:`symmetric_from_triangle` (it reads one triangle of ``m + m.T``)."""
    return _triangle_halved(m + _t(m), uplo)


def eigh_grad(g, ans, uplo="L"):
    """The cotangent of ``a`` for ``(w, v) = np.linalg.eigh(a, UPLO=uplo)``."""
    real_only(ans[1], "np.linalg.eigh")
    w, v = ans
    gw, gv = g
    inner = _diag(gw) if not _is_zero(gw) else np.zeros(v.shape, dtype=v.dtype)
    if not _is_zero(gv):
        inner = inner + _gaps(w) * (_t(v) @ gv)
    return symmetric_from_triangle_transpose(v @ inner @ _t(v), uplo)


def eigh_jvp(da, ans, uplo="L"):
    """The tangent ``(dw, dv)`` of ``np.linalg.eigh(a, UPLO=uplo)`` along ``da``."""
    real_only(ans[1], "np.linalg.eigh")
    w, v = ans
    p = _t(v) @ symmetric_from_triangle(da, uplo) @ v
    return tuple_like(ans, (np.diagonal(p, axis1=-2, axis2=-1), v @ (_gaps(w) * p)))


# -- Cholesky: a reads only its lower triangle (an entry below the diagonal stands for
# itself and its mirror image, so its cotangent counts both) ------------------------------

def cholesky_grad(g, L, inverse=None):
    """The cotangent of ``a`` for ``L = np.linalg.cholesky(a)``:
    ``tril_halved(L^-T sym(tril_halved(L^T g)) L^-1)``, with ``L``'s inverse computed once
    (or given: ``inverse``, shared with the backward pass's solves against ``L``,
    ``optimise/cholesky_solves.py``)."""
    real_only(L, "np.linalg.cholesky")
    inverse = np.linalg.inv(L) if inverse is None else inverse
    if type(L) is np.ndarray and L.ndim == 2:       # one matrix: its own transposes, .T
        inner = tril_halved(L.T @ g)
        return tril_halved(inverse.T @ (inner + inner.T) @ inverse)
    inner = symmetric_sum(tril_halved(_t(L) @ g))
    return tril_halved(_t(inverse) @ inner @ inverse)


def cholesky_jvp(da, L):
    """The tangent of ``L = np.linalg.cholesky(a)``:
    ``L tril_halved(L^-1 sym(tril_halved(da)) L^-T)``."""
    inverse = np.linalg.inv(real_only(L, "np.linalg.cholesky"))
    return L @ tril_halved(inverse @ symmetric_sum(tril_halved(da)) @ _t(inverse))


# -- general (not symmetric) matrices: np.linalg.eig and eigvals ---------------------------
# a = v diag(w) inv(v), so inv(v) da v = p has dw = diag(p) and dv = v (gaps * p), which
# then keeps LAPACK's choice of each eigenvector: unit length, and (complex vectors) its
# largest entry real. The eigenvalues of a real matrix are real or come in conjugate
# pairs; the dtype NumPy returns says which, and the derivatives follow it.

def eig_jvp(da, ans):
    """The tangent ``(dw, dv)`` of ``np.linalg.eig(a)`` along ``da``."""
    w, v = ans
    p = np.linalg.solve(v, da @ v)
    return tuple_like(ans, (np.diagonal(p, axis1=-2, axis2=-1), _eig_gauge(v @ (_gaps(w) * p), v)))


def eig_grad(g, ans, a):
    """The cotangent of ``a`` for ``(w, v) = np.linalg.eig(a)`` (the transpose of
    :func:`eig_jvp` for the pairing ``Re(sum(g * d))``, docs/complex.md)."""
    w, v = ans
    gw, gv = g
    inner = _diag(gw) if not _is_zero(gw) else np.zeros(v.shape, dtype=v.dtype)
    if not _is_zero(gv):
        inner = inner + _gaps(w) * (_t(v) @ _eig_gauge_transpose(gv, v))
    return real_for(np.linalg.solve(_t(v), inner @ _t(v)), a)


def eigvals_grad(g, a):
    """The cotangent of ``a`` for ``w = np.linalg.eigvals(a)``."""
    v = np.linalg.eig(a)[1]
    return real_for(np.linalg.solve(_t(v), _diag(g) @ _t(v)), a)


def eigvals_jvp(da, a):
    """The tangent of ``np.linalg.eigvals(a)`` along ``da``."""
    v = np.linalg.eig(a)[1]
    return np.diagonal(np.linalg.solve(v, da @ v), axis1=-2, axis2=-1)


def _eig_gauge(dv, v):
    """``dv`` made a tangent of eigenvectors of unit length whose largest entry (by
    modulus) stays real, as LAPACK returns them."""
    dv = dv - v * np.real(np.sum(np.conj(v) * dv, axis=-2, keepdims=True))
    if is_complex_value(v):
        largest = _largest_entries(v)
        top = np.sum(np.where(largest, v, 0), axis=-2, keepdims=True)
        dtop = np.sum(np.where(largest, dv, 0), axis=-2, keepdims=True)
        dv = dv - 1j * v * (np.imag(dtop * np.conj(top)) / np.abs(top) ** 2)
    return dv


def _eig_gauge_transpose(gv, v):
    """The transpose of :func:`_eig_gauge` (a linear map of ``dv``), applied to ``gv``."""
    if is_complex_value(v):
        largest = _largest_entries(v)
        top = np.sum(np.where(largest, v, 0), axis=-2, keepdims=True)
        turned = np.imag(np.sum(gv * v, axis=-2, keepdims=True))
        gv = gv + np.where(largest, -1j * np.conj(top) * turned / np.abs(top) ** 2, 0)
    return gv - np.conj(v) * np.real(np.sum(gv * v, axis=-2, keepdims=True))


def _largest_entries(v):
    """A mask of each column's entry of largest modulus (a constant: it only picks)."""
    rows = np.arange(v.shape[-2])[:, None]
    return rows == np.argmax(np.abs(v), axis=-2)[..., None, :]


def eigvalsh_grad(g, a, uplo="L"):
    """The cotangent of ``a`` for ``w = np.linalg.eigvalsh(a, UPLO=uplo)``."""
    real_only(a, "np.linalg.eigvalsh")
    v = np.linalg.eigh(a, UPLO=uplo)[1]
    return symmetric_from_triangle_transpose(v @ _diag(g) @ _t(v), uplo)


def eigvalsh_jvp(da, a, uplo="L"):
    real_only(a, "np.linalg.eigvalsh")
    v = np.linalg.eigh(a, UPLO=uplo)[1]
    return np.diagonal(_t(v) @ symmetric_from_triangle(da, uplo) @ v, axis1=-2, axis2=-1)


# -- the singular value decomposition --------------------------------------------------

def _reduced(ans):
    """``(u, s, v)`` of the thin SVD, and the columns ``full_matrices=True`` added."""
    u, s, vh = ans
    k = s.shape[-1]
    return u[..., :, :k], s, _t(vh[..., :k, :]), u[..., :, k:], _t(vh[..., k:, :])


def _inverse_or_zero(s):
    zero = s == 0
    return np.where(zero, 0.0, 1.0 / np.where(zero, 1.0, s))


def svd_jvp(da, ans, a, full_matrices=True, compute_uv=True):
    """The tangent of ``np.linalg.svd(a, full_matrices, compute_uv)`` along ``da``."""
    real_only(a, "np.linalg.svd")
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return np.diagonal(_t(u) @ da @ _t(vh), axis1=-2, axis2=-1)
    u, s, v, u_rest, v_rest = _reduced(ans)
    p = _t(u) @ da @ v                                   # k x k
    ds = np.diagonal(p, axis1=-2, axis2=-1)
    f = _gaps(s * s)
    ps, sp = p * s[..., None, :], s[..., :, None] * p
    du = u @ (f * (ps + _t(ps)))
    dv = v @ (f * (sp + _t(sp)))
    inverse = _inverse_or_zero(s)[..., None, :]
    du = du + (da @ v - u @ p) * inverse                 # the part outside u's columns
    dv = dv + (_t(da) @ u - v @ _t(p)) * inverse
    if full_matrices:                                    # LAPACK's completion: no derivative
        du = np.concatenate([du, np.full(u_rest.shape, np.nan, du.dtype)], axis=-1)
        dv = np.concatenate([dv, np.full(v_rest.shape, np.nan, dv.dtype)], axis=-1)
    return tuple_like(ans, (du, ds, _t(dv)))


def svd_grad(g, ans, a, full_matrices=True, compute_uv=True):
    """The cotangent of ``a`` for ``np.linalg.svd(a, full_matrices, compute_uv)``."""
    real_only(a, "np.linalg.svd")
    if not compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u @ _diag(g) @ vh
    u, s, v, u_rest, v_rest = _reduced(ans)
    gu, gs, gvh = g
    k = s.shape[-1]
    gu = np.zeros(u.shape, a.dtype) if _is_zero(gu) else as_array(gu)
    gvh = np.zeros(_t(v).shape, a.dtype) if _is_zero(gvh) else as_array(gvh)
    poisoned = (full_matrices and (np.any(gu[..., :, k:]) or np.any(gvh[..., k:, :])))
    gu, gv = gu[..., :, :k], _t(gvh[..., :k, :])
    inner = _diag(gs) if not _is_zero(gs) else np.zeros(s.shape + s.shape[-1:], a.dtype)
    f = _gaps(s * s)
    if not _is_zero(gu):
        j = f * (_t(u) @ gu)
        inner = inner + (j + _t(j)) * s[..., None, :]
    if not _is_zero(gv):
        k_ = f * (_t(v) @ gv)
        inner = inner + s[..., :, None] * (k_ + _t(k_))
    inverse = _inverse_or_zero(s)
    out = u @ inner @ _t(v)
    if not _is_zero(gu):
        out = out + (gu - u @ (_t(u) @ gu)) * inverse[..., None, :] @ _t(v)
    if not _is_zero(gv):
        out = out + u @ (inverse[..., :, None] * _t(gv - v @ (_t(v) @ gv)))
    return np.full(out.shape, np.nan, out.dtype) if poisoned else out


# -- QR ---------------------------------------------------------------------------------

def _check_qr(a, mode):
    m, n = a.shape[-2:]
    if m < n or mode not in ("reduced", "r", "complete") or (mode == "complete" and m != n):
        unsupported(f"the derivative of np.linalg.qr of a {m} x {n} matrix in mode {mode!r}",
                    "srctrans differentiates qr of matrices with at least as many rows as "
                    "columns, in mode 'reduced' or 'r' ('complete' when square): use the "
                    "transpose of a wide matrix")


def qr_jvp(da, ans, a, mode="reduced"):
    """The tangent of ``np.linalg.qr(a, mode)`` along ``da`` (``m >= n``)."""
    real_only(a, "np.linalg.qr")
    _check_qr(a, mode)
    q, r = (np.linalg.qr(a)) if mode == "r" else ans
    da_rinv = _t(np.linalg.solve(_t(r), _t(da)))         # da @ inv(r)
    qt_da_rinv = _t(q) @ da_rinv
    lower = np.tril(qt_da_rinv, -1)
    omega = lower - _t(lower)
    dr = (qt_da_rinv - omega) @ r
    if mode == "r":
        return dr
    return tuple_like(ans, (q @ (omega - qt_da_rinv) + da_rinv, dr))


def qr_grad(g, ans, a, mode="reduced"):
    """The cotangent of ``a`` for ``np.linalg.qr(a, mode)`` (``m >= n``)."""
    real_only(a, "np.linalg.qr")
    _check_qr(a, mode)
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = None, g
    else:
        (q, r), (gq, gr) = ans, g
    gq = np.zeros(q.shape, a.dtype) if _is_zero(gq) else as_array(gq)
    gr = np.zeros(r.shape, a.dtype) if _is_zero(gr) else as_array(gr)
    m = r @ _t(gr) - _t(gq) @ q
    lower = np.tril(m, -1)
    copied = lower + _t(lower) + _diag(np.diagonal(m, axis1=-2, axis2=-1))
    b = gq + q @ copied
    return _t(np.linalg.solve(r, _t(b)))                 # b @ inv(r).T


# -- pseudo-inverse and least squares -------------------------------------------------------

def pinv_jvp(da, ans, a):
    """The tangent of ``np.linalg.pinv(a)`` (a matrix of constant rank) along ``da``."""
    real_only(a, "np.linalg.pinv")
    p = ans
    m, n = a.shape[-2:]
    return (-p @ da @ p + p @ _t(p) @ _t(da) @ (np.eye(m, dtype=p.dtype) - a @ p)
            + (np.eye(n, dtype=p.dtype) - p @ a) @ _t(da) @ _t(p) @ p)


def pinv_grad(g, ans, a):
    """The cotangent of ``a`` for ``p = np.linalg.pinv(a)`` (a matrix of constant rank)."""
    real_only(a, "np.linalg.pinv")
    p = ans
    m, n = a.shape[-2:]
    return (-_t(p) @ g @ _t(p) + (np.eye(m, dtype=p.dtype) - a @ p) @ _t(g) @ p @ _t(p)
            + _t(p) @ p @ _t(g) @ (np.eye(n, dtype=p.dtype) - p @ a))


def lstsq_jvp(da, db, ans, a, b):
    """The tangent of ``np.linalg.lstsq(a, b)``'s ``(x, residuals, rank, s)`` along ``da, db``."""
    x, residuals, rank, s = ans
    p = np.linalg.pinv(a)
    dx = pinv_jvp(da, p, a) @ b + p @ db
    dres = np.zeros(residuals.shape, residuals.dtype)
    if residuals.size:
        change = np.sum((b - a @ x) * (db - da @ x), axis=0)
        dres = np.reshape(2.0 * change, residuals.shape)
    return tuple_like(ans, (dx, dres, 0, svd_jvp(da, None, a, compute_uv=False)))


def lstsq_grads(g, ans, a, b):
    """The cotangents of ``a`` and ``b`` for ``np.linalg.lstsq(a, b)``."""
    x, residuals, rank, s = ans
    gx, gres, _, gs = g
    p = np.linalg.pinv(a)
    column = x.ndim == 1
    gx = np.zeros(x.shape, a.dtype) if _is_zero(gx) else as_array(gx)
    ga = pinv_grad(np.outer(gx, b) if column else gx @ _t(b), p, a)
    gb = _t(p) @ gx
    if not _is_zero(gs):
        ga = ga + svd_grad(gs, None, a, compute_uv=False)
    if residuals.size and not _is_zero(gres):
        r = b - a @ x
        weighted = 2.0 * r * gres                      # one weight per right-hand side
        gb = gb + weighted
        ga = ga - (np.outer(weighted, x) if column else weighted @ _t(x))
    return ga, gb


# -- powers and chained products ------------------------------------------------------------

def _powers(a, n):
    """``[a^0, a^1, ..., a^(n-1)]`` (stacked identities first)."""
    powers = [np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    return powers


def matrix_power_grad(g, a, n):
    """The cotangent of ``a`` for ``np.linalg.matrix_power(a, n)``."""
    if n == 0:
        return np.zeros(a.shape, np.result_type(a, g))
    base = np.linalg.inv(a) if n < 0 else a
    powers = _powers(base, abs(n))
    g_base = sum(_t(powers[k]) @ g @ _t(powers[abs(n) - 1 - k]) for k in range(abs(n)))
    return -_t(base) @ g_base @ _t(base) if n < 0 else g_base


def matrix_power_jvp(da, a, n):
    """The tangent of ``np.linalg.matrix_power(a, n)`` along ``da``."""
    if n == 0:
        return np.zeros(a.shape, np.result_type(a, da))
    base = np.linalg.inv(a) if n < 0 else a
    d_base = -base @ da @ base if n < 0 else da
    powers = _powers(base, abs(n))
    return sum(powers[k] @ d_base @ powers[abs(n) - 1 - k] for k in range(abs(n)))


def _multi_dot_matrices(arrays):
    """``multi_dot``'s operands as matrices: a first vector is a row, a last one a column."""
    arrays = [as_array(x) for x in arrays]
    first, last = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first:
        arrays[0] = arrays[0][None, :]
    if last:
        arrays[-1] = arrays[-1][:, None]
    return arrays, first, last


def _chain(matrices, size, dtype):
    out = np.eye(size, dtype=dtype)
    for m in matrices:
        out = out @ m
    return out


def multi_dot_grads(g, arrays):
    """The cotangents of the operands of ``np.linalg.multi_dot(arrays)``."""
    matrices, first, last = _multi_dot_matrices(arrays)
    g = np.reshape(g, (matrices[0].shape[0], matrices[-1].shape[1]))
    grads = []
    for i in range(len(matrices)):
        left = _chain(matrices[:i], matrices[0].shape[0], g.dtype)
        right = _chain(matrices[i + 1:], matrices[i].shape[1], g.dtype)
        grads.append(_t(left) @ g @ _t(right))
    if first:
        grads[0] = grads[0][0]
    if last:
        grads[-1] = grads[-1][:, 0]
    return grads


def multi_dot_jvp(tangents, arrays):
    """The tangent of ``np.linalg.multi_dot(arrays)`` given one tangent (or None) per operand."""
    total = 0.0
    for i in range(len(arrays)):
        if tangents[i] is not None:
            operands = [tangents[j] if j == i else arrays[j] for j in range(len(arrays))]
            total = total + np.linalg.multi_dot(operands)
    return total


# -- the determinant ------------------------------------------------------------------

def _cofactor(a):
    """The cofactor matrix of (stacked) ``a``, ``det(a) inv(a)^T``, finite at singular
    matrices too: ``det(u) det(v) u diag(prod_{j != i} s_j) v^T`` from the SVD, the
    products of all singular values but one taken without dividing."""
    u, s, vh = np.linalg.svd(a)
    ones = np.ones_like(s[..., :1])
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(s[..., 1:], axis=-1)], axis=-1),
                               axis=-1), axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * ((u * (before * after)[..., None, :]) @ vh)


def refuse_cofactor_derivative():
    """The derivative of :func:`_cofactor` (a second derivative of a determinant): refused,
    since the SVD's pieces are not smooth where a singular value is zero."""
    unsupported("the second derivative of a determinant at a singular or nearly singular matrix",
                "its first derivative is supported there; use np.linalg.slogdet where the "
                "determinant is away from zero")


def _well_conditioned(ans, a):
    """Whether every ``|det(a)|`` is above the square root of the precision times the
    product of the column lengths (Hadamard's bound): then ``det(a) inv(a)^T`` is accurate.
    Below it (singular, or nearly: the two factors' errors no longer cancel) the SVD is."""
    bound = np.prod(np.sqrt(np.sum(a * a, axis=-2)), axis=-1)
    return bool(np.all(np.abs(ans) > np.sqrt(np.finfo(np.result_type(a, 1.0)).eps) * bound))


def _det_cofactor(ans, a):
    """The cofactor matrix ``det(a) inv(a)^T``: through the inverse where that is accurate,
    else through the SVD (:func:`_cofactor`); a foreign array takes the SVD, unlooked at."""
    if not is_foreign(ans) and _well_conditioned(ans, a):
        cofactor = np.expand_dims(ans, (-2, -1)) * _t(np.linalg.inv(a))
    else:
        cofactor = _cofactor(a)
    return cofactor


def det_grad(g, ans, a):
    """The cotangent of ``a`` for ``ans = det(a)``: ``g`` times the cofactor matrix."""
    return np.expand_dims(g, (-2, -1)) * _det_cofactor(ans, a)


def det_jvp(da, ans, a):
    return np.sum(_det_cofactor(ans, a) * da, axis=(-2, -1))

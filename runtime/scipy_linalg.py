"""Derivatives of ``scipy.linalg``: solves, inverses, determinants, the Cholesky and LU
factorizations with their solves, and the matrix exponential and square root.

Imported only through ``rt.scipy_linalg`` (the runtime's lazy attribute), by
generated code of a program that uses SciPy. The functions are plain NumPy and
SciPy written so that srctrans can differentiate them again: they are
registered with ``differentiate_through`` in ``srctrans/rules/scipy_linalg.py``
and call only functions that have rules.

Conventions, as SciPy computes:

- a matrix is read as SciPy reads it: ``solve``/``inv`` with ``assume_a="sym"``,
  ``"her"`` or ``"pos"`` read one triangle (``lower``), ``"diagonal"`` the
  diagonal, ``"tridiagonal"`` three diagonals, the triangular kinds one
  triangle; ``solve_triangular`` reads one triangle, without its diagonal when
  ``unit_diagonal``. An entry SciPy ignores gets a zero cotangent; an entry of a
  symmetric matrix's triangle stands for itself and its mirror image.
- ``b`` of one dimension is a vector (also against a stack of matrices);
  otherwise its last two axes are a matrix of right-hand sides.
- ``cho_factor`` leaves ``a``'s entries in the triangle it does not factor (SciPy
  1.17 and earlier; 1.18 leaves zeros: ``KEEPS_OTHER_TRIANGLE``), and
  ``lu_factor`` returns ``L`` and ``U`` packed in one matrix with the row
  interchanges ``piv``: the derivatives follow those layouts.
- the derivative of ``expm`` is its Fréchet derivative (the block-triangular
  exponential); the derivative of ``sqrtm`` solves a Sylvester equation, so it
  is infinite where ``sqrtm`` is not differentiable (a matrix with a zero
  eigenvalue).
"""

import numpy as np
import scipy.linalg as linalg

from .broadcast import unbroadcast
from .complex_numbers import is_complex_value, real_only
from .decompositions import symmetric_from_triangle, symmetric_from_triangle_transpose
from .linalg import tril_halved


def _t(x):
    return np.swapaxes(x, -1, -2)


def _columns(x, vector):
    """``x`` with a last axis of length 1 when the right-hand side is a vector."""
    return x[..., None] if vector else x


def _uncolumns(x, vector):
    return x[..., 0] if vector else x


def _outer(gb, ans, vector):
    """``-gb x^T`` (stacked; column vectors for a vector right-hand side): the cotangent of
    the matrix of a solve ``x = A^-1 b`` whose ``b`` has cotangent ``gb``."""
    return -(_columns(gb, vector) @ _t(_columns(ans, vector)))


def _transposes(trans):
    """Whether ``solve_triangular``'s ``trans`` solves with the transpose (real matrices)."""
    return trans in (1, 2, "T", "C")


def _checked_complex(a, assume_a=None, trans=0, what="scipy.linalg.solve"):
    """Refuse what these formulas do not cover for a complex ``a``: a Hermitian matrix read
    from one triangle, and a solve with the conjugate transpose (docs/complex.md)."""
    hermitian = _kind(assume_a) == "symmetric" and assume_a not in ("sym", "symmetric")
    if is_complex_value(a) and (hermitian or trans in (2, "C")):
        real_only(a, what + (" (a conjugate transpose)" if trans in (2, "C") else
                             f" (assume_a={assume_a!r})"))


_TRANSPOSED_STRUCTURE = {"lower triangular": "upper triangular",
                         "upper triangular": "lower triangular"}


def _solved(a, b, lower, assume_a, transposed):
    """``linalg.solve(a, b, ..., transposed=transposed)``; SciPy refuses ``transposed`` for
    complex matrices, which are transposed here instead."""
    if transposed and is_complex_value(a):
        a, transposed, lower = _t(a), False, not lower
        assume_a = _TRANSPOSED_STRUCTURE.get(assume_a, assume_a)
    return linalg.solve(a, b, lower=lower, assume_a=_structure(assume_a), transposed=transposed)


# -- what a solve reads of its matrix (each a linear function of the matrix) ----------

def _structure(assume_a):
    """``assume_a`` for a solve of the transposed or differentiated system: the same, and
    ``"gen"`` for None (SciPy before 1.15 knew no None)."""
    return "gen" if assume_a is None else assume_a


def _kind(assume_a):
    if assume_a in ("sym", "symmetric", "her", "hermitian", "pos", "positive definite"):
        return "symmetric"
    if assume_a in ("diagonal", "tridiagonal", "lower triangular", "upper triangular"):
        return assume_a
    return "general"                  # None and "gen": every entry, whatever the solver


def _band(a, width):
    n = a.shape[-1]
    rows = np.arange(n)
    return a * (np.abs(rows[:, None] - rows[None, :]) <= width)


def read_matrix(a, assume_a=None, lower=False):
    """The matrix ``solve`` and ``inv`` use when given ``a``: linear in ``a``."""
    kind = _kind(assume_a)
    if kind == "symmetric":
        return symmetric_from_triangle(a, "L" if lower else "U")
    if kind == "diagonal":
        return _band(a, 0)
    if kind == "tridiagonal":
        return _band(a, 1)
    if kind == "lower triangular":
        return np.tril(a)
    if kind == "upper triangular":
        return np.triu(a)
    return a


def read_matrix_transpose(m, assume_a=None, lower=False):
    """The transpose of :func:`read_matrix`: a cotangent of the used matrix, as one of ``a``."""
    if _kind(assume_a) == "symmetric":
        return symmetric_from_triangle_transpose(m, "L" if lower else "U")
    return read_matrix(m, assume_a, lower)            # the other readings are masks


def _triangle(a, lower, unit_diagonal):
    """What ``solve_triangular`` reads of ``a`` (its unit diagonal is a constant)."""
    part = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        part = part - part * np.eye(a.shape[-1], dtype=bool)
    return part


# -- solves ---------------------------------------------------------------------------

def solve_triangular_grads(g, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    """The cotangents of ``a`` and ``b`` for ``x = solve_triangular(a, b, ...)``."""
    _checked_complex(a, trans=trans, what="scipy.linalg.solve_triangular")
    vector = np.ndim(b) == 1
    gb = linalg.solve_triangular(a, g, trans=0 if _transposes(trans) else 1, lower=lower,
                                 unit_diagonal=unit_diagonal)
    outer = _outer(gb, ans, vector)
    used = _t(outer) if _transposes(trans) else outer
    return unbroadcast(_triangle(used, lower, unit_diagonal), a), unbroadcast(gb, b)


def solve_triangular_jvp_a(da, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    """The tangent of ``solve_triangular(a, b, ...)`` along ``da``."""
    _checked_complex(a, trans=trans, what="scipy.linalg.solve_triangular")
    vector = np.ndim(b) == 1
    step = _triangle(da, lower, unit_diagonal)
    step = _t(step) if _transposes(trans) else step
    change = _uncolumns(step @ _columns(ans, vector), vector)
    return -linalg.solve_triangular(a, change, trans=trans, lower=lower,
                                    unit_diagonal=unit_diagonal)


def solve_triangular_jvp_b(db, a, trans=0, lower=False, unit_diagonal=False):
    _checked_complex(a, trans=trans, what="scipy.linalg.solve_triangular")
    return linalg.solve_triangular(a, db, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def solve_grads(g, ans, a, b, lower=False, assume_a=None, transposed=False):
    """The cotangents of ``a`` and ``b`` for ``x = scipy.linalg.solve(a, b, ...)``."""
    _checked_complex(a, assume_a)
    vector = np.ndim(b) == 1
    gb = _uncolumns(_solved(a, _columns(g, vector), lower, assume_a, not transposed), vector)
    outer = _outer(gb, ans, vector)
    used = _t(outer) if transposed else outer
    return unbroadcast(read_matrix_transpose(used, assume_a, lower), a), unbroadcast(gb, b)


def solve_jvp_a(da, ans, a, b, lower=False, assume_a=None, transposed=False):
    """The tangent of ``scipy.linalg.solve(a, b, ...)`` along ``da``."""
    _checked_complex(a, assume_a)
    vector = np.ndim(b) == 1
    step = read_matrix(da, assume_a, lower)
    step = _t(step) if transposed else step
    change = step @ _columns(ans, vector)
    return -_uncolumns(_solved(a, change, lower, assume_a, transposed), vector)


def solve_jvp_b(db, a, b, lower=False, assume_a=None, transposed=False):
    _checked_complex(a, assume_a)
    vector = np.ndim(b) == 1
    return _uncolumns(_solved(a, _columns(db, vector), lower, assume_a, transposed), vector)


def inv_grad(g, ans, assume_a=None, lower=False):
    """The cotangent of ``a`` for ``ans = scipy.linalg.inv(a, ...)``."""
    _checked_complex(ans, assume_a, what="scipy.linalg.inv")
    return read_matrix_transpose(-(_t(ans) @ g @ _t(ans)), assume_a, lower)


def inv_jvp(da, ans, assume_a=None, lower=False):
    _checked_complex(ans, assume_a, what="scipy.linalg.inv")
    return -(ans @ read_matrix(da, assume_a, lower) @ ans)


# -- Cholesky -------------------------------------------------------------------------

def _factor(c, lower):
    """The lower triangular factor ``L`` of ``a = L L^T`` held in ``cho_factor``'s ``c``."""
    return np.tril(c) if lower else _t(np.triu(c))


# Whether cho_factor leaves a's entries in the triangle it does not factor (SciPy up to
# 1.17) or zeros (1.18): the derivative of that triangle follows what this SciPy does.
KEEPS_OTHER_TRIANGLE = bool(linalg.cho_factor(np.array([[2.0, 1.0], [1.0, 2.0]]))[0][1, 0] != 0)


def _is_lower(lower):
    return bool(np.all(lower))        # a stack of matrices has one flag per matrix


def cho_factor_grad(g, ans, a, lower=False):
    """The cotangent of ``a`` for ``(c, lower) = cho_factor(a, lower)``.

    ``c`` holds the factor in one triangle, and in the other ``a``'s own entries or zeros
    (``KEEPS_OTHER_TRIANGLE``).
    """
    c = real_only(ans[0], "scipy.linalg.cho_factor")
    gc = g[0]
    factor = _factor(c, lower)
    g_factor = np.tril(gc) if lower else _t(np.triu(gc))
    # the Cholesky factor's cotangent, as a cotangent of the triangle it reads
    inner = tril_halved(_t(factor) @ g_factor)
    middle = _t(linalg.solve_triangular(factor, _t(linalg.solve_triangular(
        factor, inner + _t(inner), trans=1, lower=True)), trans=1, lower=True))
    through = tril_halved(middle)
    through = through if lower else _t(through)
    if KEEPS_OTHER_TRIANGLE:
        through = through + (np.triu(gc, 1) if lower else np.tril(gc, -1))
    return through


def cho_factor_jvp(da, ans, a, lower=False):
    """The tangent ``(dc, 0)`` of ``cho_factor(a, lower)`` along ``da``."""
    c = real_only(ans[0], "scipy.linalg.cho_factor")
    factor = _factor(c, lower)
    read = symmetric_from_triangle(da, "L" if lower else "U")
    middle = linalg.solve_triangular(factor, _t(linalg.solve_triangular(
        factor, read, lower=True)), lower=True)            # L^-1 dA L^-T (symmetric)
    d_factor = factor @ tril_halved(middle)
    dc = d_factor if lower else _t(d_factor)
    if KEEPS_OTHER_TRIANGLE:
        dc = dc + (np.triu(da, 1) if lower else np.tril(da, -1))
    return dc, np.zeros(np.shape(ans[1]))               # the flag is constant


def cho_solve_grads(g, ans, c_and_lower, b):
    """The cotangents of ``(c, lower)`` and ``b`` for ``x = cho_solve((c, lower), b)``."""
    c, lower = c_and_lower
    real_only(c, "scipy.linalg.cho_solve")
    lower = _is_lower(lower)
    vector = np.ndim(b) == 1
    gb = _uncolumns(linalg.cho_solve((c, lower), _columns(g, vector)), vector)
    ga = _outer(gb, ans, vector)
    ga = unbroadcast(ga, c)
    factor = _factor(c, lower)
    g_factor = (ga + _t(ga)) @ factor                      # a = L L^T
    gc = np.tril(g_factor) if lower else np.triu(_t(g_factor))
    return (gc, None), unbroadcast(gb, b)


def cho_solve_jvp_c(dc_and_lower, ans, c_and_lower, b):
    c, lower = c_and_lower
    real_only(c, "scipy.linalg.cho_solve")
    lower = _is_lower(lower)
    dc = dc_and_lower[0]
    vector = np.ndim(b) == 1
    factor = _factor(c, lower)
    d_factor = np.tril(dc) if lower else _t(np.triu(dc))
    da = d_factor @ _t(factor) + factor @ _t(d_factor)
    return -_uncolumns(linalg.cho_solve((c, lower), da @ _columns(ans, vector)), vector)


def cho_solve_jvp_b(db, c_and_lower, b):
    c, lower = c_and_lower
    return linalg.cho_solve((c, _is_lower(lower)), db)


# -- LU -------------------------------------------------------------------------------

def _permutation(piv):
    """The row order ``p`` of ``lu_factor``'s interchanges: ``a[..., p, :] = (L U)``."""
    order = np.broadcast_to(np.arange(piv.shape[-1]), piv.shape).copy()
    for i in range(piv.shape[-1]):
        j = piv[..., i]
        rows = np.indices(j.shape)
        here = order[..., i].copy()
        swapped = (*rows, j)
        order[..., i] = order[swapped]
        order[swapped] = here
    return order


def _rows(x, order):
    """``x`` with its rows (second-to-last axis) in ``order``."""
    return np.take_along_axis(x, order[..., :, None], axis=-2)


def _rows_back(x, order):
    """The inverse of :func:`_rows`: row ``order[i]`` of the result is row ``i`` of ``x``."""
    return np.take_along_axis(x, np.argsort(order, axis=-1)[..., :, None], axis=-2)


def _lower_unit(lu):
    return np.tril(lu, -1) + np.eye(lu.shape[-1], dtype=lu.dtype)


def lu_factor_grad(g, ans, a):
    """The cotangent of ``a`` for ``(lu, piv) = lu_factor(a)`` (``lu`` packs L and U)."""
    lu, piv = ans
    g_lu = g[0]
    lower, upper = _lower_unit(lu), np.triu(lu)
    inner = np.tril(_t(lower) @ np.tril(g_lu, -1), -1) + np.triu(np.triu(g_lu) @ _t(upper))
    left = linalg.solve_triangular(lower, inner, trans=1, lower=True, unit_diagonal=True)
    both = _t(linalg.solve_triangular(upper, _t(left), lower=False))
    return _rows_back(both, _permutation(piv))


def lu_factor_jvp(da, ans, a):
    """The tangent ``(dlu, 0)`` of ``lu_factor(a)`` along ``da``."""
    lu, piv = ans
    lower, upper = _lower_unit(lu), np.triu(lu)
    left = linalg.solve_triangular(lower, _rows(da, _permutation(piv)), lower=True,
                                   unit_diagonal=True)
    inner = _t(linalg.solve_triangular(upper, _t(left), trans=1, lower=False))   # L^-1 P^T dA U^-1
    dlu = np.tril(lower @ np.tril(inner, -1), -1) + np.triu(np.triu(inner) @ upper)
    return dlu, np.zeros(np.shape(piv))                 # the interchanges are constant


def lu_solve_grads(g, ans, lu_and_piv, b, trans=0):
    """The cotangents of ``(lu, piv)`` and ``b`` for ``x = lu_solve((lu, piv), b, trans)``."""
    _checked_complex(lu_and_piv[0], trans=trans, what="scipy.linalg.lu_solve")
    lu, piv = lu_and_piv
    vector = np.ndim(b) == 1
    gb = _uncolumns(linalg.lu_solve((lu, piv), _columns(g, vector),
                                    trans=0 if _transposes(trans) else 1), vector)
    ga = _outer(gb, ans, vector)
    ga = unbroadcast(_t(ga) if _transposes(trans) else ga, lu)
    lower, upper = _lower_unit(lu), np.triu(lu)
    permuted = _rows(ga, _permutation(piv))                 # P^T gA, a = P L U
    g_lu = np.tril(permuted @ _t(upper), -1) + np.triu(_t(lower) @ permuted)
    return (g_lu, None), unbroadcast(gb, b)


def lu_solve_jvp_lu(dlu_and_piv, ans, lu_and_piv, b, trans=0):
    _checked_complex(lu_and_piv[0], trans=trans, what="scipy.linalg.lu_solve")
    lu, piv = lu_and_piv
    dlu = dlu_and_piv[0]
    vector = np.ndim(b) == 1
    lower, upper = _lower_unit(lu), np.triu(lu)
    d_lu_product = np.tril(dlu, -1) @ upper + lower @ np.triu(dlu)
    da = _rows_back(d_lu_product, _permutation(piv))
    step = _t(da) if _transposes(trans) else da
    return -_uncolumns(linalg.lu_solve((lu, piv), step @ _columns(ans, vector), trans=trans),
                       vector)


def lu_solve_jvp_b(db, lu_and_piv, b, trans=0):
    _checked_complex(lu_and_piv[0], trans=trans, what="scipy.linalg.lu_solve")
    return linalg.lu_solve(lu_and_piv, db, trans=trans)


# -- matrix functions -----------------------------------------------------------------

def _block(a, e):
    """``[[a, e], [0, a]]`` (stacked): its exponential holds ``expm``'s Fréchet derivative."""
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([np.zeros_like(a), a], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def expm_frechet(a, e):
    """The derivative of ``expm`` at ``a`` along ``e``."""
    n = a.shape[-1]
    return linalg.expm(_block(a, e))[..., :n, n:]


def expm_grad(g, a):
    """The cotangent of ``a`` for ``expm(a)``: the Fréchet derivative at ``a^T`` along ``g``."""
    return expm_frechet(_t(a), g)


def sqrtm_grad(g, ans):
    """The cotangent of ``a`` for ``x = sqrtm(a)``: ``y`` with ``x^T y + y x^T = g``."""
    return linalg.solve_sylvester(_t(ans), _t(ans), g)


def sqrtm_jvp(da, ans):
    """``dx`` with ``x dx + dx x = da``."""
    return linalg.solve_sylvester(ans, ans, da)


def solve_sylvester_grads(g, ans, a, b):
    """The cotangents of ``a``, ``b`` and ``q`` for ``x = solve_sylvester(a, b, q)``
    (``a x + x b = q``): ``y`` solves the transposed equation."""
    y = linalg.solve_sylvester(_t(a), _t(b), g)
    return -(y @ _t(ans)), -(_t(ans) @ y), y


def solve_sylvester_jvp(da, db, dq, ans, a, b):
    return linalg.solve_sylvester(a, b, dq - da @ ans - ans @ db)

"""Derivatives of NumPy functions written in plain NumPy that srctrans differentiates again.

Like ``decompositions``, every function here is registered with
``differentiate_through`` (``srctrans/rules/linalg.py``): second derivatives
come from srctrans reading this source, so the helpers use only what srctrans
differentiates (NumPy calls with rules, loops over ``range``, branches).
"""

import numpy as np

from .joins import linspace_grads
from .scans import diagonal_grad
from .refusals import unsupported
from .foreign import as_array, numpy_only
from .complex_numbers import conj_if_complex, real_for, real_if_complex


def _last(x, axis):
    """``x`` with ``axis`` moved last (``axis=None``: flattened)."""
    return np.ravel(x) if axis is None else np.moveaxis(x, axis, -1)


def _back(y, x, axis):
    """Undo :func:`_last` for ``y``, shaped like ``x``."""
    return np.reshape(y, np.shape(x)) if axis is None else np.moveaxis(y, -1, axis)


def _kept(g, axis, keepdims):
    """A reduction's cotangent ``g`` with the reduced axes kept (length 1), to broadcast."""
    return g if keepdims or axis is None else np.expand_dims(g, axis)


# -- cumulative products ------------------------------------------------------------------

def cumprod_grad(g, a, axis=None):
    """The cotangent of ``a`` for ``np.cumprod(a, axis)``, exact at zeros (no division).

    ``grad_i = prefix_i * s_i`` with ``prefix_i`` the product of the entries before
    ``i`` and ``s_i = g_i + a_{i+1} * s_{i+1}`` (Horner's rule, from the end)."""
    x = _last(a, axis)
    gx = _last(g, axis)
    n = x.shape[-1]
    grad = gx                         # an empty axis (the prefix products of one entry): empty
    if n > 1 and type(x) is np.ndarray and type(gx) is np.ndarray:
        grad = _cumprod_grad_by_ratios(gx, x)
        if grad is not None:
            return _back(grad, a, axis)
        grad = gx
    if n > 0:
        running = gx[..., n - 1]
        suffix = [running]
        for i in range(n - 2, -1, -1):
            running = gx[..., i] + x[..., i + 1] * running
            suffix.append(running)
        s = np.stack(suffix[::-1], axis=-1)
        prefix = np.concatenate([np.ones_like(x[..., :1]), np.cumprod(x[..., :-1], axis=-1)],
                                axis=-1)
        grad = prefix * s
    return _back(grad, a, axis)


def _cumprod_grad_by_ratios(g, x):
    """``grad_i = (sum over j >= i of g_j * P_j) / x_i``, ``P`` the products along the last
    axis, in a few passes instead of a step of Python per entry; None where that division is
    not safe: a product that is zero, infinite or below the smallest normal float (an entry
    0, or products that underflow), or a result that is not finite (the exact recurrence is
    then used)."""
    products = np.cumprod(x, axis=-1)
    magnitudes = np.abs(products)
    if magnitudes.size == 0 or not (magnitudes.min() >= np.finfo(products.dtype).tiny
                                    and np.isfinite(magnitudes.max())):
        return None
    terms = g * products
    grad = np.cumsum(terms[..., ::-1], axis=-1)[..., ::-1] / x
    return grad if np.isfinite(grad).all() else None


def cumprod_jvp(da, a, axis=None):
    """The tangent of ``np.cumprod(a, axis)`` along ``da``: ``d_k = d_{k-1} a_k + p_{k-1} da_k``."""
    x = _last(a, axis)
    dx = _last(da, axis)
    tangent = dx                      # an empty axis: an empty tangent
    if x.shape[-1] > 0:
        product = np.cumprod(x, axis=-1)
        running = dx[..., 0]
        out = [running]
        for k in range(1, x.shape[-1]):
            running = running * x[..., k] + product[..., k - 1] * dx[..., k]
            out.append(running)
        tangent = np.stack(out, axis=-1)
    return tangent if axis is None else _back(tangent, a, axis)     # axis=None: a flat result


# -- NaN-skipping variance and weighted averages ------------------------------------------

def nanvar_grad(g, a, axis=None, ddof=0, keepdims=False):
    """The cotangent of ``a`` for ``np.nanvar(a, axis, ddof=ddof, keepdims=keepdims)``."""
    kept = ~np.isnan(a)
    count = np.sum(kept, axis=axis, keepdims=True).astype(np.result_type(a, 1.0))
    centred = conj_if_complex(np.where(kept, a - np.nanmean(a, axis=axis, keepdims=True), 0.0))
    g = _kept(real_if_complex(g, a), axis, keepdims)
    return g * 2.0 * centred / (count - ddof)


def nanvar_jvp(da, a, axis=None, ddof=0, keepdims=False):
    kept = ~np.isnan(a)
    count = np.sum(kept, axis=axis, keepdims=keepdims).astype(np.result_type(a, 1.0))
    centred = conj_if_complex(np.where(kept, a - np.nanmean(a, axis=axis, keepdims=True), 0.0))
    return 2.0 * real_if_complex(np.sum(np.where(kept, centred * da, 0.0), axis=axis,
                                        keepdims=keepdims), a) / (count - ddof)


def average_grad(g, a, axis=None, weights=None, returned=False, keepdims=False):
    """The cotangent of ``a`` for ``np.average(a, axis, weights, returned, keepdims=...)``."""
    if returned:
        unsupported("the derivative of np.average with returned=True",
                    "compute the sum of the weights separately: np.sum(weights)")
    w = np.ones_like(a) if weights is None else _weights_like(weights, a, axis)
    g = _kept(g, axis, keepdims)
    return g * w / np.sum(w, axis=axis, keepdims=True)


def average_weights_grad(g, a, axis=None, weights=None, keepdims=False):
    """The cotangent of ``weights`` for ``np.average`` (None without weights)."""
    if weights is None:
        return None
    w = _weights_like(weights, a, axis)
    total = np.sum(w, axis=axis, keepdims=True)
    mean = np.sum(a * w, axis=axis, keepdims=True) / total
    g = _kept(g, axis, keepdims)
    gw = g * (a - mean) / total
    if np.ndim(weights) == 1 and np.ndim(a) > 1 and axis is not None:    # weights along axis
        gw = np.sum(np.moveaxis(gw, axis, -1), axis=tuple(range(np.ndim(a) - 1)))
    return gw


# -- products and polynomials -----------------------------------------------------------------

def _interleaved(a, b):
    """``a`` and ``b`` with as many axes as each other (ones in front)."""
    n = max(np.ndim(a), np.ndim(b))
    return (np.reshape(a, (1,) * (n - np.ndim(a)) + np.shape(a)),
            np.reshape(b, (1,) * (n - np.ndim(b)) + np.shape(b)))


def vdot_grads(g, a, b):
    """The cotangents of ``a`` and ``b`` for ``np.vdot(a, b) = sum(conj(a) * b)`` over the
    flattened arrays: ``conj(g * b)`` and ``g * conj(a)``, each shaped like its argument
    (real for a real argument: docs/complex.md)."""
    ga = np.reshape(conj_if_complex(g * np.ravel(b)), np.shape(a))
    gb = np.reshape(g * conj_if_complex(np.ravel(a)), np.shape(b))
    return real_for(ga, a), real_for(gb, b)


def kron_grads(g, a, b):
    """The cotangents of ``a`` and ``b`` for ``np.kron(a, b)``: ``g`` seen with the axes of
    ``a`` and ``b`` interleaved, ``(a0, b0, a1, b1, ...)``, summed against the other one."""
    a2, b2 = _interleaved(a, b)
    n = a2.ndim
    split, a_spread, b_spread = [], [], []
    for k in range(n):
        split += [a2.shape[k], b2.shape[k]]
        a_spread += [a2.shape[k], 1]
        b_spread += [1, b2.shape[k]]
    pairs = np.reshape(g, tuple(split))
    ga = np.sum(pairs * np.reshape(b2, tuple(b_spread)), axis=tuple(range(1, 2 * n, 2)))
    gb = np.sum(pairs * np.reshape(a2, tuple(a_spread)), axis=tuple(range(0, 2 * n, 2)))
    return np.reshape(ga, np.shape(a)), np.reshape(gb, np.shape(b))


def polyder_coefficients(p):
    """The coefficients of the derivative of the polynomial ``p`` (highest power first)."""
    n = np.shape(p)[0]
    if n <= 1:
        return np.zeros_like(p[:1])
    return p[:-1] * np.arange(n - 1, 0, -1).astype(np.result_type(p, 1.0))


def polyval_grads(g, p, x):
    """The cotangents of ``p`` and ``x`` for ``np.polyval(p, x)`` (1-D ``p``)."""
    n = np.shape(p)[0]
    powers = [np.ones_like(g * x)]
    for _ in range(n - 1):
        powers.append(powers[-1] * x)
    if type(x) is np.ndarray and type(g) is np.ndarray and x.ndim == 1 and g.shape == x.shape \
            and n > 0:
        gp = g @ np.stack(powers[::-1], axis=1)      # points in a vector: one product
    else:
        gp = np.stack([np.sum(g * powers[n - 1 - i]) for i in range(n)])
    gx = g * np.polyval(polyder_coefficients(p), x)
    return gp, gx


# -- convolution -----------------------------------------------------------------------------

def _full_offset(n, m, mode):
    """Where the ``mode`` output of ``np.convolve`` starts in the full one."""
    if mode == "full":
        return 0
    if mode == "same":
        return (min(n, m) - 1) // 2
    return min(n, m) - 1


def convolve_grads(g, a, v, mode="full"):
    """The cotangents of ``a`` and ``v`` for ``np.convolve(a, v, mode)``."""
    numpy_only("np.convolve", g, a, v)
    n, m = np.shape(a)[0], np.shape(v)[0]
    start = _full_offset(n, m, mode)
    full = np.concatenate([np.zeros(start, g.dtype), g,
                           np.zeros(n + m - 1 - start - g.shape[0], g.dtype)])
    # correlations without np.correlate's conjugate (docs/complex.md)
    return np.convolve(full, v[::-1], "valid"), np.convolve(full, a[::-1], "valid")


def correlate_grads(g, a, v, mode="valid"):
    """The cotangents of ``a`` and ``v`` for ``np.correlate(a, v, mode)``, which is
    ``np.convolve(a, np.conj(v)[::-1], mode)``."""
    numpy_only("np.correlate", g, a, v)
    ga, gv = convolve_grads(g, a, conj_if_complex(v)[::-1], mode)
    return ga, conj_if_complex(gv)[::-1]


# -- interpolation and grids ---------------------------------------------------------------------

def _grid_axis(k, n, indexing):
    """The axis of ``np.meshgrid``'s grids along which vector ``k`` of ``n`` runs ("xy"
    indexing swaps the first two)."""
    return 1 - k if indexing == "xy" and n > 1 and k < 2 else k


def meshgrid_grads(g, xi, indexing="xy"):
    """The cotangents of the vectors ``xi`` for ``np.meshgrid(*xi, indexing=indexing)``:
    each output's cotangent summed over every axis but the one its vector runs along."""
    grads = []
    n = len(xi)
    for k in range(n):
        axis = _grid_axis(k, n, indexing)
        others = tuple(i for i in range(np.ndim(g[k])) if i != axis)
        grads.append(np.reshape(np.sum(g[k], axis=others), np.shape(xi[k])))
    return tuple(grads)


def meshgrid_jvp(dxi, xi, indexing="xy", sparse=False):
    """The tangents of ``np.meshgrid(*xi, ...)``: each vector's tangent spread over its grid."""
    n = len(xi)
    lengths = [int(np.prod(np.shape(x))) for x in xi]
    if indexing == "xy" and n > 1:
        lengths = [lengths[1], lengths[0]] + lengths[2:]
    grids = []
    for k in range(n):
        axis = _grid_axis(k, n, indexing)
        shape = tuple(int(np.prod(np.shape(xi[k]))) if i == axis else 1 for i in range(n))
        tangent = np.zeros(np.shape(xi[k]), np.result_type(xi[k], 1.0)) if dxi[k] is None else dxi[k]
        placed = np.reshape(tangent, shape)
        # a new array (adding zero), not a read-only view, in the tangent's array library
        grids.append(placed if sparse else np.broadcast_to(placed, tuple(lengths)) + 0.0)
    return tuple(grids)


def geomspace_grads(g, ans, start, stop, num=50, endpoint=True, axis=0):
    """The cotangents of ``start`` and ``stop`` for ``np.geomspace(start, stop, num, ...)``:
    sample ``k`` is ``start * (stop / start) ** t_k``."""
    to_start, to_stop = linspace_grads(g * ans, start, stop, num, endpoint, axis)
    return to_start / start, to_stop / stop


# -- tensor inverses and solves ------------------------------------------------------------------

def tensorinv_grad(g, ans, a, ind=2):
    """The cotangent of ``a`` for ``np.tensorinv(a, ind)`` (the inverse's, reshaped)."""
    rows = int(np.prod(np.shape(a)[:ind]))
    inverse = np.reshape(ans, (-1, rows))
    gm = np.reshape(g, np.shape(inverse))
    return np.reshape(-inverse.T @ gm @ inverse.T, np.shape(a))


def tensorinv_jvp(da, ans, a, ind=2):
    rows = int(np.prod(np.shape(a)[:ind]))
    inverse = np.reshape(ans, (-1, rows))
    dm = np.reshape(da, (rows, -1))
    return np.reshape(-inverse @ dm @ inverse, np.shape(ans))


def _refuse_axes(axes):
    if axes is not None:
        unsupported("the derivative of np.linalg.tensorsolve with axes=",
                    "move the axes first (np.moveaxis), then call tensorsolve without axes=")


def tensorsolve_grads(g, ans, a, b, axes=None):
    """The cotangents of ``a`` and ``b`` for ``x = np.tensorsolve(a, b)`` (``axes=None``)."""
    _refuse_axes(axes)
    matrix = np.reshape(a, (np.size(b), np.size(ans)))
    gb = np.linalg.solve(matrix.T, np.ravel(g))
    ga = -np.outer(gb, np.ravel(ans))
    return np.reshape(ga, np.shape(a)), np.reshape(gb, np.shape(b))


def tensorsolve_jvp(da, db, ans, a, b, axes=None):
    _refuse_axes(axes)
    matrix = np.reshape(a, (np.size(b), np.size(ans)))
    rhs = np.ravel(db) - np.reshape(da, np.shape(matrix)) @ np.ravel(ans)
    return np.reshape(np.linalg.solve(matrix, rhs), np.shape(ans))


# -- norms of every order ----------------------------------------------------------------------

def _norm_axes(x, ord, axis):
    """The axes ``np.linalg.norm`` reduces (a tuple), and whether it takes a matrix norm."""
    if axis is None:
        axes = tuple(range(np.ndim(x)))
        return axes, ord is not None and np.ndim(x) == 2
    if isinstance(axis, tuple):
        return tuple(a % np.ndim(x) for a in axis), len(axis) == 2
    return (axis % np.ndim(x),), False


def _shared(mask, axes, like):
    """``mask`` divided by its count over ``axes`` (ties share equally), in ``like``'s dtype."""
    weights = mask.astype(np.result_type(like, 1.0))
    return weights / np.sum(weights, axis=axes, keepdims=True)


def norm_weights(ans, x, ord=None, axis=None):
    """``d norm / d x``, shaped like ``x`` (the output's entries broadcast back over ``axes``);
    for a complex ``x``, the factor of ``Re(weights * dx)`` (the conjugates of the real
    formulas' ``x / |x|``, ``sign(x)`` and ``u @ vh``)."""
    return conj_if_complex(_norm_weights(ans, x, ord, axis))


def _norm_weights(ans, x, ord=None, axis=None):
    axes, matrix = _norm_axes(x, ord, axis)
    value = np.reshape(ans, np.shape(np.sum(x, axis=axes, keepdims=True)))
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        return np.where(value == 0, 0.0, x / np.where(value == 0, 1.0, value))
    if not matrix:
        if ord == 0:
            return np.zeros_like(x)
        if ord == 1:
            return np.sign(x)
        if ord == np.inf or ord == -np.inf:
            size = np.abs(x)
            return np.sign(x) * _shared(size == value, axes, x)
        power = np.abs(x) ** (ord - 1)
        return np.sign(x) * np.where(value == 0, 0.0, power / np.where(value == 0, 1.0, value) ** (ord - 1))
    rows, cols = axes
    moved = np.moveaxis(x, (rows, cols), (-2, -1))
    if ord == "nuc" or ord == 2 or ord == -2:
        u, s, vh = np.linalg.svd(moved, full_matrices=False)
        if ord == "nuc":
            weights = u @ vh
        elif ord == 2:
            weights = u[..., :, :1] @ vh[..., :1, :]
        else:
            weights = u[..., :, -1:] @ vh[..., -1:, :]
        return np.moveaxis(weights, (-2, -1), (rows, cols))
    along = -2 if ord == 1 or ord == -1 else -1      # 1: columns' sums; inf: rows'
    sums = np.sum(np.abs(moved), axis=along, keepdims=True)
    pick = np.max(sums, axis=-1 if along == -2 else -2, keepdims=True) if ord in (1, np.inf) \
        else np.min(sums, axis=-1 if along == -2 else -2, keepdims=True)
    chosen = _shared(sums == pick, (-1,) if along == -2 else (-2,), x)
    return np.moveaxis(np.sign(moved) * chosen, (-2, -1), (rows, cols))


def norm_grad(g, ans, x, ord=None, axis=None, keepdims=False):
    """The cotangent of ``x`` for ``np.linalg.norm(x, ord, axis, keepdims)``."""
    axes, _ = _norm_axes(x, ord, axis)
    g = np.reshape(real_if_complex(g, x), np.shape(np.sum(x, axis=axes, keepdims=True)))
    return g * norm_weights(ans, x, ord, axis)


def norm_jvp(dx, ans, x, ord=None, axis=None, keepdims=False):
    axes, _ = _norm_axes(x, ord, axis)
    return np.reshape(real_if_complex(np.sum(norm_weights(ans, x, ord, axis) * dx, axis=axes,
                                             keepdims=True), x), np.shape(ans))


# -- interpolation, weighted means, sinc -----------------------------------------------------

def _segments(x, xp, fp, period):
    """For ``np.interp``: ``x`` as floats, the segment ``i`` each entry falls in (the first or
    last outside ``xp``), the position ``t`` in it, its slope, and whether ``x`` is inside."""
    if period is not None:
        unsupported("the derivative of np.interp with period=", "wrap x into one period first")
    x = as_array(x, dtype=np.result_type(x, np.real(as_array(fp)), 1.0))
    xp, fp = as_array(xp), as_array(fp)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, np.shape(xp)[0] - 2)
    width = xp[i + 1] - xp[i]
    inside = (x >= xp[0]) & (x <= xp[-1])
    return x, i, (x - xp[i]) / width, (fp[i + 1] - fp[i]) / width, inside


def interp_grads(g, x, xp, fp, left=None, right=None, period=None):
    """The cotangents of ``x``, ``xp``, ``fp``, ``left`` and ``right`` for ``np.interp``."""
    numpy_only("np.interp", g, x, xp, fp)
    xp = as_array(xp)                # a list of points too
    x, i, t, slope, inside = _segments(x, xp, fp, period)
    below, above = x < xp[0], x > xp[-1]
    g = g * np.ones_like(x)
    g_in = np.where(inside, g, 0.0)
    gfp = np.zeros(np.shape(fp), np.result_type(fp, g))
    np.add.at(gfp, np.ravel(i), np.ravel(g_in * (1.0 - t) + np.where(below & (left is None), g, 0.0)))
    np.add.at(gfp, np.ravel(i + 1), np.ravel(g_in * t + np.where(above & (right is None), g, 0.0)))
    gxp = np.zeros(np.shape(xp), np.result_type(xp, g))
    np.add.at(gxp, np.ravel(i), np.ravel(g_in * slope * (t - 1.0)))
    np.add.at(gxp, np.ravel(i + 1), np.ravel(-g_in * slope * t))
    g_left = None if left is None else np.sum(np.where(below, g, 0.0))
    g_right = None if right is None else np.sum(np.where(above, g, 0.0))
    return (real_for(g_in * slope, x), real_for(gxp, xp), gfp,      # x and xp are real
            g_left, g_right)


def interp_jvp(dx, dxp, dfp, dleft, dright, x, xp, fp, left=None, right=None, period=None):
    numpy_only("np.interp", dx, dxp, dfp, x, xp, fp)
    x, i, t, slope, inside = _segments(x, xp, fp, period)
    dxp, dfp = as_array(dxp), as_array(dfp)
    n = np.shape(xp)[0]
    d_inside = (dfp[i] * (1.0 - t) + dfp[i + 1] * t + slope * (dx - dxp[i] * (1.0 - t)
                                                               - dxp[i + 1] * t))
    d_below = dfp[0] * np.ones_like(x) if left is None else dleft * np.ones_like(x)
    d_above = dfp[n - 1] * np.ones_like(x) if right is None else dright * np.ones_like(x)
    return np.where(inside, d_inside, np.where(x < xp[0], d_below, d_above))


def average_jvp(da, dweights, a, axis=None, weights=None, keepdims=False):
    """The tangent of ``np.average(a, axis, weights, keepdims=keepdims)``."""
    w = np.ones_like(a) if weights is None else _weights_like(weights, a, axis)
    dw = 0.0 * w if weights is None else _weights_like(dweights, a, axis)
    total = np.sum(w, axis=axis, keepdims=True)
    mean = np.sum(a * w, axis=axis, keepdims=True) / total
    out = np.sum(da * w + dw * (a - mean), axis=axis, keepdims=True) / total
    return out if keepdims else np.reshape(out, np.shape(np.sum(a, axis=axis)))


def _weights_like(w, a, axis):
    w = as_array(w)
    if axis is not None and w.ndim == 1 and np.ndim(a) > 1:
        shape = [1] * np.ndim(a)
        shape[axis] = -1
        w = np.reshape(w, shape)
    return np.broadcast_to(w, np.shape(a))


def sinc_slope(x, ans):
    """``d sinc(x) / dx = (cos(pi x) - sinc(x)) / x``; near 0 its Taylor series
    ``-pi^2 x / 3 + pi^4 x^3 / 30``, which is also right to differentiate again there."""
    near = np.abs(x) < 1e-3
    safe = np.where(near, 1.0, x)
    series = x * (np.pi ** 4 / 30.0 * x * x - np.pi ** 2 / 3.0)
    return np.where(near, series, (np.cos(np.pi * x) - ans) / safe)


def diag_grad(g, v, k=0):
    """The cotangent of ``v`` for ``np.diag(v, k)``: the diagonal of ``g`` for a vector ``v``
    (which ``diag`` spread into a matrix), ``g`` placed on the diagonal for a matrix."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return diagonal_grad(g, v, k, 0, 1)


def diagflat_grad(g, v, k=0):
    """The cotangent of ``v`` for ``np.diagflat(v, k)``."""
    return np.reshape(np.diagonal(g, k), np.shape(v))


# -- the digamma function of Python floats -------------------------------------------------

def digamma(x):
    """The digamma function (the derivative of ``math.lgamma``) of a Python float: the
    reflection formula below 1/2, the recurrence up to 10, then the asymptotic series
    (accurate to about 1e-14)."""
    shift = 0.0
    if x < 0.5:
        shift = -np.pi / np.tan(np.pi * x)
        x = 1.0 - x
    while x < 10.0:
        shift = shift - 1.0 / x
        x = x + 1.0
    inverse = 1.0 / (x * x)
    series = inverse * (1.0 / 12 - inverse * (1.0 / 120 - inverse * (1.0 / 252 - inverse * (
        1.0 / 240 - inverse / 132))))
    return shift + np.log(x) - 0.5 / x - series


def over_x(f1, x):
    """``f1 / x`` for ``f1`` the Bessel function ``i1`` or ``j1`` of ``x``: 1/2 at 0, its limit."""
    zero = x == 0
    return np.where(zero, 0.5, f1 / np.where(zero, 1.0, x))

"""The runtime's fast paths for NumPy arrays give what its general paths give: the products'
ratios of rt.cumprod_grad (against the exact recurrence, which they fall back to at zeros,
underflow and overflow), a mean's cotangent along one axis, a matrix trace's, a tile's with an
int of copies, a reshape's, a vector's sort's and a difference's."""

import numpy as np
import pytest

from srctrans import runtime as rt
from srctrans.runtime import composites
from srctrans.runtime.reductions import _count_of, unreduce
from srctrans.runtime.scans import diagonal_grad

R = np.random.default_rng(17)


def _recurrence(g, a, axis):
    """rt.cumprod_grad's exact recurrence: prefix products times Horner's suffix sums."""
    x, gx = composites._last(a, axis), composites._last(g, axis)
    running, suffix = gx[..., -1], [gx[..., -1]]
    for i in range(x.shape[-1] - 2, -1, -1):
        running = gx[..., i] + x[..., i + 1] * running
        suffix.append(running)
    prefix = np.concatenate([np.ones_like(x[..., :1]), np.cumprod(x[..., :-1], axis=-1)], -1)
    return composites._back(prefix * np.stack(suffix[::-1], axis=-1), a, axis)


@pytest.mark.parametrize("shape, axis", [((50,), None), ((4, 6), 1), ((4, 6), 0),
                                         ((3, 4, 5), None), ((3, 4, 5), -1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_cumprod_grad_by_ratios_is_the_recurrences(shape, axis, dtype):
    a = (1 + 0.5 * R.standard_normal(shape)).astype(dtype)
    g = R.standard_normal(np.cumprod(a, axis=axis).shape).astype(dtype)
    got, want = rt.cumprod_grad(g, a, axis), _recurrence(g, a, axis)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-6)


@pytest.mark.parametrize("a", [np.array([1.0, 0.0, 2.0, 3.0]),        # a zero: no ratio
                               np.full(400, 1e-3),                      # products underflow
                               np.full(400, 1e3)])                      # products overflow
def test_cumprod_grad_keeps_the_recurrence_where_ratios_fail(a):
    g = R.standard_normal(a.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        np.testing.assert_array_equal(rt.cumprod_grad(g, a), _recurrence(g, a, None))


@pytest.mark.parametrize("shape", [(5, 3, 2), (4,), (3, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("g_dtype", [np.float64, np.float32, np.int64])
def test_a_mean_along_one_axis_is_spread_as_the_general_path_spreads_it(shape, keepdims,
                                                                        g_dtype):
    for axis in range(-len(shape), len(shape)):
        x = R.standard_normal(shape)
        g = np.asarray(3 * R.standard_normal(np.mean(x, axis, keepdims=keepdims).shape))
        g = g.astype(g_dtype)
        want = unreduce(g, x, axis, keepdims) / _count_of(x, axis)
        got = rt.mean_grad(g, x, axis, keepdims)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (1, 5)])
@pytest.mark.parametrize("g", [2.5, np.float32(1.5), np.array(3.0), 1 + 2j])
def test_a_matrix_traces_cotangent_is_the_diagonals(shape, g):
    for dtype in (np.float64, np.float32):
        a = np.ones(shape, dtype)
        size = min(shape)
        want = diagonal_grad(np.expand_dims(g, -1) * np.ones(size), a)
        for axes in ((0, 1), (1, 0)):
            got = rt.trace_grad(g, a, 0, *axes)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("reps", [2, np.int64(2), (2,), (3, 1), [2, 2], (2, 1, 1)])
def test_a_tiles_cotangent_sums_its_copies(reps):
    a = R.standard_normal((2, 3))
    g = R.standard_normal(np.tile(a, reps).shape)
    copies = g.reshape(-1, 2, 3) if np.ndim(reps) == 0 or len(reps) < 3 else None
    got = rt.tile_grad(g, a, reps)
    assert got.shape == a.shape
    if np.ndim(reps) == 0:
        np.testing.assert_allclose(got, g[:, :3] + g[:, 3:])
    elif copies is not None:
        blocks = [g[i:i + 2, j:j + 3] for i in range(0, g.shape[0], 2)
                  for j in range(0, g.shape[1], 3)]
        np.testing.assert_allclose(got, sum(blocks))


def test_a_reshapes_cotangent_is_a_view_of_the_same_values():
    x, g = np.zeros((2, 6)), R.standard_normal((3, 4))
    got = rt.reshape_like(g, x)
    assert got.shape == (2, 6) and np.shares_memory(got, g)
    np.testing.assert_array_equal(got.ravel(), g.ravel())


def _added_at(g, a, indices, axis):
    """rt.take_along_axis_grad's general path: every position taken, added with np.add.at."""
    out = np.zeros(a.shape, np.result_type(a, g))
    grids = np.ogrid[tuple(slice(n) for n in g.shape)]
    np.add.at(out, tuple(np.broadcast_to(indices, g.shape) if k == axis % a.ndim else grid
                         for k, grid in enumerate(grids)), g)
    return out


@pytest.mark.parametrize("shape, axis", [((20, 4), 1), ((20, 4), 0), ((3, 4, 5), 1),
                                         ((3, 4, 5), -1), ((6,), 0)])
@pytest.mark.parametrize("taken", [1, 3])          # a position a slice (placed), or several
def test_a_pick_along_an_axis_gets_its_cotangent_at_the_positions_taken(shape, axis, taken):
    a = R.standard_normal(shape)
    index_shape = list(shape)
    index_shape[axis] = taken
    indices = R.integers(-shape[axis], shape[axis], index_shape)    # repeats when several
    g = R.standard_normal(np.take_along_axis(a, indices, axis).shape).astype(np.float32)
    got = rt.take_along_axis_grad(g, a, indices, axis)
    want = _added_at(g, a, indices, axis)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(20,), (4, 5)])
@pytest.mark.parametrize("g_kind", ["array", "number"])
def test_a_masks_cotangent_is_placed_where_the_mask_is_true(shape, g_kind):
    x = R.standard_normal(shape)
    mask = x > 0
    g = R.standard_normal(int(mask.sum())).astype(np.float32) if g_kind == "array" else 2.5
    want = np.zeros(shape, np.result_type(x, g))
    np.add.at(want, mask, g)                          # the general path: each position added
    got = rt.getitem_grad(g, x, mask)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def _maximum_general(g, ans, x, axis, keepdims):
    """rt.extremum_grad's general path: the reduced axes put back, ties counted, shared."""
    from srctrans.runtime import reductions
    from srctrans.runtime.broadcast import float_dtype
    from srctrans.runtime.foreign import count_true
    shape = np.shape(x)
    g = reductions._keep_reduced_axes(g, shape, axis, keepdims)
    ans = reductions._keep_reduced_axes(ans, shape, axis, keepdims)
    hits = np.equal(x, ans)
    ties = count_true(hits, reductions._axes(len(shape), axis), True)
    return np.where(hits, np.divide(g, np.maximum(ties, 1), dtype=float_dtype(g, x)), 0)


@pytest.mark.parametrize("shape", [(10, 2), (3, 4, 5), (6,)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64), (np.float64, np.float32)])
def test_a_maximums_cotangent_along_one_axis_is_shared_among_its_ties(shape, keepdims, dtypes):
    for axis in range(-len(shape), len(shape)):
        x = np.round(2 * R.standard_normal(shape)).astype(dtypes[0])    # ties
        x.flat[0] = np.nan                                              # a NaN slice: zero
        with np.errstate(invalid="ignore"):
            ans = np.max(x, axis=axis, keepdims=keepdims)
        g = R.standard_normal(ans.shape).astype(dtypes[1])
        got = rt.extremum_grad(g, ans, x, axis, keepdims)
        want = _maximum_general(g, ans, x, axis, keepdims)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(10, 2), (3, 4, 5), (6,)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["distinct", "signed_zeros", "infinite", "nan_and_tie"])
def test_a_maximums_cotangent_without_ties_is_the_gradient_placed(shape, dtype, case):
    """One hit a slice (no tie, no NaN: the shortcut) gives what sharing gives; a +0/-0 pair
    is a tie, an infinite extremum and a NaN slice beside a tie go the general way."""
    for axis in range(-len(shape), len(shape)):
        x = R.standard_normal(shape).astype(dtype)
        if case == "signed_zeros":                   # the zeros are their slices' maxima
            x = -np.abs(x)
            x.flat[0], x.flat[-1] = 0.0, -0.0
        elif case == "infinite":
            x.flat[-1] = np.inf
        elif case == "nan_and_tie":
            x[..., 0] = np.nan if x.shape[-1] > 1 else x[..., 0]
            x.flat[-1] = x.flat[-2] = 5.0
        with np.errstate(invalid="ignore"):
            ans = np.max(x, axis=axis)
        g = R.standard_normal(ans.shape).astype(dtype)
        got = rt.extremum_grad(g, ans, x, axis, False)
        want = _maximum_general(g, ans, x, axis, False)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [1, 2, 4, 7])
def test_a_polynomials_coefficients_cotangent_in_one_product_is_the_powers_sums(n):
    p, x, g = R.standard_normal(n), R.standard_normal(30), R.standard_normal(30)
    powers = [np.ones_like(x)]
    for _ in range(n - 1):
        powers.append(powers[-1] * x)
    want = np.stack([np.sum(g * powers[n - 1 - i]) for i in range(n)])
    got = rt.polyval_grads(g, p, x)
    assert got[0].dtype == want.dtype
    np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], g * np.polyval(np.polyder(p), x), rtol=1e-12)



def _products_and_polynomial(x, w, c):
    """Products along an axis and a polynomial of points in a vector: their helpers' fast
    paths are differentiated again (second derivatives read runtime/composites.py)."""
    return -np.log(np.cumprod(1 + x @ w)[-1]) + np.sum(np.cumprod(x, axis=0) ** 2) \
        + np.sum(np.polyval(c, x @ w) ** 2)


def test_the_fast_paths_hold_to_second_order():
    import srctrans as st
    args = (1 + 0.1 * R.standard_normal((6, 3)), 0.1 * R.standard_normal(3), R.standard_normal(3))
    st.check_grads(_products_and_polynomial, args, order=2)


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_vector_s_sort_cotangent_is_put_back_as_along_an_axis(axis, dtype):
    a = np.array([0.3, -1.0, 0.3, 2.0, -1.0, 0.0], dtype)          # ties: the stable order
    for g in (R.standard_normal(6).astype(dtype), 2.5):
        want = np.zeros(6, np.result_type(g, a))
        np.put_along_axis(want, np.argsort(a, kind="stable"), g, axis=0)
        got = rt.sort_grad(g, a, axis)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(5,), (4, 3), (3, 4, 5), (2, 1, 3)])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_a_difference_s_cotangent_is_the_padded_difference(shape, n, dtype):
    for axis in range(-len(shape), len(shape)):
        a = R.standard_normal(shape).astype(dtype)
        g = R.standard_normal(np.diff(a, n, axis).shape).astype(dtype)
        want, padding = g, [(0, 0)] * g.ndim
        padding[axis] = (1, 1)
        for _ in range(n):                   # the general path's transpose of a difference
            want = -np.diff(np.pad(want, padding), axis=axis)
        for cotangent in (g, np.asfortranarray(g)):
            got = rt.diff_grad(cotangent, a, n, axis)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)

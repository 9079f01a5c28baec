"""Code indexed by ints, int arrays and values read from its arguments is specialised on the
call's shapes (srctrans/analyse/indices.py), a call whose index is a mask argument is not, and
what a computed mask picks is left out of the shapes (analyse/fixed_shapes.py): the gradient
is right for every call, whatever ran before it."""

import numpy as np
import pytest

import srctrans as st
from programs import callees_elsewhere as elsewhere

R = np.random.default_rng(7)


def picked_log_likelihood(z, labels):
    N = z.shape[0]
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(logp[np.arange(N), labels]) / N


def gates(a, h):
    H = h.shape[1]
    return np.sum(np.tanh(a[:, :H]) * np.exp(a[:, H:2 * H]) * h)


def window_sums(x, stride):
    n, = x.shape
    total = 0.0
    for i in range((n - 2) // stride):
        start = i * stride
        total = total + np.sum(x[start:start + 2] ** 2)
    return total


def rows_of(emb, rows):
    total = 0.0
    for k in rows:
        total = total + np.sum(np.sin(emb[k]))
    return total


def loss_through(emb, rows):
    return rows_of(emb, rows) * 2.0


def _numeric(f, x, *rest, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return g


def _path(f, *args):
    return st.source(f, args=args).splitlines()[0]


def test_an_index_array_argument_is_specialised():
    z, labels = R.standard_normal((6, 4)), R.integers(0, 4, 6)
    assert "specialised on their shapes" in _path(picked_log_likelihood, z, labels)
    g = st.grad(picked_log_likelihood)
    for _ in range(3):
        np.testing.assert_allclose(g(z, labels), _numeric(picked_log_likelihood, z, labels),
                                   rtol=1e-6, atol=1e-8)


def picked_products(z, b, picked):
    return np.sum(z[picked] * b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_mask_after_an_index_array_of_the_same_shape_gets_its_own_gradient(dtype):
    """Neither the code specialised for int indices nor the short path made for them may
    take a boolean mask of their shape: the mask picks as many entries as it has true ones
    (one here, which broadcasts against ``b``). A float32 ``z`` with float64 ``b`` makes
    a short path whose gradients need converting, which tests no dtype by itself."""
    z, b = R.standard_normal(6).astype(dtype), R.standard_normal(6)
    g = st.grad(picked_products)
    labels = np.array([0, 2, 2, 5, 1, 3])
    for _ in range(4):                         # generic, specialising, fused, short path
        g(z, b, labels)
    for mask in (np.array([False, False, True, False, False, False]),
                 np.array([False, True, False, False, False, False])):
        want = np.zeros_like(z)
        want[mask] = np.sum(b)
        np.testing.assert_allclose(g(z, b, mask), want, rtol=1e-6)
    want = np.zeros(6)
    np.add.at(want, labels, b)
    np.testing.assert_allclose(g(z, b, labels), want, rtol=1e-6)


def test_a_mask_argument_runs_the_generic_code_and_says_why():
    mask = np.array([False, False, True, False, False, False])
    text = st.source(picked_products, args=(R.standard_normal(6), R.standard_normal(6), mask))
    assert "the generic code" in text and "a boolean array (a mask)" in text


def test_slice_bounds_from_a_shape_are_specialised():
    a, h = R.standard_normal((3, 4)), R.standard_normal((3, 2))
    assert "specialised on their shapes" in _path(gates, a, h)
    g = st.grad(gates)
    for _ in range(3):
        np.testing.assert_allclose(g(a, h), _numeric(gates, a, h), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("stride", [1, 2, 3])
def test_slice_bounds_from_an_int_argument_follow_its_value(stride):
    x = R.standard_normal(11)
    g = st.grad(window_sums)
    for s in (stride, 1, stride, 2, stride):    # each value of the int is its own key
        for _ in range(3):
            np.testing.assert_allclose(g(x, s), _numeric(window_sums, x, s), rtol=1e-6)


def test_a_0d_integer_array_as_a_bound_is_not_keyed_by_its_shape():
    x = R.standard_normal(11)
    g = st.grad(window_sums)
    for s in (1, 1, 1, np.array(2), np.array(3), 1):
        np.testing.assert_allclose(g(x, s), _numeric(window_sums, x, int(s)), rtol=1e-6)


def test_entries_of_a_list_argument_index_specialised_code():
    emb = R.standard_normal((5, 3))
    assert "specialised on their shapes" in _path(rows_of, emb, [0, 4, 4, 2])
    g = st.grad(rows_of)
    for rows in ([0, 4, 4, 2], [0, 4, 4, 2], [1, 1, 3, 0], [0, 4, 4, 2]):
        np.testing.assert_allclose(g(emb, rows), _numeric(rows_of, emb, rows), rtol=1e-6)


def test_a_caller_passing_its_own_arguments_is_specialised_and_keyed_like_its_callee():
    emb = R.standard_normal((5, 3))
    assert "specialised on their shapes" in _path(loss_through, emb, [0, 4, 2])
    g = st.grad(loss_through)
    for rows in ([0, 4, 2], [0, 4, 2], [0, 4, 2], [3, 3, 1], np.array([1, 0, 0])):
        np.testing.assert_allclose(g(emb, rows), _numeric(loss_through, emb, rows), rtol=1e-6)
    mask = np.array([True, False, False, True, False])
    assert "a boolean array (a mask)" in st.source(loss_through, args=(emb, mask))
    np.testing.assert_allclose(g(emb, mask), _numeric(loss_through, emb, mask), rtol=1e-6)


def products_of_the_positive(z, b):       # its callee lives in another module: not inlined
    return elsewhere.picked_products(z, b, z > 0.0) * 2.0


def test_a_caller_passing_a_computed_index_keeps_its_generic_code():
    """What the caller computes is not in the callee's key: the caller's code stays generic
    and says why, and each call gets its own count of positive entries right."""
    b = R.standard_normal(6)
    g = st.grad(products_of_the_positive)
    for z in (np.array([1.0, -1, -1, -1, -1, -1]),) * 3 + (np.array([-1.0, -1, 2, -1, -1, -1]),
                                                          np.arange(1.0, 7.0)):
        want = np.where(z > 0, 2.0 * (np.sum(b) if np.sum(z > 0) == 1 else b), 0.0)
        np.testing.assert_allclose(g(z, b), want)
    text = st.source(products_of_the_positive, args=(np.array([1.0, -1, -1, -1, -1, -1]), b))
    assert "with values computed here" in " ".join(text.replace("#", "").split())


def positive_part(x, w):
    keep = x * w > 0
    kept = (x * w)[keep]
    return np.sum(kept ** 2) + np.sum(np.tanh(x) * w) + kept.size * 0.5


def test_a_computed_mask_leaves_out_only_what_it_picks():
    """A mask's count decides the shape of what it picks (and of what is computed from
    that), not of the rest: the function is specialised with those shapes left out, and a
    call picking another count of entries (none, all) gets its own gradient."""
    x, w = R.standard_normal(6), R.standard_normal(6)
    text = st.source(positive_part, args=(x, w))
    assert "specialised on their shapes" in text.split("\n\ndef ")[0]
    gradient = st.grad(positive_part, wrt=(0, 1))
    for scale in (1.0, 1.0, 1.0, -1.0, 0.0, 3.0, 1.0):        # other counts, all, none
        for sign in (1.0, -1.0):
            xs = x * scale + sign * np.linspace(-0.5, 0.5, 6) * (scale == 0.0)
            keep = xs * w > 0
            want = (2 * xs * w * w * keep + (1 - np.tanh(xs) ** 2) * w,
                    2 * xs * xs * w * keep + np.tanh(xs))
            for got, expected in zip(gradient(xs, w), want):
                np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    st.check_grads(positive_part, (x, w), order=2)


def _nonzero_sum(x):
    rows = np.nonzero(x > 0.2)[0]
    return np.sum(np.sin(x[rows]) * rows) + np.sum(x ** 2)


def test_nonzero_indices_leave_out_only_what_they_pick():
    x = R.standard_normal(7)
    assert "specialised on their shapes" in st.source(_nonzero_sum, args=(x,)).split("\n\ndef ")[0]
    gradient = st.grad(_nonzero_sum)
    for y in (x, x, x, -x, np.abs(x) + 0.3, x - 5.0):
        rows = np.nonzero(y > 0.2)[0]
        want = 2 * y
        want[rows] += np.cos(y[rows]) * rows
        np.testing.assert_allclose(gradient(y), want, rtol=1e-12)


def ranked(W, x):
    v = np.sum(np.tanh(W) * W) + np.sum(x)
    ordered = sorted([v, W * 2.0, np.sin(v)], key=lambda u: float(np.sum(u)))
    best = max([W * 0.5, v], key=lambda u: float(np.sum(u)))
    return np.sum(ordered[0] * 2.0 + ordered[-1]) + np.sum(best ** 2)


def test_values_of_other_shapes_ordered_by_value_are_not_taken_for_the_measured_ones():
    """Which value ``sorted(..., key=...)`` puts first (``max(..., key=...)`` picks), and so
    its shape, follows the values: a call whose order differs from the measured one's gets
    its own gradient, not the code written for the measured shapes."""
    W, x = R.standard_normal((2, 3)), R.standard_normal(3)
    gradient = st.grad(ranked)
    for sign in (1.0, 1.0, 1.0, -1.0, -1.0, 1.0, -1.0):
        np.testing.assert_allclose(gradient(sign * W, sign * x), _numeric(ranked, sign * W,
                                                                          sign * x),
                                   rtol=1e-6, atol=1e-8)


def masked_squares(x, w):
    z = x * w
    return np.sum(z[z > 0] ** 2)


def masked_logs(x):
    kept = x[x > -0.5]
    return np.sum(np.log(1.0 + (kept + 0.5) ** 2)) * 3.0


def two_masks(x, w):
    a, b = x[x > 0], w[x > 0] * 2.0
    return np.sum(a ** 2 * b)


@pytest.mark.parametrize("f, args, spread", [
    (masked_squares, (R.standard_normal(8), R.standard_normal(8)), False),
    (masked_logs, (R.standard_normal(8),), False),
    (two_masks, (R.standard_normal(8), R.standard_normal(8)), True),   # two picks: kept
])
def test_a_sum_over_a_computed_mask_s_pick_spreads_no_array(f, args, spread):
    """The seed spread over what a mask picked, read only by a product with arithmetic of the
    same pick, is the seed itself: both have the pick's shape, whatever its count."""
    fused = st.source(f, args=args).split(f"def {f.__name__}_grad")[1]
    assert ("unreduce" in fused) is spread
    gradient = st.grad(f)
    for shift in (0.0, 0.0, 0.0, 1.0, -0.7, -9.0):                # other counts, none
        x = args[0] + shift
        np.testing.assert_allclose(gradient(x, *args[1:]), _numeric(f, x, *args[1:]),
                                   rtol=1e-6, atol=1e-8)
    st.check_grads(f, args, order=2)


def embedded_rows(E, tokens, w):
    return np.tanh(E[tokens].sum(axis=0) @ w)


def embedded_columns(E, tokens, w):
    return np.sum(np.tanh(E[:, tokens].sum(axis=1) * w))


def sliced_rows(E, w):
    return np.sum(np.cos(E[1:4].mean(axis=0) * w))


@pytest.mark.parametrize("f, args", [
    (embedded_rows, (R.standard_normal((10, 4)), np.array([1, 3, 3, 7]), R.standard_normal(4))),
    (embedded_columns, (R.standard_normal((4, 10)), np.array([2, 2, 5]), R.standard_normal(4))),
    (sliced_rows, (R.standard_normal((10, 4)), R.standard_normal(4))),
])
def test_a_reduction_of_a_pick_puts_its_cotangent_back_unspread(f, args):
    """The cotangent of ``E[tokens].sum(axis=0)`` goes to ``rt.getitem_grad`` as it is (the
    helper broadcasts it over the pick, repeated rows added): no spread array is made."""
    grad = st.grad(f)
    for _ in range(3):
        got = grad(*args)
    np.testing.assert_allclose(got, _numeric(f, *args), rtol=1e-6, atol=1e-8)
    fused = st.source(f, args=args).split(f"def {f.__name__}_grad")[1]
    assert "unreduce" not in fused and "mean_grad" not in fused
    st.check_grads(f, args, order=2)

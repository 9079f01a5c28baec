"""A write into an array whose values the backward pass never reads needs no save nor
restore (srctrans/optimise/restores.py); one whose values it reads keeps them."""

import numpy as np

import srctrans as st

R = np.random.default_rng(2)


def smoothed(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def filled_then_squared(w, x):
    h = np.zeros((3, 4))
    for t in range(3):
        h[t] = np.tanh(w * x[t])
    return np.sum(h * h) + np.sum(h[:, 0])


def test_a_filled_array_whose_values_are_never_read_back_is_neither_saved_nor_restored():
    y = np.cumsum(R.standard_normal(8))
    source = st.source(smoothed, args=(0.4, y))
    fused = source.split("def smoothed_grad")[1]
    assert "saved_at" not in fused and "restored_at" not in fused
    st.check_grads(smoothed, (0.4, y), order=2, wrt=0)
    g = st.grad(smoothed)
    eps = 1e-6
    for _ in range(3):
        numeric = (smoothed(0.4 + eps, y) - smoothed(0.4 - eps, y)) / (2 * eps)
        np.testing.assert_allclose(g(0.4, y), numeric, rtol=1e-6)


def test_an_array_whose_values_the_backward_pass_reads_keeps_its_restores():
    w, x = R.standard_normal(4), R.standard_normal((3, 4))
    source = st.source(filled_then_squared, args=(w, x))
    assert "restored_at" in source.split("def filled_then_squared_grad")[1]
    st.check_grads(filled_then_squared, (w, x), order=2, wrt=0)
    g = st.grad(filled_then_squared)
    for _ in range(3):
        h = np.tanh(w * x)
        np.testing.assert_allclose(g(w, x), np.sum((2 * h + np.eye(4)[0]) * (1 - h * h) * x,
                                                   axis=0), rtol=1e-12)


def rows_recurrence(a, Y):
    level = np.zeros_like(Y)
    level[0] = Y[0]
    for t in range(1, len(Y)):
        level[t] = a * Y[t] + (1.0 - a) * level[t - 1]
    return np.sum((Y[1:] - level[:-1]) ** 2)


def test_a_filled_arrays_cotangent_is_zeroed_and_summed_in_place():
    """The cotangent of the filled array starts as a new array, so the fused gradient zeroes
    a written row and adds a read row's cotangent in place (optimise/in_place.py), where it
    copied the whole array twice a step; the written row is taken out as a copy, since
    zeroing it in place would change a view of it. (With respect to ``Y`` too: the backward
    pass reads ``dlevel`` after the loop, so the zeroing is not dead, optimise/zeroings.py.)"""
    Y = np.cumsum(R.standard_normal((6, 2)), axis=0)
    fused = st.source(rows_recurrence, args=(0.3, Y), wrt=(0, 1)).split(
        "def rows_recurrence_grad")[1]
    assert "dlevel[t] = 0.0" in fused and "dlevel[t - 1] += " in fused
    assert "rt.zero_at" not in fused and "rt.copied(dlevel[t])" in fused
    g = st.grad(rows_recurrence)
    eps = 1e-6
    numeric = (rows_recurrence(0.3 + eps, Y) - rows_recurrence(0.3 - eps, Y)) / (2 * eps)
    for _ in range(3):
        np.testing.assert_allclose(g(0.3, Y), numeric, rtol=1e-6)
    st.check_grads(rows_recurrence, (0.3, Y), order=2, wrt=(0, 1))


def one_hot_nll(W, X, labels):
    Y = np.zeros((X.shape[0], W.shape[1]))
    Y[np.arange(X.shape[0]), labels] = 1.0
    Z = X @ W
    return -np.sum(Y * (Z - np.log(np.sum(np.exp(Z), 1, keepdims=True))))


def written_twice(w, x):
    h = np.zeros(3)
    h[0] = w[0] * x[0]
    a = np.sum(h * w)                 # reads h as the first write left it
    h[1] = w[1] * x[1]
    return a + np.sum(h * h)


def test_an_array_read_only_before_its_restores_is_neither_saved_nor_restored():
    """The backward pass reads the one-hot matrix once, before the restore that ends it:
    what the restore puts back is never read, so neither it nor its save is made. An array
    read again after a restore (as an earlier write left it) keeps both."""
    W, X, labels = R.standard_normal((3, 4)), R.standard_normal((5, 3)), R.integers(0, 4, 5)
    source = st.source(one_hot_nll, args=(W, X, labels))
    fused = source.split("def one_hot_nll_grad")[1]
    assert "saved_at" not in fused and "restored_at" not in fused and "tape" not in fused
    g = st.grad(one_hot_nll)
    for _ in range(3):
        got = g(W, X, labels)
    P = np.exp(X @ W)
    P /= P.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, X.T @ (P - np.eye(4)[labels]), rtol=1e-12)
    w, x = R.standard_normal(3), R.standard_normal(3)
    assert "restored_at" in st.source(written_twice, args=(w, x)).split("def written_twice_grad")[1]
    st.check_grads(written_twice, (w, x), order=2, wrt=0)
    for _ in range(3):
        got = st.grad(written_twice)(w, x)
    h1 = np.array([w[0] * x[0], 0.0, 0.0])
    expected = h1 + np.array([x[0] * w[0], 0.0, 0.0]) + 2 * np.array([w[0] * x[0] * x[0],
                                                                      w[1] * x[1] * x[1], 0.0])
    np.testing.assert_allclose(got, expected, rtol=1e-12)

"""A loop that writes ``a[t]`` and reads ``a[t - 1]`` keeps what it wrote for its next step
(``optimise/carried_entries.py``), and a zero written into an array of zeros is dropped
(``optimise/zeroings.drop_zero_stores``): the gradients stay exactly what the loop as
written gives."""

import numpy as np
import pytest

import srctrans as st
from srctrans import check_grads


@pytest.fixture
def rng():
    return np.random.default_rng(42)


def smoothing(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def from_zero(c, x):
    """From 0: the first step reads the last entry, which the last step writes."""
    a = x * 0.5
    for t in range(len(x)):
        a[t] = c * a[t - 1] + x[t]
    return np.sum(a * a)


def dividing(c, x):
    """A division in the step (the list form of float_lists.py leaves it)."""
    a = np.zeros(len(x))
    a[0] = x[0]
    for t in range(1, len(x)):
        a[t] = a[t - 1] / (1.5 + c) + x[t] * c
    return np.sum((x[1:] - a[:-1]) ** 2)


def read_after_the_write(c, x):
    """``a[t - 1]`` read after ``a[t]`` is written: not carried."""
    a = np.zeros(len(x))
    b = np.zeros(len(x))
    for t in range(1, len(x)):
        a[t] = c * x[t] + 0.5 * a[t - 1]
        b[t] = a[t - 1] * x[t]
    return np.sum(a * b) + np.sum(a)


def index_named_late(c, x):
    """``a[s]`` read before the step names ``s = t - 1``: it reads ``a[t - 2]``."""
    a = np.zeros(len(x))
    a[0] = x[0]
    s = 0
    for t in range(1, len(x)):
        a[t] = c * a[s] + x[t]
        s = t - 1
    return np.sum((x[1:] - a[:-1]) ** 2)


def _fused_source(fn, args, wrt=0):
    return st.source(fn, args=args, wrt=wrt)


@pytest.mark.parametrize("fn", [smoothing, from_zero, dividing])
def test_the_loops_keep_the_entry_and_give_the_same_gradient(fn, rng):
    x = rng.standard_normal(9)
    g = st.grad(fn, wrt=(0, 1))
    first = g(0.3, x)                          # the generic code
    for _ in range(3):
        later = g(0.3, x)                      # the specialised code, then the short path
    for a, b in zip(first, later):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    assert "_last" in _fused_source(fn, (0.3, x)) and "rt.FLOAT64" in _fused_source(fn, (0.3, x))
    check_grads(fn, (0.3, x), order=2, wrt=(0, 1))


def test_a_forward_gradient_keeps_the_entries_and_writes_no_zero(rng):
    y = np.cumsum(rng.standard_normal(12))
    g = st.grad(smoothing, wrt=0)
    expected = g(0.4, y)
    for _ in range(3):
        assert g(0.4, y) == pytest.approx(expected, rel=1e-13)
    forward = _fused_source(smoothing, (0.4, y)).split("(forward mode)")[1]
    assert "_dlevel_last = _item_2 + " in forward and "_level_last = alpha * " in forward
    assert "dlevel[0] =" not in forward                 # (zeros since it was made)


def rounding(c, x):
    """A float32 vector written float64 values: each entry read back is rounded."""
    a = np.zeros(len(x), np.float32)
    a[0] = x[0]
    for t in range(1, len(x)):
        a[t] = c * a[t - 1] + x[t]
    return np.sum(x[1:] * a[:-1])


def test_a_float32_vector_runs_the_loop_as_written(rng):
    """The test before the loop finds a float32 vector: the loop as it was runs (a float64
    kept would not be the float32 entry read back, and the gradient would differ)."""
    x = rng.standard_normal(9)
    g = st.grad(rounding, wrt=(0, 1))               # (reverse mode on every call)
    results = [g(0.7, x) for _ in range(4)]
    assert "_a_last" in _fused_source(rounding, (0.7, x), wrt=(0, 1))
    for dc, dx in results[1:]:
        assert dc == results[0][0]
        np.testing.assert_array_equal(dx, results[0][1])


@pytest.mark.parametrize("fn", [read_after_the_write, index_named_late])
def test_a_read_after_the_write_or_of_an_older_entry_is_not_carried(fn, rng):
    x = rng.standard_normal(8)
    g = st.grad(fn, wrt=(0, 1))
    results = [g(0.3, x) for _ in range(3)]
    for dc, dx in results[1:]:
        assert dc == results[0][0]
        np.testing.assert_array_equal(dx, results[0][1])
    assert "_a_last" not in _fused_source(fn, (0.3, x), wrt=(0, 1))
    assert "_b_last" not in _fused_source(fn, (0.3, x), wrt=(0, 1))
    check_grads(fn, (0.3, x), order=2, wrt=(0, 1))


def test_differentiated_again_the_loop_as_it_was_is_differentiated(rng):
    x = rng.standard_normal(6)
    hessian = st.hessian(dividing, wrt=0)(0.3, x)
    h = 1e-5
    g = st.grad(dividing, wrt=0)
    assert hessian == pytest.approx((g(0.3 + h, x) - g(0.3 - h, x)) / (2 * h), rel=1e-5)

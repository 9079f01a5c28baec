"""A ``while`` loop that counts an int to a bound is a ``for`` loop over the same range
(srctrans/normalize/counted_loops.py): its derivative keeps the loop's own list of saved
values instead of a tape and a trip count, and computes what Python computes for any
bound (an int, a float, a NumPy scalar, a NaN)."""

import numpy as np
import pytest

import srctrans as st
from srctrans.runtime import range_stop

R = np.random.default_rng(11)


def counts_up(x, steps):
    r = x * 1.0
    n = 0
    while n < steps:
        r = np.sin(r) * 0.9 + x * n
        n += 1
    return np.sum(r ** 2)


def counts_up_inclusive_by_two(x, steps):
    r = x * 1.0
    k = 1
    while k <= steps:
        r = np.tanh(r + x) * k
        k = k + 2
    return np.sum(r)


def counts_down(x, steps):
    r = x * 1.0
    t = steps - 1
    while t >= 0:
        r = r * np.cos(x) + 0.1 * t
        t -= 1
    return np.sum(r * r)


def counts_with_else(x, steps):
    r = x * 1.0
    n = 0
    while n < steps:
        r = np.sin(r) + x
        n += 1
    else:
        r = r * 2.0
    return np.sum(r)


def counts_over_a_length(x, xs):
    r = x * 1.0
    i = len(xs) - 1
    while 0 <= i:                   # the counter on the right
        r = r * xs[i]
        i -= 1
    return np.sum(r)




# -- loops that keep their form: something could tell the two loops apart --------------------

def reads_the_counter_after(x, steps):
    r = x * 1.0
    n = 0
    while n < steps:
        r = np.sin(r)
        n += 1
    return np.sum(r) * n            # the while loop's last n is the first it did not run


def breaks(x, steps):
    r = x * 1.0
    n = 0
    while n < steps:
        r = np.sin(r)
        if np.sum(r) > 100.0:
            break
        n += 1
    return np.sum(r)


def changes_the_counter_inside(x, steps):
    r = x * 1.0
    n = 0
    while n < steps:
        r = np.sin(r)
        n = n + 1
        n += 1
    return np.sum(r)


def changes_the_bound(x, steps):
    r = x * 1.0
    n = 0
    while n < steps:
        r = np.sin(r)
        steps = steps - 0.5
        n += 1
    return np.sum(r)


def changes_the_bound_in_place(x, steps):
    r = x * 1.0
    lim = np.array(steps, dtype=float)
    n = 0
    while n < lim:
        r = np.sin(r)
        lim[...] = lim - 0.5        # the test reads the array as it is at each step
        n += 1
    return np.sum(r)


def starts_at_a_float(x, steps):
    r = x * 1.0
    n = 0.5
    while n < steps:
        r = np.sin(r) * n           # (rt.counted: n's values as the loop computes them)
        n += 1
    return np.sum(r)


def keeps_the_counter(x, steps):
    r = x * 1.0
    t = steps - 1.0
    while t >= 0:                   # a call may keep a reference to t, whose in-place
        r = r * np.cos(x) + 0.1 * np.abs(t)        # change (a 0-d array's) it would see
        t -= 1
    return np.sum(r)


def counts_in_an_outer_loop(x, steps):
    r = x * 1.0
    for _ in range(2):
        r = r + 0.5                 # (n is set again below before each count)
        n = 0
        while n < steps:
            r = np.sin(r) * n
            n += 1
    return np.sum(r)


FORMS = [counts_up, counts_up_inclusive_by_two, counts_down, counts_with_else, starts_at_a_float]
KEPT = [reads_the_counter_after, breaks, changes_the_counter_inside, changes_the_bound,
        changes_the_bound_in_place, keeps_the_counter]


def _numeric(f, x, *rest, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return g


def _generated_loops(fn, *args):
    text = st.source(fn, args=args)
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return sum("while " in line for line in code), sum(" for " in f" {line}" for line in code)


@pytest.mark.parametrize("fn", FORMS + [counts_in_an_outer_loop],
                         ids=lambda f: f.__name__)
def test_a_counted_while_loop_is_a_range_loop(fn):
    x = R.standard_normal(3)
    whiles, fors = _generated_loops(fn, x, 4)
    assert whiles == 0 and fors > 0
    if fn is not counts_in_an_outer_loop:        # (a loop in a loop keeps a tape)
        assert "tape" not in st.source(fn, args=(x, 4)).split("_grad(")[-1]


@pytest.mark.parametrize("fn", KEPT, ids=lambda f: f.__name__)
def test_a_loop_whose_counter_could_be_told_apart_stays_a_while_loop(fn):
    whiles, _ = _generated_loops(fn, R.standard_normal(3), 4)
    assert whiles > 0


@pytest.mark.parametrize("bound", [0, 1, 4, 2.5, 3.0, -1.5, np.float32(2.5), np.int64(3),
                                   np.array(2.2), float("nan")], ids=repr)
@pytest.mark.parametrize("fn", FORMS + KEPT + [counts_in_an_outer_loop],
                         ids=lambda f: f.__name__)
def test_the_derivative_runs_the_steps_python_runs(fn, bound):
    x = R.uniform(0.2, 0.8, 3)
    g = st.grad(fn)
    for _ in range(3):                       # generic, specialised, short path
        np.testing.assert_allclose(g(x, bound), _numeric(fn, x, bound), rtol=1e-6, atol=1e-8)
    v = R.standard_normal(3)
    _, tangent = st.jvp(fn, (x, bound), (v, None))
    np.testing.assert_allclose(tangent, _numeric(fn, x, bound) @ v, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", FORMS, ids=lambda f: f.__name__)
def test_second_order_through_a_counted_loop(fn):
    x, v = R.uniform(0.2, 0.8, 3), R.standard_normal(3)
    gradient = st.grad(fn)
    want = (gradient(x + 1e-5 * v, 3) - gradient(x - 1e-5 * v, 3)) / 2e-5
    np.testing.assert_allclose(st.hvp(fn, (x, 3), (v, None))[0], want, rtol=1e-5, atol=1e-7)


def test_a_count_over_a_length_reads_each_entry():
    x, xs = R.uniform(0.5, 1.5, 3), [0.5, 1.5, 2.0]
    assert _generated_loops(counts_over_a_length, x, xs)[0] == 0
    np.testing.assert_allclose(st.grad(counts_over_a_length)(x, xs),
                               _numeric(counts_over_a_length, x, xs), rtol=1e-6)


def test_an_infinite_bound_raises_where_python_would_loop_forever():
    with pytest.raises(st.UsageError, match="forever") as caught:
        st.grad(counts_up)(np.ones(2), float("inf"))
    assert "test_counted_loops.py" in str(caught.value)


@pytest.mark.parametrize("start, bound, comparison, step", [
    (0, 3, "<", 1), (0, 2.5, "<", 1), (0, 2.5, "<=", 1), (1, 6, "<=", 2), (0, -1.0, "<", 1),
    (3, 0, ">=", -1), (3, -0.5, ">", -1), (3, 0.5, ">=", -2), (5, 5, ">", -1),
    (0, np.float32(1.5), "<", 1), (0, np.array(2), "<", 1), (-2, np.int64(2), "<=", 3),
    (0, float("nan"), "<", 1), (0, float("-inf"), "<=", 1), (3, float("inf"), ">", -1),
])
def test_range_stop_gives_the_ints_the_while_test_passes(start, bound, comparison, step):
    compare = {"<": np.less, "<=": np.less_equal, ">": np.greater,
               ">=": np.greater_equal}[comparison]
    python, n = [], start
    while compare(n, bound):
        python.append(n)
        n += step
    assert list(range(start, range_stop(start, bound, comparison), step)) == python


def test_the_runtime_modules_examples():
    import doctest
    from srctrans.runtime import counting
    assert doctest.testmod(counting).failed == 0

"""Loops marked ``st.checkpointed``: binomial checkpointing (Griewank's revolve).

The gradient of a marked loop must be the unmarked loop's, bit for bit (each
step runs again on the same values), in every mode and to second order; the
schedule must keep at most the states asked for and run steps again no more
often than the optimum; memory must follow the snapshots, not the steps; and
what a marked loop cannot be (one that leaves early, a mark elsewhere, a bad
count) is an error at the user's line.
"""

import functools
import math
import tracemalloc

import numpy as np
import pytest

import srctrans as st
from srctrans.errors import UnsupportedSyntaxError
from srctrans.runtime import checkpoints


# -- programs: each marked loop beside the same loop unmarked ---------------------------------

def rnn(Wx, Wh, b, xs, h0, snapshots=None):
    h = h0
    for t in st.checkpointed(range(xs.shape[0]), snapshots):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def rnn_plain(Wx, Wh, b, xs, h0, snapshots=None):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def two_carried_and_a_branch(x, w, snapshots=2):
    u = x * 1.0
    v = w * 0.5
    for t in st.checkpointed(range(7), snapshots=snapshots):
        a = np.sin(u) * v
        if np.sum(a) > 0.1:
            u = u * 0.9 + a
        else:
            u = np.cos(u) + 0.3 * v
        v = v * 0.8 + 0.1 * np.tanh(u) * t
    return np.sum(u * v) + np.sum(a)


def two_carried_and_a_branch_plain(x, w, snapshots=2):
    u = x * 1.0
    v = w * 0.5
    for t in range(7):
        a = np.sin(u) * v
        if np.sum(a) > 0.1:
            u = u * 0.9 + a
        else:
            u = np.cos(u) + 0.3 * v
        v = v * 0.8 + 0.1 * np.tanh(u) * t
    return np.sum(u * v) + np.sum(a)


def step(h, w):
    total = h * 0.0
    for k in range(2):
        total = total + np.sin(h * w + k)
    return np.tanh(total)


def inner_loop_and_a_call(x, w, snapshots=3):
    h = x
    for t in st.checkpointed(range(6), snapshots):
        for k in range(2):
            h = h * 0.7 + np.cos(h) * w[k]
        h = step(h, w[0])
    return np.sum(h ** 2)


def inner_loop_and_a_call_plain(x, w, snapshots=3):
    h = x
    for t in range(6):
        for k in range(2):
            h = h * 0.7 + np.cos(h) * w[k]
        h = step(h, w[0])
    return np.sum(h ** 2)


def writes_and_appends(x, w, snapshots=2):
    ys = np.zeros((5,) + x.shape)
    hs = []
    h = x
    for t in st.checkpointed(range(5), snapshots):
        ys[t] = h * w
        hs.append(np.sin(h))
        h = np.tanh(h + ys[t] * 0.5) + hs[-1] * 0.1
    return np.sum(ys * ys) + np.sum(np.stack(hs)) + np.sum(h)


def writes_and_appends_plain(x, w, snapshots=2):
    ys = np.zeros((5,) + x.shape)
    hs = []
    h = x
    for t in range(5):
        ys[t] = h * w
        hs.append(np.sin(h))
        h = np.tanh(h + ys[t] * 0.5) + hs[-1] * 0.1
    return np.sum(ys * ys) + np.sum(np.stack(hs)) + np.sum(h)


def over_rows(x, w, snapshots=2):
    h = w * 1.0
    for row in st.checkpointed(x, snapshots):
        h = np.tanh(h * row + 0.5)
    for i, (a, b) in st.checkpointed(enumerate(zip(x, x[::-1])), snapshots=snapshots):
        h = h + np.sin(a * b * h) / (i + 1.0)
    return np.sum(h)


def over_rows_plain(x, w, snapshots=2):
    h = w * 1.0
    for row in x:
        h = np.tanh(h * row + 0.5)
    for i, (a, b) in enumerate(zip(x, x[::-1])):
        h = h + np.sin(a * b * h) / (i + 1.0)
    return np.sum(h)


def a_name_reused_before_the_loop(x, w, snapshots=1):
    y = x * 2.0
    z = y * y                  # the backward pass reads y as it was here
    h = w * 1.0
    for t in st.checkpointed(range(4), snapshots):
        y = np.sin(h) * x
        h = h * 0.5 + y
    return np.sum(z) + np.sum(h * y)


def a_name_reused_before_the_loop_plain(x, w, snapshots=1):
    y = x * 2.0
    z = y * y
    h = w * 1.0
    for t in range(4):
        y = np.sin(h) * x
        h = h * 0.5 + y
    return np.sum(z) + np.sum(h * y)


def nested(x, w, snapshots=2):
    h = x * 1.0
    for s in range(3):
        for t in st.checkpointed(range(4), snapshots):
            h = np.tanh(h * w + s * 0.1 + t * 0.01)
    for s in st.checkpointed(range(3), snapshots):
        for t in st.checkpointed(range(3), snapshots):
            h = np.sin(h) * w + h
    return np.sum(h * h)


def nested_plain(x, w, snapshots=2):
    h = x * 1.0
    for s in range(3):
        for t in range(4):
            h = np.tanh(h * w + s * 0.1 + t * 0.01)
    for s in range(3):
        for t in range(3):
            h = np.sin(h) * w + h
    return np.sum(h * h)


def scalar_recurrence(a, x, snapshots=4):
    for i in st.checkpointed(range(30), snapshots):
        x = a * x * (1.0 - x)
    return x


def scalar_recurrence_plain(a, x, snapshots=4):
    for i in range(30):
        x = a * x * (1.0 - x)
    return x


def _rnn_args(rng, steps=13, dtype=np.float64):
    args = (rng.standard_normal((3, 5)) * 0.5, rng.standard_normal((5, 5)) * 0.4,
            rng.standard_normal(5) * 0.1, rng.standard_normal((steps, 4, 3)),
            rng.standard_normal((4, 5)))
    return tuple(a.astype(dtype) for a in args)


PAIRS = [
    (two_carried_and_a_branch, two_carried_and_a_branch_plain,
     lambda r: (r.standard_normal((2, 3)), r.standard_normal(3))),
    (inner_loop_and_a_call, inner_loop_and_a_call_plain,
     lambda r: (r.standard_normal(4) * 0.5, r.standard_normal(2) * 0.5)),
    (writes_and_appends, writes_and_appends_plain,
     lambda r: (r.standard_normal(3), r.standard_normal(3))),
    (over_rows, over_rows_plain, lambda r: (r.standard_normal((5, 3)) * 0.5, r.standard_normal(3))),
    (a_name_reused_before_the_loop, a_name_reused_before_the_loop_plain,
     lambda r: (r.standard_normal(3), r.standard_normal(3))),
    (nested, nested_plain, lambda r: (r.standard_normal(3), r.standard_normal(3) * 0.5)),
    (scalar_recurrence, scalar_recurrence_plain, lambda r: (3.2, 0.3)),
]


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# -- the gradient is the unmarked loop's ----------------------------------------------------

@pytest.mark.parametrize("snapshots", [1, 2, 3, 5, 13, 40, None])
@pytest.mark.parametrize("steps", [0, 1, 2, 13])
def test_rnn_gradient_is_the_unmarked_loops(steps, snapshots):
    rng = np.random.default_rng(steps)
    args = _rnn_args(rng, steps)
    wrt = (0, 1, 2, 4)
    for _ in range(2):             # the generic build, then the one specialised on shapes
        _same(st.grad(rnn, wrt=wrt)(*args, snapshots), st.grad(rnn_plain, wrt=wrt)(*args))


@pytest.mark.parametrize("marked, plain, make", PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_language_in_a_marked_loop_matches_the_unmarked_loop(marked, plain, make):
    rng = np.random.default_rng(1)
    args = make(rng)
    for snapshots in (1, 2, 4):
        for _ in range(2):
            _same(st.grad(marked, wrt=(0, 1))(*args, snapshots),
                  st.grad(plain, wrt=(0, 1))(*args, snapshots))
    st.check_grads(marked, args, order=2, modes=("reverse", "forward"), wrt=(0, 1),
                   rtol=1e-5, atol=1e-7)


def test_vjp_with_an_explicit_cotangent_and_value_and_grad():
    rng = np.random.default_rng(2)
    args = _rnn_args(rng)

    def states(Wx, Wh, b, xs, h0):
        h = h0
        for t in st.checkpointed(range(xs.shape[0]), 4):
            h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        return h

    def states_plain(Wx, Wh, b, xs, h0):
        h = h0
        for t in range(xs.shape[0]):
            h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        return h

    v = rng.standard_normal((4, 5))
    out, pullback = st.vjp(states, *args)
    want_out, want_pullback = st.vjp(states_plain, *args)
    _same(out, want_out)
    _same(pullback(v), want_pullback(v))
    value, gradient = st.value_and_grad(rnn, wrt=(0, 1))(*args, 3)
    _same(value, rnn_plain(*args))
    _same(gradient, st.grad(rnn_plain, wrt=(0, 1))(*args))


def test_forward_mode_runs_the_marked_loop_as_a_loop():
    rng = np.random.default_rng(3)
    args = _rnn_args(rng)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    _same(st.jvp(rnn, args, tangents), st.jvp(rnn_plain, args, tangents))


def test_second_order_hvp_hessian_and_grad_of_grad():
    rng = np.random.default_rng(4)
    args = _rnn_args(rng, steps=6)
    v = tuple(rng.standard_normal(np.shape(a)) for a in args)
    v = (v[0], None, v[2], None, v[4])
    _same(tuple(x for x in st.hvp(rnn, args, v) if x is not None),
          tuple(x for x in st.hvp(rnn_plain, args, v) if x is not None))
    x, w = rng.standard_normal(3), rng.standard_normal(3) * 0.5
    _same(st.hessian(nested, wrt=0)(x, w), st.hessian(nested_plain, wrt=0)(x, w))

    def gradient_norm(x, w):
        g = st.grad(a_name_reused_before_the_loop)(x, w)
        return np.sum(g * g)

    def gradient_norm_plain(x, w):
        g = st.grad(a_name_reused_before_the_loop_plain)(x, w)
        return np.sum(g * g)

    _same(st.grad(gradient_norm, wrt=(0, 1))(x, w), st.grad(gradient_norm_plain, wrt=(0, 1))(x, w))


def test_the_hvp_runs_through_the_checkpointed_code():
    """The gradient that an HVP differentiates keeps the states its plan names: the plan and
    the list of states are in its source, and forward mode ran through them."""
    from srctrans.composed import _gradient_function
    gradient = _gradient_function(rnn, ("Wx", "Wh", "b", "h0"), _rnn_args(np.random.default_rng(5)))
    text = st.source(gradient) if not isinstance(gradient, str) else gradient
    assert "checkpoint_plan" in text and "checkpoint_start(" in text


def test_float32_and_broadcasting():
    rng = np.random.default_rng(6)
    args = _rnn_args(rng, steps=9, dtype=np.float32)
    got = st.grad(rnn, wrt=(0, 1, 2))(*args, 2)
    assert all(g.dtype == np.float32 for g in got)
    _same(got, st.grad(rnn_plain, wrt=(0, 1, 2))(*args))
    # b (5,) broadcasts against (4, 5) in every step
    st.check_grads(rnn, args[:5] + (3,), wrt=(0, 2), order=2, rtol=2e-2, atol=2e-3)


def test_run_as_python_the_mark_is_the_iterable():
    assert st.checkpointed(range(3)) == range(3)
    rng = np.random.default_rng(7)
    args = _rnn_args(rng)
    assert rnn(*args, 2) == rnn_plain(*args)


def test_the_generated_code_restores_and_runs_steps_again():
    text = st.source(rnn, wrt=(0,))
    assert "rt.checkpoint_start(_plan" in text and "rt.checkpoint_keeps(_plan" in text
    assert "checkpoint_plan" in text
    # a step's temporaries are computed again, not saved: only the carried state is pushed
    backward = text[text.index("_bwd("):]
    assert backward.count(".append(") == 1 and backward.count(".pop()") == 1


# -- the schedule -------------------------------------------------------------------------

def _run_schedule(steps, snapshots):
    """(most states kept at once, steps run again) of the plan driven as generated code does."""
    plan = checkpoints.CheckpointPlan(steps, snapshots)
    kept, most = {}, 0
    for j in range(steps):
        if plan.keep(j):
            kept[j] = j
        most = max(most, len(kept))
    again, first = 0, None
    for i in range(steps - 1, -1, -1):
        start = plan.restore(i)
        first = start if first is None else first
        assert kept[start] == start <= i
        for j in range(start, i):
            again += 1
            if plan.keep(j + 1):
                kept[j + 1] = j + 1
            most = max(most, len(kept))
        kept.pop(i, None)
        assert all(k < i for k in kept)
    return most, again + (first or 0)      # the forward pass ran the first stretch


@functools.lru_cache(maxsize=None)
def _fewest_steps_run_again(steps, snapshots):
    """The optimum, by exhaustive recursion over the first split (small cases)."""
    if steps <= 1:
        return 0
    if snapshots == 1:
        return steps * (steps - 1) // 2
    return min(k + _fewest_steps_run_again(k, snapshots) + _fewest_steps_run_again(steps - k, snapshots - 1)
               for k in range(1, steps))


@pytest.mark.parametrize("snapshots", [1, 2, 3, 4, 6])
def test_the_schedule_keeps_at_most_the_snapshots_and_is_optimal(snapshots):
    for steps in range(0, 70):
        most, again = _run_schedule(steps, snapshots)
        assert most <= snapshots
        assert again == _fewest_steps_run_again(steps, snapshots) == \
            checkpoints.recomputed_steps(steps, snapshots), (steps, snapshots)


def test_the_schedule_of_long_loops_and_the_default():
    for steps, snapshots in ((1000, 32), (10000, 10), (5000, 2)):
        most, again = _run_schedule(steps, snapshots)
        assert most <= snapshots and again == checkpoints.recomputed_steps(steps, snapshots)
        assert again <= checkpoints.repetitions(steps, snapshots) * steps
    assert checkpoints.snapshot_count(1000, None) == 32
    assert checkpoints.snapshot_count(1, None) == 1 and checkpoints.snapshot_count(0, None) == 1
    assert checkpoints.repetitions(1000, 32) == 3     # C(35, 3) = 6545 >= 1000 > C(34, 2)
    assert math.comb(34, 2) < 1000 <= math.comb(35, 3)


# -- memory ----------------------------------------------------------------------------------

def _peak(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_memory_follows_the_snapshots_not_the_steps():
    rng = np.random.default_rng(8)
    args = (rng.standard_normal((16, 64)) / 4, rng.standard_normal((64, 64)) / 8,
            rng.standard_normal(64) * 0.1, rng.standard_normal((400, 32, 16)), np.zeros((32, 64)))
    marked, plain = st.grad(rnn, wrt=(0, 1, 2)), st.grad(rnn_plain, wrt=(0, 1, 2))
    for _ in range(2):
        marked(*args, 20), plain(*args)
    state = 32 * 64 * 8
    marked_peak, plain_peak = _peak(lambda: marked(*args, 20)), _peak(lambda: plain(*args))
    assert plain_peak > 400 * state                   # every step's values
    assert marked_peak < 20 * state + 40 * state      # the snapshots, and a step's values
    assert marked_peak * 5 < plain_peak


# -- what a marked loop cannot be ---------------------------------------------------------

def leaves_early(x):
    for t in st.checkpointed(range(5)):
        x = x * 2.0
        if np.sum(x) > 10.0:
            break
    return np.sum(x)


def returns_inside(x):
    for t in st.checkpointed(range(5)):
        x = x * 2.0
        if np.sum(x) > 10.0:
            return np.sum(x)
    return np.sum(x)


def mark_elsewhere(x):
    steps = st.checkpointed(range(5))
    for t in steps:
        x = x * 2.0
    return np.sum(x)


def mark_with_other_arguments(x):
    for t in st.checkpointed(range(5), 2, 3):
        x = x * 2.0
    return np.sum(x)


def zero_snapshots(x):
    for t in st.checkpointed(range(5), snapshots=0):
        x = np.sin(x)
    return np.sum(x)


def inner_break_is_fine(x):
    for t in st.checkpointed(range(4), 2):
        for k in range(5):
            x = np.sin(x) + 0.5
            if k == 2:
                break
    return np.sum(x)


@pytest.mark.parametrize("fn, words", [
    (leaves_early, "`break` in a loop marked st.checkpointed"),
    (returns_inside, "`return` in a loop marked st.checkpointed"),
    (mark_elsewhere, "other than as a `for` loop's iterable"),
    (mark_with_other_arguments, "this form of st.checkpointed"),
])
def test_what_cannot_be_checkpointed_is_an_error_at_the_line(fn, words):
    with pytest.raises(UnsupportedSyntaxError) as caught:
        st.grad(fn)(np.ones(3))
    assert words in str(caught.value)
    assert "test_checkpointed_loops.py" in str(caught.value)


@pytest.mark.parametrize("snapshots", [0, -2, 1.5, True, "3"])
def test_a_count_that_is_not_a_positive_integer_is_an_error(snapshots):
    with pytest.raises(st.SrcTransError, match="snapshots"):
        st.checkpointed(range(3), snapshots)
    with pytest.raises(st.SrcTransError, match="snapshots"):
        st.grad(rnn)(*_rnn_args(np.random.default_rng(0)), snapshots)


def test_a_count_error_names_the_users_line():
    with pytest.raises(UnsupportedSyntaxError, match="test_checkpointed_loops.py"):
        st.grad(zero_snapshots)(np.ones(3))


def test_an_inner_loop_may_break():
    x = np.linspace(-1.0, 1.0, 3)
    st.check_grads(inner_break_is_fine, (x,), order=2)


def test_an_exported_derivative_keeps_its_checkpoints(tmp_path):
    import importlib.util
    path = tmp_path / "exported_rnn.py"
    st.export(rnn, str(path), wrt=(0, 1))
    assert "checkpoint_start" in path.read_text()
    spec = importlib.util.spec_from_file_location("exported_rnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = _rnn_args(np.random.default_rng(9))
    _same(module.rnn_grad(*args, 3), st.grad(rnn_plain, wrt=(0, 1))(*args))

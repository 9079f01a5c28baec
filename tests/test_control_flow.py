"""Reverse mode through if/elif/else, for over range(...), and while loops."""

import builtins

import numpy as np
import pytest

import srctrans as st
import srctrans.cache
from programs import control


def _rng(seed):
    return np.random.default_rng(seed)


# program, argument builder (seeded), indices of the arguments to check
CASES = [
    (control.branch_on_data, lambda r: (r.standard_normal((4, 3)), r.standard_normal((3, 5))), (0, 1)),
    (control.branch_on_data, lambda r: (r.standard_normal((4, 3)), -np.abs(r.standard_normal((3, 5)))
                                        * np.sign(r.standard_normal((4, 3)).sum())), (0, 1)),
    (control.elif_chain, lambda r: (r.standard_normal(3) + 2.0,), (0,)),
    (control.elif_chain, lambda r: (0.1 * r.standard_normal(3),), (0,)),
    (control.elif_chain, lambda r: (r.standard_normal(3) - 3.0,), (0,)),
    (control.branch_assigns_only_one_side, lambda r: (r.uniform(0.6, 1.0, 3), r.standard_normal(3)), (0, 1)),
    (control.branch_assigns_only_one_side, lambda r: (r.uniform(-1.0, 0.4, 3), r.standard_normal(3)), (0, 1)),
    (control.rnn, lambda r: (r.standard_normal((6, 2, 3)), 0.5 * r.standard_normal((3, 4)),
                             0.5 * r.standard_normal((4, 4)), r.standard_normal((2, 4))), (0, 1, 2, 3)),
    (control.scalar_recurrence, lambda r: (2.5, 0.3), (0, 1)),
    (control.grows_until_large, lambda r: (np.array([0.5, 1.0]),), (0,)),
    (control.nested_loops, lambda r: (r.standard_normal((2, 3)), r.standard_normal((3, 3))), (0, 1)),
    (control.branch_inside_loop, lambda r: (r.uniform(0.1, 1.0, 3),), (0,)),
    (control.loop_inside_branch, lambda r: (r.standard_normal(3), True), (0,)),
    (control.loop_inside_branch, lambda r: (r.standard_normal(3), False), (0,)),
    (control.zero_trip_loop, lambda r: (r.standard_normal(3), 0), (0,)),
    (control.zero_trip_loop, lambda r: (r.standard_normal(3), 3), (0,)),
    (control.self_reference, lambda r: (r.uniform(0.1, 0.5, 3),), (0,)),
    (control.two_carried_values, lambda r: (r.uniform(0.2, 0.9, 3), r.uniform(0.2, 0.9, 3)), (0, 1)),
    (control.loop_index_in_arithmetic, lambda r: (r.uniform(0.1, 0.9, 4),), (0,)),
    (control.temporary_inside_loop, lambda r: (r.standard_normal((2, 3)), 0.5 * r.standard_normal((3, 3))), (0, 1)),
    (control.helper_in_loop, lambda r: (r.standard_normal((2, 3)), 0.5 * r.standard_normal((3, 3))), (0, 1)),
    (control.augmented_in_loop, lambda r: (r.standard_normal(3),), (0,)),
    (control.loop_over_rows, lambda r: (r.standard_normal((4, 3)), r.standard_normal(3)), (0, 1)),
    (control.loop_over_zip, lambda r: (r.standard_normal((4, 3)), r.standard_normal((5, 3))), (0, 1)),
    (control.loop_over_enumerate, lambda r: (r.standard_normal((4, 3)),), (0,)),
    (control.loop_over_list_of_arrays, lambda r: (r.standard_normal((2, 3)), r.standard_normal((3, 3)),
                                                  r.standard_normal((3, 2))), (0, 1, 2)),
    (control.continue_skips, lambda r: (r.uniform(0.5, 1.0, 3),), (0,)),
    (control.break_stops, lambda r: (r.uniform(0.5, 1.0, 3),), (0,)),
    (control.while_with_break, lambda r: (r.uniform(0.5, 1.0, 3),), (0,)),
    (control.early_return, lambda r: (r.uniform(0.5, 1.0, 3),), (0,)),
    (control.early_return, lambda r: (-r.uniform(0.5, 1.0, 3),), (0,)),
    (control.return_from_loop, lambda r: (r.uniform(0.5, 1.0, 3),), (0,)),
    (control.return_from_loop, lambda r: (r.uniform(0.001, 0.002, 3),), (0,)),
    (control.conditional_expression, lambda r: (r.uniform(0.5, 1.0, 3), r.standard_normal(3)), (0, 1)),
    (control.conditional_expression, lambda r: (-r.uniform(0.5, 1.0, 3), r.standard_normal(3)), (0, 1)),
    (control.and_or_conditions, lambda r: (r.uniform(0.1, 1.0, 3),), (0,)),
    (control.and_or_conditions, lambda r: (r.uniform(2.5, 3.0, 3),), (0,)),
    (control.and_or_conditions, lambda r: (-r.uniform(2.5, 3.0, 3),), (0,)),
    (control.not_condition, lambda r: (r.uniform(0.1, 0.2, 3),), (0,)),
    (control.break_reads_loop_variable, lambda r: (np.array([0.3, 0.4]),), (0,)),
    (control.break_in_loop_over_rows, lambda r: (r.uniform(0.3, 0.6, (5, 2)),), (0,)),
    (control.enumerate_with_start, lambda r: (r.standard_normal((3, 2)),), (0,)),
]


def test_enumerate_start_counts_from_it():
    X = np.ones((3, 2))
    value, grad = st.value_and_grad(control.enumerate_with_start)(X)
    assert value == 12.0                             # 1 * 2 + 2 * 2 + 3 * 2
    np.testing.assert_allclose(grad, [[1, 1], [2, 2], [3, 3]])


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_matches_finite_differences(index):
    fn, build, wrt = CASES[index]
    args = build(_rng(index))
    st.check_grads(fn, args, wrt=wrt, seed=index, order=2)


def test_scalar_recurrence_closed_form():
    # x_{n+1} = a x_n: the gradient of a**100 * x with respect to x is a**100
    def dx(a):
        return st.grad(control.scalar_recurrence, wrt=1)(a, 0.0)
    assert dx(0.5) == pytest.approx(0.5 ** 100)


def test_branch_taken_decides_the_gradient():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(st.grad(control.elif_chain)(x), 2 * x)            # sum > 1
    np.testing.assert_allclose(st.grad(control.elif_chain)(x * 0.1), np.cos(x * 0.1))
    np.testing.assert_allclose(st.grad(control.elif_chain)(-x), -np.ones(3))


def test_the_tape_is_empty_after_the_backward_pass(monkeypatch):
    rng = _rng(1)
    args = (rng.standard_normal((6, 2, 3)), 0.5 * rng.standard_normal((3, 4)),
            0.5 * rng.standard_normal((4, 4)), rng.standard_normal((2, 4)))
    found = srctrans.cache.instance(control.rnn, ("W", "U"))
    index = found.build.tape_index
    assert index is not None
    out, residuals = found.fwd(*args)
    saved = len(residuals[index])
    assert saved > 0                                 # the forward pass saved values
    copies = []                                      # the backward pass pops from a copy

    def recording_list(items):
        copies.append(builtins.list(items))
        return copies[-1]
    monkeypatch.setattr(control, "list", recording_list, raising=False)
    found.bwd(residuals, 1.0)
    assert len(copies) == 1 and copies[0] == []      # and used every value
    assert len(residuals[index]) == saved            # leaving the residuals for another call


def test_the_tape_saves_only_what_the_backward_pass_reads():
    source = srctrans.cache.instance(control.augmented_in_loop, ("x",)).build.source
    assert "i = _range[_iteration]" in source        # the rule of x * i reads i: from the range
    assert "tape.append(i)" not in source
    source = srctrans.cache.instance(control.rnn, ("W",)).build.source
    assert "tape.append(h)" in source                # tanh's rule reads its result
    assert "_add = " in source and "tape.append(_add)" not in source   # no rule reads the sum


def test_a_pullback_with_a_tape_can_be_called_again():
    rng = _rng(2)
    args = (rng.standard_normal((5, 2, 3)), 0.5 * rng.standard_normal((3, 4)),
            0.5 * rng.standard_normal((4, 4)), rng.standard_normal((2, 4)))
    out, pullback = st.vjp(control.rnn, *args, wrt=(1, 2))
    first = pullback(1.0)
    second = pullback(2.0)
    for a, b in zip(first, second):
        np.testing.assert_allclose(2.0 * a, b)


def test_the_reversed_loop_reads_like_the_loop():
    source = st.source(control.rnn, wrt=(1, 2))
    backward = source.split("def rnn_bwd")[1]
    assert "for _iteration in range(trips - 1, -1, -1):" in backward
    assert "t = _range[_iteration]" not in backward      # nothing here reads t
    assert "# line" in backward and "h = np.tanh(xs[t] @ W + h @ U)" in backward
    assert "h = tape.pop()" in backward


@pytest.mark.parametrize("scale", [3.0, 0.5, -0.5])
def test_branches_outside_loops_need_no_tape(scale):
    x = np.abs(np.linspace(0.2, 1.0, 4)) * np.sign(scale)
    w = np.full(4, abs(scale))
    st.check_grads(control.branches_outside_loops, (x, w), order=2, wrt=(0, 1))
    assert "tape" not in st.source(control.branches_outside_loops, wrt=(0, 1))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_parameter_reassigned_in_a_branch_keeps_its_old_value(sign):
    x, w = np.linspace(-0.5, 0.7, 3), sign * np.array([0.3, 0.9, 0.4])
    st.check_grads(control.parameter_reassigned_in_a_branch, (x, w), order=2, wrt=(0, 1))


# -- specialised code of branches and while loops holds on every path -------------------------

def _finite_difference_gradient(fn, args, eps=1e-6):
    x = args[0]
    return np.array([(np.sum(fn(x + eps * e, *args[1:])) - np.sum(fn(x - eps * e, *args[1:])))
                     / (2 * eps) for e in np.eye(x.size).reshape((x.size,) + x.shape)]
                    ).reshape(x.shape)


@pytest.mark.parametrize("fn, make, paths", [
    (control.shape_depends_on_the_path, lambda x, c: (x, x[::-1] + 0.5, c), (1.0, -1.0)),
    (control.output_shape_depends_on_the_path, lambda x, c: (x, c), (1.0, -1.0)),
    (control.list_grows_on_one_path, lambda x, c: (x, c), (1.0, -1.0)),
    (control.while_loop_grows_the_state, lambda x, s: (x * s, np.array([0.9])), (0.5, 2.0, 1.0)),
    (control.while_grows_when_it_runs, lambda x, c: (x, c), (-10.0, 10.0)),
    (control.loop_breaks_after_the_state_changes_shape,
     lambda x, s: (np.outer([1.0, -0.4], x) * s, 0.97 * s), (1.0, -1.0)),
])
@pytest.mark.parametrize("backwards", [False, True])
def test_specialised_code_holds_on_every_path(fn, make, paths, backwards):
    """Two calls with the same shapes specialise the gradient on the path the second took;
    every later call, on any path, must still get the right gradient."""
    x = np.linspace(0.5, 1.5, 3)
    gradient = st.grad(fn)
    for value in (paths[::-1] if backwards else paths) * 3:
        args = make(x, value)
        np.testing.assert_allclose(gradient(*args), _finite_difference_gradient(fn, args),
                                   rtol=1e-6, atol=1e-6)


def test_functions_with_branches_and_while_loops_are_specialised():
    from srctrans.pipeline import build_reverse
    args = (np.linspace(0.5, 1.5, 3), np.array([0.9, 1.1, 1.3]), 1.0)
    generic = st.source(control.branches_outside_loops, wrt=(0, 1))
    specialised = st.source(control.branches_outside_loops, wrt=(0, 1), args=args[:2])
    assert specialised != generic and "rt.unbroadcast" not in specialised.split("_bwd")[1]
    build = build_reverse(control.shape_depends_on_the_path, ("x",), None)
    assert {"y", "z"} <= set(build.path_dependent) and "x" not in build.path_dependent


def test_the_state_a_while_loop_carries_is_specialised_when_it_keeps_its_shape():
    """The measuring call ran the loop and the state kept its shape: the reversed loop is
    specialised, and calls that run fewer or more steps still get the right gradient."""
    rng = np.random.default_rng(5)
    W = rng.standard_normal((4, 4))
    W *= 0.5 / np.linalg.norm(W, 2)
    x = rng.standard_normal((3, 4))
    gradient = st.grad(control.fixed_point_iteration, wrt=0)
    for scale in (1.0, 1.0, 0.0, 3.0, 1.0):
        args = (W, x * scale)
        want = _finite_difference_gradient(lambda W_, x_: control.fixed_point_iteration(W_, x_),
                                           args)
        np.testing.assert_allclose(gradient(*args), want, rtol=1e-5, atol=1e-7)
    code = st.source(control.fixed_point_iteration, wrt=(0,), args=(W, x))
    reversed_loop = code.split("_bwd")[1].split("for _iteration")[1]
    assert "rt.matmul" not in reversed_loop and "rt.unbroadcast" not in reversed_loop


def test_a_while_loop_that_ran_no_step_does_not_vouch_for_its_state():
    """Measured on a call whose loop ran no step, the state's shape says nothing about what
    the body makes of it: the code after the loop keeps the generic helpers for it."""
    x, b = np.linspace(0.1, 0.3, 3), np.array([0.7])
    fn = control.while_then_broadcast_rolled      # (np.roll: a shape srctrans does not infer)
    st.clear_cache()                   # one measurement per shape key: measure each afresh
    ran = st.source(fn, wrt=(0, 1), args=(x, b, 5.0))
    st.clear_cache()
    did_not = st.source(fn, wrt=(0, 1), args=(x, b, -5.0))
    after_the_loop = "# line {}".format(_line_of(fn, "return"))
    assert "rt.unbroadcast" not in ran.split("_bwd")[1].split(after_the_loop)[1].split("#")[0]
    assert "rt.unbroadcast" in did_not.split("_bwd")[1].split(after_the_loop)[1].split("#")[0]
    for c in (-5.0, 5.0, -5.0):
        st.check_grads(fn, (x, b, c), wrt=(0, 1))


def test_a_while_loop_whose_body_keeps_the_shape_is_specialised_however_many_steps_ran():
    """h = h * 1.5 + 1.0 keeps h's shape: by induction it has it after any number of steps,
    so even a measuring call whose loop ran no step gives specialised code after it."""
    x, b = np.linspace(0.1, 0.3, 3), np.array([0.7])
    after_the_loop = "# line {}".format(_line_of(control.while_then_broadcast, "return"))
    for c in (5.0, -5.0):
        st.clear_cache()
        text = st.source(control.while_then_broadcast, wrt=(0, 1), args=(x, b, c))
        assert "rt.unbroadcast" not in text.split("_bwd")[1].split(after_the_loop)[1].split("#")[0]
    gradient = st.grad(control.while_then_broadcast, wrt=(0, 1))
    for c in (-5.0, 5.0, -5.0, 5.0):
        st.check_grads(control.while_then_broadcast, (x, b, c), wrt=(0, 1))
        for _ in range(2):
            dx, db = gradient(x, b, c)
            want = st.grad(control.while_then_broadcast, wrt=(0, 1), specialize=False)(x, b, c)
            np.testing.assert_allclose(dx, want[0])
            np.testing.assert_allclose(db, want[1])


def _line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_a_parameter_reused_as_a_loop_variable_keeps_its_value_for_code_before_the_loop():
    """The backward pass left the loop variable at the loop's first value, and the read of
    the row before the loop took the wrong row (a wrong gradient, found by the fuzzer)."""
    xs = np.arange(6.0).reshape(3, 2) / 3
    scale = 1.0 * 1.1 * 1.2
    for k in (1, 1, 1, 2, 0):
        want = np.zeros_like(xs)
        want[k] = 2 * scale ** 2 * xs[k]
        np.testing.assert_allclose(st.grad(control.parameter_reused_as_loop_variable)(xs, k),
                                   want, rtol=1e-12)
    st.check_grads(control.parameter_reused_as_loop_variable, (xs, 2), order=2, wrt=0)


def rebound_in_a_branch(x, y, s):
    if np.sum(x) > 4.0:
        return np.sum(x * x)
    s = np.tanh(y) - 0.1 * np.sum(s)      # s, a number, becomes an array: after the np.sum
    return np.sum(s * s)


def test_a_parameter_rebound_in_a_block_to_another_shape_keeps_its_first_shape_where_read():
    """The code after an early return is a block SSA renames nothing in, so ``s`` holds the
    argument (a number) and then an array. The measuring call saw only the array: specialised
    code must not read the number as one (``s.sum()`` of a float), in either mode."""
    args = (np.array([0.1, 0.2]), np.array([0.5]), 0.9)
    gradient = st.grad(rebound_in_a_branch, wrt=(0, 1, 2))
    want = st.grad(rebound_in_a_branch, wrt=(0, 1, 2), optimize=False)(*args)
    for _ in range(3):                        # generic, specialised, short path
        for got, expected in zip(gradient(*args), want):
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    for _ in range(3):
        st.jvp(rebound_in_a_branch, args, (np.ones(2), np.ones(1), 1.0))
    st.check_grads(rebound_in_a_branch, args, order=2)

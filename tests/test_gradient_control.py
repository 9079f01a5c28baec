"""Controlling gradients: stop_gradient, stop_recording, custom_gradient, register_vjp,
register_jvp, nondifferentiable, grad_of, unconnected_gradients, and the constants table.

The functions live in tests/programs/controlling.py. Expected values are
analytic (the derivative of what the function means once the control is
applied) or finite differences where nothing is controlled. Every test runs
with the registry as it was before it: rules a test registers are undone.
"""

import doctest
import inspect
import math
import os
import re
import warnings

import numpy as np
import pytest

import srctrans as st
import srctrans.cache
from programs import controlling as c
from programs import line_of
from srctrans.rules import REGISTRY

X = np.array([0.3, 0.7, 1.1])
FILE = os.path.basename(c.__file__)


@pytest.fixture(autouse=True)
def own_registry():
    """Undo the rules a test registers, so no other test sees them."""
    saved = REGISTRY.user_rules()
    yield
    REGISTRY.restore_user_rules(saved)
    st.clear_cache()


# -- stop_gradient ---------------------------------------------------------------------

def test_stop_gradient_seed():
    assert st.grad(c.stopped, wrt=(0, 1))(2.0, 3.0) == (4.0, None)
    dx, dy = st.grad(c.stopped, wrt=(0, 1), unconnected_gradients="zero")(2.0, 3.0)
    assert (dx, dy) == (4.0, 0.0)


def test_stop_gradient_is_the_identity_outside_differentiation():
    assert st.stop_gradient(3.0) == 3.0
    assert c.stopped(2.0, 3.0) == 13.0


def test_stop_gradient_of_an_array_is_a_constant():
    y = np.array([2.0, -1.0, 0.5])
    dx, dy = st.grad(c.stopped_array, wrt=(0, 1))(X, y)
    np.testing.assert_allclose(dx, X * y)          # x * y held constant
    assert dy is None


def test_stop_gradient_under_another_alias():
    np.testing.assert_allclose(st.grad(c.stopped_alias)(X), X)


def test_stop_gradient_leaves_no_adjoint_in_the_generated_code():
    text = st.source(c.stopped, wrt=(0, 1))
    assert "dy" not in text.split("def stopped_bwd")[1]


# -- stop_recording --------------------------------------------------------------------

def test_stop_recording_seed():
    assert st.grad(c.not_recorded, wrt=(0, 1))(2.0, 3.0) == (4.0, None)
    assert c.not_recorded(2.0, 3.0) == 13.0


def test_values_computed_while_not_recording_are_constants():
    x, y = 0.7, 1.3
    a = x * y
    constant = np.sin(a * y)
    dx, dy = st.grad(c.recorded_partly, wrt=(0, 1))(x, y)
    assert dx == pytest.approx(y + constant)
    assert dy == pytest.approx(x)


def test_stop_recording_in_a_loop():
    n = 3
    s, ds = 0.0 * X, np.zeros_like(X)
    for _ in range(n):
        s, ds = s + X * X, ds + 2.0 * X
        scale = np.sum(s * s)                     # recorded nowhere: a constant
        s, ds = s / scale, ds / scale
    np.testing.assert_allclose(st.grad(c.not_recorded_in_loop)(X, n), ds)


def test_a_write_while_not_recording_gives_the_written_value_no_gradient():
    expected = np.array([4.0 * X[0], 3.0 * X[1], 8.0 * X[2]])
    np.testing.assert_allclose(st.grad(c.not_recorded_write)(X), expected)


# -- custom_gradient ---------------------------------------------------------------------

def test_custom_gradient_seed_clips_to_norm_half():
    assert st.grad(c.clipped_square)(2.0) == pytest.approx(2.0)
    assert c.clipped_square(2.0) == 4.0
    assert c.clip_gradients(4.0) == 4.0           # outside differentiation: y alone


def test_custom_gradient_on_arrays():
    v = np.array([1.0, 2.0])
    clipped = np.ones(2) * 0.5 / np.sqrt(2.0)
    np.testing.assert_allclose(st.grad(c.clipped_square)(v), 2.0 * v * clipped)


def test_custom_gradient_function_differentiated_itself():
    assert st.grad(c.clip_gradients)(4.0) == pytest.approx(0.5)
    value, gradient = st.value_and_grad(c.clip_gradients)(np.array([3.0, 4.0]))
    np.testing.assert_allclose(value, [3.0, 4.0])
    np.testing.assert_allclose(gradient, np.ones(2) * 0.5 / np.sqrt(2.0))


@pytest.mark.parametrize("fn", [c.calls_product, c.calls_product_by_name])
def test_custom_gradient_with_two_inputs(fn):
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    da, db = st.grad(fn, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(da, 10.0 * b)      # what backward says, not the truth
    np.testing.assert_allclose(db, np.zeros(2))   # backward gave None


def test_custom_gradient_straight_through_round():
    x = np.array([0.2, 0.45, 0.9])
    np.testing.assert_allclose(st.grad(c.quantised)(x), np.round(3.0 * x) + 3.0 * x)


def test_custom_gradient_in_a_loop_and_its_pullback_reused():
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_allclose(st.grad(c.product_in_loop)(a, b, 3), 30.0 * b)
    _, pullback = st.vjp(c.product_in_loop, a, b, 3, wrt=0)
    first, second = pullback(1.0), pullback(2.0)
    np.testing.assert_allclose(first[0], 30.0 * b)
    np.testing.assert_allclose(second[0], 60.0 * b)


def test_custom_gradient_that_returns_no_pair():
    with pytest.raises(st.UsageError, match="must return"):
        c.not_a_pair(1.0)
    with pytest.raises(st.UsageError, match="not_a_pair"):
        st.grad(c.calls_not_a_pair)(1.0)


def test_custom_gradient_of_the_wrong_shape():
    with pytest.raises(st.ShapeError, match=r"shape \(7,\) for argument 0"):
        st.grad(c.calls_wrong_shape)(X)


def test_custom_gradient_keyword_only_parameter():
    np.testing.assert_allclose(st.grad(c.calls_keyword_only)(X, 2.0), 2.0 * np.ones(3))
    with pytest.raises(st.UnsupportedSyntaxError, match="`scale=` passes a value") as info:
        st.grad(c.calls_keyword_only, wrt=1)(X, 2.0)
    assert f"{FILE}:" in str(info.value) and "positionally" in str(info.value)


def test_custom_gradient_generated_code_keeps_the_backward_function():
    text = st.source(c.clipped_square)
    assert "_out, clip_gradients_backward = clip_gradients.forward(_mul)" in text
    assert "clip_gradients_backward(d_out)" in text


# -- register_vjp ------------------------------------------------------------------------------

def test_register_vjp_overrides_source_differentiation():
    x, y = np.array([1.0, 2.0]), np.array([0.5, 3.0])
    gradient = st.grad(c.calls_cube)                 # built before the registration
    np.testing.assert_allclose(gradient(x, y), 3.0 * x ** 2 * y)
    st.register_vjp(c.cube, lambda g, ans, x: (g * 100.0,))
    np.testing.assert_allclose(gradient(x, y), 100.0 * y)
    assert st.grad(c.cube)(2.0) == 100.0              # the function itself, by its rule
    assert "cube_vjp(" in st.source(c.calls_cube)


def test_registering_twice_replaces_with_a_warning():
    st.register_vjp(c.cube, lambda g, ans, x: (g * 100.0,))
    with pytest.warns(UserWarning, match="replacing the VJP rule registered for cube"):
        st.register_vjp(c.cube, lambda g, ans, x: (g * 7.0,))
    assert st.grad(c.cube)(2.0) == 7.0


def test_register_vjp_for_a_c_function():
    def derivative(x, eps=1e-6):
        return (math.remainder(x + eps, 0.3) - math.remainder(x - eps, 0.3)) / (2 * eps)

    st.register_vjp(math.remainder, lambda g, ans, x, y: (g * derivative(x), None))
    assert st.grad(c.calls_remainder)(1.7) == pytest.approx(2.0 * derivative(1.7))


def test_register_vjp_for_a_vectorize_object():
    st.register_vjp(c.vectorized_square, lambda g, ans, a: (g * 2.0 * a,))
    np.testing.assert_allclose(st.grad(c.calls_vectorized)(X), 3.0 * X ** 2)


def test_register_vjp_for_scipy_special():
    special = pytest.importorskip("scipy.special")
    def slope(x):                         # of the scaled Bessel function i0e
        return special.i1e(x) - np.sign(x) * special.i0e(x)

    st.register_vjp(special.i0e, lambda g, ans, x: (g * slope(x),))
    st.check_grads(c.calls_i0e, (X,), modes=("reverse",))
    with pytest.raises(st.MissingRuleError, match=r"st.register_jvp\(special.i0e, lambda"):
        st.jvp(c.calls_i0e, (X,), (np.ones_like(X),))
    st.register_jvp(special.i0e, lambda tangents, ans, x: tangents[0] * slope(x))
    st.check_grads(c.calls_i0e, (X,), modes=("forward", "reverse"))


def test_register_vjp_overrides_a_numpy_rule():
    st.register_vjp(np.sin, lambda g, ans, x: (2.0 * g * np.cos(x),))
    np.testing.assert_allclose(st.grad(c.sin_sum)(X), 2.0 * np.cos(X))


def test_register_vjp_makes_a_nondifferentiable_function_differentiable():
    x = np.array([0.1, 0.3, 0.8])
    np.testing.assert_allclose(st.grad(c.rounded)(x), np.round(4.0 * x) / 4.0)
    st.register_vjp(np.round, lambda g, ans, x, decimals=0: (g,))    # straight through
    np.testing.assert_allclose(st.grad(c.rounded)(x), np.round(4.0 * x) / 4.0 + x)


def test_register_vjp_for_a_function_srctrans_cannot_read():
    with pytest.raises(st.UnsupportedSyntaxError, match="`try`"):
        st.grad(c.calls_has_a_try)(X)
    st.register_vjp(c.has_a_try, lambda g, ans, x: (g * ans,))
    np.testing.assert_allclose(st.grad(c.calls_has_a_try)(X), np.exp(X))


def test_register_vjp_none_entries():
    st.register_vjp(c.pick_and_scale, lambda g, ans, x, k: (g * k, None))
    np.testing.assert_allclose(st.grad(c.calls_pick)(X), 2.0 * np.ones(3))
    st.register_vjp(c.two_out_rule, lambda g, ans, x, y: (g * y, None))
    y = np.array([1.0, 2.0, 3.0])
    dx, dy = st.grad(c.calls_two_out, wrt=(0, 1))(X, y)
    np.testing.assert_allclose(dx, y)
    np.testing.assert_allclose(dy, np.zeros(3))


def test_register_vjp_rule_returning_the_wrong_count_or_shape():
    st.register_vjp(c.two_out_rule, lambda g, ans, x, y: (g * y,))
    with pytest.raises(st.ShapeError, match="returned 1 cotangents for 2 positional"):
        st.grad(c.calls_two_out, wrt=(0, 1))(X, X)
    with pytest.warns(UserWarning, match="replacing"):
        st.register_vjp(c.two_out_rule, lambda g, ans, x, y: (np.ones(5), None))
    with pytest.raises(st.ShapeError, match=r"shape \(5,\) for argument 0"):
        st.grad(c.calls_two_out)(X, X)


def test_register_vjp_gives_keyword_arguments_no_gradient():
    st.register_vjp(c.cube, lambda g, ans, x: (g * 3.0 * x ** 2,))
    with pytest.raises(st.UnsupportedSyntaxError, match="`x=` passes a value") as info:
        st.grad(c.calls_cube_by_name)(X)
    assert f"{FILE}:" in str(info.value)


def test_register_vjp_misuse():
    with pytest.raises(st.UsageError, match="callable"):
        st.register_vjp(3, lambda g, ans, x: (g,))
    with pytest.raises(st.UsageError, match="must be callable"):
        st.register_vjp(c.cube, "rule")

    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return x

    with pytest.raises(st.UsageError, match="not hashable"):
        st.register_vjp(Unhashable(), lambda g, ans, x: (g,))


# -- register_jvp and nondifferentiable ---------------------------------------------------------

def test_register_jvp_is_kept_for_forward_mode_and_replaced_with_a_warning():
    first = lambda tangents, ans, x: tangents[0] * 3.0 * x ** 2   # noqa: E731
    st.register_jvp(c.cube, first)
    assert REGISTRY.lookup(c.cube).custom_jvp is first
    with pytest.warns(UserWarning, match="replacing the JVP rule"):
        st.register_jvp(c.cube, lambda tangents, ans, x: tangents[0])
    np.testing.assert_allclose(st.grad(c.calls_cube)(X, X), 3.0 * X ** 3)   # reverse: the source


def test_a_function_with_only_a_jvp_rule_needs_a_vjp_rule_in_reverse_mode():
    st.register_jvp(c.vectorized_square, lambda tangents, ans, a: 2.0 * a * tangents[0])
    with pytest.raises(st.MissingRuleError, match="has a JVP rule but no VJP rule") as info:
        st.grad(c.calls_vectorized)(X)
    assert "st.register_vjp(vectorized_square, lambda g, ans" in str(info.value)
    assert "st.register_jvp(" not in str(info.value)            # it has one


def test_missing_rule_error_suggests_register_vjp():
    with pytest.raises(st.MissingRuleError, match=r"st.register_vjp\(vectorized_square, lambda"):
        st.grad(c.calls_vectorized)(X)


def test_nondifferentiable_declares_constants():
    np.testing.assert_allclose(st.grad(c.calls_bucket)(X), c.bucket(X) + 1.0 + 0.1 * X)
    assert st.nondifferentiable(c.bucket) is c.bucket
    np.testing.assert_allclose(st.grad(c.calls_bucket)(X), c.bucket(X) + 1.0)
    assert st.grad(c.bucket)(X) is None
    np.testing.assert_array_equal(st.grad(c.bucket, unconnected_gradients="zero")(X), np.zeros(3))


def test_nondifferentiable_drops_a_registered_rule_with_a_warning():
    st.register_vjp(c.cube, lambda g, ans, x: (g,))
    with pytest.warns(UserWarning, match="non-differentiable"):
        st.nondifferentiable(c.cube)
    assert st.grad(c.calls_cube, wrt=(0, 1))(X, X)[0] is None


# -- grad_of ------------------------------------------------------------------------------

def test_grad_of_scales_the_gradient():
    np.testing.assert_allclose(st.grad(c.hook_scales)(X), 6.0 * np.sin(X) * np.cos(X))


def test_grad_of_a_parameter():
    np.testing.assert_allclose(st.grad(c.hook_on_parameter)(X), 4.0 * X)


def test_grad_of_the_output():
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(st.grad(c.hook_on_output)(X), 10.0 * X)
    np.testing.assert_allclose(st.grad(c.hook_on_output)(X, output_gradients=v), 10.0 * X * v)


def test_grad_of_gives_a_synthetic_gradient():
    target = np.array([1.0, 1.0, 1.0])
    expected = 2.0 * (2.0 * X - target) + np.cos(X)
    np.testing.assert_allclose(st.grad(c.hook_synthetic)(X, target), expected)


def test_grad_of_logs_and_prints(capsys):
    log = []
    st.grad(c.hook_logs, specialize=False)(X, log)
    dh = 2.0 * np.ones(3)
    assert log == [pytest.approx(np.linalg.norm(dh))]
    assert "norm of dh:" in capsys.readouterr().out


def test_grad_of_runs_once_with_zeros_outside_differentiation(capsys):
    log = []
    c.hook_logs(X, log)
    assert log == [0.0]


@pytest.mark.parametrize("flag, expected", [(True, -8.0 * X), (False, 18.0 * X)])
def test_grad_of_in_a_branch(flag, expected):
    np.testing.assert_allclose(st.grad(c.hook_with_branch)(X, flag), expected)


def test_grad_of_two_versions_of_a_name():
    np.testing.assert_allclose(st.grad(c.hook_twice)(X), 24.0 * X)


def test_grad_of_with_branches_and_loops_inside():
    np.testing.assert_allclose(st.grad(c.hook_body_control_flow)(X), np.cos(X) / np.sqrt(3.0))


def test_grad_of_a_value_that_carries_no_gradient_does_not_run():
    y = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(st.grad(c.hook_unused_value)(X, y), np.ones(3))
    dx, dy = st.grad(c.hook_unused_value, wrt=(0, 1))(X, y)
    np.testing.assert_allclose(dy, 200.0 * np.ones(3))


def rnn_arguments(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(6, 3)), rng.normal(size=(3, 4)), 0.5 * rng.normal(size=(4, 4)),
            np.zeros(4))


@pytest.mark.parametrize("specialize", [True, False])
def test_grad_of_clips_the_hidden_state_gradient_at_every_step(specialize):
    xs, W, U, h0 = rnn_arguments()
    expected = c.rnn_reference(xs, W, U, h0, 0.1)
    np.testing.assert_allclose(st.grad(c.rnn, wrt=1, specialize=specialize)(xs, W, U, h0),
                               expected, rtol=1e-12)
    unclipped = c.rnn_reference(xs, W, U, h0, np.inf)
    assert not np.allclose(expected, unclipped)     # the clipping did something


def test_grad_of_in_a_pullback_called_twice():
    xs, W, U, h0 = rnn_arguments(1)
    _, pullback = st.vjp(c.rnn, xs, W, U, h0, wrt=1)
    first, second = pullback(1.0), pullback(1.0)
    np.testing.assert_allclose(first[0], second[0])
    np.testing.assert_allclose(first[0], c.rnn_reference(xs, W, U, h0, 0.1), rtol=1e-12)


# -- integer casts, random draws, rounding ----------------------------------------------------

def test_integer_casts_are_constants():
    x = np.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(st.grad(c.int_cast)(x), (3.0 * x).astype(int))
    np.testing.assert_allclose(st.grad(c.int_cast_by_name)(x), x.astype("int32") + 1.0)


def test_float_casts_still_differentiate():
    np.testing.assert_allclose(st.grad(c.float_cast)(X), 2.0 * X, rtol=1e-6)


def test_boolean_casts_are_constants():
    np.testing.assert_allclose(st.grad(c.bool_mask)(X), np.where(X > 0.5, 2.0 * X, 1.0))


def test_random_draws_are_constants():
    gradient = st.grad(c.random_draws, specialize=False)(X, np.random.default_rng(5))
    np.testing.assert_allclose(gradient, np.random.default_rng(5).normal(size=3))
    np.testing.assert_allclose(st.grad(c.global_generator)(X), np.ones(3))


def test_a_local_generator_drawing_around_an_active_value_is_an_error():
    # the type of a local value is not known when the code is generated
    with pytest.raises(st.MissingRuleError, match="random generator") as info:
        st.grad(c.draws_around_x)(X, np.random.default_rng(0))
    assert f"{FILE}:{line_of(c, 'local-generator')} " in str(info.value)


def test_rounding_and_signs_are_constants():
    x = np.array([-0.4, 0.3, 1.6])
    np.testing.assert_allclose(st.grad(c.rounding_functions)(x), np.sign(x))


# -- unconnected_gradients ----------------------------------------------------------------

def test_unconnected_gradients_none_and_zero():
    y32 = np.array([1.0, 2.0], dtype=np.float32)
    x = np.array([1.0, 2.0])
    assert st.grad(c.unconnected, wrt=(0, 1))(x, y32)[1] is None
    _, dy = st.grad(c.unconnected, wrt=(0, 1), unconnected_gradients="zero")(x, y32)
    assert dy.dtype == np.float32 and dy.shape == (2,) and not dy.any()
    _, (_, dy) = st.value_and_grad(c.unconnected, wrt=(0, 1), unconnected_gradients="zero")(x, 3.0)
    assert dy == 0.0 and np.shape(dy) == ()
    _, pullback = st.vjp(c.unconnected, x, y32)
    assert pullback(np.ones(2))[1] is None
    _, pullback = st.vjp(c.unconnected, x, y32, unconnected_gradients="zero")
    np.testing.assert_array_equal(pullback(np.ones(2))[1], np.zeros(2, np.float32))
    with pytest.raises(st.UsageError, match="unconnected_gradients"):
        st.grad(c.unconnected, unconnected_gradients="zeros")


def test_a_name_two_loops_bind_connects_only_what_the_second_reads():
    """The first loop's ``u, v`` (from ``y``) never reach the output: ``y`` is unconnected on
    the first (generic) call as on later (specialised) ones."""
    x = np.array([0.3, -0.7, 1.1])
    g = st.grad(c.unconnected_through_a_reused_loop_name, wrt=(0, 1))
    for _ in range(3):
        dx, dy = g(x, 0.5)
        assert dy is None
        np.testing.assert_allclose(dx, np.tanh(x) + x * (1.0 - np.tanh(x) ** 2), rtol=1e-12)


# -- misuse ----------------------------------------------------------------------------------

MISUSE = [
    (c.with_other_context, "other-with", ["`with` statement", "st.stop_recording()"]),
    (c.stop_recording_as, "recording-as", ["no arguments, no `as`"]),
    (c.grad_of_expression, "grad-of-expression", ["st.grad_of(h) as dh"]),
    (c.grad_of_without_as, "grad-of-without-as", ["st.grad_of(h) as dh"]),
    (c.hook_after_a_use, "use-before-hook", ["`h` is used between", "right after"]),
    (c.hook_without_assignment, "hook-without-assignment", ["must follow an assignment of `h`"]),
    (c.hook_writes_into_gradient, "hook-writes", ["writing into an array", "np.where"]),
    (c.hook_assigns_forward_name, "hook-assigns-forward", ["`y` is assigned inside", "backward"]),
    (c.hook_gradient_used_outside, "gradient-used-outside", ["`dh` is also used outside"]),
    (c.hook_returns, "hook-returns", ["`return` inside a `with` block"]),
    (c.stop_recording_breaks, "recording-breaks", ["`break` inside a `with` block"]),
    (c.nested_hooks, "nested-with", ["`with` inside a `with st.grad_of(...)` block"]),
]


@pytest.mark.parametrize("fn, marker, words", MISUSE, ids=[row[1] for row in MISUSE])
def test_misuse_is_rejected_at_its_line(fn, marker, words):
    arguments = (X, None) if fn is c.with_other_context else (X,)
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(fn)(*arguments)
    message = str(info.value)
    assert f"{FILE}:{line_of(c, marker)} " in message
    assert "hint:" in message
    for word in words:
        assert word in message


# -- docs/controlling.md stays true ------------------------------------------------------------

DOC = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "controlling.md")

# marker in the doc -> the text the block after it shows
DOC_BLOCKS = {
    "stopped": lambda: st.source(c.stopped, wrt=(0, 1)),
    "not_recorded": lambda: st.source(c.not_recorded, wrt=(0, 1)),
    "clipped_square": lambda: st.source(c.clipped_square),
    "softplus_loss": lambda: st.source(c.softplus_loss),
    "rnn": lambda: st.source(c.rnn, wrt=(1, 2)),
    "checkpointed_steps": lambda: st.source(c.checkpointed_steps),
    "checkpointed_rnn": lambda: st.source(c.checkpointed_rnn),
}


def _doc_blocks():
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    return dict(re.findall(r"<!-- generated: (\w+) -->\n```python\n(.*?)```", text, re.S))


def test_the_doc_shows_the_current_generated_code():
    st.register_vjp(c.log1pexp, lambda g, ans, x: (g / (1.0 + np.exp(-x)),))
    blocks = _doc_blocks()
    assert set(blocks) == set(DOC_BLOCKS)
    for name, make in DOC_BLOCKS.items():
        assert blocks[name] == make(), f"docs/controlling.md: the generated code of {name}"


def test_the_doc_examples_are_the_test_programs():
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    shown = re.findall(r"<!-- program: (\w+) -->\n```python\n(.*?)```", text, re.S)
    assert shown
    for name, block in shown:
        function = getattr(c, name)
        function = getattr(function, "function", function)     # a custom_gradient's own
        assert block == inspect.getsource(function), f"docs/controlling.md: {name}"


def test_the_doc_sessions_run():
    """The ``>>>`` sessions of the doc, in order, as one doctest."""
    with open(DOC, encoding="utf-8") as handle:
        blocks = re.findall(r"```python\n(.*?)```", handle.read(), re.S)
    sessions = "\n".join(block for block in blocks if block.startswith(">>>"))
    names = {name: value for name, value in vars(c).items() if not name.startswith("_")}
    test = doctest.DocTestParser().get_doctest(sessions, {"np": np, "st": st, **names},
                                               "docs/controlling.md", DOC, 0)
    runner = doctest.DocTestRunner()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # the overflow it mentions
        runner.run(test)
    assert runner.tries > 10 and runner.failures == 0


# -- checkpoint --------------------------------------------------------------------------

def test_a_checkpointed_function_gives_the_same_gradient_and_keeps_only_its_arguments():
    rng = np.random.default_rng(3)
    W, x = 0.5 * rng.standard_normal((4, 4)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(st.grad(c.checkpointed_steps)(W, x), st.grad(c.plain_steps)(W, x),
                               rtol=1e-13)
    st.check_grads(c.checkpointed_steps, (W, x), order=2)
    kept = {}
    for fn in (c.checkpointed_steps, c.plain_steps):
        _, residuals = srctrans.cache.instance(fn, ("W",)).fwd(W, x)
        kept[fn.__name__] = _arrays_in(residuals)
    assert kept["checkpointed_steps"] < kept["plain_steps"] / 2   # h per step, not the block's values
    assert "remat_block_fwd(h, W)[1]" in st.source(c.checkpointed_steps)


def _arrays_in(value):
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, (list, tuple)):
        return sum(_arrays_in(v) for v in value)
    return 0


def test_checkpoint_takes_a_function():
    with pytest.raises(st.UsageError, match="def"):
        st.checkpoint(np.tanh)

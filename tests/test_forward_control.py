"""Gradient control in forward mode: what each tool gives a tangent."""

import numpy as np
import pytest

import srctrans as st
from programs import controlling as c
from programs import composed


def test_stop_gradient_has_a_zero_tangent():
    out, tangent = st.jvp(c.stopped, (2.0, 3.0), (1.0, 1.0))
    assert out == 13.0 and tangent == pytest.approx(4.0)       # d(x**2) only
    _, tangent = st.jvp(c.stopped, (2.0, 3.0), (None, 1.0))
    assert tangent == 0.0


def test_stop_recording_statements_have_zero_tangents():
    _, tangent = st.jvp(c.not_recorded, (2.0, 3.0), (1.0, 1.0))
    assert tangent == pytest.approx(4.0)


@pytest.mark.parametrize("name, args", [
    ("not_recorded_in_loop", (np.array([0.5, 1.5]), 3)),
    ("not_recorded_write", (np.array([0.3, 0.7, 1.1]),)),
    ("recorded_partly", (np.array([0.4, 0.9]), np.array([1.3, 0.2]))),
])
def test_forward_and_reverse_agree_with_stop_recording(name, args):
    fn = getattr(c, name)
    floats = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    rng = np.random.default_rng(0)
    tangents = tuple(rng.standard_normal(a.shape) if i in floats else None for i, a in enumerate(args))
    _, jvp = st.jvp(fn, args, tangents)
    _, pullback = st.vjp(fn, *args, wrt=floats)
    grads = pullback(np.ones_like(fn(*args)))
    expected = sum(np.sum(g * tangents[i]) for g, i in zip(grads, floats) if g is not None)
    assert np.sum(jvp) == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_grad_of_blocks_do_not_run_in_forward_mode():
    rng = np.random.default_rng(1)
    xs, W, U, h0 = (rng.standard_normal((4, 3)), rng.standard_normal((3, 2)),
                    rng.standard_normal((2, 2)), rng.standard_normal(2))
    v = rng.standard_normal(W.shape)
    _, tangent = st.jvp(c.rnn, (xs, W, U, h0), (None, v, None, None))
    eps = 1e-6
    numeric = (c.rnn(xs, W + eps * v, U, h0) - c.rnn(xs, W - eps * v, U, h0)) / (2 * eps)
    assert tangent == pytest.approx(numeric, rel=1e-6)
    assert "grad_of" not in st.source(c.rnn, mode="forward", wrt=1)


def test_custom_gradient_in_forward_mode_names_the_rule_to_register():
    with pytest.raises(st.MissingRuleError, match="register_jvp"):
        st.jvp(c.clipped_square, (2.0,), (1.0,))


def test_nondifferentiable_functions_have_zero_tangents():
    x = np.array([0.1, 0.3, 0.8])
    _, tangent = st.jvp(c.rounded, (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(np.round(4.0 * x) / 4.0))    # round(4x) is constant


def test_registered_jvp_is_used_and_overrides_source():
    from srctrans.rules import REGISTRY
    saved = REGISTRY.user_rules()
    st.register_jvp(composed.power_3_5, composed.hundredfold_rule)
    try:
        _, tangent = st.jvp(composed.power_3_5, (1.1,), (1.0,))
        assert tangent == 100.0
        _, tangent = st.jvp(composed.first_derivative_of_power, (1.1,), (1.0,))
        assert tangent == 0.0      # a rule with source is differentiated too: 100 t has no p
    finally:                  # undone whole, or the rule table test meets its empty entry
        REGISTRY.restore_user_rules(saved)
        st.clear_cache()

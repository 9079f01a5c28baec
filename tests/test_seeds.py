"""The worked examples of the spec, checked to the digit."""

import numpy as np
import pytest

import srctrans as st
from programs import basic, controlling


def test_square_gradient_is_2x():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(st.grad(basic.square)(x), [2.0, 4.0])


def test_square_with_output_gradients_is_2xv():
    x = np.array([1.0, 2.0])
    g = st.grad(basic.square)(x, output_gradients=[2.0, 3.0])
    np.testing.assert_array_equal(g, [4.0, 12.0])


def test_default_output_gradients_are_ones_of_the_output_shape():
    x = np.array([1.0, 2.0])
    explicit = st.grad(basic.square)(x, output_gradients=np.ones(2))
    np.testing.assert_array_equal(st.grad(basic.square)(x), explicit)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chain_rule_by_parts(seed):
    """grad(mse) fed as output_gradients into grad(layer) equals grad(full loss)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 4))
    W = rng.standard_normal((4, 3))
    b = rng.standard_normal(3)
    y0 = rng.standard_normal((5, 3))

    y = basic.layer(x, W, b)
    dy = st.grad(basic.mse)(y, y0)
    by_parts = st.grad(basic.layer, wrt="W")(x, W, b, output_gradients=dy)
    whole = st.grad(basic.full_loss, wrt="W")(x, W, b, y0)

    assert by_parts.shape == W.shape
    np.testing.assert_allclose(by_parts, whole, rtol=1e-12, atol=1e-14)
    # and both agree with the closed form 2/N (y - y0) (1 - y^2) pulled through x^T
    closed = x.T @ (2.0 / y.size * (y - y0) * (1.0 - y * y))
    np.testing.assert_allclose(whole, closed, rtol=1e-10, atol=1e-12)


# -- controlling gradients (docs/controlling.md) -----------------------------------------------

def test_stop_gradient_z_equals_x_squared_plus_stopped_y_squared():
    dx, dy = st.grad(controlling.stopped, wrt=(0, 1))(2.0, 3.0)
    assert dx == 4.0 and dy is None


def test_stop_recording_z_equals_x_squared_plus_unrecorded_y_squared():
    dx, dy = st.grad(controlling.not_recorded, wrt=(0, 1))(2.0, 3.0)
    assert dx == 4.0 and dy is None


def test_custom_gradient_clips_the_gradient_of_v_squared_to_2():
    assert st.grad(controlling.clipped_square)(2.0) == pytest.approx(2.0, abs=1e-15)


def test_gradients_with_respect_to_two_sources():
    dx0 = st.grad(controlling.two_sources, wrt="x0")(0.0, 0.0)
    dx1 = st.grad(controlling.two_sources, wrt="x1")(0.0, 0.0)
    assert dx0 == 1.0                  # cos(0)
    assert dx1 == 0.25                 # sigmoid'(0)


def test_a_loss_computed_outside_reaches_the_weights_through_vjp():
    rng = np.random.default_rng(4)
    W, x = rng.standard_normal((3, 2)), rng.standard_normal((5, 3))
    y, pullback = st.vjp(controlling.model, W, x, wrt="W")
    dL_dy = rng.standard_normal(y.shape)           # plain numbers from elsewhere
    (dW,) = pullback(dL_dy)
    np.testing.assert_allclose(dW, x.T @ (dL_dy * (1.0 - y * y)), rtol=1e-12)


def test_chain_rule_in_two_parts_through_vjp():
    rng = np.random.default_rng(5)
    W, x = rng.standard_normal((3, 2)), rng.standard_normal((5, 3))
    target = rng.standard_normal((5, 2))
    y, pullback = st.vjp(controlling.model, W, x, wrt="W")
    dL_dy = st.grad(controlling.squared_error)(y, target)
    (by_parts,) = pullback(dL_dy)
    whole = st.grad(controlling.model_loss)(W, x, target)
    np.testing.assert_allclose(by_parts, whole, rtol=1e-12, atol=1e-14)

"""The worked examples of the spec, checked to the digit."""

import numpy as np
import pytest

import srctrans as st
from programs import basic


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

"""The maximum subtracted before a softmax carries no derivative (analyse.invariance)."""

import numpy as np
import pytest

import srctrans as st
from programs import softmax


@pytest.fixture
def inputs():
    rng = np.random.default_rng(7)
    z = rng.standard_normal((5, 4))
    z[0, 1] = z[0, 2] = 3.0                      # a tie in the maximum
    return z, rng.standard_normal((5, 4))


@pytest.mark.parametrize("fn", [softmax.log_softmax_loss, softmax.softmax_loss])
def test_softmax_shift_is_not_differentiated(fn, inputs):
    z, w = inputs
    st.check_grads(fn, (z, w), wrt=(0,))
    generated = st.source(fn, args=(z, w))
    assert "extremum_grad" not in generated          # no backward pass through the maximum


@pytest.mark.parametrize("fn", [softmax.shifted_value_also_used,
                                softmax.normalised_along_another_axis,
                                softmax.maximum_also_returned])
def test_shift_that_matters_is_differentiated(fn, inputs):
    z, w = inputs
    z[0, 1] = 2.5                                    # break the tie: max is differentiable here
    st.check_grads(fn, (z, w), wrt=(0,))
    assert "extremum_grad" in st.source(fn, args=(z, w))


def test_log_softmax_gradient_matches_the_closed_form(inputs):
    z, _ = inputs
    labels = np.eye(4)[[0, 3, 1, 2, 0]]
    shifted = z - z.max(axis=1, keepdims=True)
    p = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    expected = p * labels.sum(axis=1, keepdims=True) - labels
    np.testing.assert_allclose(st.grad(softmax.log_softmax_loss)(z, labels), expected, atol=1e-12)


@pytest.mark.parametrize("fn", [softmax.log_softmax_loss, softmax.softmax_loss])
def test_division_by_the_softmax_sum_is_not_guarded(fn, inputs):
    """The sum of ``exp(z - max(z))`` is at least 1: dividing by it has no singular point,
    so its rule needs no ``rt.zero_guard`` (which costs a pass over the quotient)."""
    generated = st.source(fn, args=inputs)
    assert "d_log / _sum" in generated or "dp / _sum" in generated
    assert "zero_guard(d_log" not in generated and "zero_guard(dp, dp / " not in generated


def test_division_by_another_sum_stays_guarded(inputs):
    generated = st.source(softmax.normalised_along_another_axis, args=inputs)
    assert "zero_guard(d_div, d_div / _sum)" in generated

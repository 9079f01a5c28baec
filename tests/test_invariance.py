"""An offset no later value sees carries no derivative (analyse.invariance): the maximum
subtracted before a softmax or a log-sum-exp, however it is written."""

import re

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


INVARIANT = [softmax.log_softmax_loss, softmax.softmax_loss, softmax.log_sum_exp_loss,
             softmax.log_sum_exp_squeezed, softmax.log_sum_exp_expand_dims,
             softmax.softmax_in_place, softmax.shifted_by_the_mean,
             softmax.shifted_by_a_scalar, softmax.weighted_softmax,
             softmax.softmax_of_a_negated_difference, softmax.log_sum_exp_sliced_back,
             softmax.log_sum_exp_kept_then_indexed]
SHIFT_MATTERS = [softmax.shifted_value_also_used, softmax.normalised_along_another_axis,
                 softmax.maximum_also_returned, softmax.log_sum_exp_without_the_maximum,
                 softmax.maximum_added_twice, softmax.shifted_by_a_scalar_summed_by_row,
                 softmax.widened_before_a_positive_axis, softmax.exponentials_summed_unscaled,
                 softmax.shift_replaced_in_a_loop, softmax.exponentials_scaled_unalike,
                 softmax.offset_brought_back_at_another_axis, softmax.offset_indexed_at_another_axis]
# the offset's derivative in the backward pass (its name is m, or _max, _amax, _mean inline)
OFFSET_DERIVATIVE = re.compile(r"\bd(m|_max|_amax|_mean)\b")


def _tie_broken(inputs):
    z, w = inputs
    z = z.copy()
    z[0, 1] = 2.5                                    # the maximum is differentiable here
    return z, np.abs(w) + 0.5                        # positive weights: logs are defined


@pytest.mark.parametrize("fn", INVARIANT)
def test_shift_no_value_sees_is_not_differentiated(fn, inputs):
    z, w = _tie_broken(inputs)
    st.check_grads(fn, (z, w), wrt=(0,), order=2)
    generated = st.source(fn, args=(z, w))
    assert not OFFSET_DERIVATIVE.search(generated), generated
    # and where the maximum ties: its (zero) derivative is not split between the ties
    z, w = inputs
    st.check_grads(fn, (z, np.abs(w) + 0.5), wrt=(0,))


@pytest.mark.parametrize("fn", SHIFT_MATTERS)
def test_shift_that_matters_is_differentiated(fn, inputs):
    z, w = _tie_broken(inputs)
    st.check_grads(fn, (z, w), wrt=(0,), order=2)
    generated = st.source(fn, args=(z, w))
    assert OFFSET_DERIVATIVE.search(generated), generated


def test_log_softmax_gradient_matches_the_closed_form(inputs):
    z, _ = inputs
    labels = np.eye(4)[[0, 3, 1, 2, 0]]
    shifted = z - z.max(axis=1, keepdims=True)
    p = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    expected = p * labels.sum(axis=1, keepdims=True) - labels
    np.testing.assert_allclose(st.grad(softmax.log_softmax_loss)(z, labels), expected, atol=1e-12)


def test_division_by_the_softmax_sum_is_not_guarded(inputs):
    """The sum of ``exp(z - max(z))`` is at least 1: dividing by it has no singular point,
    so its rule needs no ``rt.zero_guard`` (which costs a pass over the quotient)."""
    generated = st.source(softmax.log_softmax_loss, args=inputs)
    assert "d_log / _sum" in generated and "zero_guard(d_log" not in generated


def test_a_softmax_has_its_closed_cotangent_and_no_guard(inputs):
    """``p = e / e.sum(...)`` is a softmax (``rt.softmax_ratio``): its cotangent
    ``p * (g - (g * p).sum(...))`` goes to the logits, with no division to guard."""
    generic = st.source(softmax.softmax_loss)
    assert "rt.softmax_ratio_grad(dp, p, -1)" in generic and "zero_guard" not in generic
    fused = st.source(softmax.softmax_loss, args=inputs).split("def softmax_loss_grad")[1]
    assert "p = e / e.sum(axis=-1, keepdims=True)" in fused and "rt.softmax" not in fused
    assert "dshifted = p * (w - (w * p).sum(axis=-1, keepdims=True))" in fused


def test_a_softmax_along_another_axis_keeps_the_maximums_derivative(inputs):
    """A softmax along axis 0 of values shifted along axis 1: its closed cotangent goes to
    the shifted values, and from them to the maximum, which this shift does not leave."""
    generated = st.source(softmax.normalised_along_another_axis, args=inputs)
    assert "(axis=0, keepdims=True)" in generated and "zero_guard" not in generated
    assert "rt.extremum_grad(d_max" in generated


def divided_by_a_sum(z, w):
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    return np.sum(w * (z / np.sum(e, axis=0, keepdims=True)))      # z, not e: no softmax


def test_division_by_another_sum_stays_guarded(inputs):
    generated = st.source(divided_by_a_sum, args=inputs)
    assert re.search(r"zero_guard\(d_div\w*, d_div\w* / _sum\w*\)", generated), generated
    st.check_grads(divided_by_a_sum, _tie_broken(inputs), wrt=(0,), order=2)

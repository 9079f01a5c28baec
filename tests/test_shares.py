"""A log-sum-exp computed only for its gradient's shares is not computed
(optimise/shares.py): the fused gradient reads the softmax of its argument instead."""

import re

import numpy as np
import pytest

import srctrans as st
from programs import softmax

SHARED = [softmax.scipy_log_sum_exp_summed, softmax.scipy_log_sum_exp_kept,
          softmax.scipy_log_sum_exp_of_everything, softmax.scipy_log_sum_exp_weighted_after]
KEPT = [softmax.scipy_log_sum_exp_read_again, softmax.scipy_log_sum_exp_with_weights,
        softmax.scipy_log_sum_exp_in_a_loop]


def _inputs(dtype=np.float64):
    rng = np.random.default_rng(11)
    z = rng.standard_normal((5, 4)) * 3.0
    z[1] += 800.0                                  # exp would overflow without a shift
    return z.astype(dtype), (np.abs(rng.standard_normal((5, 4))) + 0.5).astype(dtype)


def _fused(fn, args, wrt=(0, 1)):
    """The gradient a call with ``args`` returns (after the calls that specialise it), and
    the fused gradient function it runs."""
    gradient = st.grad(fn, wrt=wrt)
    for _ in range(3):
        result = gradient(*args)
    text = st.source(fn, args=args, wrt=wrt)
    start = re.search(r"def \w+_grad\(", text).start()
    end = text.find("\ndef ", start)
    lines = text[start:end if end > 0 else len(text)].splitlines()
    return result, "\n".join(line for line in lines if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("fn", SHARED)
def test_a_log_sum_exp_read_only_for_its_shares_is_not_computed(fn):
    args = _inputs()
    st.check_grads(fn, args, wrt=(0, 1), order=2)
    result, fused = _fused(fn, args, wrt=0)      # (w's cotangent in weighted_after reads L)
    assert "softmax_share" in fused and not re.search(r"\blogsumexp\(", fused), fused
    expected = st.vjp(fn, *args)[1](1.0)[0]          # the backward pass, which reads L
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", KEPT)
def test_a_log_sum_exp_read_otherwise_is_kept(fn):
    args = _inputs()
    st.check_grads(fn, args, wrt=(0, 1), order=2)
    _, fused = _fused(fn, args)
    assert re.search(r"\blogsumexp\(", fused) and "softmax_share" not in fused, fused


def test_the_share_keeps_float32():
    args = _inputs(np.float32)
    result, fused = _fused(softmax.scipy_log_sum_exp_summed, args)
    assert "softmax_share" in fused
    assert all(g.dtype == np.float32 for g in result)
    expected = st.grad(softmax.scipy_log_sum_exp_summed, wrt=(0, 1))(
        *(a.astype(np.float64) for a in args))
    for got, want in zip(result, expected):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_the_share_of_a_row_of_infinities_is_what_logsumexp_gives():
    z, w = _inputs()
    z[2] = -np.inf
    with np.errstate(invalid="ignore"):
        result, fused = _fused(softmax.scipy_log_sum_exp_kept, (z, w))
        expected = st.vjp(softmax.scipy_log_sum_exp_kept, z, w)[1](1.0)
    assert "softmax_share" in fused
    for got, want in zip(result, expected):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-12)

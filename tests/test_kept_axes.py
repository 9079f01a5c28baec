"""A sum that keeps an axis only for the next statement to index it away sums it away
(optimise/kept_axes.py)."""

import inspect

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.emit.printer import block_lines
from srctrans.optimise.kept_axes import sum_kept_axes_away


def _summed(text, live_out=()):
    return "\n".join(block_lines(sum_kept_axes_away(gast.parse(text).body, set(live_out)), 0))


@pytest.mark.parametrize("text, summed", [
    ("t = d.sum(axis=0, keepdims=True)\ng = t[0, :, :]", "g = d.sum(axis=0)"),
    ("t = d.sum(axis=0, keepdims=True)\ng = t[0]", "g = d.sum(axis=0)"),
    ("t = -d.sum(axis=1, keepdims=True)\ng = t[:, 0]", "g = -d.sum(axis=1)"),
    ("t = d.sum(axis=(0, 2), keepdims=True)\ng = t[0, :, 0]", "g = d.sum(axis=(0, 2))"),
])
def test_a_kept_axis_indexed_away_is_summed_away(text, summed):
    assert _summed(text) == summed


@pytest.mark.parametrize("text, live_out", [
    ("t = d.sum(axis=0, keepdims=True)\ng = t[1]", ()),                 # not entry 0
    ("t = d.sum(axis=1, keepdims=True)\ng = t[0, 0]", ()),              # another axis's entry
    ("t = d.sum(axis=1, keepdims=True)\ng = t[0]", ()),                 # the axis kept
    ("t = d.sum(axis=-1, keepdims=True)\ng = t[..., 0]", ()),           # (counted from the end)
    ("t = d.sum(axis=0, keepdims=True)\ng = t[0]\nh = t * 2", ()),      # t read again
    ("t = d.sum(axis=0, keepdims=True)\nu = 1\ng = t[0]", ()),          # not the next statement
    ("t = d.sum(axis=0, keepdims=True)\ng = t[0]", ("t",)),             # t is returned
    ("t = d.sum(axis=0)\ng = t[0]", ()),                                # no axis kept
])
def test_a_kept_axis_that_may_not_go_stays(text, live_out):
    assert _summed(text, live_out) == text


def mixture(means, X, log_weights, sigma):
    sq = np.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=-1)
    log_comp = log_weights - 0.5 * sq / sigma ** 2
    m = log_comp.max(axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(log_comp - m), axis=1)) + m[:, 0])


def test_the_means_cotangent_is_an_array_of_its_own():
    """means[None, :, :]'s cotangent is no view of the rows' sum: the short path hands it
    back as the fused gradient made it, with no copy on each call."""
    rng = np.random.default_rng(5)
    args = (rng.standard_normal((3, 2)), rng.standard_normal((10, 2)),
            np.log(np.array([0.2, 0.3, 0.5])), 0.8)
    source = st.source(mixture, args=args)
    assert "dmeans = d_sub.sum(axis=0)\n" in source.split("def mixture_grad")[1]
    g = st.grad(mixture)
    first = g(*args)
    for _ in range(3):
        got = g(*args)
        assert got.base is None
        np.testing.assert_allclose(got, first, rtol=1e-13)
    assert "finish(" not in inspect.getsource(g._repeat).split("\ndef ")[0]
    st.check_grads(mixture, args, order=2)

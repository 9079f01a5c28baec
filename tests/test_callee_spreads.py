"""A called function whose output the caller only sums runs as one call of its spread gradient
in the caller's fused gradient (optimise/callee_spreads.py, pipeline._spread_gradient): the
callee's output itself is not computed there; the gradients are the generic code's, on every
path, in float32 too, and match finite differences to second order."""

import numpy as np
import pytest

import srctrans as st
from programs import densities

R = np.random.default_rng(47)


def summed(w, X, nu):
    return np.sum(densities.log_density(X @ w, nu))


def scaled(w, X, nu, scale):
    return scale * np.sum(densities.log_density(X @ w, nu))


def negated_twice(w, X, nu):
    return -np.sum(densities.log_density(X @ w, nu)) - np.sum(densities.log_density(2.0 * (X @ w), nu))


def also_read(w, X, nu):
    d = densities.log_density(X @ w, nu)
    return np.sum(d) + d[0]


def broadcast_inside(w, X, c):
    return np.sum(densities.shifted(X @ w, c) ** 2) + np.sum(densities.shifted(X @ w, c))


def _args(dtype=np.float64):
    return (R.standard_normal(3).astype(dtype), R.standard_normal((8, 3)).astype(dtype), 5.0)


def _fused(f, args, wrt=0):
    text = st.source(f, args=args, wrt=wrt)
    return text.split(f"def {f.__name__}_grad(")[1].split("\ndef ")[0]


@pytest.mark.parametrize("f, extra", [(summed, ()), (scaled, (0.3,)), (negated_twice, ())],
                         ids=["summed", "scaled", "negated"])
def test_a_summed_callees_output_is_not_computed(f, extra):
    args = _args() + extra
    fused = _fused(f, args)
    assert "log_density_spread_grad(" in fused and "log_density_fwd(" not in fused
    assert "sinh" not in fused
    callee = st.source(f, args=args).split("def log_density_spread_grad(")[1]
    assert "sinh" not in callee.split("\ndef ")[0]          # the constant: never computed


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f, extra", [(summed, ()), (scaled, (0.3,)), (negated_twice, ()),
                                      (also_read, ())],
                         ids=["summed", "scaled", "negated", "also-read"])
def test_the_gradient_is_the_generic_codes(f, extra, dtype):
    args = _args(dtype) + extra
    want = st.grad(f, optimize=False)(*args)
    gradient = st.grad(f)
    for _ in range(3):                                # generic, specialised, short path
        got = gradient(*args)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == np.float64 else 1e-6)
    st.check_grads(f, _args() + extra, order=2)


def test_an_output_read_elsewhere_keeps_the_callees_passes():
    fused = _fused(also_read, _args())
    assert "log_density_fwd(" in fused and "log_density_spread_grad(" not in fused


def test_a_callee_that_broadcasts_a_number_keeps_its_sum():
    """The spread stays an array where the callee sums it: the number's gradient counts
    every entry the output spread it to."""
    args = (R.standard_normal(3), R.standard_normal((8, 3)), 0.7)
    gradient = st.grad(broadcast_inside, wrt=(0, 2))
    want = st.grad(broadcast_inside, wrt=(0, 2), optimize=False)(*args)
    for _ in range(3):
        got = gradient(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    st.check_grads(broadcast_inside, args, order=2, wrt=(0, 2))


def keyword_named_like_the_number(w, X):
    return np.sum(densities.with_options(X @ w, seed=3.0, scale=0.5))


def test_a_callee_given_a_keyword_of_the_numbers_name_keeps_its_passes():
    """The spread gradient's number is a keyword-only parameter: a call that passes a
    keyword of that name (into the callee's ``**options``) keeps f_fwd and f_bwd."""
    args = (R.standard_normal(3), R.standard_normal((8, 3)))
    gradient = st.grad(keyword_named_like_the_number)
    want = st.grad(keyword_named_like_the_number, optimize=False)(*args)
    for _ in range(3):
        np.testing.assert_allclose(gradient(*args), want, rtol=1e-12)
    st.check_grads(keyword_named_like_the_number, args, order=2)

"""A derivative's reciprocal read only by products is divided by (optimise/reciprocals.py)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.emit.printer import block_lines
from srctrans.optimise.reciprocals import divide_by_reciprocals


def _divided(text, derivatives=("r", "a", "b", "c"), live_out=()):
    body = divide_by_reciprocals(gast.parse(text).body, set(derivatives), set(live_out))
    return "\n".join(block_lines(body, 0))


@pytest.mark.parametrize("text, divided", [
    ("r = 1.0 / v\na = r * x\nb = y * r", "a = x / v\nb = y / v"),
    ("r = 1 / v\na = r * (x - y)", "a = (x - y) / v"),
    ("r = 1.0 / v\na = f(r * x)", "a = f(x / v)"),
])
def test_a_reciprocal_read_by_products_is_divided_by(text, divided):
    assert _divided(text) == divided


@pytest.mark.parametrize("text, live_out, derivatives", [
    ("r = 1.0 / v\na = r * x\nb = r * y\nc = r * z", (), None),     # three reads
    ("r = 1.0 / v\na = r + x", (), None),                            # not a product
    ("r = 1.0 / v\na = r * x\nb = f(r)", (), None),                  # one read is not
    ("r = 1.0 / v\na = r * r", (), None),                            # a square
    ("r = 2.0 / v\na = r * x", (), None),                            # not a reciprocal
    ("r = 1.0 / v\nv = w\na = r * x", (), None),                     # v assigned again
    ("r = 1.0 / v\nu[0] = 1.0\na = r * x", (), None),                # (u may be v)
    ("r = 1.0 / v\na = r * x", ("r",), None),                        # r is returned
    ("r = 1.0 / v\na = r * x", (), ("a",)),                          # r is the program's
    ("r = 1.0 / v\na = r * x\nr = a * 2", (), None),                 # r assigned twice
])
def test_a_reciprocal_that_may_not_go_stays(text, live_out, derivatives):
    assert _divided(text, derivatives or ("r", "a", "b", "c"), live_out) == text


def gaussian_kl(q, p):
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    return np.sum(p["log_sigma"] - q["log_sigma"]
                  + (var_q + (q["mu"] - p["mu"]) ** 2) / (2 * var_p) - 0.5)


def test_a_kl_divergence_divides_by_the_prior_variance():
    """The cotangent of the quotient, 1 / (2 var_p) with the 2 cancelled, is read by the two
    products of the chain rule: each is a division, and no reciprocal is made."""
    rng = np.random.default_rng(3)
    q = {"mu": rng.standard_normal(3), "log_sigma": 0.3 * rng.standard_normal(3)}
    p = {"mu": rng.standard_normal(3), "log_sigma": 0.3 * rng.standard_normal(3)}
    source = st.source(gaussian_kl, args=(q, p))
    grad = source[source.index("def gaussian_kl_grad"):]
    assert "1.0 / var_p" not in grad and grad.count("/ var_p") == 2
    st.check_grads(gaussian_kl, (q, p), order=2)
    g = st.grad(gaussian_kl)
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    for _ in range(3):
        got = g(q, p)
        np.testing.assert_allclose(got["mu"], (q["mu"] - p["mu"]) / var_p, rtol=1e-14)
        np.testing.assert_allclose(got["log_sigma"], var_q / var_p - 1.0, rtol=1e-14)

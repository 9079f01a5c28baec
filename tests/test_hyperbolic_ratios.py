"""A quotient by a hyperbolic cosine times the sine of the same value is a hyperbolic tangent
in a fused gradient (optimise/hyperbolic_ratios.py)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.hyperbolic_ratios import tanh_ratios

R = np.random.default_rng(71)


def _rewritten(text, live_out=("e",)):
    body = gast.parse(text).body
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
                anno.set_(node, Anno.CALLEE, getattr(np, node.func.attr))
    return unparse(gast.Module(tanh_ratios(body, set(live_out), "np"), [])).strip()


@pytest.mark.parametrize("text, written", [
    ("r = 1.0 / np.cosh(u)\ne = r * np.sinh(u)", "e = np.tanh(u)"),
    ("r = g / np.cosh(u)\ne = np.sinh(u) * r * 2.0", "e = g * np.tanh(u) * 2.0"),
    ("e = np.sinh(u) / np.cosh(u)", "e = np.tanh(u)"),
    ("r = 1.0 / np.cosh(u)\ne = r * np.sinh(v)", "r = 1.0 / np.cosh(u)\ne = r * np.sinh(v)"),
    ("r = 1.0 / np.cosh(u)\ne = r * np.sinh(u) + r", "r = 1.0 / np.cosh(u)\ne = r * np.sinh(u) + r"),
    ("r = 1.0 / np.cosh(u)\nu = u * 2\ne = r * np.sinh(u)",          # u changed in between
     "r = 1.0 / np.cosh(u)\nu = u * 2\ne = r * np.sinh(u)"),
    ("r = 1.0 / np.cosh(u)\nr = 2.0 / np.cosh(u)\ne = r * np.sinh(u)",    # r given another value
     "r = 1.0 / np.cosh(u)\ne = 2.0 * np.tanh(u)"),
])
def test_a_cosine_s_quotient_times_the_sine_is_a_tangent(text, written):
    assert _rewritten(text) == written


def log_cosh(w, X, y):
    return np.sum(np.log(np.cosh(X @ w - y)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_log_cosh_loss_s_gradient_is_a_tangent_to_second_order(dtype):
    args = tuple(a.astype(dtype) for a in (R.standard_normal(3), R.standard_normal((20, 3)),
                                             R.standard_normal(20)))
    fused = st.source(log_cosh, args=args).split("def log_cosh_grad")[1]
    assert "np.tanh(" in fused and "cosh" not in fused.split('"""')[-1].split("\n", 2)[-1]
    gradient = st.grad(log_cosh)
    for _ in range(3):
        got = gradient(*args)
    assert got.dtype == dtype
    want = args[1].T @ np.tanh(args[1] @ args[0] - args[2])
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    if dtype == np.float64:
        st.check_grads(log_cosh, args, order=2)

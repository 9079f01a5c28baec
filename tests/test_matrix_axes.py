"""Axis moves a matrix of known shape does not need (optimise/matrix_axes.py): a swap of a
matrix's two axes is its transpose, a number's axes put in front of a product are dropped."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.specialise import specialise

R = np.random.default_rng(53)
SHAPES = {"M": (3, 3), "S": (2, 3, 3), "v": (3,), "g": ()}


def _specialised(text):
    body = gast.parse(text).body
    for call in (n for s in body for n in gast.walk(s) if isinstance(n, gast.Call)):
        if isinstance(call.func, gast.Attribute) and call.func.value.id == "np":
            anno.set_(call, Anno.CALLEE, getattr(np, call.func.attr))
    return unparse(specialise(body, SHAPES)[0])


@pytest.mark.parametrize("text, written", [
    ("d = np.swapaxes(M, -1, -2)", "d = M.T"),
    ("d = np.swapaxes(M, 0, 1)", "d = M.T"),
    ("d = np.swapaxes(M, 1, -2)", "d = M.T"),
    ("d = np.swapaxes(M, 0, -2)", "d = np.swapaxes(M, 0, -2)"),      # one axis twice: M itself
    ("d = np.swapaxes(S, -1, -2)", "d = np.swapaxes(S, -1, -2)"),    # a stack: not a transpose
    ("d = np.expand_dims(g, (-2, -1)) * M", "d = g * M"),
    ("d = M * np.expand_dims(g, (-2, -1))", "d = M * g"),
    ("d = np.expand_dims(g, (-2, -1)) * v", "d = np.expand_dims(g, (-2, -1)) * v"),  # (1, 3)
    ("d = np.expand_dims(v, 0) * M", "d = np.expand_dims(v, 0) * M"),      # not a number
])
def test_axis_moves_a_matrix_does_not_need(text, written):
    assert _specialised(text) == written


def log_determinant(A):
    sign, value = np.linalg.slogdet(A @ A.T + np.eye(A.shape[0]))
    return value


def test_a_log_determinants_gradient_is_an_experts_and_holds():
    args = (R.standard_normal((4, 3)),)
    gradient = st.grad(log_determinant)
    for _ in range(3):
        got = gradient(*args)
    np.testing.assert_allclose(got, st.grad(log_determinant, optimize=False)(*args), rtol=1e-12)
    M = args[0] @ args[0].T + np.eye(4)
    np.testing.assert_allclose(got, 2 * np.linalg.inv(M) @ args[0], rtol=1e-10)
    fused = st.source(log_determinant, args=args).split("def log_determinant_grad")[1]
    assert "swapaxes" not in fused and "expand_dims" not in fused
    st.check_grads(log_determinant, args, order=2)

"""Axis moves a matrix of known shape does not need (optimise/matrix_axes.py): a swap of a
matrix's two axes is its transpose, a number's axes put in front of a product are dropped,
np.moveaxis, np.transpose and np.swapaxes of an array of known rank are its methods, and a
reshape's cotangent of known shapes is the array's reshape."""

import itertools

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.specialise import specialise

R = np.random.default_rng(53)
SHAPES = {"M": (3, 3), "S": (2, 3, 3), "v": (3,), "g": (), "F": (18,)}


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
    ("d = np.swapaxes(M, 0, -2)", "d = M.swapaxes(0, -2)"),      # one axis twice: M itself
    ("d = np.swapaxes(S, -1, -2)", "d = S.swapaxes(-1, -2)"),    # a stack: not a transpose
    ("d = np.expand_dims(g, (-2, -1)) * M", "d = g * M"),
    ("d = M * np.expand_dims(g, (-2, -1))", "d = M * g"),
    ("d = np.expand_dims(g, (-2, -1)) * v", "d = np.expand_dims(g, (-2, -1)) * v"),  # (1, 3)
    ("d = np.expand_dims(v, 0) * M", "d = np.expand_dims(v, 0) * M"),      # not a number
    ("d = np.moveaxis(S, 0, -1)", "d = S.transpose((1, 2, 0))"),
    ("d = np.moveaxis(S, (0, 1), (-1, 0))", "d = S.transpose((1, 2, 0))"),
    ("d = np.moveaxis(S, 0, 3)", "d = np.moveaxis(S, 0, 3)"),       # out of range: NumPy's error
    ("d = np.moveaxis(S, (0, 0), (1, 2))", "d = np.moveaxis(S, (0, 0), (1, 2))"),   # repeated
    ("d = np.moveaxis(g, 0, 0)", "d = np.moveaxis(g, 0, 0)"),       # a number: no method
    ("d = np.transpose(S)", "d = S.transpose()"),
    ("d = np.transpose(S, (2, 0, 1))", "d = S.transpose((2, 0, 1))"),
    ("d = np.transpose(S, (2, 0))", "d = np.transpose(S, (2, 0))"),         # not every axis
    ("d = np.swapaxes(S, 0, -1)", "d = S.swapaxes(0, -1)"),
    ("d = np.swapaxes(S, 0, 3)", "d = np.swapaxes(S, 0, 3)"),
    ("d = rt.reshape_like(F, S)", "d = F.reshape((2, 3, 3))"),
    ("d = rt.reshape_like(S, F, 'C')", "d = S.reshape((18,))"),
    ("d = rt.reshape_like(F, S, 'F')", "d = rt.reshape_like(F, S, 'F')"),    # another order
    ("d = rt.reshape_like(g, M)", "d = rt.reshape_like(g, M)"),        # a number: no method
    ("d = rt.reshape_like(F, u)", "d = rt.reshape_like(F, u)"),        # a shape not known
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


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_the_moved_order_is_numpys(rank):
    from srctrans.optimise.matrix_axes import _moved_order
    x = np.empty((2, 3, 4, 5)[:rank])
    axes = range(-rank - 1, rank + 1)
    pairs = [(s, d) for k in (1, 2) for s in itertools.permutations(axes, k)
             for d in itertools.product(axes, repeat=k)]
    for source, destination in pairs:
        try:
            want = np.moveaxis(x, source, destination)
        except Exception:
            want = None
        order = _moved_order(rank, source, destination)
        assert (want is None) == (order is None), (source, destination)
        if order is not None:
            assert x.transpose(order).shape == want.shape
            assert x.transpose(order).strides == want.strides


def channels_last(x, w):
    y = np.moveaxis(x, 0, -1)                        # (C, H, W) -> (H, W, C)
    z = np.swapaxes(np.tanh(y @ w), 0, 1)
    return np.sum(np.transpose(z, (2, 0, 1)) ** 2)


def pooled(x):
    return np.sum(x.reshape(-1, 2).max(axis=1) ** 2)


def test_a_reshapes_cotangent_is_the_arrays_reshape_and_holds():
    x = R.standard_normal(12)
    fused = st.source(pooled, args=(x,)).split("def pooled_grad")[1]
    assert "reshape_like" not in fused and ".reshape((12,))" in fused
    gradient = st.grad(pooled)
    for _ in range(3):
        got = gradient(x)
    np.testing.assert_array_equal(got, st.grad(pooled, optimize=False)(x))
    st.check_grads(pooled, (x,), order=2)


def test_moved_axes_gradient_holds_and_calls_the_methods():
    args = (R.standard_normal((3, 4, 5)), R.standard_normal((3, 2)))
    gradient = st.grad(channels_last, wrt=(0, 1))
    for _ in range(3):
        got = gradient(*args)
    want = st.grad(channels_last, wrt=(0, 1), optimize=False)(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    fused = st.source(channels_last, args=args).split("def channels_last_grad")[1]
    fused = "\n".join(line for line in fused.splitlines() if not line.strip().startswith("#"))
    assert "np.moveaxis" not in fused and "np.swapaxes" not in fused and \
        "np.transpose" not in fused, fused
    st.check_grads(channels_last, args, order=2)
    st.check_grads(channels_last, tuple(a.astype(np.float32) for a in args), order=1)

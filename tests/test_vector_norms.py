"""Euclidean norms along an axis written as NumPy computes them in specialised code
(optimise/vector_norms.py): the same values bit for bit, without np.linalg.norm's checks."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.vector_norms import norms_as_sums

R = np.random.default_rng(61)
SHAPES = {"x": (5, 3), "v": (4,), "n": (5, 3)}


def _rewritten(text, floats=("x", "v")):
    statements = gast.parse(text).body
    for node in gast.walk(statements[0]):
        if isinstance(node, gast.Call) and "norm" in unparse(node.func):
            anno.set_(node, Anno.CALLEE, np.linalg.norm)
    return unparse(norms_as_sums(statements, SHAPES, set(floats), "np")[0])


@pytest.mark.parametrize("text, written", [
    ("L = np.linalg.norm(x, axis=1)", "L = np.sqrt((x * x).sum(axis=1))"),
    ("L = np.linalg.norm(x, axis=-1, keepdims=True)",
     "L = np.sqrt((x * x).sum(axis=-1, keepdims=True))"),
    ("L = np.linalg.norm(x, None, axis=0)", "L = np.sqrt((x * x).sum(axis=0))"),
    ("L = np.linalg.norm(x, ord=None, axis=0)", "L = np.sqrt((x * x).sum(axis=0))"),
    ("L = np.linalg.norm(v, axis=0)", "L = np.sqrt((v * v).sum(axis=0))"),
    ("L = np.linalg.norm(x)", "L = np.linalg.norm(x)"),                   # a dot, not a sum
    ("L = np.linalg.norm(x, axis=(0, 1))", "L = np.linalg.norm(x, axis=(0, 1))"),
    ("L = np.linalg.norm(x, 1, axis=1)", "L = np.linalg.norm(x, 1, axis=1)"),
    ("L = np.linalg.norm(x, ord=2, axis=1)", "L = np.linalg.norm(x, ord=2, axis=1)"),
    ("L = np.linalg.norm(x, axis=2)", "L = np.linalg.norm(x, axis=2)"),    # NumPy's error
    ("L = np.linalg.norm(x, axis=k)", "L = np.linalg.norm(x, axis=k)"),
    ("L = np.linalg.norm(n, axis=1)", "L = np.linalg.norm(n, axis=1)"),    # ints, say
    ("L = np.linalg.norm(x + x, axis=1)", "L = np.linalg.norm(x + x, axis=1)"),
])
def test_a_norm_along_an_axis_of_a_float_array_is_written_out(text, written):
    assert _rewritten(text) == written


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis", [((6, 3), 1), ((6, 3), 0), ((2, 5, 3), -1), ((7,), 0)])
def test_a_norm_written_out_gives_numpy_s_values(dtype, shape, axis):
    x = R.standard_normal(shape).astype(dtype) * 1e3
    scope = {"x": x, "np": np}
    exec(_rewritten(f"L = np.linalg.norm(x, axis={axis})").replace("L = ", "out = "), scope)
    want = np.linalg.norm(x, axis=axis)
    assert scope["out"].dtype == want.dtype
    np.testing.assert_array_equal(scope["out"], want)


def segment_lengths(P, k):
    seg = np.diff(P, axis=0)
    L = np.linalg.norm(seg, axis=1)
    return k * np.sum((L - 1.0) ** 2)


def unit_rows(X, w):
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    return np.sum(np.tanh(U @ w))


@pytest.mark.parametrize("f, args", [
    (segment_lengths, (R.standard_normal((8, 3)), 0.7)),
    (unit_rows, (R.standard_normal((6, 4)), R.standard_normal(4))),
    (unit_rows, (R.standard_normal((6, 4)).astype(np.float32),
                 R.standard_normal(4).astype(np.float32))),
])
def test_norms_written_out_hold_in_both_modes_to_second_order(f, args):
    for mode, name in (("reverse", "_grad"), ("forward", "_jvp")):
        code = st.source(f, mode=mode, args=args)
        assert "np.sqrt((" in code.split(f"def {f.__name__}{name}")[1], mode
    value, _ = st.value_and_grad(f)(*args)
    assert value == f(*args)                       # the forward pass's values, bit for bit
    st.check_grads(f, args, order=2)


def pair_distances(X, Y):
    d = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=-1)
    return np.sum(np.exp(-d))


def test_a_norm_s_cotangent_divides_the_norms_cotangents():
    """``dd[:, :, None] * rt.ratio_or_zero(diff, d[:, :, None])`` takes the quotient on the
    distances' shape: ``rt.ratio_or_zero_times(dd, d)[:, :, None] * diff``; a distance of 0
    (a point in both sets) gets the generic code's 0 there."""
    X, Y = R.standard_normal((5, 3)), R.standard_normal((4, 3))
    fused = st.source(pair_distances, args=(X, Y)).split("def pair_distances_grad")[1]
    assert "rt.ratio_or_zero_times(dd, d)[:, :, None] * " in fused
    gradient, generic = st.grad(pair_distances), st.grad(pair_distances, optimize=False)
    shared = X.copy()
    shared[1] = Y[2]
    for points in (X, X, X, shared, X):
        np.testing.assert_allclose(gradient(points, Y), generic(points, Y), rtol=1e-13,
                                   atol=1e-15)
    st.check_grads(pair_distances, (X, Y), order=2)

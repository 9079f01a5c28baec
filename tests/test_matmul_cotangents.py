"""A matrix product's cotangents written for known shapes in specialised code
(optimise/matmul_cotangents.py): the helpers' values, a batch of inputs through one matrix
included."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt
from srctrans.emit.printer import unparse
from srctrans.optimise.specialise import specialise

R = np.random.default_rng(67)
SHAPES = {"g": (5, 2, 3), "X": (5, 2, 4), "W": (4, 3), "h": (2, 3), "A": (2, 4), "v": (3,),
          "u": (4,), "f": (5, 2, 6)}


@pytest.mark.parametrize("text, written", [
    ("d = rt.matmul_rhs(g, X, W)", "d = X.reshape((-1, 4)).T @ g.reshape((-1, 3))"),
    ("d = rt.matmul_lhs(g, X, W)", "d = g @ W.T"),
    ("d = rt.matmul_rhs(h, A, W)", "d = A.T @ h"),
    ("d = rt.matmul_lhs(h, A, W)", "d = h @ W.T"),
    ("d = rt.matmul_rhs(f, X, W)", "d = rt.matmul_rhs(f, X, W)"),       # shapes disagree
    ("d = rt.matmul_rhs(g, X, Z)", "d = rt.matmul_rhs(g, X, Z)"),       # Z's shape unknown
])
def test_a_products_cotangents_are_written_for_their_shapes(text, written):
    assert unparse(specialise(gast.parse(text).body, SHAPES)[0]) == written


@pytest.mark.parametrize("lead", [(5,), (2, 3), (1,)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_stack_times_a_matrix_gets_the_helpers_cotangents(lead, dtype):
    X = R.standard_normal(lead + (6, 4)).astype(dtype)
    W = R.standard_normal((4, 3)).astype(dtype)
    g = R.standard_normal(lead + (6, 3)).astype(dtype)
    shapes = {"g": g.shape, "X": X.shape, "W": W.shape}
    for helper in ("matmul_lhs", "matmul_rhs"):
        code = unparse(specialise(gast.parse(f"d = rt.{helper}(g, X, W)").body, shapes)[0])
        assert helper not in code
        scope = {"g": g, "X": X, "W": W, "rt": rt, "np": np}
        exec(code, scope)
        want = getattr(rt, helper)(g, X, W)
        assert scope["d"].dtype == want.dtype and scope["d"].shape == want.shape
        np.testing.assert_allclose(scope["d"], want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def batched_layer(W, X):
    return np.sum(np.tanh(X @ W) ** 2)


def test_a_batch_through_a_layer_is_one_product_to_second_order():
    args = (R.standard_normal((4, 3)), R.standard_normal((5, 6, 4)))
    fused = st.source(batched_layer, args=args, wrt=(0, 1)).split("def batched_layer_grad")[1]
    assert "matmul_" not in fused
    gradient = st.grad(batched_layer, wrt=(0, 1))
    for _ in range(3):
        got = gradient(*args)
    for a, b in zip(got, st.grad(batched_layer, wrt=(0, 1), optimize=False)(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    st.check_grads(batched_layer, args, order=2)

"""A fill read once, as a factor of a product whose other factor broadcasts over it, is that
factor broadcast into a new array in a fused gradient (optimise/filled_products.py)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.filled_products import broadcast_filled_products

R = np.random.default_rng(83)
SHAPES = {"X": (4, 3), "w": (3,), "v": (4, 3), "c": ()}


def _rewritten(text):
    body = gast.parse(text).body
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
                anno.set_(node, Anno.CALLEE, getattr(np, node.func.attr))
    return unparse(gast.Module(broadcast_filled_products(body, SHAPES, "np"), [])).strip()


FILL = "d = np.full_like(X, 1.0, np.result_type(1.0, X, w))\n"


@pytest.mark.parametrize("text, written", [
    (FILL + "g = d * w",
     "g = np.empty_like(X, np.result_type(1.0, X, w))\ng[...] = w"),
    (FILL + "g = w * d",
     "g = np.empty_like(X, np.result_type(1.0, X, w))\ng[...] = w"),
    ("d = np.full_like(X, c / 12, np.result_type(c, X, w))\ng = d * w",
     "g = np.empty_like(X, np.result_type(c, X, w))\ng[...] = np.multiply(w, c / 12, "
     "dtype=g.dtype)"),
    ("d = np.full((4, 3), 1.0, np.result_type(1.0, w))\ng = d * w",
     "g = np.empty((4, 3), np.result_type(1.0, w))\ng[...] = w"),
    (FILL + "h = X + 1\ng = d * w",                       # a statement between: kept in place
     "h = X + 1\ng = np.empty_like(X, np.result_type(1.0, X, w))\ng[...] = w"),
])
def test_a_fill_times_a_smaller_factor_is_the_factor_broadcast(text, written):
    assert _rewritten(text) == written


@pytest.mark.parametrize("text", [
    FILL + "g = d * v",                                 # v has the fill's shape
    "d = np.full_like(X, 1.0, np.result_type(1.0, X))\ng = d * w",   # w not in the dtype
    FILL + "w = w + 1\ng = d * w",                      # the factor changes in between
    FILL + "X = X[:2]\ng = d * w",                      # so does the fill's model
    FILL + "g = d * w\nh = d + 1",                      # the fill is read twice
    FILL + "g = d * w + 1",                             # not a product alone
    FILL + "w = d * w",                                 # the product replaces its factor
    FILL + "g = d * u",                                 # a factor of unknown shape
    "d = np.full_like(X, c, np.result_type(c, X, w))\nc[...] = 2.0\ng = d * w",  # c written
])
def test_other_products_are_left_as_they_are(text):
    assert _rewritten(text) == unparse(gast.Module(gast.parse(text).body, [])).strip()


def weighted_sum(X, w):
    return np.sum(X * w)


def weighted_mean(X, w):
    return np.mean((X - 1.0) * w)


def scaled_sum(X, w, s):
    return np.sum(s * X * w)


def _fused(f, args):
    return st.source(f, wrt=0, args=args).split(f"def {f.__name__}_grad(")[1]


@pytest.mark.parametrize("f", [weighted_sum, weighted_mean])
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float64, np.float32),
                                    (np.float32, np.float32), (np.float64, np.int64)])
def test_the_gradient_is_the_factor_broadcast_bit_for_bit(f, dtypes):
    X = R.standard_normal((5, 4)).astype(dtypes[0])
    w = (R.standard_normal(4) * 3).astype(dtypes[1])
    fused = _fused(f, (X, w))
    assert "[...] = " in fused and "full_like" not in fused
    count = X.size if f is weighted_mean else 1
    fill = np.full_like(X, 1.0 / count if count > 1 else 1.0, np.result_type(1.0, X, w))
    want = fill * w                            # what the fill and the product computed
    gradient = st.grad(f, wrt=0)
    for _ in range(3):                          # generic, then specialised and fused
        got = gradient(X, w)
    assert got.dtype == want.dtype and got.shape == X.shape and got.flags.writeable
    np.testing.assert_array_equal(got, want)


def test_non_finite_factors_broadcast_as_the_product_did():
    X = R.standard_normal((3, 4))
    w = np.array([np.inf, -np.inf, np.nan, -0.0])
    gradient = st.grad(weighted_sum, wrt=0)
    with np.errstate(invalid="ignore"):             # (the sum itself is NaN)
        for _ in range(3):
            got = gradient(X, w)
    np.testing.assert_array_equal(got, np.full_like(X, 1.0) * w)
    assert np.signbit(got[:, 3]).all()


@pytest.mark.parametrize("f, args", [
    (weighted_sum, (R.standard_normal((5, 4)), R.standard_normal(4))),
    (weighted_mean, (R.standard_normal((2, 5, 4)), R.standard_normal((5, 1)))),
    (scaled_sum, (R.standard_normal((5, 4)), R.standard_normal(4), 1.5)),
])
def test_derivatives_match_finite_differences_in_both_modes_to_second_order(f, args):
    st.check_grads(f, args, order=2)

"""Two complementary selections of one cotangent, carried through products and summed again,
are one selection in a specialised backward pass (optimise/selections.py): a Huber loss's
pieces, a leaky ReLU."""

import ast

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.optimise.selections import merge_complementary_selections


def merged(text, live=("dr",)):
    body = gast.parse(text).body
    return ast.unparse(gast.gast_to_ast(gast.Module(
        merge_complementary_selections(body, set(live), "np"), [])))


HUBER = ("a = np.where(c, g, 0)\nb = np.where(c, 0, g)\ns = b * delta\n"
         "dr = s * np.sign(r)\ndr = dr + a * 0.5 * (2 * r)")


def test_the_two_chains_meet_in_one_selection():
    assert merged(HUBER) == "dr = np.where(c, g * 0.5 * (2 * r), g * delta * np.sign(r))"


def test_a_subtracted_term_is_negated_and_the_terms_add_in_their_order():
    code = merged("a = np.where(c, g, 0)\nb = np.where(c, 0, g)\n"
                  "dr = h - b / x + -(a * y)")
    assert code == "dr = h + np.where(c, -(g * y), -(g / x))"


@pytest.mark.parametrize("text", [
    HUBER + "\nz = s",                                               # a step read twice
    HUBER.replace("s * np.sign(r)", "np.sign(r) / s"),               # a divisor
    HUBER.replace("s * np.sign(r)", "f(s)"),                         # a call
    HUBER.replace("dr = s", "r = r + 1.0\ndr = s"),                  # a factor changes
    HUBER.replace("s = b", "g = g * 2.0\ns = b"),                    # the cotangent changes
    "a = np.where(c, g, 0)\nb = np.where(c, 0, g)\nd = a * x\ne = b * y",   # no one sum
    "a = np.where(c, g, 0)\nb = np.where(k, 0, g)\ndr = a + b",      # other conditions
    "a = np.where(c, g, 1)\nb = np.where(c, 0, g)\ndr = a + b",      # not a zero
    "a = np.where(c, g, 0)\nb = np.where(c, 0, g)\ndr = a * b",      # a product of both
    "a = np.where(c, g, 0)\nb = np.where(c, 0, g)\ndr = a * x + h + b * y",   # a term between
], ids=["read_twice", "divisor", "call", "factor_changed", "cotangent_changed", "apart",
        "other_condition", "not_zero", "product", "term_between"])
def test_chains_that_do_not_qualify_stay(text):
    assert merged(text) == ast.unparse(ast.parse(text))


def test_a_step_read_after_the_statements_keeps_the_chain():
    text = "a = np.where(c, g, 0)\nb = np.where(c, 0, g)\ns = b * 2.0\ndr = a + s"
    assert merged(text, live=("dr", "s")) == ast.unparse(ast.parse(text))
    assert merged(text) == "dr = np.where(c, g, g * 2.0)"


def huber_loss(w, X, y, delta=1.0):
    r = X @ w - y
    small = np.abs(r) <= delta
    return np.mean(np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta)))


def leaky_relu_loss(x, W):
    h = x @ W
    return np.sum(np.where(h > 0, h, 0.01 * h) ** 2)


def _backward_selections(fn, args):
    fused = st.source(fn, args=args).split(f"def {fn.__name__}_grad(")[1].split("\ndef ")[0]
    assert "full_like" not in fused and "mean_grad" not in fused   # the mean's spread: a number
    return sum(line.count("np.where(") for line in fused.splitlines()
               if not line.strip().startswith("#"))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_huber_loss_and_a_leaky_relu_select_once(dtype):
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((12, 3)).astype(dtype), rng.standard_normal(12).astype(dtype)
    w = rng.standard_normal(3).astype(dtype)
    x, W = rng.standard_normal((4, 3)).astype(dtype), rng.standard_normal((3, 5)).astype(dtype)
    for fn, args in ((huber_loss, (w, X, y)), (leaky_relu_loss, (x, W))):
        assert _backward_selections(fn, args) == 1 + (fn is leaky_relu_loss)   # + the forward's
        gradient, want = st.grad(fn), st.grad(fn, optimize=False)(*args)
        for _ in range(3):
            got = gradient(*args)
            assert got.dtype == want.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype is np.float32 else 1e-12)
        if dtype is np.float64:
            st.check_grads(fn, args, order=2)


def test_the_piece_not_selected_does_not_spoil_the_derivative():
    """Where the piece np.where does not select has an infinite derivative factor, the one
    selection of the fused gradient gives the selected piece's derivative (the generic code's
    two selections give NaN there: 0 times an infinite factor)."""
    def f(x, big):
        return np.sum(np.where(x < 1.0, 2.0 * x, big * x))
    x = np.array([0.5, 2.0, -1.0])
    gradient = st.grad(f)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(gradient(x, np.inf), [np.nan, np.inf, np.nan])
    for _ in range(2):                                     # the specialised code, its short path
        np.testing.assert_array_equal(gradient(x, np.inf), [2.0, np.inf, 2.0])


def test_a_long_sum_is_merged_without_recursion():
    """The sum's terms are found iteratively: a 3,000-term sum, at the default recursion
    limit (parsed and printed with a higher one)."""
    import sys
    terms = " + ".join(f"t{i}" for i in range(3000))
    text = f"a = np.where(c, g, 0)\nb = np.where(c, 0, g)\ndr = {terms} + a * x - b * y"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)
    try:
        body = gast.parse(text).body
        sys.setrecursionlimit(1000)
        merged_body = merge_complementary_selections(body, {"dr"}, "np")
        sys.setrecursionlimit(20000)
        code = ast.unparse(gast.gast_to_ast(gast.Module(merged_body, [])))
    finally:
        sys.setrecursionlimit(limit)
    assert code.startswith("dr = t0 + t1 + t2") and code.endswith(
        "+ t2999 + np.where(c, g * x, -(g * y))")

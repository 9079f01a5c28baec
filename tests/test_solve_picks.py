"""One cotangent of np.linalg.solve picked from the pair is its own solve in specialised code
(optimise/solve_picks.py), and np.linalg.solve's result has a shape."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.expression_shapes import shape_of
from srctrans.optimise.specialise import specialise
from srctrans.optimise.tuple_picks import fold_tuple_picks

R = np.random.default_rng(47)
SHAPES = {"g": (3, 5), "x": (3, 5), "a": (3, 3), "b": (3, 5), "u": (3,), "y": (3,), "v": (3,),
          "c": (1, 3, 3)}


def _specialised(text):
    statements = specialise(gast.parse(text).body, SHAPES)
    fold_tuple_picks(statements)
    return [unparse(s) for s in statements]


def test_a_single_pick_is_its_solve():
    assert _specialised("db = rt.solve_grads(g, x, a, b)[1]") == [
        "db = np.linalg.solve(a.T, g)"]
    assert _specialised("db = rt.solve_grads(u, y, a, v)[1]") == [
        "db = np.linalg.solve(a.T, u)"]
    # a name holding the pair, read by picks of one entry: that entry's solve, folded in
    assert _specialised("_g = rt.solve_grads(g, x, a, b)\ndb = _g[1] * 2.0")[1:] == [
        "db = np.linalg.solve(a.T, g) * 2.0"]


@pytest.mark.parametrize("text", [
    "_g = rt.solve_grads(g, x, a, b)\nda = _g[0]\ndb = _g[1]",   # both: one solve, the helper's
    "db = rt.solve_grads(g, x, c, b)[1]",                       # a batch of matrices
    "db = rt.solve_grads(u, x, a, b)[1]",                       # g of another shape
    "db = rt.solve_grads(g, x, a, q)[1]",                       # a shape not known
    "da = rt.solve_grads(g, x, a, b)[0]",            # the matrix's: traces.py reads the pick
])
def test_other_picks_keep_the_helper(text):
    assert "rt.solve_grads(" in "\n".join(_specialised(text))


def test_a_solves_shape():
    call = gast.parse("np.linalg.solve(a, b)").body[0].value
    anno.set_(call, Anno.CALLEE, np.linalg.solve)
    assert shape_of(call, SHAPES) == (3, 5)
    assert shape_of(call, {**SHAPES, "b": (3,)}) == (3,)
    assert shape_of(call, {**SHAPES, "a": (2, 3, 3)}) is None      # a batch: not claimed
    assert shape_of(call, {**SHAPES, "b": (4, 5)}) is None         # NumPy's error


def gaussian_nll(mu, X, L):
    S = L @ L.T
    diff = X - mu
    sol = np.linalg.solve(S, diff.T)
    return 0.5 * np.sum(diff.T * sol)


def solved_both_ways(A, b):
    x = np.linalg.solve(A, b)
    return np.sum(x ** 2) + np.sum(np.tanh(A))


@pytest.mark.parametrize("f, wrt", [(gaussian_nll, (0,)), (solved_both_ways, (0, 1))])
def test_picked_solves_hold_to_second_order(f, wrt):
    M = R.standard_normal((3, 3))
    first = M @ M.T + 3 * np.eye(3) if f is solved_both_ways else np.linalg.cholesky(
        M @ M.T + 3 * np.eye(3))
    args = (R.standard_normal(3), R.standard_normal((6, 3)), first) if f is gaussian_nll \
        else (first, R.standard_normal(3))
    gradient = st.grad(f, wrt=wrt)
    for _ in range(3):
        got = gradient(*args)
    for g, w in zip(got, st.grad(f, wrt=wrt, optimize=False)(*args)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    st.check_grads(f, args, order=2, wrt=wrt)
    if f is gaussian_nll:
        fused = st.source(f, args=args).split("def gaussian_nll_grad")[1]
        # the picked solve, rt.solve(S.T, dsol) of dsol = 0.5 * diff.T, is then the forward
        # pass's solve read again: S = L @ L.T is symmetric (optimise/symmetric_solves.py)
        assert "solve_grads" not in fused and "= 0.5 * sol" in fused

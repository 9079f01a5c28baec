"""A cotangent's solve with a symmetric matrix's transpose solves with the matrix, and reads
the forward pass's solve where its right-hand side is a multiple of the forward pass's
(optimise/symmetric_solves.py)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.symmetric_solves import solve_symmetric_cotangents

R = np.random.default_rng(73)


def _rewritten(text, derivatives=("d", "e")):
    body = gast.parse(text).body
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and unparse(node.func) == "np.linalg.solve":
                anno.set_(node, Anno.CALLEE, np.linalg.solve)
            elif isinstance(node, gast.Call) and unparse(node.func) == "np.eye":
                anno.set_(node, Anno.CALLEE, np.eye)
    body, _ = solve_symmetric_cotangents(body, set(derivatives), "rt")
    return unparse(gast.Module(body, [])).strip().splitlines()[-1]


@pytest.mark.parametrize("text, last", [
    ("S = L @ L.T\nd = rt.solve(S.T, g)", "d = rt.solve(S, g)"),
    ("S = L.T @ L\nd = np.linalg.solve(S.T, g)", "d = np.linalg.solve(S, g)"),
    ("S = 2.0 * (A + A.T) + np.eye(3)\nd = rt.solve(S.T, g)", "d = rt.solve(S, g)"),
    ("P = L @ L.T\nS = P + 0.5 * np.eye(3)\nd = rt.solve(S.T, g)", "d = rt.solve(S, g)"),
    ("S = L @ M.T\nd = rt.solve(S.T, g)", "d = rt.solve(S.T, g)"),        # not symmetric
    ("S = L @ L.T\nf = rt.solve(S.T, g)", "f = rt.solve(S.T, g)"),        # not a derivative
    ("S = L @ L.T\nS = S + A\nd = rt.solve(S.T, g)", "d = rt.solve(S.T, g)"),   # assigned twice
    ("x = rt.solve(S, b)\ne = 0.5 * b\nd = rt.solve(S, e)", "d = 0.5 * x"),
    ("x = rt.solve(S, b)\nb[0] = 1.0\ne = 0.5 * b\nd = rt.solve(S, e)",    # b written into
     "d = rt.solve(S, e)"),
    ("x = rt.solve(S, c)\ne = 0.5 * b\nd = rt.solve(S, e)", "d = rt.solve(S, e)"),
])
def test_a_symmetric_matrix_s_transpose_and_a_multiple_s_solve(text, last):
    assert _rewritten(text) == last


def gaussian_nll(mu, X, L):
    S = L @ L.T
    diff = X - mu
    sol = np.linalg.solve(S, diff.T)
    sign, logdet = np.linalg.slogdet(S)
    return 0.5 * np.sum(diff.T * sol) + 0.5 * X.shape[0] * logdet


def test_a_gaussian_s_negative_log_likelihood_solves_once_to_second_order():
    A = R.standard_normal((3, 3))
    args = (R.standard_normal(3), R.standard_normal((10, 3)),
            np.linalg.cholesky(A @ A.T + 3.0 * np.eye(3)))
    fused = st.source(gaussian_nll, args=args).split("def gaussian_nll_grad")[1]
    code = [line for line in fused.splitlines() if not line.strip().startswith("#")]
    assert sum(line.count("solve(") for line in code) == 1
    gradient = st.grad(gaussian_nll)
    for _ in range(3):
        got = gradient(*args)
    np.testing.assert_allclose(got, st.grad(gaussian_nll, optimize=False)(*args), rtol=1e-10)
    np.testing.assert_allclose(got, -np.linalg.solve(args[2] @ args[2].T,
                                                     (args[1] - args[0]).T).sum(axis=1),
                               rtol=1e-10)
    st.check_grads(gaussian_nll, args, order=2)

"""The solves against a Cholesky factor in a fused gradient read the factor's inverse,
computed once with the factor's own cotangent (optimise/cholesky_solves.py,
runtime/shared_inverses.py): a Gaussian process's ``solve(L.T, solve(L, y))`` makes no
solve in its backward pass. The derivatives are the generic code's, to rounding, in both
modes, to second order and in float32."""

import ast
import textwrap

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt
from srctrans.optimise.cholesky_solves import share_cholesky_inverses

R = np.random.default_rng(59)


def rewritten(text):
    body = gast.parse(textwrap.dedent(text)).body
    names = iter(["L_inverse", "M_inverse"])
    return ast.unparse(gast.gast_to_ast(gast.Module(
        share_cholesky_inverses(body, "rt", "np", lambda base: next(names)), [])))


def test_the_solves_against_a_factor_and_its_transpose_read_its_inverse():
    code = rewritten("""
        L = np.linalg.cholesky(K)
        _T = L.T
        s = np.linalg.solve(L, y)
        alpha = np.linalg.solve(_T, s)
        dL = g * 2.0
        _grads = rt.solve_grads(h, alpha, _T, s)
        dL = dL + rt.solve_grads(_grads[1], s, L, y)[0]
        dK = rt.cholesky_grad(dL, L)
        """)
    assert "L_inverse = np.linalg.inv(L)\n_grads = rt.solve_grads_by_inverse(h, alpha, _T, s, " \
           "L_inverse.T)" in code
    assert "rt.solve_grads_by_inverse(_grads[1], s, L, y, L_inverse)[0]" in code
    assert "rt.cholesky_grad(dL, L, L_inverse)" in code
    assert "rt.solve_grads(" not in code


@pytest.mark.parametrize("text", [
    "s = np.linalg.solve(L, y)\ng = rt.solve_grads(h, s, L, y)",              # no factor
    "g = rt.solve_grads(h, s, A, y)\nd = rt.cholesky_grad(dL, L)",            # another matrix
    "L = f(x)\nL = L + 1.0\ng = rt.solve_grads(h, s, L, y)\nd = rt.cholesky_grad(dL, L)",
    "L[0, 0] = 1.0\ng = rt.solve_grads(h, s, L, y)\nd = rt.cholesky_grad(dL, L)",
    "for i in r:\n    g = rt.solve_grads(h, s, L, y)\nd = rt.cholesky_grad(dL, L)",  # in a loop
], ids=["no_factor", "another_matrix", "assigned_twice", "written_into", "in_a_loop"])
def test_what_may_not_read_an_inverse_is_left(text):
    assert rewritten(text) == ast.unparse(ast.parse(text))


class GaussianProcess:
    def __init__(self, X, y):
        self.y = y
        self.d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)

    def nll(self, theta):
        K = np.exp(theta[1]) * np.exp(-0.5 * self.d2 / np.exp(2 * theta[0])) \
            + np.exp(theta[2]) * np.eye(len(self.y))
        L = np.linalg.cholesky(K)
        alpha = np.linalg.solve(L.T, np.linalg.solve(L, self.y))
        return 0.5 * self.y @ alpha + np.sum(np.log(np.diag(L)))


def gp_case(dtype=np.float64):
    gp = GaussianProcess(R.standard_normal((6, 2)).astype(dtype), R.standard_normal(6).astype(dtype))
    return gp, np.array([0.1, -0.2, -1.0], dtype)


def test_the_fused_gradient_of_a_gaussian_process_solves_nothing():
    """The backward pass's solves read the factor's inverse, and so do the forward pass's,
    whose values only the gradient reads: products with it. A call that returns the value
    solves as the program does."""
    gp, theta = gp_case()
    fused = st.source(gp.nll, args=(theta,)).split("def GaussianProcess_nll_grad(")[1]
    fused = "\n".join(line for line in fused.split("\ndef ")[0].splitlines()
                      if not line.strip().startswith("#"))
    assert "np.linalg.solve(" not in fused
    assert "L_inverse @ " in fused and "L_inverse.T @ " in fused
    assert "rt.solve_grads(" not in fused and fused.count("rt.inv(") == 1
    for _ in range(3):
        value, _ = st.value_and_grad(gp.nll)(theta)
        assert value == gp.nll(theta)


def test_derivatives_are_the_generic_codes_in_both_modes_to_second_order():
    gp, theta = gp_case()
    st.check_grads(gp.nll, (theta,), order=2)
    gradient = st.grad(gp.nll)
    want = st.grad(gp.nll, optimize=False)(theta)
    for _ in range(3):                                    # generic, specialised, short path
        np.testing.assert_allclose(gradient(theta), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(st.hessian(gp.nll)(theta), st.hessian(gp.nll)(theta), rtol=1e-12)


def test_float32_stays_float32():
    gp, theta = gp_case(np.float32)
    gradient = st.grad(gp.nll)
    want = st.grad(gp.nll, optimize=False)(theta)
    for _ in range(3):
        got = gradient(theta)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("shape", [(5,), (5, 2)], ids=["vector", "matrix"])
@pytest.mark.parametrize("transposed", [False, True])
def test_the_helpers_give_what_solves_give(shape, transposed):
    a = R.standard_normal((5, 5))
    L = np.linalg.cholesky(a @ a.T + 5 * np.eye(5))
    matrix = L.T if transposed else L
    b, g, dL = R.standard_normal(shape), R.standard_normal(shape), R.standard_normal((5, 5))
    x = np.linalg.solve(matrix, b)
    inverse = np.linalg.inv(L)
    got = rt.solve_grads_by_inverse(g, x, matrix, b, inverse.T if transposed else inverse)
    for mine, theirs in zip(got, rt.solve_grads(g, x, matrix, b)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rt.cholesky_grad(dL, L, inverse),
                               rt.cholesky_grad(dL, L), rtol=1e-10, atol=1e-12)


def test_stacked_matrices_take_the_solves_own_path():
    a = R.standard_normal((2, 4, 4))
    A = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    b, g = R.standard_normal((2, 4, 3)), R.standard_normal((2, 4, 3))
    x = np.linalg.solve(A, b)
    got = rt.solve_grads_by_inverse(g, x, A, b, np.linalg.inv(A))
    for mine, theirs in zip(got, rt.solve_grads(g, x, A, b)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)

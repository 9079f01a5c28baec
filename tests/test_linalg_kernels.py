"""Specialised code factors, inverts and solves without np.linalg's wrapper
(runtime/linalg_kernels.py, optimise/linalg_kernels.py): every call returns or raises what
np.linalg's does, warns of nothing more, and leaves NumPy's error state as it was."""

import ast
import textwrap
import warnings

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt
from srctrans.optimise.linalg_kernels import call_linalg_kernels

R = np.random.default_rng(83)


def spd(n, dtype=np.float64):
    a = R.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


def same(mine, numpys):
    assert type(mine) is type(numpys) and mine.dtype == numpys.dtype
    np.testing.assert_array_equal(mine, numpys)


CALLS = [
    ("cholesky", lambda: (spd(5),)),
    ("inv", lambda: (R.standard_normal((4, 4)),)),
    ("solve", lambda: (R.standard_normal((4, 4)), R.standard_normal(4))),
    ("solve", lambda: (R.standard_normal((4, 4)), R.standard_normal((4, 3)))),
    ("solve", lambda: (spd(3), R.standard_normal((3, 3)).T)),               # strided operands
    ("cholesky", lambda: (spd(3, np.float32),)),                           # the rest: np.linalg's
    ("inv", lambda: (np.arange(4).reshape(2, 2) + np.eye(2, dtype=int),)),
    ("inv", lambda: (R.standard_normal((2, 3, 3)),)),
    ("inv", lambda: (np.zeros((0, 0)),)),
    ("cholesky", lambda: (spd(2).astype(complex),)),
    ("solve", lambda: (R.standard_normal((3, 3)), R.standard_normal((3, 0)))),
    ("solve", lambda: (R.standard_normal((3, 3)), R.standard_normal(3).astype(np.float32))),
    ("cholesky", lambda: (np.array([[np.nan, 0.0], [0.0, 1.0]]),)),
    ("inv", lambda: (np.array([[1.0, 2.0], [3.0, np.inf]]),)),
]


@pytest.mark.parametrize("name, operands", CALLS, ids=[
    "cholesky", "inv", "solve_vector", "solve_columns", "solve_strided", "cholesky_float32",
    "inv_int", "inv_stacked", "inv_empty", "cholesky_complex", "solve_no_columns",
    "solve_float32_vector", "cholesky_nan", "inv_inf"])
def test_each_call_returns_what_numpys_returns(name, operands):
    args = operands()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            expected = getattr(np.linalg, name)(*args)
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError):
                getattr(rt, name)(*args)
            return
        same(getattr(rt, name)(*args), expected)


@pytest.mark.parametrize("name, args, message", [
    ("cholesky", (-np.eye(3),), "not positive definite"),
    ("inv", (np.ones((3, 3)),), "Singular matrix"),
    ("solve", (np.ones((3, 3)), np.ones(3)), "Singular matrix"),
    ("solve", (np.ones((3, 3)), np.ones((3, 2))), "Singular matrix"),
    ("inv", (np.ones((2, 3)),), "square"),
])
@pytest.mark.parametrize("state", ["default", "raise", "call"])
def test_a_failure_raises_numpys_error_and_warns_of_nothing(name, args, message, state):
    calls = []
    settings = {"default": {}, "raise": {"all": "raise"},
                "call": {"all": "call", "call": lambda kind, flag: calls.append(kind)}}[state]
    before = np.geterr()
    with warnings.catch_warnings(), np.errstate(**settings):
        warnings.simplefilter("error")
        inside = np.geterr()
        with pytest.raises(np.linalg.LinAlgError, match=message):
            getattr(rt, name)(*args)
        assert np.geterr() == inside               # the caller's error state, as it was
    assert np.geterr() == before and calls == []


def test_the_kernels_run_for_a_float64_matrix(monkeypatch):
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        pytest.skip("NumPy before 2.0 does not expose its kernels: np.linalg runs")
    for name in ("cholesky", "inv", "solve"):
        monkeypatch.setattr(np.linalg, name, None)          # a call of np.linalg's would fail
    a = spd(4)
    np.testing.assert_allclose(rt.cholesky(a) @ rt.cholesky(a).T, a)
    np.testing.assert_allclose(rt.inv(a) @ a, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(a @ rt.solve(a, np.ones(4)), np.ones(4))


def test_without_numpys_kernels_every_call_is_numpys(monkeypatch):
    from srctrans.runtime import linalg_kernels
    monkeypatch.setattr(linalg_kernels, "_KERNELS", None)          # NumPy 1.x
    calls = []
    for name in ("cholesky", "inv", "solve"):
        function = getattr(np.linalg, name)
        monkeypatch.setattr(np.linalg, name,
                            lambda *args, f=function: calls.append(f) or f(*args))
    a = spd(3)
    same(rt.cholesky(a), np.linalg.cholesky(a))
    same(rt.solve(a, np.ones(3)), np.linalg.solve(a, np.ones(3)))
    same(rt.inv(a), np.linalg.inv(a))
    assert len(calls) == 6


def rewritten(text):
    body = gast.parse(textwrap.dedent(text)).body
    return ast.unparse(gast.gast_to_ast(gast.Module(call_linalg_kernels(body, "np", "rt"), [])))


def test_the_calls_with_their_operands_alone_call_the_runtime():
    assert rewritten("""
        L = np.linalg.cholesky(K)
        M = np.linalg.inv(L) @ np.linalg.solve(A, b)
        U = np.linalg.cholesky(K, upper=True)
        V = np.linalg.solve(*pair)
        W = numpy.linalg.inv(L)
        X = np.linalg.det(L)
        """) == textwrap.dedent("""\
        L = rt.cholesky(K)
        M = rt.inv(L) @ rt.solve(A, b)
        U = np.linalg.cholesky(K, upper=True)
        V = np.linalg.solve(*pair)
        W = numpy.linalg.inv(L)
        X = np.linalg.det(L)""")


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

    def nll_hand(self, theta):
        E = np.exp(-0.5 * self.d2 / np.exp(2 * theta[0]))
        K = np.exp(theta[1]) * E + np.exp(theta[2]) * np.eye(len(self.y))
        inverse = np.linalg.inv(K)
        alpha = inverse @ self.y
        W = inverse - np.outer(alpha, alpha)
        dK = [np.exp(theta[1]) * E * self.d2 / np.exp(2 * theta[0]), np.exp(theta[1]) * E,
              np.exp(theta[2]) * np.eye(len(self.y))]
        return np.array([0.5 * np.sum(W * d) for d in dK])


def ridge_loss(log_lam, X, y):
    w = np.linalg.solve(X.T @ X + np.exp(log_lam) * np.eye(X.shape[1]), X.T @ y)
    return np.sum((X @ w - y) ** 2)


def test_a_gaussian_process_factors_and_inverts_by_the_kernels_and_raises_where_numpy_does():
    gp = GaussianProcess(R.standard_normal((6, 2)), R.standard_normal(6))
    theta = np.array([0.1, -0.2, -1.0])
    grad = st.grad(gp.nll)
    first = grad(theta)
    for _ in range(3):
        specialised = grad(theta)
    np.testing.assert_allclose(specialised, first, rtol=1e-10)
    np.testing.assert_allclose(specialised, gp.nll_hand(theta), rtol=1e-8)
    shown = st.source(gp.nll, args=(theta,))
    assert "L = rt.cholesky(K)" in shown and "= rt.inv(L)" in shown
    gp.d2 = -gp.d2 * 50                        # K no longer positive definite: as the function
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(np.linalg.LinAlgError):
            gp.nll(theta)
        with pytest.raises(np.linalg.LinAlgError):
            grad(theta)


def test_a_ridge_regressions_solves_in_both_passes_and_modes():
    X, y = R.standard_normal((10, 3)), R.standard_normal(10)
    expected = st.grad(ridge_loss)(0.3, X, y)
    for _ in range(3):
        got = st.grad(ridge_loss)(0.3, X, y)
        value, vjp = st.vjp(ridge_loss, 0.3, X, y)
        tangent = st.jvp(ridge_loss, (0.3, X, y), (1.0, 0 * X, 0 * y))[1]
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(vjp(1.0)[0], expected, rtol=1e-10)
    np.testing.assert_allclose(tangent, expected, rtol=1e-10)
    assert "rt.solve(" in st.source(ridge_loss, args=(0.3, X, y))
    h = 1e-5
    fd = (ridge_loss(0.3 + h, X, y) - ridge_loss(0.3 - h, X, y)) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-6)
    second = st.grad(st.grad(ridge_loss))(0.3, X, y)
    fd2 = (st.grad(ridge_loss)(0.3 + h, X, y) - st.grad(ridge_loss)(0.3 - h, X, y)) / (2 * h)
    np.testing.assert_allclose(second, fd2, rtol=1e-5)


def test_the_runtimes_calls_have_numpys_rules_and_add_none():
    from srctrans.rules.registry import REGISTRY
    for name in ("cholesky", "inv", "solve"):
        assert REGISTRY.lookup(getattr(rt, name)) is REGISTRY.lookup(getattr(np.linalg, name))
    assert not any(rule.primal in (rt.cholesky, rt.inv, rt.solve) for rule in REGISTRY.rules())


def gp_nll(theta, d2, y):
    K = np.exp(theta[1]) * np.exp(-0.5 * d2 / np.exp(2 * theta[0])) + np.exp(theta[2]) * np.eye(len(y))
    L = np.linalg.cholesky(K)
    return 0.5 * y @ np.linalg.solve(L.T, np.linalg.solve(L, y)) + np.sum(np.log(np.diag(L)))


def test_a_batch_of_gaussian_process_gradients_is_each_members():
    gp = GaussianProcess(R.standard_normal((5, 2)), R.standard_normal(5))
    thetas = np.array([[0.1, -0.2, -1.0], [0.3, 0.1, -0.5]])
    grad = st.grad(gp_nll)
    for _ in range(3):
        grad(thetas[0], gp.d2, gp.y)               # specialised: calls rt.cholesky and rt.inv
    assert "rt.inv(L)" in st.source(gp_nll, args=(thetas[0], gp.d2, gp.y))
    batched = st.vmap(grad, in_axes=(0, None, None))(thetas, gp.d2, gp.y)
    np.testing.assert_allclose(batched, [gp.nll_hand(t) for t in thetas], rtol=1e-10)

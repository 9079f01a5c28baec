"""A Cholesky factor's two solves and log-diagonal are differentiated for the matrix factored
(normalize/cholesky_terms.py, runtime/cholesky_terms.py, optimise/cholesky_solves.py): the
values are the program's own; the derivatives match finite differences in both modes, to second
order, and the chain's through the factor (a matrix that is not symmetric too: the factor reads
its lower triangle); the forms the pass does not cover keep the chain."""

import warnings

import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt
from srctrans.rules import REGISTRY
from srctrans.runtime import cholesky_terms

# The persistent cache off: a build with the pass switched off must happen, not be read back
pytestmark = pytest.mark.usefixtures("no_persistent_cache")

R = np.random.default_rng(61)
STEP = 1e-6


def spd(n, rng=R):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def gaussian_nll(K, y):
    """A Gaussian process's negative log marginal likelihood, as the textbook writes it."""
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(y) * np.log(2 * np.pi)


def kernel_nll(theta, X, y):
    """The same, of the log hyperparameters of a squared-exponential kernel."""
    d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = np.exp(theta[1]) * np.exp(-0.5 * d2 / np.exp(2 * theta[0])) \
        + np.exp(theta[2]) * np.eye(len(y))
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, y)
    alpha = np.linalg.solve(L.T, z)
    return 0.5 * y @ alpha + np.log(np.diag(L)).sum()


def several_right_hand_sides(K, B, w):
    """Solves of a matrix, and the log-diagonal weighted rather than summed."""
    L = np.linalg.cholesky(K)
    X = np.linalg.solve(L.T, np.linalg.solve(L, B))
    return np.sum(X * B) + w @ np.log(np.diag(L))


def factor_read_too(K, y):
    """The factor is read beside its solves (its own cotangent takes the chain)."""
    L = np.linalg.cholesky(K)
    x = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return x @ x + np.sum(L * L) + 2 * np.sum(np.log(np.diag(L)))


def filled_kernel(theta, X, y):
    """The kernel filled entry by entry before it is factored (the terms after it are found)."""
    n = len(y)
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = np.exp(theta[1] - 0.5 * np.sum((X[i] - X[j]) ** 2) / np.exp(2 * theta[0]))
    L = np.linalg.cholesky(K + np.exp(theta[2]) * np.eye(n))
    return 0.5 * y @ np.linalg.solve(L.T, np.linalg.solve(L, y)) + np.sum(np.log(np.diag(L)))


def array_filled_after(K, y):
    """An array made after the factor and filled entry by entry (none of the terms')."""
    L = np.linalg.cholesky(K)
    x = np.linalg.solve(L.T, np.linalg.solve(L, y))
    r = np.zeros(len(y))
    for i in range(len(y)):
        r[i] = x[i] * y[i]
    return np.sum(r) + np.sum(np.log(np.diag(L)))


def kernel_args():
    return (np.array([0.1, -0.2, -1.0]), R.standard_normal((6, 2)), R.standard_normal(6))


CASES = [
    (gaussian_nll, lambda: (spd(5), R.standard_normal(5))),
    (kernel_nll, kernel_args),
    (several_right_hand_sides, lambda: (spd(4), R.standard_normal((4, 3)), R.standard_normal(4))),
    (factor_read_too, lambda: (spd(4), R.standard_normal(4))),
    (filled_kernel, kernel_args),
    (array_filled_after, lambda: (spd(4), R.standard_normal(4))),
]
IDS = [f.__name__ for f, _ in CASES]


def _fused(f, args, wrt=0):
    """The fused gradient's code, without its comments (the lines of the program)."""
    text = st.source(f, args=args, wrt=wrt).split(f"def {f.__name__}_grad(")[1].split("\ndef ")[0]
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _chain_gradient(f, args, wrt=0):
    """The gradient with the pass switched off: the chain through the factor."""
    from srctrans.normalize import cholesky_terms as terms
    saved = terms._PRIMALS
    terms._PRIMALS = saved + (None,)                      # (no rule: the pass declines)
    try:
        st.clear_cache()
        return st.grad(f, wrt=wrt, optimize=False)(*args)
    finally:
        terms._PRIMALS = saved
        st.clear_cache()


@pytest.mark.parametrize("f, build", CASES, ids=IDS)
def test_the_derivative_goes_to_the_matrix_and_matches_finite_differences(f, build):
    args = build()
    fused = _fused(f, args)
    assert "np.linalg.solve(" not in fused            # the forward solves are products too
    assert "rt.cholesky_solve_grad(" in fused or "rt.cholesky_terms_grad(" in fused
    if f is not factor_read_too:
        assert "rt.cholesky_grad(" not in fused
    st.check_grads(f, args, wrt=0, order=2)
    value, _ = st.value_and_grad(f)(*args)
    assert value == f(*args)                              # the program's own value, exactly
    want = _chain_gradient(f, args)
    for _ in range(3):                                    # generic, specialised, short path
        np.testing.assert_allclose(st.grad(f)(*args), want, rtol=1e-10, atol=1e-12)


def test_a_likelihood_takes_one_product_and_one_triangle():
    """The two terms a Gaussian likelihood adds become one ``rt.cholesky_terms_grad``."""
    fused = _fused(kernel_nll, kernel_args())
    assert fused.count("rt.cholesky_terms_grad(") == 1
    assert "rt.cholesky_log_diagonal_grad(" not in fused and "rt.inv(L)" in fused


def test_a_matrix_that_is_not_symmetric_is_read_below_its_diagonal():
    """np.linalg.cholesky reads the lower triangle: the entries above get no cotangent, and
    those below count for their mirror images, as the chain's do."""
    K, y = spd(4), R.standard_normal(4)
    K[0, 3] += 5.0                                       # above the diagonal: not read
    got = st.grad(gaussian_nll)(K, y)
    np.testing.assert_allclose(got, _chain_gradient(gaussian_nll, (K, y)), rtol=1e-10)
    assert not np.triu(got, 1).any()
    st.check_grads(gaussian_nll, (K, y), wrt=0)


def test_forward_mode_and_a_hessian():
    theta, X, y = kernel_args()
    t = R.standard_normal(3)
    _, tangent = st.jvp(kernel_nll, (theta, X, y), (t, None, None))
    np.testing.assert_allclose(tangent, st.grad(kernel_nll)(theta, X, y) @ t, rtol=1e-9)
    hessian = st.hessian(kernel_nll)(theta, X, y)
    gradient = st.grad(kernel_nll)
    by_differences = np.array([(gradient(theta + STEP * e, X, y) - gradient(theta - STEP * e, X, y))
                               / (2 * STEP) for e in np.eye(3)])
    np.testing.assert_allclose(hessian, by_differences, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-9, atol=1e-12)


def test_float32_stays_float32():
    K, y = (a.astype(np.float32) for a in CASES[0][1]())
    want = _chain_gradient(gaussian_nll, (K, y))
    for _ in range(3):
        got = st.grad(gaussian_nll)(K, y)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)


def test_it_is_batched():
    K = np.stack([spd(3) for _ in range(4)])
    y = R.standard_normal((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", st.BatchingWarning)     # (the factor's derivative)
        values = st.vmap(gaussian_nll)(K, y)
        gradients = st.vmap(st.grad(gaussian_nll))(K, y)
    np.testing.assert_allclose(values, [gaussian_nll(K[k], y[k]) for k in range(4)], rtol=1e-12)
    np.testing.assert_allclose(gradients, [st.grad(gaussian_nll)(K[k], y[k]) for k in range(4)],
                               rtol=1e-12)


def inner_solve_read_again(K, y):
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, y)
    return np.linalg.solve(L.T, z) @ y + z @ z


def solves_in_the_other_order(K, y):
    L = np.linalg.cholesky(K)
    return np.linalg.solve(L, np.linalg.solve(L.T, y)) @ y


def written_into(K, y):
    K = K.copy()
    L = np.linalg.cholesky(K)
    K[0, 0] = 1.0
    return np.sum(np.log(np.diag(L))) + np.sum(K)


def hooked_factor(K, y):
    L = np.linalg.cholesky(K)
    with st.grad_of(L) as dL:
        dL = 2 * dL
    return np.sum(np.log(np.diag(L)))


def stopped_factor(K, y):
    with st.stop_recording():
        L = np.linalg.cholesky(K)
    return np.linalg.solve(L.T, np.linalg.solve(L, y)) @ y + np.sum(np.log(np.diag(L))) * np.sum(K)


KEPT = [inner_solve_read_again, solves_in_the_other_order, written_into, hooked_factor,
        stopped_factor]


@pytest.mark.parametrize("f", KEPT, ids=[f.__name__ for f in KEPT])
def test_other_forms_keep_the_chain(f):
    args = (spd(4), R.standard_normal(4))
    fused = _fused(f, args)
    assert "cholesky_solve" not in fused and "cholesky_log_diagonal" not in fused \
        and "cholesky_terms" not in fused
    if f not in (hooked_factor, stopped_factor):
        st.check_grads(f, args, wrt=0)
    np.testing.assert_allclose(st.grad(f)(*args), _chain_gradient(f, args), rtol=1e-10,
                               atol=1e-12)


def test_a_users_rule_of_solve_keeps_the_chain():
    """A user's rule of ``np.linalg.solve`` replaces srctrans's own: the pass declines."""
    from srctrans.normalize import cholesky_terms as terms
    saved = terms.has_own_rule
    terms.has_own_rule = lambda primal: primal is not np.linalg.solve
    try:
        st.clear_cache()
        fused = _fused(gaussian_nll, CASES[0][1]())
    finally:
        terms.has_own_rule = saved
        st.clear_cache()
    assert "cholesky_solve" not in fused and "rt.cholesky_grad(" in fused


# -- the helpers' rules, against finite differences through the factor -----------------------

def _through_the_factor(helper, a, rest):
    """``helper`` as a function of ``a`` alone, its factor computed from ``a``."""
    def f(a):
        L = np.linalg.cholesky(a)
        if helper is rt.cholesky_solve:
            return rt.cholesky_solve(L, rest, a)
        return helper(np.diag(L), L, a)
    return f


@pytest.mark.parametrize("helper, rest", [
    (rt.cholesky_solve, R.standard_normal(4)), (rt.cholesky_solve, R.standard_normal((4, 2))),
    (rt.cholesky_log_diagonal, None), (rt.cholesky_log_diagonal_sum, None)],
    ids=["solve-vector", "solve-matrix", "log-diagonal", "log-diagonal-sum"])
def test_a_helper_sends_the_whole_derivative_to_the_matrix(helper, rest):
    """At ``L = np.linalg.cholesky(a)`` the rule's cotangent of ``a`` (and of ``b``) is the VJP
    of the helper through the factor (by central differences along a direction that is not
    symmetric), its tangent the JVP, and ``L`` (and ``d``) get none."""
    a, t = spd(4), R.standard_normal((4, 4))
    f = _through_the_factor(helper, a, rest)
    L = np.linalg.cholesky(a)
    rule = REGISTRY.lookup(helper)
    args = (L, rest, a) if helper is rt.cholesky_solve else (np.diag(L), L, a)
    ans = helper(*args)
    np.testing.assert_array_equal(ans, f(a))
    u = R.standard_normal(np.shape(ans))
    cotangents = rule.vjp(u, ans, *args)
    derivative = (f(a + STEP * t) - f(a - STEP * t)) / (2 * STEP)
    assert cotangents[0] is None
    np.testing.assert_allclose(np.sum(cotangents[-1] * t), np.sum(u * derivative), rtol=1e-6,
                               atol=1e-10)
    if helper is rt.cholesky_solve:
        tb = R.standard_normal(rest.shape)
        np.testing.assert_allclose(np.sum(cotangents[1] * tb),
                                   np.sum(u * np.linalg.solve(a_sym(a), tb)), rtol=1e-9)
        by_b, by_a = rule.jvp(tb, t, ans, *args)
        np.testing.assert_allclose(by_b, np.linalg.solve(a_sym(a), tb), rtol=1e-9)
        np.testing.assert_allclose(by_a, derivative, rtol=1e-6, atol=1e-9)
    else:
        assert cotangents[1] is None
        np.testing.assert_allclose(rule.jvp(t, ans, *args), derivative, rtol=1e-6, atol=1e-9)


def a_sym(a):
    """The symmetric matrix np.linalg.cholesky factors: ``a``'s lower triangle, mirrored."""
    return np.tril(a) + np.tril(a, -1).T


@pytest.mark.parametrize("rhs", [(4,), (4, 2)])
def test_the_fast_paths_give_the_chains(rhs, monkeypatch):
    """The formulas for one real matrix give what the chain through both solves, the diagonal
    and the factor's derivative gives (the path every other operand takes), with the factor's
    inverse given or not, and the two terms' sum what each gives."""
    a, b = spd(4), R.standard_normal(rhs)
    L = np.linalg.cholesky(a)
    inverse = np.linalg.inv(L)
    x, g, c = rt.cholesky_solve(L, b, a), R.standard_normal(rhs), R.standard_normal(4)
    fast = [rt.cholesky_solve_grad(g, x, L, b), rt.cholesky_solve_grad(g, x, L, b, inverse),
            rt.cholesky_log_diagonal_grad(c, L), rt.cholesky_log_diagonal_grad(c, L, inverse),
            rt.cholesky_log_diagonal_grad(0.5, L, inverse), rt.cholesky_log_diagonal_grad(1.0, L),
            rt.cholesky_terms_grad(0.5, g, x, L, b, inverse),
            rt.cholesky_terms_grad(np.float64(0.5), g, x, L, b, inverse)]
    monkeypatch.setattr(cholesky_terms, "_one_real_matrix", lambda L: False)
    chain = [rt.cholesky_solve_grad(g, x, L, b)] * 2 + [rt.cholesky_log_diagonal_grad(c, L)] * 2 \
        + [rt.cholesky_log_diagonal_grad(0.5, L), rt.cholesky_log_diagonal_grad(1.0, L)] \
        + [rt.cholesky_log_diagonal_grad(0.5, L) + rt.cholesky_solve_grad(g, x, L, b)] * 2
    assert len(fast) == len(chain)
    for got, want in zip(fast, chain):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def test_a_complex_factor_is_refused_as_the_chain_refuses_it():
    a = spd(3) + 0j
    L = np.linalg.cholesky(a)
    with pytest.raises(st.SrcTransError):
        rt.cholesky_log_diagonal_grad(np.ones(3), L)

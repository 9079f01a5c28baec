"""np.linalg and scipy.special in user programs: each checked against finite differences to second order, in
both modes, in float64 and float32 (issue 11's linear algebra: inv, det, slogdet, solve,
cholesky, eigh, svd, qr, lstsq, pinv, matrix_power, multi_dot, norms of every order, with
kron, polyval, convolve and cumprod). The rules themselves are checked one by one in
test_jvp_rules.py."""

import numpy as np
import pytest

import srctrans as st
from programs import linalg as la

R = np.random.default_rng(11)


def square(*shape):
    return R.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


CASES = [
    (la.gaussian_nll, lambda: (R.standard_normal((3, 3)), R.standard_normal(3),
                               R.standard_normal(3))),
    (la.slogdet_unpacked, lambda: (square(3, 3),)),
    (la.slogdet_read_twice, lambda: (square(2, 3, 3),)),
    (la.slogdet_field, lambda: (square(2, 3, 3),)),
    (la.ridge, lambda: (R.standard_normal((3, 2)), R.standard_normal((5, 3)),
                        R.standard_normal((5, 2)))),
    (la.batched_solve, lambda: (square(2, 3, 3), R.standard_normal(3))),
    (la.batched_solve, lambda: (square(1, 3, 3), R.standard_normal((2, 3, 2)))),
    (la.inverse_and_det, lambda: (square(3, 3),)),
    (la.distances, lambda: (R.standard_normal((4, 2)),)),
    (la.principal_variance, lambda: (R.standard_normal((6, 3)) * np.array([3.0, 1.0, 0.3]),)),
    (la.low_rank_error, lambda: (R.standard_normal((4, 3)),)),
    (la.least_squares_fit, lambda: (R.standard_normal((6, 3)), R.standard_normal(6))),
    (la.orthogonal_part, lambda: (R.standard_normal((4, 3)),)),
    (la.smoothed_poly, lambda: (R.standard_normal(4), np.asarray(0.7))),
    (la.matrix_functions, lambda: (square(3, 3) / 3.0,)),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_second_order_in_both_modes(index):
    fn, build = CASES[index]
    st.check_grads(fn, build(), order=2)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_float32(index):
    fn, build = CASES[index]
    args = tuple(a.astype(np.float32) for a in build())
    grads = st.grad(fn, wrt=tuple(range(len(args))))(*args)
    wide = st.grad(fn, wrt=tuple(range(len(args))))(*(a.astype(np.float64) for a in args))
    for g, w in zip(grads, wide):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-2, atol=2e-3)


def test_a_tuple_result_is_never_added_as_an_array():
    """Reading slogdet's result twice adds two cotangents of a tuple: entry by entry, not by
    concatenating the tuples (a silent factor of two before)."""
    A = square(3, 3)
    _, logdet = np.linalg.slogdet(A)
    expected = 2.0 * logdet * np.linalg.inv(A).T
    np.testing.assert_allclose(st.grad(la.slogdet_read_twice)(A), expected)


def test_norms_of_every_order_have_their_textbook_gradients():
    x = np.array([3.0, -4.0, 1.0])
    np.testing.assert_allclose(st.grad(la_norm(1))(x), np.sign(x))
    np.testing.assert_allclose(st.grad(la_norm(np.inf))(x), [0.0, -1.0, 0.0])
    A = np.array([[1.0, -2.0], [3.0, 0.5]])
    u, s, vh = np.linalg.svd(A)
    np.testing.assert_allclose(st.grad(la_norm("nuc"))(A), u @ vh)
    np.testing.assert_allclose(st.grad(la_norm(2))(A), np.outer(u[:, 0], vh[0]))
    np.testing.assert_allclose(st.grad(la_norm(1))(A), [[1.0, 0.0], [1.0, 0.0]])   # column 0


def la_norm(order):
    return {1: la.norm_1, np.inf: la.norm_inf, "nuc": la.norm_nuc, 2: la.norm_2}[order]


SINGULAR = [np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),      # det 0 exactly
            np.outer([1.0, 2.0, 0.5], [0.3, -1.0, 2.0]) + np.outer([0.0, 1.0, 1.0], [1.0, 0.0, 1.0]),
            np.zeros((2, 2)),
            np.stack([np.eye(3), np.ones((3, 3))])]


@pytest.mark.parametrize("a", SINGULAR, ids=["exact", "rank-two", "zero", "stack"])
def test_the_gradient_of_det_at_singular_matrices_is_the_cofactor_matrix(a):
    """det is a polynomial: its gradient, the cofactor matrix, is finite at singular matrices
    (NumPy's LinAlgError before), in both modes."""
    st.check_grads(la.squared_determinant, (a,), order=1)
    grad = st.grad(lambda_free_det)(a)
    n = a.shape[-1]
    cofactor = np.empty_like(a)
    for index in np.ndindex(a.shape):
        *stack, i, j = index
        minor = np.delete(np.delete(a[tuple(stack)], i, axis=0), j, axis=1)
        cofactor[index] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    np.testing.assert_allclose(grad, cofactor, atol=1e-12)


def lambda_free_det(a):
    return np.sum(np.linalg.det(a))


def test_a_second_derivative_of_det_at_a_singular_matrix_is_refused():
    """The SVD's pieces are not smooth where a singular value is zero (their product is)."""
    with pytest.raises(st.SrcTransError, match="second derivative of a determinant"):
        st.hessian(la.squared_determinant)(SINGULAR[0])
    st.check_grads(la.squared_determinant, (np.eye(3) + 0.1,), order=2)   # away from it: fine


def test_the_cholesky_derivatives_invert_the_factor_once(monkeypatch):
    """``rt.cholesky_grad`` and ``rt.cholesky_jvp`` read ``L``'s inverse twice and compute it
    once (the rule's template computed it twice), and agree with each other."""
    from srctrans import runtime as rt
    a = square(4, 4)
    a = a @ a.T
    L, g, da = np.linalg.cholesky(a), R.standard_normal((4, 4)), R.standard_normal((4, 4))
    calls, inverse = [], np.linalg.inv
    monkeypatch.setattr(np.linalg, "inv", lambda m: calls.append(1) or inverse(m))
    cotangent, tangent = rt.cholesky_grad(g, L), rt.cholesky_jvp(da + da.T, L)
    assert len(calls) == 2
    np.testing.assert_allclose(np.sum(cotangent * (da + da.T)), np.sum(g * tangent), rtol=1e-10)

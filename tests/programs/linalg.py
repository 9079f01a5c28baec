"""Programs over np.linalg (tests/test_linalg.py): the rules composed as users write them."""

import numpy as np


def gaussian_nll(L_raw, mu, x):
    """A multivariate normal's negative log-likelihood through a Cholesky factor."""
    cov = L_raw @ L_raw.T + 3.0 * np.eye(L_raw.shape[0])
    L = np.linalg.cholesky(cov)
    z = np.linalg.solve(L, x - mu)
    return 0.5 * np.sum(z * z) + np.sum(np.log(np.diagonal(L)))


def slogdet_unpacked(A):
    sign, logdet = np.linalg.slogdet(A)
    return logdet * 2.0 + sign


def slogdet_read_twice(A):
    out = np.linalg.slogdet(A)
    return np.sum(out[1] * out[1])


def slogdet_field(A):
    return np.sum(np.linalg.slogdet(A).logabsdet)


def ridge(W, X, y):
    """Ridge regression's solution and its residual, through solve with a matrix right side."""
    gram = X.T @ X + np.eye(X.shape[1])
    coef = np.linalg.solve(gram, X.T @ y)
    return np.sum((X @ coef - y) ** 2) + np.sum(W * coef)


def batched_solve(A, b):
    return np.sum(np.tanh(np.linalg.solve(A, b)))


def inverse_and_det(A):
    return np.sum(np.linalg.inv(A) * A.T) + np.linalg.det(A) + np.linalg.norm(A)


def distances(X):
    return np.sum(np.linalg.norm(X[:, None, :] - X[None, :, :] + 1e-3, axis=-1))


def principal_variance(X):
    """The variance along the top principal direction, from eigh of the covariance."""
    centred = X - np.mean(X, axis=0)
    w, v = np.linalg.eigh(centred.T @ centred / X.shape[0])
    projected = centred @ v[:, -1]
    return np.sum(projected ** 2) + w[-1]


def low_rank_error(A):
    """How far A is from its best rank-1 approximation, and its nuclear norm."""
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    rank_one = s[0] * np.outer(u[:, 0], vh[0])
    return np.sum((A - rank_one) ** 2) + 0.1 * np.linalg.norm(A, "nuc")


def least_squares_fit(X, y):
    coefficients, residuals, rank, singular = np.linalg.lstsq(X, y, rcond=None)
    return np.sum(coefficients ** 2) + np.sum(residuals)


def orthogonal_part(A):
    q, r = np.linalg.qr(A)
    return np.sum(q[:, 0] * np.arange(q.shape[0])) + np.sum(np.diag(r) ** 2)


def smoothed_poly(p, x):
    """A polynomial sampled on a grid, smoothed by a convolution, with norms of two orders."""
    samples = np.polyval(p, np.linspace(-1.0, 1.0, 7) * x)
    smooth = np.convolve(samples, np.array([0.25, 0.5, 0.25]), mode="same")
    return np.linalg.norm(smooth, ord=3) + np.linalg.norm(np.cumprod(smooth[:4]), ord=np.inf)


def matrix_functions(A):
    square = np.linalg.matrix_power(A, 3) + np.linalg.pinv(A) + np.kron(A, np.eye(2))[:3, :3]
    return np.sum(square * np.linalg.multi_dot([A, A.T, A]))


def norm_1(x):
    return np.linalg.norm(x, 1)


def norm_inf(x):
    return np.linalg.norm(x, np.inf)


def norm_nuc(x):
    return np.linalg.norm(x, "nuc")


def norm_2(x):
    return np.linalg.norm(x, 2)


def squared_determinant(a):
    return np.linalg.det(a) ** 2 + np.linalg.det(a)

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

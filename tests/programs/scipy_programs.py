"""User programs over scipy.linalg, scipy.signal and scipy.stats (tests/test_scipy.py)."""

import numpy as np
import scipy.linalg as sl
import scipy.signal as signal
import scipy.special as special
import scipy.stats as stats
from scipy.stats import norm


def gp_negative_log_likelihood(x, y, length):
    """A Gaussian process's negative log likelihood, through the Cholesky factor."""
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / length ** 2) + 0.1 * np.eye(x.shape[0])
    factor = sl.cho_factor(k, lower=True)
    alpha = sl.cho_solve(factor, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(factor[0])))


def cholesky_upper_unpacked(a, b):
    c, lower = sl.cho_factor(a)
    return np.sum(np.sin(sl.cho_solve((c, lower), b))) + np.sum(c * c)


def lu_solve_both_ways(a, b):
    lu, piv = sl.lu_factor(a)
    x = sl.lu_solve((lu, piv), b)
    z = sl.lu_solve((lu, piv), b, trans=1)
    return np.sum(np.sin(x)) + np.sum(z * z) + np.sum(np.cos(lu))


def whitened(a, b):
    """Solve with the lower Cholesky factor as a triangular matrix."""
    low = np.linalg.cholesky(a)
    return np.sum(sl.solve_triangular(low, b, lower=True) ** 2)


def structured_solves(a, b):
    return (np.sum(np.sin(sl.solve(a, b, assume_a="pos"))) + np.sum(sl.solve(a, b) ** 2)
            + np.sum(np.cos(sl.solve(a, b, assume_a="sym", lower=True, transposed=True))))


def inverse_and_determinant(a):
    return np.sum(sl.inv(a) ** 2) + sl.det(a) ** 2


def matrix_exponential(a, t):
    return np.sum(np.sin(sl.expm(t * a)))


def matrix_square_root(a):
    root = sl.sqrtm(a)
    return np.sum(root * root.T) + np.trace(root)


def sylvester(a, b, q):
    return np.sum(np.sin(sl.solve_sylvester(a, b, q)))


def symmetric_solve(a, b):
    return np.sum(sl.solve(a, b, assume_a="sym"))


def general_solve(a, b):
    return np.sum(sl.solve(a, b))


def blurred_image_loss(image, kernel, target):
    """A learnable 2-D blur, compared with a target through a correlation of the residual."""
    blurred = signal.convolve(image, kernel, mode="same")
    residual = blurred - target
    return np.sum(residual ** 2) + np.sum(signal.correlate(residual, kernel, mode="valid") ** 2)


def regression_negative_log_likelihood(w, log_scale, x, y):
    """A Student-t regression with a normal prior on the weights."""
    residual = y - x @ w
    return (-np.sum(stats.t.logpdf(residual, 4.0, 0.0, np.exp(log_scale)))
            - np.sum(norm.logpdf(w, 0.0, 2.0)))


def probit_likelihood(w, x, labels):
    """Probit classification: log Phi(+-x w), through norm.logcdf (finite far in the tails)."""
    return np.sum(stats.norm.logcdf((2.0 * labels - 1.0) * (x @ w)))


def gaussian_fit(x, mean, cov):
    return np.sum(stats.multivariate_normal.logpdf(x, mean, cov))


def count_model(log_rate, counts):
    rate = np.exp(log_rate)
    return np.sum(stats.poisson.logpmf(counts, rate)) + np.sum(stats.poisson.logcdf(counts, rate))


def mixture_weights(x, alpha):
    return np.sum(stats.dirichlet.logpdf(x, alpha))


def beta_gamma(x, a, b, rate):
    return (np.sum(stats.beta.logpdf(x, a, b)) + np.sum(stats.gamma.logpdf(x, a, scale=1.0 / rate))
            + np.sum(stats.gamma.cdf(x, 2.0, scale=1.0 / rate)))


def signed_log_sum(a, b):
    """log|sum(b exp(a))| with weights of both signs, and the sign it had."""
    value, sign = special.logsumexp(a, axis=1, b=b, return_sign=True)
    return np.sum(value * sign) + np.sum(special.logsumexp(a, b=b, return_sign=True)[0])


def t_cdf_in_df(x, df):
    return np.sum(stats.t.cdf(x, df))


def frozen(x, scale):
    return np.sum(stats.norm(0.0, scale).logpdf(x))


def overwritten(a, b):
    return np.sum(sl.solve(a, b, overwrite_a=True))

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


class StudentT:
    """A model class whose likelihood calls the distributions' private methods, as a
    subclass of scipy's or a statistics library's own code does."""

    def __init__(self, df):
        self.df = df

    def loglike(self, params, x, y):
        """Student-t regression log-likelihood with a standardised residual."""
        scale = np.exp(params[-1])
        z = (y - x @ params[:-1]) / scale
        return np.sum(stats.t._logpdf(z, self.df)) - len(y) * np.log(scale)


def private_methods(x, a, b, mu):
    """Every private method srctrans reads as its public one, in the variable and shapes."""
    u = 1.0 / (1.0 + np.exp(-x))                        # in (0, 1): beta's support
    v = np.exp(x)                                       # positive: gamma's support
    total = np.sum(stats.norm._logpdf(x) + stats.norm._pdf(x) + stats.norm._cdf(x)
                   + stats.norm._logcdf(x))
    total = total + np.sum(stats.t._logpdf(x, a) + stats.t._pdf(x, a) + stats.t._cdf(x, 3.0)
                           + stats.t._logcdf(x, 3.0))
    total = total + np.sum(stats.beta._logpdf(u, a, b) + stats.beta._pdf(u, a, b))
    total = total + np.sum(stats.gamma._logpdf(v, a) + stats.gamma._pdf(v, a))
    counts = np.array([0.0, 1.0, 3.0])
    return total + np.sum(stats.poisson._logpmf(counts, mu) + stats.poisson._pmf(counts, mu))


def t_cdf_in_df(x, df):
    return np.sum(stats.t._cdf(x, df))


def t_private_logpdf(x, df):
    return np.sum(stats.t._logpdf(x, df))

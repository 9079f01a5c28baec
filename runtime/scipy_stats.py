"""Derivatives of ``scipy.stats`` distributions: norm, t, beta and gamma (logpdf, pdf, cdf,
logcdf), poisson (logpmf, pmf, cdf, logcdf), multivariate_normal and dirichlet (logpdf, pdf).

Imported only through ``rt.scipy_stats``, by generated code of a program that
uses SciPy; plain NumPy and SciPy that srctrans differentiates again (registered
with ``differentiate_through`` in ``srctrans/rules/scipy_stats.py``).

The continuous families are location-scale families: with ``y = (x - loc) /
scale`` and the standard density ``p(y; shapes)``, ``logpdf = log p(y) -
log(scale)`` and ``cdf = F(y)``. Each derivative below is one factor of the
chain rule, written once for all four families (``kind`` names the family):

- ``score``: ``d log p / dy``; ``shape_score``: ``d log p / d shape``;
- the helpers have one ``return`` each and pass shape parameters one by one
  (``s1``, ``s2``), as code srctrans differentiates again must;
- the derivatives of ``F`` in ``y`` are the density; in a shape parameter
  (``t``'s ``df``, ``beta``'s ``a`` and ``b``, ``gamma``'s ``a``) they have no
  closed form, and :func:`no_derivative` refuses them.
"""

import numpy as np
import scipy.special as special

from .broadcast import unbroadcast
from .decompositions import symmetric_from_triangle, symmetric_from_triangle_transpose
from .refusals import unsupported
from .complex_numbers import real_only

LOG_SQRT_2PI = 0.9189385332046727


def standard(x, loc, scale):
    """``(x - loc) / scale``: the standardised variable of a location-scale family."""
    return (x - loc) / scale


def _finite_df(df):
    """``(df, infinite)``: t's degrees of freedom with 1.0 at its infinite entries, and
    where those are. The t distribution at an infinite ``df`` is the normal one (SciPy's
    density gives it there), whose formulas take those entries; t's own would give NaN
    (``inf / inf``). (No test of whether any is infinite: a test of a value would make
    ``st.vmap`` call the formulas once per member of a batch.)"""
    infinite = np.isinf(df)
    return np.where(infinite, 1.0, df), infinite


def log_density(kind, y, s1=None, s2=None):
    """``log p(y)`` of the standard distribution of family ``kind`` (shape parameters
    ``s1``, ``s2``: t's ``df``, beta's ``a`` and ``b``, gamma's ``a``)."""
    if kind == "norm":
        value = -0.5 * y * y - LOG_SQRT_2PI
    elif kind == "t":
        df, infinite = _finite_df(s1)
        value = (special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df)
                 - 0.5 * np.log(df * np.pi) - 0.5 * (df + 1.0) * np.log1p(y * y / df))
        value = np.where(infinite, -0.5 * y * y - LOG_SQRT_2PI, value)
    elif kind == "beta":
        value = (s1 - 1.0) * np.log(y) + (s2 - 1.0) * np.log1p(-y) - special.betaln(s1, s2)
    else:                                                      # gamma
        value = (s1 - 1.0) * np.log(y) - y - special.gammaln(s1)
    return value


def score(kind, y, s1=None, s2=None):
    """``d log p(y) / dy``."""
    if kind == "norm":
        value = -y
    elif kind == "t":
        df, infinite = _finite_df(s1)
        value = -(df + 1.0) * y / (df + y * y)
        value = np.where(infinite, -y, value)
    elif kind == "beta":
        value = (s1 - 1.0) / y - (s2 - 1.0) / (1.0 - y)
    else:
        value = (s1 - 1.0) / y - 1.0
    return value


def shape_score(kind, which, y, s1=None, s2=None):
    """``d log p(y) / d s1`` (``which`` 0) or ``d s2`` (``which`` 1)."""
    if kind == "t":
        df, infinite = _finite_df(s1)
        value = (0.5 * (special.digamma(0.5 * (df + 1.0)) - special.digamma(0.5 * df))
                 - 0.5 / df - 0.5 * np.log1p(y * y / df)
                 + 0.5 * (df + 1.0) * y * y / (df * (df + y * y)))
        value = np.where(infinite, 0.0, value)
    elif kind == "beta" and which == 0:
        value = np.log(y) - special.digamma(s1) + special.digamma(s1 + s2)
    elif kind == "beta":
        value = np.log1p(-y) - special.digamma(s2) + special.digamma(s1 + s2)
    else:
        value = np.log(y) - special.digamma(s1)
    return value


# -- logpdf (and pdf, its exponential): factors of x, loc and scale --------------------

def logpdf_dx(kind, x, loc, scale, s1=None, s2=None):
    return score(kind, standard(x, loc, scale), s1, s2) / scale


def logpdf_dscale(kind, x, loc, scale, s1=None, s2=None):
    y = standard(x, loc, scale)
    return -(1.0 + y * score(kind, y, s1, s2)) / scale


def logpdf_dshape(kind, which, x, loc, scale, s1=None, s2=None):
    return shape_score(kind, which, standard(x, loc, scale), s1, s2)


# -- cdf and logcdf: the density, over the cdf for logcdf ------------------------------

def cdf_dx(kind, x, loc, scale, s1=None, s2=None):
    """``d cdf / dx``: the density at ``x``."""
    return np.exp(log_density(kind, standard(x, loc, scale), s1, s2)) / scale


def cdf_dscale(kind, x, loc, scale, s1=None, s2=None):
    y = standard(x, loc, scale)
    return -y * np.exp(log_density(kind, y, s1, s2)) / scale


def logcdf_dx(kind, ans, x, loc, scale, s1=None, s2=None):
    """``d logcdf / dx = pdf / cdf``, from the logarithms (finite far in the tail)."""
    return np.exp(log_density(kind, standard(x, loc, scale), s1, s2) - ans) / scale


def logcdf_dscale(kind, ans, x, loc, scale, s1=None, s2=None):
    y = standard(x, loc, scale)
    return -y * np.exp(log_density(kind, y, s1, s2) - ans) / scale


def no_derivative(function, parameter):
    """Refuse the derivative of ``function`` in ``parameter`` (it has no closed form)."""
    unsupported(f"the derivative of {function} with respect to {parameter}",
                f"keep {parameter} a constant (its derivative has no closed form), or "
                "register a rule of your own with st.register_vjp")


# -- poisson --------------------------------------------------------------------------

def poisson_logpmf_dmu(k, mu, loc=0):
    return (k - loc) / mu - 1.0


def _floor_log_pmf(k, mu, loc):
    """``(inside, log pmf(floor(k - loc)))``: ``inside`` where the count is in the support
    (the log pmf is of a count 0 elsewhere, to stay finite)."""
    n = np.floor(k - loc)
    inside = n >= 0
    n = np.where(inside, n, 0.0)
    return inside, special.xlogy(n, mu) - mu - special.gammaln(n + 1.0)


def poisson_cdf_dmu(k, mu, loc=0):
    """``d cdf / d mu = -pmf(floor(k))`` (zero below the support)."""
    inside, log_pmf = _floor_log_pmf(k, mu, loc)
    return np.where(inside, -np.exp(log_pmf), 0.0)


def poisson_logcdf_dmu(ans, k, mu, loc=0):
    """``d logcdf / d mu = -pmf(floor(k)) / cdf``, from the logarithms."""
    inside, log_pmf = _floor_log_pmf(k, mu, loc)
    return np.where(inside, -np.exp(log_pmf - np.where(inside, ans, 0.0)), 0.0)


# -- multivariate normal --------------------------------------------------------------

def _covariance(cov, d):
    """The matrix multivariate_normal uses: a matrix's lower triangle mirrored, a vector as
    a diagonal, a number times the identity."""
    if np.ndim(cov) == 2:
        matrix = symmetric_from_triangle(cov, "L")
    elif np.ndim(cov) == 1:
        matrix = cov[:, None] * np.eye(d)
    else:
        matrix = cov * np.eye(d)
    return matrix


def _covariance_transpose(m, cov):
    """The transpose of :func:`_covariance`: a cotangent of the matrix, as one of ``cov``."""
    if np.ndim(cov) == 2:
        cotangent = symmetric_from_triangle_transpose(m, "L")
    elif np.ndim(cov) == 1:
        cotangent = np.diagonal(m)
    else:
        cotangent = np.trace(m)
    return cotangent


def _whitened(x, mean, cov):
    """``(r, w, sigma)``: the residuals ``x - mean``, ``sigma^-1 r`` and the covariance."""
    for value in (x, mean, cov):
        real_only(value, "scipy.stats.multivariate_normal", "complex values",
                  "its densities are of real points: pass real x, mean and cov")
    d = np.shape(x)[-1]
    r = x - (0.0 if mean is None else mean)
    sigma = _covariance(cov, d)
    w = np.linalg.solve(sigma, r[..., None])[..., 0]
    return r, w, sigma


def _per_point(g, r):
    """The cotangent of logpdf, one value per point (SciPy squeezes a single point)."""
    return np.reshape(g, np.shape(r)[:-1])


def mvn_logpdf_dx(g, x, mean=None, cov=1.0):
    r, w, sigma = _whitened(x, mean, cov)
    return unbroadcast(-_per_point(g, r)[..., None] * w, x)


def mvn_logpdf_dmean(g, x, mean=None, cov=1.0):
    r, w, sigma = _whitened(x, mean, cov)
    return unbroadcast(_per_point(g, r)[..., None] * w, mean)


def mvn_logpdf_dcov(g, x, mean=None, cov=1.0):
    r, w, sigma = _whitened(x, mean, cov)
    d = np.shape(x)[-1]
    weights = _per_point(g, r)
    weighted = np.reshape(weights[..., None] * w, (-1, d))
    m = -0.5 * np.sum(weights) * np.linalg.inv(sigma) + 0.5 * (weighted.T @ np.reshape(w, (-1, d)))
    return _covariance_transpose(m, cov)


def mvn_logpdf_jvp_x(dx, ans, x, mean=None, cov=1.0):
    r, w, sigma = _whitened(x, mean, cov)
    return np.reshape(-np.sum(dx * w, axis=-1), np.shape(ans))


def mvn_logpdf_jvp_mean(dmean, ans, x, mean=None, cov=1.0):
    r, w, sigma = _whitened(x, mean, cov)
    return np.reshape(np.sum(dmean * w, axis=-1), np.shape(ans))


def mvn_logpdf_jvp_cov(dcov, ans, x, mean=None, cov=1.0):
    r, w, sigma = _whitened(x, mean, cov)
    step = _covariance(dcov, np.shape(x)[-1])
    change = (-0.5 * np.trace(np.linalg.solve(sigma, step))
              + 0.5 * np.sum((w @ step) * w, axis=-1))
    return np.reshape(change, np.shape(ans))


# -- dirichlet (components along the first axis; the last may be left out) -----------

def _drops_last(x, alpha):
    """Whether ``x`` leaves out the last component (SciPy appends ``1 - sum``)."""
    return np.shape(x)[0] + 1 == np.shape(alpha)[0]


def _completed(x, alpha):
    """``x`` with its last component ``1 - sum`` appended when SciPy would append it."""
    full = x
    if _drops_last(x, alpha):
        full = np.concatenate([x, (1.0 - np.sum(x, axis=0))[None]], axis=0)
    return full


def _alpha_score(x, alpha):
    """``d logpdf / d alpha_k`` at each point: ``digamma(sum alpha) - digamma(alpha_k) +
    log x_k``."""
    return (special.digamma(np.sum(alpha)) - _by_component(special.digamma(alpha), x)
            + np.log(_completed(x, alpha)))


def _by_component(alpha, x):
    """``alpha`` with an axis for the points when ``x`` has them."""
    return alpha[:, None] if np.ndim(x) == 2 else alpha


def dirichlet_logpdf_dx(g, x, alpha):
    full = _completed(x, alpha)
    gx = g * (_by_component(alpha, x) - 1.0) / full
    if _drops_last(x, alpha):                                 # the appended 1 - sum reads x
        gx = gx[:-1] - gx[-1:]
    return gx


def dirichlet_logpdf_dalpha(g, x, alpha):
    each = _alpha_score(x, alpha)
    return np.reshape(np.sum(np.reshape(g * each, (np.shape(alpha)[0], -1)), axis=1),
                      np.shape(alpha))


def dirichlet_logpdf_jvp_x(dx, x, alpha):
    full = _completed(x, alpha)
    dfull = dx
    if _drops_last(x, alpha):                                # the appended 1 - sum moves too
        dfull = np.concatenate([dx, -np.sum(dx, axis=0)[None]], axis=0)
    return np.sum((_by_component(alpha, x) - 1.0) * dfull / full, axis=0)


def dirichlet_logpdf_jvp_alpha(dalpha, x, alpha):
    return np.sum(_by_component(dalpha, x) * _alpha_score(x, alpha), axis=0)

"""The private methods of ``scipy.stats`` distributions (``stats.norm._logpdf(x)``), written as
the public methods srctrans has rules for (the normal distribution's and the t density's as
SciPy's own formulas, ``special.ndtr``, ``special.log_ndtr``, ``special.gammaln``, which skip
the public methods' argument checks): srctrans reads this source for them.

``srctrans/rules/scipy_stats.py`` registers each with ``REGISTRY.compute_as``: a call of
``stats.t._logpdf(x, df)`` is differentiated as :func:`t_logpdf`, which calls
``stats.t.logpdf(x, df)`` (``loc`` 0, ``scale`` 1). SciPy calls its private methods inside
the support and for valid shape parameters, where the two agree; outside it the public
method's value (``-inf``, ``nan``) is computed instead of whatever the private formula
gives there. Imported only once ``scipy.stats`` is (it is an optional dependency).
"""

import math

import numpy as np
import scipy.special as special
import scipy.stats as stats

# The normal distribution's private methods are SciPy's own formulas (ufuncs, which keep
# an array of another library, as the private methods do): srctrans has their rules.


def norm_pdf(x):
    return np.exp(-0.5 * x * x) * 0.3989422804014327          # 1 / sqrt(2 pi)


def norm_logpdf(x):
    return -0.5 * x * x - 0.9189385332046727                 # log(sqrt(2 pi))


def norm_cdf(x):
    return special.ndtr(x)


def norm_logcdf(x):
    return special.log_ndtr(x)


def t_pdf(x, df):
    return np.exp(t_logpdf(x, df))


def t_logpdf(x, df):
    """SciPy's own formula (``log(poch(df / 2, 1 / 2))`` as a difference of ``gammaln``);
    an infinite ``df`` is the normal distribution, as SciPy's method has it. (Specialised
    code checks the tests at every call: a number ``df`` is tested by ``math.isinf``, which
    costs a fraction of counting an array's infinite entries, done once, as ``np.all`` and
    ``np.any`` would cost several times ``np.count_nonzero``.)"""
    if np.ndim(df) == 0:                              # (the shape key decides it)
        if math.isinf(df):
            return norm_logpdf(x)
    else:
        infinite = np.count_nonzero(np.isinf(df))
        if infinite == np.size(df):                   # (none at all: np.all of nothing)
            return norm_logpdf(x)
        if infinite > 0:                              # some infinite: the public method's
            return stats.t.logpdf(x, df)
    return (special.gammaln(0.5 * df + 0.5) - special.gammaln(0.5 * df)
            - 0.5 * (np.log(df) + np.log(np.pi)) - (df + 1) / 2 * np.log1p(x * x / df))


def t_cdf(x, df):
    return stats.t.cdf(x, df)


def t_logcdf(x, df):
    return stats.t.logcdf(x, df)


def beta_pdf(x, a, b):
    return stats.beta.pdf(x, a, b)


def beta_logpdf(x, a, b):
    return stats.beta.logpdf(x, a, b)


def beta_cdf(x, a, b):
    return stats.beta.cdf(x, a, b)


def beta_logcdf(x, a, b):
    return stats.beta.logcdf(x, a, b)


def gamma_pdf(x, a):
    return stats.gamma.pdf(x, a)


def gamma_logpdf(x, a):
    return stats.gamma.logpdf(x, a)


def gamma_cdf(x, a):
    return stats.gamma.cdf(x, a)


def gamma_logcdf(x, a):
    return stats.gamma.logcdf(x, a)


def poisson_pmf(k, mu):
    return stats.poisson.pmf(k, mu)


def poisson_logpmf(k, mu):
    return stats.poisson.logpmf(k, mu)


def poisson_cdf(k, mu):
    return stats.poisson.cdf(k, mu)


def poisson_logcdf(k, mu):
    return stats.poisson.logcdf(k, mu)


# (distribution, its private method's name, the function above), for the registry
PRIVATE_METHODS = [
    (distribution, method, globals()[f"{distribution}_{method}"])
    for distribution, methods in [("norm", ("pdf", "logpdf", "cdf", "logcdf")),
                                  ("t", ("pdf", "logpdf", "cdf", "logcdf")),
                                  ("beta", ("pdf", "logpdf", "cdf", "logcdf")),
                                  ("gamma", ("pdf", "logpdf", "cdf", "logcdf")),
                                  ("poisson", ("pmf", "logpmf", "cdf", "logcdf"))]
    for method in methods]

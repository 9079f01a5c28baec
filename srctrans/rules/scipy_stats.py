"""Derivative rules of ``scipy.stats``: the norm, t, beta and gamma distributions (logpdf,
pdf, cdf, logcdf in the variable, ``loc``, ``scale`` and the shape parameters), poisson
(logpmf, pmf, cdf, logcdf in ``mu``), multivariate_normal and dirichlet (logpdf, pdf).

Loaded on demand, once the user has imported ``scipy.stats`` (see
``scipy_special.py``); the formulas are in ``runtime/scipy_stats.py``. The rules
belong to the distribution objects' methods, called as ``stats.norm.logpdf(x,
loc, scale)``; a frozen distribution (``stats.norm(loc, scale).logpdf(x)``) is
made while the function runs, so srctrans cannot see which rule it needs: pass
the parameters to the method instead.

Their private methods (``stats.t._logpdf(x, df)``, as a distribution subclass or a
library's likelihood calls them) are differentiated as the public ones at ``loc`` 0 and
``scale`` 1 (``runtime/scipy_stats_private.py``).

What has no closed form is refused when it is asked for: the cdf and logcdf
of t, beta and gamma in their shape parameters (``df``, ``a``, ``b``). A Poisson
count ``k`` and ``loc`` are integers: they get no derivative.
"""


import scipy.stats as stats

from srctrans import runtime as rt
from srctrans.runtime import scipy_stats as formulas
from srctrans.runtime import scipy_stats_private
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


# -- location-scale families: y = (x - loc) / scale ----------------------------------
@vjp(stats.norm.logpdf, elementwise=True)
def norm_logpdf(g, ans, x, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            -g * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            g * rt.scipy_stats.logpdf_dscale("norm", x, loc, scale))

@jvp(stats.norm.logpdf)
def norm_logpdf_jvp(dx, dloc, dscale, ans, x, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            -dloc * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            dscale * rt.scipy_stats.logpdf_dscale("norm", x, loc, scale))

@vjp(stats.norm.pdf, elementwise=True)
def norm_pdf(g, ans, x, loc=0.0, scale=1.0):
    return (g * ans * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            -g * ans * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            g * ans * rt.scipy_stats.logpdf_dscale("norm", x, loc, scale))

@jvp(stats.norm.pdf)
def norm_pdf_jvp(dx, dloc, dscale, ans, x, loc=0.0, scale=1.0):
    return (dx * ans * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            -dloc * ans * rt.scipy_stats.logpdf_dx("norm", x, loc, scale),
            dscale * ans * rt.scipy_stats.logpdf_dscale("norm", x, loc, scale))

@vjp(stats.norm.cdf, elementwise=True)
def norm_cdf(g, ans, x, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.cdf_dx("norm", x, loc, scale),
            -g * rt.scipy_stats.cdf_dx("norm", x, loc, scale),
            g * rt.scipy_stats.cdf_dscale("norm", x, loc, scale))

@jvp(stats.norm.cdf)
def norm_cdf_jvp(dx, dloc, dscale, ans, x, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.cdf_dx("norm", x, loc, scale),
            -dloc * rt.scipy_stats.cdf_dx("norm", x, loc, scale),
            dscale * rt.scipy_stats.cdf_dscale("norm", x, loc, scale))

@vjp(stats.norm.logcdf, elementwise=True)
def norm_logcdf(g, ans, x, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logcdf_dx("norm", ans, x, loc, scale),
            -g * rt.scipy_stats.logcdf_dx("norm", ans, x, loc, scale),
            g * rt.scipy_stats.logcdf_dscale("norm", ans, x, loc, scale))

@jvp(stats.norm.logcdf)
def norm_logcdf_jvp(dx, dloc, dscale, ans, x, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logcdf_dx("norm", ans, x, loc, scale),
            -dloc * rt.scipy_stats.logcdf_dx("norm", ans, x, loc, scale),
            dscale * rt.scipy_stats.logcdf_dscale("norm", ans, x, loc, scale))

@vjp(stats.t.logpdf, elementwise=True)
def t_logpdf(g, ans, x, df, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            g * rt.scipy_stats.logpdf_dshape("t", 0, x, loc, scale, df),
            -g * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            g * rt.scipy_stats.logpdf_dscale("t", x, loc, scale, df))

@jvp(stats.t.logpdf)
def t_logpdf_jvp(dx, ddf, dloc, dscale, ans, x, df, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            ddf * rt.scipy_stats.logpdf_dshape("t", 0, x, loc, scale, df),
            -dloc * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            dscale * rt.scipy_stats.logpdf_dscale("t", x, loc, scale, df))

@vjp(stats.t.pdf, elementwise=True)
def t_pdf(g, ans, x, df, loc=0.0, scale=1.0):
    return (g * ans * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            g * ans * rt.scipy_stats.logpdf_dshape("t", 0, x, loc, scale, df),
            -g * ans * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            g * ans * rt.scipy_stats.logpdf_dscale("t", x, loc, scale, df))

@jvp(stats.t.pdf)
def t_pdf_jvp(dx, ddf, dloc, dscale, ans, x, df, loc=0.0, scale=1.0):
    return (dx * ans * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            ddf * ans * rt.scipy_stats.logpdf_dshape("t", 0, x, loc, scale, df),
            -dloc * ans * rt.scipy_stats.logpdf_dx("t", x, loc, scale, df),
            dscale * ans * rt.scipy_stats.logpdf_dscale("t", x, loc, scale, df))

@vjp(stats.t.cdf, elementwise=True)
def t_cdf(g, ans, x, df, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.cdf_dx("t", x, loc, scale, df),
            rt.scipy_stats.no_derivative("scipy.stats.t.cdf", "df"),
            -g * rt.scipy_stats.cdf_dx("t", x, loc, scale, df),
            g * rt.scipy_stats.cdf_dscale("t", x, loc, scale, df))

@jvp(stats.t.cdf)
def t_cdf_jvp(dx, ddf, dloc, dscale, ans, x, df, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.cdf_dx("t", x, loc, scale, df),
            rt.scipy_stats.no_derivative("scipy.stats.t.cdf", "df"),
            -dloc * rt.scipy_stats.cdf_dx("t", x, loc, scale, df),
            dscale * rt.scipy_stats.cdf_dscale("t", x, loc, scale, df))

@vjp(stats.t.logcdf, elementwise=True)
def t_logcdf(g, ans, x, df, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logcdf_dx("t", ans, x, loc, scale, df),
            rt.scipy_stats.no_derivative("scipy.stats.t.logcdf", "df"),
            -g * rt.scipy_stats.logcdf_dx("t", ans, x, loc, scale, df),
            g * rt.scipy_stats.logcdf_dscale("t", ans, x, loc, scale, df))

@jvp(stats.t.logcdf)
def t_logcdf_jvp(dx, ddf, dloc, dscale, ans, x, df, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logcdf_dx("t", ans, x, loc, scale, df),
            rt.scipy_stats.no_derivative("scipy.stats.t.logcdf", "df"),
            -dloc * rt.scipy_stats.logcdf_dx("t", ans, x, loc, scale, df),
            dscale * rt.scipy_stats.logcdf_dscale("t", ans, x, loc, scale, df))

@vjp(stats.beta.logpdf, elementwise=True)
def beta_logpdf(g, ans, x, a, b, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            g * rt.scipy_stats.logpdf_dshape("beta", 0, x, loc, scale, a, b),
            g * rt.scipy_stats.logpdf_dshape("beta", 1, x, loc, scale, a, b),
            -g * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            g * rt.scipy_stats.logpdf_dscale("beta", x, loc, scale, a, b))

@jvp(stats.beta.logpdf)
def beta_logpdf_jvp(dx, da, db, dloc, dscale, ans, x, a, b, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            da * rt.scipy_stats.logpdf_dshape("beta", 0, x, loc, scale, a, b),
            db * rt.scipy_stats.logpdf_dshape("beta", 1, x, loc, scale, a, b),
            -dloc * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            dscale * rt.scipy_stats.logpdf_dscale("beta", x, loc, scale, a, b))

@vjp(stats.beta.pdf, elementwise=True)
def beta_pdf(g, ans, x, a, b, loc=0.0, scale=1.0):
    return (g * ans * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            g * ans * rt.scipy_stats.logpdf_dshape("beta", 0, x, loc, scale, a, b),
            g * ans * rt.scipy_stats.logpdf_dshape("beta", 1, x, loc, scale, a, b),
            -g * ans * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            g * ans * rt.scipy_stats.logpdf_dscale("beta", x, loc, scale, a, b))

@jvp(stats.beta.pdf)
def beta_pdf_jvp(dx, da, db, dloc, dscale, ans, x, a, b, loc=0.0, scale=1.0):
    return (dx * ans * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            da * ans * rt.scipy_stats.logpdf_dshape("beta", 0, x, loc, scale, a, b),
            db * ans * rt.scipy_stats.logpdf_dshape("beta", 1, x, loc, scale, a, b),
            -dloc * ans * rt.scipy_stats.logpdf_dx("beta", x, loc, scale, a, b),
            dscale * ans * rt.scipy_stats.logpdf_dscale("beta", x, loc, scale, a, b))

@vjp(stats.beta.cdf, elementwise=True)
def beta_cdf(g, ans, x, a, b, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.cdf_dx("beta", x, loc, scale, a, b),
            rt.scipy_stats.no_derivative("scipy.stats.beta.cdf", "a"),
            rt.scipy_stats.no_derivative("scipy.stats.beta.cdf", "b"),
            -g * rt.scipy_stats.cdf_dx("beta", x, loc, scale, a, b),
            g * rt.scipy_stats.cdf_dscale("beta", x, loc, scale, a, b))

@jvp(stats.beta.cdf)
def beta_cdf_jvp(dx, da, db, dloc, dscale, ans, x, a, b, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.cdf_dx("beta", x, loc, scale, a, b),
            rt.scipy_stats.no_derivative("scipy.stats.beta.cdf", "a"),
            rt.scipy_stats.no_derivative("scipy.stats.beta.cdf", "b"),
            -dloc * rt.scipy_stats.cdf_dx("beta", x, loc, scale, a, b),
            dscale * rt.scipy_stats.cdf_dscale("beta", x, loc, scale, a, b))

@vjp(stats.beta.logcdf, elementwise=True)
def beta_logcdf(g, ans, x, a, b, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logcdf_dx("beta", ans, x, loc, scale, a, b),
            rt.scipy_stats.no_derivative("scipy.stats.beta.logcdf", "a"),
            rt.scipy_stats.no_derivative("scipy.stats.beta.logcdf", "b"),
            -g * rt.scipy_stats.logcdf_dx("beta", ans, x, loc, scale, a, b),
            g * rt.scipy_stats.logcdf_dscale("beta", ans, x, loc, scale, a, b))

@jvp(stats.beta.logcdf)
def beta_logcdf_jvp(dx, da, db, dloc, dscale, ans, x, a, b, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logcdf_dx("beta", ans, x, loc, scale, a, b),
            rt.scipy_stats.no_derivative("scipy.stats.beta.logcdf", "a"),
            rt.scipy_stats.no_derivative("scipy.stats.beta.logcdf", "b"),
            -dloc * rt.scipy_stats.logcdf_dx("beta", ans, x, loc, scale, a, b),
            dscale * rt.scipy_stats.logcdf_dscale("beta", ans, x, loc, scale, a, b))

@vjp(stats.gamma.logpdf, elementwise=True)
def gamma_logpdf(g, ans, x, a, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            g * rt.scipy_stats.logpdf_dshape("gamma", 0, x, loc, scale, a),
            -g * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            g * rt.scipy_stats.logpdf_dscale("gamma", x, loc, scale, a))

@jvp(stats.gamma.logpdf)
def gamma_logpdf_jvp(dx, da, dloc, dscale, ans, x, a, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            da * rt.scipy_stats.logpdf_dshape("gamma", 0, x, loc, scale, a),
            -dloc * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            dscale * rt.scipy_stats.logpdf_dscale("gamma", x, loc, scale, a))

@vjp(stats.gamma.pdf, elementwise=True)
def gamma_pdf(g, ans, x, a, loc=0.0, scale=1.0):
    return (g * ans * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            g * ans * rt.scipy_stats.logpdf_dshape("gamma", 0, x, loc, scale, a),
            -g * ans * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            g * ans * rt.scipy_stats.logpdf_dscale("gamma", x, loc, scale, a))

@jvp(stats.gamma.pdf)
def gamma_pdf_jvp(dx, da, dloc, dscale, ans, x, a, loc=0.0, scale=1.0):
    return (dx * ans * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            da * ans * rt.scipy_stats.logpdf_dshape("gamma", 0, x, loc, scale, a),
            -dloc * ans * rt.scipy_stats.logpdf_dx("gamma", x, loc, scale, a),
            dscale * ans * rt.scipy_stats.logpdf_dscale("gamma", x, loc, scale, a))

@vjp(stats.gamma.cdf, elementwise=True)
def gamma_cdf(g, ans, x, a, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.cdf_dx("gamma", x, loc, scale, a),
            rt.scipy_stats.no_derivative("scipy.stats.gamma.cdf", "a"),
            -g * rt.scipy_stats.cdf_dx("gamma", x, loc, scale, a),
            g * rt.scipy_stats.cdf_dscale("gamma", x, loc, scale, a))

@jvp(stats.gamma.cdf)
def gamma_cdf_jvp(dx, da, dloc, dscale, ans, x, a, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.cdf_dx("gamma", x, loc, scale, a),
            rt.scipy_stats.no_derivative("scipy.stats.gamma.cdf", "a"),
            -dloc * rt.scipy_stats.cdf_dx("gamma", x, loc, scale, a),
            dscale * rt.scipy_stats.cdf_dscale("gamma", x, loc, scale, a))

@vjp(stats.gamma.logcdf, elementwise=True)
def gamma_logcdf(g, ans, x, a, loc=0.0, scale=1.0):
    return (g * rt.scipy_stats.logcdf_dx("gamma", ans, x, loc, scale, a),
            rt.scipy_stats.no_derivative("scipy.stats.gamma.logcdf", "a"),
            -g * rt.scipy_stats.logcdf_dx("gamma", ans, x, loc, scale, a),
            g * rt.scipy_stats.logcdf_dscale("gamma", ans, x, loc, scale, a))

@jvp(stats.gamma.logcdf)
def gamma_logcdf_jvp(dx, da, dloc, dscale, ans, x, a, loc=0.0, scale=1.0):
    return (dx * rt.scipy_stats.logcdf_dx("gamma", ans, x, loc, scale, a),
            rt.scipy_stats.no_derivative("scipy.stats.gamma.logcdf", "a"),
            -dloc * rt.scipy_stats.logcdf_dx("gamma", ans, x, loc, scale, a),
            dscale * rt.scipy_stats.logcdf_dscale("gamma", ans, x, loc, scale, a))


# -- poisson: k (and loc) are counts ----------------------------------------------------
@vjp(stats.poisson.logpmf, elementwise=True)
def poisson_logpmf(g, ans, k, mu, loc=0):
    return None, g * rt.scipy_stats.poisson_logpmf_dmu(k, mu, loc), None

@jvp(stats.poisson.logpmf)
def poisson_logpmf_jvp(dmu, ans, k, mu, loc=0):
    return dmu * rt.scipy_stats.poisson_logpmf_dmu(k, mu, loc)

@vjp(stats.poisson.pmf, elementwise=True)
def poisson_pmf(g, ans, k, mu, loc=0):
    return None, g * ans * rt.scipy_stats.poisson_logpmf_dmu(k, mu, loc), None

@jvp(stats.poisson.pmf)
def poisson_pmf_jvp(dmu, ans, k, mu, loc=0):
    return dmu * ans * rt.scipy_stats.poisson_logpmf_dmu(k, mu, loc)

@vjp(stats.poisson.cdf, elementwise=True)
def poisson_cdf(g, ans, k, mu, loc=0):
    return None, g * rt.scipy_stats.poisson_cdf_dmu(k, mu, loc), None

@jvp(stats.poisson.cdf)
def poisson_cdf_jvp(dmu, ans, k, mu, loc=0):
    return dmu * rt.scipy_stats.poisson_cdf_dmu(k, mu, loc)

@vjp(stats.poisson.logcdf, elementwise=True)
def poisson_logcdf(g, ans, k, mu, loc=0):
    return None, g * rt.scipy_stats.poisson_logcdf_dmu(ans, k, mu, loc), None

@jvp(stats.poisson.logcdf)
def poisson_logcdf_jvp(dmu, ans, k, mu, loc=0):
    return dmu * rt.scipy_stats.poisson_logcdf_dmu(ans, k, mu, loc)


# -- multivariate normal: points in the last axis of x; cov a matrix (its lower triangle is
# read), a vector (a diagonal) or a number ---------------------------------------------
@vjp(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf(g, ans, x, mean=None, cov=1.0, allow_singular=False):
    return (rt.scipy_stats.mvn_logpdf_dx(g, x, mean, cov),
            rt.scipy_stats.mvn_logpdf_dmean(g, x, mean, cov),
            rt.scipy_stats.mvn_logpdf_dcov(g, x, mean, cov), None)

@jvp(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf_jvp(dx, dmean, dcov, ans, x, mean=None, cov=1.0,
                                   allow_singular=False):
    return (rt.scipy_stats.mvn_logpdf_jvp_x(dx, ans, x, mean, cov),
            rt.scipy_stats.mvn_logpdf_jvp_mean(dmean, ans, x, mean, cov),
            rt.scipy_stats.mvn_logpdf_jvp_cov(dcov, ans, x, mean, cov))

@vjp(stats.multivariate_normal.pdf)
def multivariate_normal_pdf(g, ans, x, mean=None, cov=1.0, allow_singular=False):
    return (rt.scipy_stats.mvn_logpdf_dx(g * ans, x, mean, cov),
            rt.scipy_stats.mvn_logpdf_dmean(g * ans, x, mean, cov),
            rt.scipy_stats.mvn_logpdf_dcov(g * ans, x, mean, cov), None)

@jvp(stats.multivariate_normal.pdf)
def multivariate_normal_pdf_jvp(dx, dmean, dcov, ans, x, mean=None, cov=1.0,
                                allow_singular=False):
    return (ans * rt.scipy_stats.mvn_logpdf_jvp_x(dx, ans, x, mean, cov),
            ans * rt.scipy_stats.mvn_logpdf_jvp_mean(dmean, ans, x, mean, cov),
            ans * rt.scipy_stats.mvn_logpdf_jvp_cov(dcov, ans, x, mean, cov))


# -- dirichlet: components in the first axis of x (the last may be left out) ------------
@vjp(stats.dirichlet.logpdf)
def dirichlet_logpdf(g, ans, x, alpha):
    return (rt.scipy_stats.dirichlet_logpdf_dx(g, x, alpha),
            rt.scipy_stats.dirichlet_logpdf_dalpha(g, x, alpha))

@jvp(stats.dirichlet.logpdf)
def dirichlet_logpdf_jvp(dx, dalpha, ans, x, alpha):
    return (rt.scipy_stats.dirichlet_logpdf_jvp_x(dx, x, alpha),
            rt.scipy_stats.dirichlet_logpdf_jvp_alpha(dalpha, x, alpha))

@vjp(stats.dirichlet.pdf)
def dirichlet_pdf(g, ans, x, alpha):
    return (rt.scipy_stats.dirichlet_logpdf_dx(g * ans, x, alpha),
            rt.scipy_stats.dirichlet_logpdf_dalpha(g * ans, x, alpha))

@jvp(stats.dirichlet.pdf)
def dirichlet_pdf_jvp(dx, dalpha, ans, x, alpha):
    return (ans * rt.scipy_stats.dirichlet_logpdf_jvp_x(dx, x, alpha),
            ans * rt.scipy_stats.dirichlet_logpdf_jvp_alpha(dalpha, x, alpha))


REGISTRY.differentiate_through_module(formulas)
REGISTRY.nondifferentiable(formulas.no_derivative)          # raises
REGISTRY.nondifferentiable(formulas._drops_last)            # a test of shapes


# -- the private methods (stats.norm._logpdf(x)): as the public ones at loc 0 and scale 1,
# through runtime/scipy_stats_private.py, whose source srctrans reads
for _distribution, _method, _equivalent in scipy_stats_private.PRIVATE_METHODS:
    REGISTRY.compute_as(getattr(getattr(stats, _distribution), "_" + _method), _equivalent)

"""Derivative rules of ``scipy.special``: error functions and the normal distribution's
``ndtr`` and ``log_ndtr``, gamma functions, the logistic
function, log-sum-exp and softmax, and the information-theory functions.

Loaded on demand: the registry imports this module at the first look-up once the
user has imported ``scipy.special`` (``RuleRegistry.load_on_demand``), so
``import srctrans`` never imports SciPy, and SciPy stays an optional dependency.
The templates reach SciPy as ``rt.special`` (a lazy attribute of the runtime),
since generated code knows only ``np`` and ``rt``.
Each rule has its VJP and, right below it, its JVP. ``logsumexp`` takes
``axis``, ``b`` (of either sign), ``keepdims`` and ``return_sign`` (whose sign
is piecewise constant: a zero derivative); ``softmax`` and ``log_softmax`` take ``axis``. The Bessel
functions ``i0``, ``i1``, ``j0``, ``j1``, ``y0``, ``y1`` differentiate into each other.
"""

import numpy as np
import scipy.special as special

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


# -- error functions -------------------------------------------------------------
@vjp(special.erf, elementwise=True)
def erf(g, ans, x):
    return g * 1.1283791670955126 * np.exp(-x * x)          # 2 / sqrt(pi)

@jvp(special.erf)
def erf_jvp(dx, ans, x):
    return dx * 1.1283791670955126 * np.exp(-x * x)

@vjp(special.erfc, elementwise=True)
def erfc(g, ans, x):
    return -g * 1.1283791670955126 * np.exp(-x * x)

@jvp(special.erfc)
def erfc_jvp(dx, ans, x):
    return -dx * 1.1283791670955126 * np.exp(-x * x)

@vjp(special.ndtr, elementwise=True)
def ndtr(g, ans, x):
    return g * 0.3989422804014327 * np.exp(-0.5 * x * x)      # 1 / sqrt(2 pi)

@jvp(special.ndtr)
def ndtr_jvp(dx, ans, x):
    return dx * 0.3989422804014327 * np.exp(-0.5 * x * x)

@vjp(special.log_ndtr, elementwise=True)
def log_ndtr(g, ans, x):
    return g * np.exp(-0.5 * x * x - 0.9189385332046727 - ans)   # pdf / cdf, in logs

@jvp(special.log_ndtr)
def log_ndtr_jvp(dx, ans, x):
    return dx * np.exp(-0.5 * x * x - 0.9189385332046727 - ans)

@vjp(special.erfinv, elementwise=True)
def erfinv(g, ans, y):
    return g * 0.886226925452758 * np.exp(ans * ans)          # sqrt(pi) / 2

@jvp(special.erfinv)
def erfinv_jvp(dy, ans, y):
    return dy * 0.886226925452758 * np.exp(ans * ans)

@vjp(special.erfcinv, elementwise=True)
def erfcinv(g, ans, y):
    return -g * 0.886226925452758 * np.exp(ans * ans)

@jvp(special.erfcinv)
def erfcinv_jvp(dy, ans, y):
    return -dy * 0.886226925452758 * np.exp(ans * ans)

# -- gamma functions ----------------------------------------------------------------
@vjp(special.gamma, elementwise=True)
def gamma(g, ans, x):
    return g * ans * rt.special.digamma(x)

@jvp(special.gamma)
def gamma_jvp(dx, ans, x):
    return dx * ans * rt.special.digamma(x)

@vjp(special.gammaln, elementwise=True)
def gammaln(g, ans, x):
    return g * rt.special.digamma(x)

@jvp(special.gammaln)
def gammaln_jvp(dx, ans, x):
    return dx * rt.special.digamma(x)

# digamma' = polygamma(1, x), in float64 whatever x's dtype (as SciPy computes it); rt.polygamma
# writes it with SciPy's ufuncs, so it stays lazy on a Dask array
@vjp(special.digamma, elementwise=True)
def digamma(g, ans, x):
    return g * rt.polygamma(1, x)

@jvp(special.digamma)
def digamma_jvp(dx, ans, x):
    return dx * rt.polygamma(1, x)

@vjp(special.polygamma, elementwise=True)
def polygamma(g, ans, n, x):
    """The order ``n`` is an integer: no derivative."""
    return None, g * rt.polygamma(n + 1, x)

@jvp(special.polygamma)
def polygamma_jvp(dx, ans, n, x):
    return dx * rt.polygamma(n + 1, x)

@vjp(special.betaln, elementwise=True)
def betaln(g, ans, a, b):
    return (g * (rt.special.digamma(a) - rt.special.digamma(a + b)),
            g * (rt.special.digamma(b) - rt.special.digamma(a + b)))

@jvp(special.betaln)
def betaln_jvp(da, db, ans, a, b):
    return (da * (rt.special.digamma(a) - rt.special.digamma(a + b)),
            db * (rt.special.digamma(b) - rt.special.digamma(a + b)))

@vjp(special.beta, elementwise=True)
def beta(g, ans, a, b):
    return (g * ans * (rt.special.digamma(a) - rt.special.digamma(a + b)),
            g * ans * (rt.special.digamma(b) - rt.special.digamma(a + b)))

@jvp(special.beta)
def beta_jvp(da, db, ans, a, b):
    return (da * ans * (rt.special.digamma(a) - rt.special.digamma(a + b)),
            db * ans * (rt.special.digamma(b) - rt.special.digamma(a + b)))

# -- the logistic function -----------------------------------------------------------
@vjp(special.expit, elementwise=True)
def expit(g, ans, x):
    return g * ans * (1.0 - ans)

@jvp(special.expit)
def expit_jvp(dx, ans, x):
    return dx * ans * (1.0 - ans)

@vjp(special.logit, elementwise=True)
def logit(g, ans, x):
    return g / (x * (1.0 - x))

@jvp(special.logit)
def logit_jvp(dx, ans, x):
    return dx / (x * (1.0 - x))

@vjp(special.log_expit, elementwise=True)
def log_expit(g, ans, x):
    return g * rt.special.expit(-x)

@jvp(special.log_expit)
def log_expit_jvp(dx, ans, x):
    return dx * rt.special.expit(-x)

# -- x log y and entropies -----------------------------------------------------------
@vjp(special.xlogy, elementwise=True)
def xlogy(g, ans, x, y):
    return g * np.log(y), rt.zero_guard(g, g * x / y)

@jvp(special.xlogy)
def xlogy_jvp(dx, dy, ans, x, y):
    return dx * np.log(y), rt.zero_guard(dy, dy * x / y)

@vjp(special.xlog1py, elementwise=True)
def xlog1py(g, ans, x, y):
    return g * np.log1p(y), rt.zero_guard(g, g * x / (1.0 + y))

@jvp(special.xlog1py)
def xlog1py_jvp(dx, dy, ans, x, y):
    return dx * np.log1p(y), rt.zero_guard(dy, dy * x / (1.0 + y))

@vjp(special.entr, elementwise=True)
def entr(g, ans, x):
    return -g * (np.log(x) + 1.0)

@jvp(special.entr)
def entr_jvp(dx, ans, x):
    return -dx * (np.log(x) + 1.0)

@vjp(special.rel_entr, elementwise=True)
def rel_entr(g, ans, x, y):
    return g * (np.log(x / y) + 1.0), -g * x / y

@jvp(special.rel_entr)
def rel_entr_jvp(dx, dy, ans, x, y):
    return dx * (np.log(x / y) + 1.0), -dy * x / y

# -- log-sum-exp and softmax along axes -------------------------------------------------
# with weights b (of either sign) and return_sign
@vjp(special.logsumexp)
def logsumexp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return (rt.logsumexp_share(g, ans, a, axis, keepdims, return_sign) if b is None else
            rt.unbroadcast(rt.logsumexp_share(g, ans, a, axis, keepdims, return_sign) * b, a),
            None,
            None if b is None else
            rt.unbroadcast(rt.logsumexp_share(g, ans, a, axis, keepdims, return_sign), b),
            None, None)

@jvp(special.logsumexp)
def logsumexp_jvp(da, db, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return rt.logsumexp_jvp(da, db, ans, a, axis, b, keepdims, return_sign)

REGISTRY.returns_tuple(special.logsumexp)        # (log|sum|, sign) with return_sign=True

@vjp(special.softmax)
def softmax(g, ans, x, axis=None):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))

@jvp(special.softmax)
def softmax_jvp(dx, ans, x, axis=None):
    return ans * (dx - np.sum(dx * ans, axis=axis, keepdims=True))

@vjp(special.log_softmax)
def log_softmax(g, ans, x, axis=None):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)

@jvp(special.log_softmax)
def log_softmax_jvp(dx, ans, x, axis=None):
    return dx - np.sum(np.exp(ans) * dx, axis=axis, keepdims=True)


# -- Bessel functions: i0' = i1, j0' = -j1, y0' = -y1; the order-1 ones need f1(x) / x
# (rt.over_x: 1/2 at 0 for i1 and j1; y1 has a pole there)
@vjp(special.i0, elementwise=True)
def i0(g, ans, x):
    return g * rt.special.i1(x)

@jvp(special.i0)
def i0_jvp(dx, ans, x):
    return dx * rt.special.i1(x)

@vjp(special.i1, elementwise=True)
def i1(g, ans, x):
    return g * (rt.special.i0(x) - rt.over_x(ans, x))

@jvp(special.i1)
def i1_jvp(dx, ans, x):
    return dx * (rt.special.i0(x) - rt.over_x(ans, x))

@vjp(special.j0, elementwise=True)
def j0(g, ans, x):
    return -g * rt.special.j1(x)

@jvp(special.j0)
def j0_jvp(dx, ans, x):
    return -dx * rt.special.j1(x)

@vjp(special.j1, elementwise=True)
def j1(g, ans, x):
    return g * (rt.special.j0(x) - rt.over_x(ans, x))

@jvp(special.j1)
def j1_jvp(dx, ans, x):
    return dx * (rt.special.j0(x) - rt.over_x(ans, x))

@vjp(special.y0, elementwise=True)
def y0(g, ans, x):
    return -g * rt.special.y1(x)

@jvp(special.y0)
def y0_jvp(dx, ans, x):
    return -dx * rt.special.y1(x)

@vjp(special.y1, elementwise=True)
def y1(g, ans, x):
    return g * (rt.special.y0(x) - ans / x)

@jvp(special.y1)
def y1_jvp(dx, ans, x):
    return dx * (rt.special.y0(x) - ans / x)

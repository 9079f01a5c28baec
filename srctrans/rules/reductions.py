"""VJP rules of reductions along axes (``axis`` and ``keepdims`` everywhere).

Maximum and minimum share the cotangent equally among tied positions.
"""

import numpy as np

import runtime as rt
from srctrans.rules import REGISTRY

vjp = REGISTRY.vjp


@vjp(np.sum)
def sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.unreduce(g, a, axis, keepdims)

@vjp(np.mean)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.mean_grad(g, a, axis, keepdims)

@vjp(np.prod)
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.prod_grad(g, ans, a, axis, keepdims)

@vjp(np.var)
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.var_grad(g, a, axis, ddof, keepdims)

@vjp(np.std)
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.std_grad(g, ans, a, axis, ddof, keepdims)

@vjp(np.max, np.amax, np.min, np.amin)
def extremum(g, ans, a, axis=None, out=None, keepdims=False):
    return rt.extremum_grad(g, ans, a, axis, keepdims)

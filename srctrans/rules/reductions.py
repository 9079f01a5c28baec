"""Derivative rules of reductions along axes (``axis`` and ``keepdims`` everywhere).

Each reduction has a VJP rule and, right below it, its JVP. ``np.sum`` and
``np.mean`` are linear; maximum and minimum share the derivative equally
among tied positions, in both modes.
"""

import numpy as np

from srctrans import runtime as rt
from srctrans.runtime import stencils
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


@vjp(np.sum)
def sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.unreduce(g, a, axis, keepdims)

linear(np.sum)

@vjp(np.mean)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.mean_grad(g, a, axis, keepdims)

linear(np.mean)

@vjp(np.prod)
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.prod_grad(g, ans, a, axis, keepdims)

@jvp(np.prod)
def prod_jvp(da, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.prod_jvp(da, ans, a, axis, keepdims)

@vjp(np.var)
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.var_grad(g, a, axis, ddof, keepdims)

@jvp(np.var)
def var_jvp(da, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.var_jvp(da, a, axis, ddof, keepdims)

@vjp(np.std)
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.std_grad(g, ans, a, axis, ddof, keepdims)

@jvp(np.std)
def std_jvp(da, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.std_jvp(da, ans, a, axis, ddof, keepdims)

@vjp(np.max, np.amax, np.min, np.amin)
def extremum(g, ans, a, axis=None, out=None, keepdims=False):
    return rt.extremum_grad(g, ans, a, axis, keepdims)

@jvp(np.max, np.amax, np.min, np.amin)
def extremum_jvp(da, ans, a, axis=None, out=None, keepdims=False):
    return rt.extremum_jvp(da, ans, a, axis, keepdims)

# NaN never equals the extremum, so the extremum's rule skips NaNs as nanmax does
@vjp(np.nanmax, np.nanmin)
def nan_extremum(g, ans, a, axis=None, out=None, keepdims=False):
    return rt.extremum_grad(g, ans, a, axis, keepdims)

@jvp(np.nanmax, np.nanmin)
def nan_extremum_jvp(da, ans, a, axis=None, out=None, keepdims=False):
    return rt.extremum_jvp(da, ans, a, axis, keepdims)

@vjp(np.ptp)
def ptp(g, ans, a, axis=None, out=None, keepdims=False):
    return (rt.extremum_grad(g, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
            - rt.extremum_grad(g, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims))

@jvp(np.ptp)
def ptp_jvp(da, ans, a, axis=None, out=None, keepdims=False):
    return (rt.extremum_jvp(da, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
            - rt.extremum_jvp(da, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims))

# np.average, with weights (of a's shape, or 1-D along axis); returned=True is refused
@vjp(np.average)
def average(g, ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    return (rt.average_grad(g, a, axis, weights, returned, keepdims), None,
            rt.average_weights_grad(g, a, axis, weights, keepdims), None)

@jvp(np.average)
def average_jvp(da, dweights, ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    return rt.average_jvp(da, dweights, a, axis, weights, keepdims)

# NaNs are left out: they get no cotangent, and their tangents do not count
@vjp(np.nansum)
def nansum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, rt.unreduce(g, a, axis, keepdims))

@jvp(np.nansum)
def nansum_jvp(da, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.sum(np.where(np.isnan(a), 0.0, da), axis=axis, keepdims=keepdims)

@vjp(np.nanprod)
def nanprod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.where(np.isnan(a), 0.0,
                    rt.prod_grad(g, ans, np.where(np.isnan(a), 1.0, a), axis, keepdims))

@jvp(np.nanprod)
def nanprod_jvp(da, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return rt.prod_jvp(np.where(np.isnan(a), 0.0, da), ans, np.where(np.isnan(a), 1.0, a), axis,
                       keepdims)

@vjp(np.nanmean)
def nanmean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, rt.unreduce(g, a, axis, keepdims)
                    / np.sum(~np.isnan(a), axis=axis, keepdims=True))

@jvp(np.nanmean)
def nanmean_jvp(da, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.nanmean(np.where(np.isnan(a), np.nan, da), axis=axis, keepdims=keepdims)


# -- scans and traces: linear in the array, transposed by runtime/scans.py ----
@vjp(np.cumsum)
def cumsum(g, ans, a, axis=None, dtype=None, out=None):
    return rt.cumsum_grad(g, a, axis)

linear(np.cumsum)

@vjp(np.diff)
def diff(g, ans, a, n=1, axis=-1):
    return rt.diff_grad(g, a, n, axis)

linear(np.diff)

# np.gradient: differentiated as runtime/stencils.py computes it (the same values, in plain
# NumPy), so its derivatives in f and in the spacings, in both modes and to any order, are
# srctrans's derivatives of that source
REGISTRY.compute_as(np.gradient, stencils.gradient)
REGISTRY.differentiate_through_module(stencils)

@vjp(np.trace)
def trace(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return rt.trace_grad(g, a, offset, axis1, axis2)

linear(np.trace)


# cumprod without dividing by the entries (exact where they are zero)
@vjp(np.cumprod)
def cumprod(g, ans, a, axis=None, dtype=None, out=None):
    return rt.cumprod_grad(g, a, axis)

@jvp(np.cumprod)
def cumprod_jvp(da, ans, a, axis=None, dtype=None, out=None):
    return rt.cumprod_jvp(da, a, axis)

@vjp(np.nanvar)
def nanvar(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.nanvar_grad(g, a, axis, ddof, keepdims)

@jvp(np.nanvar)
def nanvar_jvp(da, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.nanvar_jvp(da, a, axis, ddof, keepdims)

# the standard deviation's cotangent is the variance's over 2 std (zero where std is zero)
@vjp(np.nanstd)
def nanstd(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.nanvar_grad(rt.ratio_or_zero(g, 2.0 * ans), a, axis, ddof, keepdims)

@jvp(np.nanstd)
def nanstd_jvp(da, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return rt.ratio_or_zero(rt.nanvar_jvp(da, a, axis, ddof, keepdims), 2.0 * ans)

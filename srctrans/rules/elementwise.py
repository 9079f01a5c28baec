"""Derivative rules of NumPy's elementwise functions (ufuncs and friends).

Each function has a VJP rule and, right below it, its JVP: a template, or a
``linear(...)`` line for the functions linear in their argument. Both state
the pointwise derivative; ``elementwise=True`` tells the reverse generator to
sum cotangents back over broadcast axes.

Rules whose derivative has singular points (a division by zero, the square
root of a negative number) wrap their product in ``rt.zero_guard``, so that
a zero cotangent or tangent gives zero there instead of NaN (docs/rules.md,
"Zero cotangents stay zero"). Rules that are finite wherever their inputs
are finite (``exp``, ``tan``, ``multiply``...) need no guard.
"""

import builtins

import math

import numpy as np

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear

# -- arithmetic --------------------------------------------------------------
@vjp(np.add, elementwise=True)
def add(g, ans, x, y):
    return g, g

@jvp(np.add)
def add_jvp(dx, dy, ans, x, y):
    return dx, dy

@vjp(np.subtract, elementwise=True)
def subtract(g, ans, x, y):
    return g, -g

@jvp(np.subtract)
def subtract_jvp(dx, dy, ans, x, y):
    return dx, -dy

@vjp(np.multiply, elementwise=True)
def multiply(g, ans, x, y):
    return g * y, g * x

@jvp(np.multiply)
def multiply_jvp(dx, dy, ans, x, y):
    return dx * y, x * dy

@vjp(np.divide, elementwise=True)
def divide(g, ans, x, y):
    return rt.zero_guard(g, g / y), -rt.zero_guard(g, g * ans / y)

@jvp(np.divide)
def divide_jvp(dx, dy, ans, x, y):
    return rt.zero_guard(dx, dx / y), -rt.zero_guard(dy, dy * ans / y)

@vjp(np.power, np.float_power, math.pow, elementwise=True)
def power(g, ans, x, y):
    return (rt.zero_guard(g, g * rt.power_base_factor(x, y)),
            rt.zero_guard(g, g * rt.power_exponent_factor(ans, x)))

@jvp(np.power, np.float_power, math.pow)
def power_jvp(dx, dy, ans, x, y):
    return (rt.zero_guard(dx, dx * rt.power_base_factor(x, y)),
            rt.zero_guard(dy, dy * rt.power_exponent_factor(ans, x)))

@vjp(np.remainder, elementwise=True)
def remainder(g, ans, x, y):
    return g, -rt.zero_guard(g, g * np.floor_divide(x, y))

@jvp(np.remainder)
def remainder_jvp(dx, dy, ans, x, y):
    return dx, -rt.zero_guard(dy, dy * np.floor_divide(x, y))

@vjp(np.negative, elementwise=True)
def negative(g, ans, x):
    return -g

linear(np.negative)

@vjp(np.positive, elementwise=True)
def positive(g, ans, x):
    return g

linear(np.positive)

@vjp(np.square, elementwise=True)
def square(g, ans, x):
    return g * 2 * x

@jvp(np.square)
def square_jvp(dx, ans, x):
    return dx * 2 * x

@vjp(np.sqrt, math.sqrt, elementwise=True)
def sqrt(g, ans, x):
    return rt.zero_guard(g, g * 0.5 / ans)

@jvp(np.sqrt, math.sqrt)
def sqrt_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx * 0.5 / ans)

@vjp(np.reciprocal, elementwise=True)
def reciprocal(g, ans, x):
    return -rt.zero_guard(g, g * ans * ans)

@jvp(np.reciprocal)
def reciprocal_jvp(dx, ans, x):
    return -rt.zero_guard(dx, dx * ans * ans)

# |z| of a complex z is not holomorphic: its factor is conj(z) / |z| (runtime/complex_numbers.py)
@vjp(np.absolute, np.fabs, builtins.abs, math.fabs, elementwise=True)
def absolute(g, ans, x):
    return rt.abs_grad(g, x)

@jvp(np.absolute, np.fabs, builtins.abs, math.fabs)
def absolute_jvp(dx, ans, x):
    return rt.abs_jvp(dx, x)

# -- exponentials and logarithms ---------------------------------------------
@vjp(np.exp, math.exp, elementwise=True)
def exp(g, ans, x):
    return g * ans

@jvp(np.exp, math.exp)
def exp_jvp(dx, ans, x):
    return dx * ans

@vjp(np.expm1, math.expm1, elementwise=True)
def expm1(g, ans, x):
    return g * (ans + 1)

@jvp(np.expm1, math.expm1)
def expm1_jvp(dx, ans, x):
    return dx * (ans + 1)

@vjp(np.exp2, elementwise=True)
def exp2(g, ans, x):
    return g * ans * rt.LN2

@jvp(np.exp2)
def exp2_jvp(dx, ans, x):
    return dx * ans * rt.LN2

@vjp(np.log, math.log, elementwise=True)
def log(g, ans, x):
    return rt.zero_guard(g, g / x)

@jvp(np.log, math.log)
def log_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / x)

@vjp(np.log1p, math.log1p, elementwise=True)
def log1p(g, ans, x):
    return rt.zero_guard(g, g / (1 + x))

@jvp(np.log1p, math.log1p)
def log1p_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / (1 + x))

@vjp(np.log2, math.log2, elementwise=True)
def log2(g, ans, x):
    return rt.zero_guard(g, g / (x * rt.LN2))

@jvp(np.log2, math.log2)
def log2_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / (x * rt.LN2))

@vjp(np.log10, math.log10, elementwise=True)
def log10(g, ans, x):
    return rt.zero_guard(g, g / (x * rt.LN10))

@jvp(np.log10, math.log10)
def log10_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / (x * rt.LN10))

@vjp(np.logaddexp, elementwise=True)
def logaddexp(g, ans, x, y):
    return g * np.exp(x - ans), g * np.exp(y - ans)

@jvp(np.logaddexp)
def logaddexp_jvp(dx, dy, ans, x, y):
    return dx * np.exp(x - ans), dy * np.exp(y - ans)

# -- trigonometric and hyperbolic --------------------------------------------
@vjp(np.sin, math.sin, elementwise=True)
def sin(g, ans, x):
    return g * np.cos(x)

@jvp(np.sin, math.sin)
def sin_jvp(dx, ans, x):
    return dx * np.cos(x)

@vjp(np.cos, math.cos, elementwise=True)
def cos(g, ans, x):
    return -g * np.sin(x)

@jvp(np.cos, math.cos)
def cos_jvp(dx, ans, x):
    return -dx * np.sin(x)

@vjp(np.tan, math.tan, elementwise=True)
def tan(g, ans, x):
    return g * (1 + ans * ans)

@jvp(np.tan, math.tan)
def tan_jvp(dx, ans, x):
    return dx * (1 + ans * ans)

@vjp(np.arcsin, math.asin, elementwise=True)
def arcsin(g, ans, x):
    return rt.zero_guard(g, g / np.sqrt(1 - x * x))

@jvp(np.arcsin, math.asin)
def arcsin_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / np.sqrt(1 - x * x))

@vjp(np.arccos, math.acos, elementwise=True)
def arccos(g, ans, x):
    return -rt.zero_guard(g, g / np.sqrt(1 - x * x))

@jvp(np.arccos, math.acos)
def arccos_jvp(dx, ans, x):
    return -rt.zero_guard(dx, dx / np.sqrt(1 - x * x))

@vjp(np.arctan, math.atan, elementwise=True)
def arctan(g, ans, x):
    return g / (1 + x * x)

@jvp(np.arctan, math.atan)
def arctan_jvp(dx, ans, x):
    return dx / (1 + x * x)

@vjp(np.arctan2, math.atan2, elementwise=True)
def arctan2(g, ans, y, x):
    return rt.zero_guard(g, g * x / (x * x + y * y)), -rt.zero_guard(g, g * y / (x * x + y * y))

@jvp(np.arctan2, math.atan2)
def arctan2_jvp(dy, dx, ans, y, x):
    return rt.zero_guard(dy, dy * x / (x * x + y * y)), -rt.zero_guard(dx, dx * y / (x * x + y * y))

@vjp(np.sinh, math.sinh, elementwise=True)
def sinh(g, ans, x):
    return g * np.cosh(x)

@jvp(np.sinh, math.sinh)
def sinh_jvp(dx, ans, x):
    return dx * np.cosh(x)

@vjp(np.cosh, math.cosh, elementwise=True)
def cosh(g, ans, x):
    return g * np.sinh(x)

@jvp(np.cosh, math.cosh)
def cosh_jvp(dx, ans, x):
    return dx * np.sinh(x)

@vjp(np.tanh, math.tanh, elementwise=True)
def tanh(g, ans, x):
    return g * (1 - ans * ans)

@jvp(np.tanh, math.tanh)
def tanh_jvp(dx, ans, x):
    return dx * (1 - ans * ans)

@vjp(np.arcsinh, math.asinh, elementwise=True)
def arcsinh(g, ans, x):
    return g / np.sqrt(x * x + 1)

@jvp(np.arcsinh, math.asinh)
def arcsinh_jvp(dx, ans, x):
    return dx / np.sqrt(x * x + 1)

@vjp(np.arccosh, math.acosh, elementwise=True)
def arccosh(g, ans, x):
    return rt.zero_guard(g, g / np.sinh(ans))

@jvp(np.arccosh, math.acosh)
def arccosh_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / np.sinh(ans))

@vjp(np.arctanh, math.atanh, elementwise=True)
def arctanh(g, ans, x):
    return rt.zero_guard(g, g / (1 - x * x))

@jvp(np.arctanh, math.atanh)
def arctanh_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / (1 - x * x))

@vjp(np.hypot, math.hypot, elementwise=True)
def hypot(g, ans, x1, x2):
    return rt.zero_guard(g, g * x1 / ans), rt.zero_guard(g, g * x2 / ans)

@jvp(np.hypot, math.hypot)
def hypot_jvp(dx1, dx2, ans, x1, x2):
    return rt.zero_guard(dx1, dx1 * x1 / ans), rt.zero_guard(dx2, dx2 * x2 / ans)

@vjp(np.logaddexp2, elementwise=True)
def logaddexp2(g, ans, x1, x2):
    return g * np.exp2(x1 - ans), g * np.exp2(x2 - ans)

@jvp(np.logaddexp2)
def logaddexp2_jvp(dx1, dx2, ans, x1, x2):
    return dx1 * np.exp2(x1 - ans), dx2 * np.exp2(x2 - ans)

@vjp(np.cbrt, elementwise=True)
def cbrt(g, ans, x):
    return rt.zero_guard(g, g / (3 * ans * ans))

@jvp(np.cbrt)
def cbrt_jvp(dx, ans, x):
    return rt.zero_guard(dx, dx / (3 * ans * ans))

# degrees and radians scale by a constant: each is its own transpose
@vjp(np.deg2rad, elementwise=True)
def deg2rad(g, ans, x):
    return np.deg2rad(g)

@vjp(np.radians, elementwise=True)
def radians(g, ans, x):
    return np.radians(g)

@vjp(np.rad2deg, elementwise=True)
def rad2deg(g, ans, x):
    return np.rad2deg(g)

@vjp(np.degrees, elementwise=True)
def degrees(g, ans, x):
    return np.degrees(g)

linear(np.deg2rad, np.radians, np.rad2deg, np.degrees)

@vjp(np.fmod, elementwise=True)
def fmod(g, ans, x1, x2):
    """Piecewise: ``x1 - trunc(x1 / x2) * x2``."""
    return g, -rt.zero_guard(g, g * np.trunc(np.true_divide(x1, x2)))

@jvp(np.fmod)
def fmod_jvp(dx1, dx2, ans, x1, x2):
    return dx1, -rt.zero_guard(dx2, dx2 * np.trunc(np.true_divide(x1, x2)))

@vjp(np.nan_to_num, elementwise=True)
def nan_to_num(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and infinities become constants; finite values (or parts) pass unchanged."""
    return rt.finite_parts(g, x)

@jvp(np.nan_to_num)
def nan_to_num_jvp(dx, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return rt.finite_parts(dx, x)

# -- selection ---------------------------------------------------------------
@vjp(np.maximum, elementwise=True)
def maximum(g, ans, x, y):
    return g * rt.tie_weight(x, y), g * rt.tie_weight(y, x)

@jvp(np.maximum)
def maximum_jvp(dx, dy, ans, x, y):
    return dx * rt.tie_weight(x, y), dy * rt.tie_weight(y, x)

@vjp(np.minimum, elementwise=True)
def minimum(g, ans, x, y):
    return g * rt.tie_weight(y, x), g * rt.tie_weight(x, y)

@jvp(np.minimum)
def minimum_jvp(dx, dy, ans, x, y):
    return dx * rt.tie_weight(y, x), dy * rt.tie_weight(x, y)

@vjp(np.clip, elementwise=True)
def clip(g, ans, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """NumPy 2.1 also spells the bounds ``min=`` and ``max=``."""
    return (g * rt.clip_mask(a, a_min, a_max, min, max), g * (a < a_min), g * (a > a_max), None,
            g * (a < min), g * (a > max))

@jvp(np.clip)
def clip_jvp(da, da_min, da_max, dmin, dmax, ans, a, a_min=None, a_max=None, out=None, *,
             min=None, max=None):
    return (da * rt.clip_mask(a, a_min, a_max, min, max), da_min * (a < a_min),
            da_max * (a > a_max), dmin * (a < min), dmax * (a > max))

@vjp(np.where, elementwise=True)
def where(g, ans, condition, x, y):
    return None, np.where(condition, g, 0), np.where(condition, 0, g)

@jvp(np.where)
def where_jvp(dx, dy, ans, condition, x, y):
    return np.where(condition, dx, dy)

# -- the guard itself ----------------------------------------------------------
# Derivatives of derivatives (a Hessian) differentiate generated gradients,
# which call rt.zero_guard(v, value). Its result is ``value`` except where it
# repaired an entry (``v == 0`` and ``value`` not finite) to the constant 0;
# ``v`` only selects. Selecting, not multiplying by a mask, keeps 0 * inf out.
@vjp(rt.zero_guard, elementwise=True)
def zero_guard(g, ans, v, value):
    return None, np.where(np.isfinite(value) | np.not_equal(v, 0), g, 0)

@jvp(rt.zero_guard)
def zero_guard_jvp(dvalue, ans, v, value):
    return np.where(np.isfinite(value) | np.not_equal(v, 0), dvalue, 0)

# its whole sum (optimise/guarded_sums.py), differentiated when a Hessian reads the fused
# gradient: the guard's, then the sum's
@vjp(rt.zero_guard_sum)
def zero_guard_sum(g, ans, v, value):
    return None, np.where(np.isfinite(value) | np.not_equal(v, 0), g, 0)

@jvp(rt.zero_guard_sum)
def zero_guard_sum_jvp(dvalue, ans, v, value):
    return np.where(np.isfinite(value) | np.not_equal(v, 0), dvalue, 0).sum()


# fmax/fmin: as maximum/minimum, but a NaN loses: the other argument gets the gradient
@vjp(np.fmax, elementwise=True)
def fmax(g, ans, x1, x2):
    return g * rt.nan_tie_weight(x1, x2), g * rt.nan_tie_weight(x2, x1)

@jvp(np.fmax)
def fmax_jvp(dx1, dx2, ans, x1, x2):
    return dx1 * rt.nan_tie_weight(x1, x2), dx2 * rt.nan_tie_weight(x2, x1)

@vjp(np.fmin, elementwise=True)
def fmin(g, ans, x1, x2):
    return g * rt.nan_tie_weight(-x1, -x2), g * rt.nan_tie_weight(-x2, -x1)

@jvp(np.fmin)
def fmin_jvp(dx1, dx2, ans, x1, x2):
    return dx1 * rt.nan_tie_weight(-x1, -x2), dx2 * rt.nan_tie_weight(-x2, -x1)

@vjp(np.sinc, elementwise=True)
def sinc(g, ans, x):
    return g * rt.sinc_slope(x, ans)

@jvp(np.sinc)
def sinc_jvp(dx, ans, x):
    return dx * rt.sinc_slope(x, ans)


# math's error and gamma functions on Python floats (digamma: rt.digamma, plain Python
# that srctrans differentiates again for second derivatives)
@vjp(math.erf)
def math_erf(g, ans, x):
    return g * 1.1283791670955126 * np.exp(-x * x)          # 2 / sqrt(pi)

@jvp(math.erf)
def math_erf_jvp(dx, ans, x):
    return dx * 1.1283791670955126 * np.exp(-x * x)

@vjp(math.erfc)
def math_erfc(g, ans, x):
    return -g * 1.1283791670955126 * np.exp(-x * x)

@jvp(math.erfc)
def math_erfc_jvp(dx, ans, x):
    return -dx * 1.1283791670955126 * np.exp(-x * x)

@vjp(math.lgamma)
def math_lgamma(g, ans, x):
    return g * rt.digamma(x)

@jvp(math.lgamma)
def math_lgamma_jvp(dx, ans, x):
    return dx * rt.digamma(x)

@vjp(math.gamma)
def math_gamma(g, ans, x):
    return g * ans * rt.digamma(x)

@jvp(math.gamma)
def math_gamma_jvp(dx, ans, x):
    return dx * ans * rt.digamma(x)

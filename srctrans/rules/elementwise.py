"""VJP rules of NumPy's elementwise functions (ufuncs and friends).

Each rule states the pointwise derivative; ``elementwise=True`` tells the
generator to sum cotangents back over broadcast axes.

Rules whose derivative has singular points (a division by zero, the square
root of a negative number) wrap their product in ``rt.zero_guard``, so that
a zero cotangent gives zero there instead of NaN (docs/rules.md, "Zero
cotangents stay zero"). Rules that are finite wherever their inputs are
finite (``exp``, ``tan``, ``multiply``...) need no guard.
"""

import builtins

import numpy as np

import runtime as rt
from srctrans.rules import REGISTRY

vjp = REGISTRY.vjp

# -- arithmetic --------------------------------------------------------------
@vjp(np.add, elementwise=True)
def add(g, ans, x, y):
    return g, g

@vjp(np.subtract, elementwise=True)
def subtract(g, ans, x, y):
    return g, -g

@vjp(np.multiply, elementwise=True)
def multiply(g, ans, x, y):
    return g * y, g * x

@vjp(np.divide, elementwise=True)
def divide(g, ans, x, y):
    return rt.zero_guard(g, g / y), -rt.zero_guard(g, g * ans / y)

@vjp(np.power, elementwise=True)
def power(g, ans, x, y):
    return (rt.zero_guard(g, g * rt.power_base_factor(x, y)),
            rt.zero_guard(g, g * rt.power_exponent_factor(ans, x)))

@vjp(np.remainder, elementwise=True)
def remainder(g, ans, x, y):
    return g, -rt.zero_guard(g, g * np.floor_divide(x, y))

@vjp(np.negative, elementwise=True)
def negative(g, ans, x):
    return -g

@vjp(np.positive, elementwise=True)
def positive(g, ans, x):
    return g

@vjp(np.square, elementwise=True)
def square(g, ans, x):
    return g * 2 * x

@vjp(np.sqrt, elementwise=True)
def sqrt(g, ans, x):
    return rt.zero_guard(g, g * 0.5 / ans)

@vjp(np.reciprocal, elementwise=True)
def reciprocal(g, ans, x):
    return -rt.zero_guard(g, g * ans * ans)

@vjp(np.absolute, builtins.abs, elementwise=True)
def absolute(g, ans, x):
    return g * np.sign(x)

# -- exponentials and logarithms ---------------------------------------------
@vjp(np.exp, elementwise=True)
def exp(g, ans, x):
    return g * ans

@vjp(np.expm1, elementwise=True)
def expm1(g, ans, x):
    return g * (ans + 1)

@vjp(np.exp2, elementwise=True)
def exp2(g, ans, x):
    return g * ans * rt.LN2

@vjp(np.log, elementwise=True)
def log(g, ans, x):
    return rt.zero_guard(g, g / x)

@vjp(np.log1p, elementwise=True)
def log1p(g, ans, x):
    return rt.zero_guard(g, g / (1 + x))

@vjp(np.log2, elementwise=True)
def log2(g, ans, x):
    return rt.zero_guard(g, g / (x * rt.LN2))

@vjp(np.log10, elementwise=True)
def log10(g, ans, x):
    return rt.zero_guard(g, g / (x * rt.LN10))

@vjp(np.logaddexp, elementwise=True)
def logaddexp(g, ans, x, y):
    return g * np.exp(x - ans), g * np.exp(y - ans)

# -- trigonometric and hyperbolic --------------------------------------------
@vjp(np.sin, elementwise=True)
def sin(g, ans, x):
    return g * np.cos(x)

@vjp(np.cos, elementwise=True)
def cos(g, ans, x):
    return -g * np.sin(x)

@vjp(np.tan, elementwise=True)
def tan(g, ans, x):
    return g * (1 + ans * ans)

@vjp(np.arcsin, elementwise=True)
def arcsin(g, ans, x):
    return rt.zero_guard(g, g / np.sqrt(1 - x * x))

@vjp(np.arccos, elementwise=True)
def arccos(g, ans, x):
    return -rt.zero_guard(g, g / np.sqrt(1 - x * x))

@vjp(np.arctan, elementwise=True)
def arctan(g, ans, x):
    return g / (1 + x * x)

@vjp(np.arctan2, elementwise=True)
def arctan2(g, ans, y, x):
    return rt.zero_guard(g, g * x / (x * x + y * y)), -rt.zero_guard(g, g * y / (x * x + y * y))

@vjp(np.sinh, elementwise=True)
def sinh(g, ans, x):
    return g * np.cosh(x)

@vjp(np.cosh, elementwise=True)
def cosh(g, ans, x):
    return g * np.sinh(x)

@vjp(np.tanh, elementwise=True)
def tanh(g, ans, x):
    return g * (1 - ans * ans)

@vjp(np.arcsinh, elementwise=True)
def arcsinh(g, ans, x):
    return g / np.sqrt(x * x + 1)

@vjp(np.arccosh, elementwise=True)
def arccosh(g, ans, x):
    return rt.zero_guard(g, g / np.sqrt(x * x - 1))

@vjp(np.arctanh, elementwise=True)
def arctanh(g, ans, x):
    return rt.zero_guard(g, g / (1 - x * x))

# -- selection ---------------------------------------------------------------
@vjp(np.maximum, elementwise=True)
def maximum(g, ans, x, y):
    return g * rt.tie_weight(x, y), g * rt.tie_weight(y, x)

@vjp(np.minimum, elementwise=True)
def minimum(g, ans, x, y):
    return g * rt.tie_weight(y, x), g * rt.tie_weight(x, y)

@vjp(np.clip, elementwise=True)
def clip(g, ans, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """NumPy 2.1 also spells the bounds ``min=`` and ``max=``."""
    return (g * rt.clip_mask(a, a_min, a_max, min, max), g * (a < a_min), g * (a > a_max), None,
            g * (a < min), g * (a > max))

@vjp(np.where, elementwise=True)
def where(g, ans, condition, x, y):
    return None, np.where(condition, g, 0), np.where(condition, 0, g)

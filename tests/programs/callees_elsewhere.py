"""Callers of helpers that live in another module.

srctrans inlines the small helpers of a function's own module into its derivative
(``srctrans/normalize/callees.py``); a helper of another module is built on its own, and
the caller's derivative calls its forward and backward passes. The tests of that path
(its builds, its messages, its specialisation) use these callers.
"""

import numpy as np

from programs import basic, composed, guarded


def full_loss(x, W, b, y0):
    y = basic.layer(x, W, b)
    return basic.mse(y, y0)


def calls_counts(x):               # a callee that cannot be specialised
    return guarded._counts(x) * 2.0


def picked_products(z, b, picked):
    return np.sum(z[picked] * b)



def calls_helper(x, W):
    return np.sum(composed.dense_relu(x, W, 0.5) * x[:, :1])


def clipped_or_scaled(r, c):       # a test of its argument's value, which its caller computes
    if c > 0.0:
        return np.clip(r, -c, c)
    return r * 2.0


def layer_of_scaled(x, W, b, y0):  # the callee's cotangent of x * x has its shape
    y = basic.layer(x * x, W, b)
    return np.sum(y * y0)


def through_guarded_helper(x):     # guarded._helper: rebinding it, or reloading guarded, counts
    return np.sum(guarded._helper(x) * x)

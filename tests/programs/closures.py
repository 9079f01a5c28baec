"""Functions defined inside the differentiated function and passed to st.grad or st.jvp: the
nested derivatives of closures (tests/test_real_code.py)."""

import numpy as np
import srctrans as st


def inner(x, y):
    return np.sum(np.sin(x * y))


def gradient_penalty(x):
    """The squared norm of a gradient in y of a function closing over x."""
    def h(y):
        return inner(x, y)
    g = st.grad(h)(x * 2.0)
    return np.sum(g * g)


def gradient_penalty_by_hand(x):
    y = x * 2.0
    g = x * np.cos(x * y)
    return np.sum(g * g)


def two_arguments(x, s):
    def h(a, b):
        return inner(a * s, b)
    ga, gb = st.grad(h, wrt=(0, 1))(x, x + 1.0)
    return np.sum(ga * gb)


def directional(x):
    def h(y):
        return inner(x, y)
    _, t = st.jvp(h, (x,), (np.ones_like(x),))
    return t


def with_defaults(x):
    def h(y, scale=2.0):
        return inner(x, y) * scale
    return np.sum(st.grad(h)(x))

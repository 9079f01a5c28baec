"""One function per supported construct of the straight-line language (test_language.py)."""

import numpy as np

SCALE = 1.5                      # a global read as a constant
OFFSETS = np.array([0.5, -1.0, 2.0])


def assign(x, y):
    a = x * y
    b = a + x
    return b


def unpack_tuple(x, y):
    a, b = x * y, x - y
    return a * b


def unpack_nested(x, y):
    a, (b, c) = x * y, (np.sin(x), y * 2.0)
    return a * b + c


def unpack_from_helper(x, y):
    s, d = sum_diff(x, y)
    return s * d


def operators(x, y):
    a = x + y
    b = x - y
    c = a * b
    d = c / (y * y + 1.0)
    e = d ** 2
    f = e ** 0.5 + x ** y
    return -f + (+a)


def matmul(a, b):
    return a @ b


def comparisons(x, y):
    bigger = x > y
    same = x == y
    return np.where(bigger, x * x, y) + np.where(same, 0.0, x) + (x <= 0.0) * x


def numpy_calls(x, y):
    a = np.exp(np.sin(x)) * np.log(y)
    b = np.maximum(a, 0.1) + np.sqrt(y)
    return np.sum(np.tanh(b) * np.cos(x), axis=0)


def methods_and_attributes(x, y):
    a = x.T
    b = a.sum(axis=0)
    c = x.reshape(-1)
    d = x.dot(y)
    return b * 2.0 + c.sum() + d.sum() + x.mean()


def keyword_arguments(x, y):
    a = np.sum(x * y, axis=1, keepdims=True)
    return np.mean(a * x, axis=0)


def default_arguments(x, y=2.0, power=3):
    return x ** power * y


def calls_helper(x, y):
    a = helper_scale(x, y)
    return a * a


def calls_helper_keywords(x, y):
    a = helper_defaults(x)
    b = helper_defaults(x, factor=y)
    c = helper_defaults(y, 0.5, offset=x)
    return a + b * c


def calls_helper_twice(x, y):
    a = helper_scale(x, y)
    b = helper_scale(a, x)
    return a + b


def calls_helper_of_helper(x, y):
    return helper_outer(x, y) * x


def calls_helper_tuple(x, y):
    s, d = sum_diff(x, y)
    p, q = sum_diff(s, d)
    return p * q + s


def indexes_helper_tuple(x, y):
    p = sum_diff(x, y)
    return p[0] * p[1]


def reads_globals(x):
    return SCALE * x + OFFSETS * x * x


def make_scaled(factor, shift):
    def scaled(x):
        return factor * np.sin(x) + shift * x * x
    return scaled


def int_and_bool(x, n, flag):
    a = x ** n
    b = a * flag
    return b + x * (n + 1)


def reassign(x, h):
    h = np.tanh(h * x)
    h = np.tanh(h * x)
    h = h * h + x
    return h


def augmented(x, y):
    a = x * 1.0
    a += y
    a *= x
    a -= y * 2.0
    a /= y
    a **= 2
    return a


# -- helpers ------------------------------------------------------------------

def sum_diff(x, y):
    return x + y, x - y


def helper_scale(x, y):
    return x * np.exp(y)


def helper_defaults(x, factor=2.0, offset=1.0):
    return factor * x * x + offset


def helper_inner(x):
    return np.sin(x) * x


def helper_outer(x, y):
    return helper_inner(x * y) + helper_inner(y)


def make_rebindable(w):
    """A function reading the closure variable ``w``, and a setter that rebinds it."""
    def weighted(x):
        return w * x * x

    def set_w(value):
        nonlocal w
        w = value
    return weighted, set_w


def helper_cube(x, y):
    return x * x * x * y

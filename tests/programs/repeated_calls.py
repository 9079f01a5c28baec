"""Functions called again and again with the same shapes: the short path for repeated calls."""

import numpy as np


def scaled_square_sum(x, w):
    return np.sum(helper(x) * w)


def helper(x):
    return 2.0 * x * x


def other_helper(x):
    return x * x * x


def with_default(x, c=2.0):
    return np.sum(c * x * x)


def with_keyword_default(x, *, c=2.0):
    return np.sum(c * x * x)


def power_sum(x, n):
    return np.sum(x ** n)


def transposed(x, w):
    # the gradient is w.T, a view of an argument: it must come back as a fresh array
    return np.sum(x.T * w)


def scalar_product(a, b):
    return a * b * b


def make_with_helper(f):
    """A function calling the closure variable ``f``, and a setter that rebinds it."""
    def calls(x):
        return np.sum(f(x))

    def set_f(g):
        nonlocal f
        f = g
    return calls, set_f


def weighted_sum(x, w):
    # the gradient is w: its dtype is w's, which the full path converts to x's
    return np.sum(x * w)


def positive_log(x):
    assert np.all(x > 0.0), "x must be positive"
    return np.sum(np.log(x))


class Layer:                   # a model object: its methods' gradients take the short path too
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W + self.b) ** 2)


class Slotted:                 # attributes in __slots__: no guard is written for it
    __slots__ = ("W",)

    def __init__(self, W):
        self.W = W

    def loss(self, x):
        return np.sum((x @ self.W) ** 2)


def dict_loss(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)


def unpacked_loss(params, x):  # a list of arrays, unpacked: its gradient made as a tuple
    W, b = params
    return np.sum(np.tanh(x @ W + b) ** 2)


def nested_loss(layers, x):    # a list of dicts of arrays
    for layer in layers:
        x = np.tanh(x @ layer["W"] + layer["b"])
    return np.sum(x * x)


def imports_its_own_module(x):
    """Reads ``math`` as a value, from an import of its own."""
    import math
    return np.sum(x * x) * math.pi


OFFSET = np.ones(3)


def reads_global_data(x):
    """Reads the global ``OFFSET`` as a value: another shape rebinds it."""
    return np.sum((x + OFFSET) ** 2)


def unconnected_float_beside_a_list(x, s, rows):
    """``s`` reaches no output; ``rows`` (a list) makes the guard test structures."""
    unused = np.sin(s) * 2.0
    return np.sum(x[rows[0]] ** 2)

"""Small functions for the API tests (test_api.py, test_seeds.py)."""

import numpy as np


def square(x):
    return x * x


def scale_sum(x, y):
    return np.sum(x * y)


def three(x, y, z):
    return np.sum(x * y * z ** 2)


def keyword_only(x, *, scale=2.0):
    return np.sum(scale * x * x)


def two_outputs(x, y):
    return x * y, x + y


def int_and_bool(x, n, flag):
    return np.sum(x ** n * flag + x)


def power_int(x, n):
    return np.sum(x ** n)


def masked_sum(x, mask):
    return np.sum(np.where(mask, x, 0.0))


def broadcast_add(x, b):
    return (x + b) * x


def uses_first(x, y):
    return np.sum(x * 3.0)


def matmul_error(a, b):
    c = np.sin(a)
    d = c @ b  # marker: matmul
    return np.sum(d)


def sin_sum(x):
    return np.sum(np.sin(x))


def has_reserved(x, output_gradients):  # marker: reserved
    return x * output_gradients


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def apply(self, x):
        return np.sum(self.factor * x * x)


# -- chain rule by parts ------------------------------------------------------

def mse(y, y0):
    d = y - y0
    return np.mean(d * d)


def layer(x, W, b):
    return np.tanh(x @ W + b)


def full_loss(x, W, b, y0):
    y = layer(x, W, b)
    return mse(y, y0)


# -- the vjp forward-pass counter ----------------------------------------------

def cubic(x, y):
    return x * x * y


# -- a shape decided by a float's value ------------------------------------------

def rows_from_float(x, s):
    rows = np.reshape(x, (int(s), -1))
    return np.mean(np.sum(rows, axis=1) ** 2)


def recurrent(x, h0, Wx, Wh):
    """A recurrent layer filling the states it makes (called from another module, so built on
    its own: tests/test_callee_specialisation.py)."""
    N, T, _ = x.shape
    h = np.zeros((N, T, h0.shape[1]))
    prev = h0
    for t in range(T):
        prev = np.tanh(prev @ Wh + x[:, t, :] @ Wx)
        h[:, t, :] = prev
    return h

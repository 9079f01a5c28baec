"""A function's own *args passed on whole to a helper of the user's (tests/test_real_code.py)."""

import numpy as np


def _pieces(r, *args):
    """Huber pieces: ``args`` is (delta,) or (delta, scale)."""
    delta = args[0]
    scale = args[1] if len(args) > 1 else 1.0
    small = np.abs(r) <= delta
    return np.sum(scale * np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta)))


def huber(w, X, y, *args):
    r = X @ w - y
    return _pieces(r, *args)


def huber_named(w, X, y, delta, scale):
    r = X @ w - y
    return _pieces(r, delta, scale)


def stacked(x, *args):
    return np.sum(np.stack(*args)) + np.sum(x)       # a library function: refused if active


def outer(w, delta, scale):
    """Calls huber with its extra arguments: the JVP goes through the forwarded *args."""
    X = np.array([[1.0, 0.5], [-0.3, 2.0], [0.7, -1.1]])
    y = np.array([0.2, -0.4, 1.5])
    return huber(w, X, y, delta, scale) * 2.0

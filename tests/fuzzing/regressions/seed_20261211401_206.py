"""Fuzzer seed 20261211401, program 206: once wrong.

the gradient read back from the persistent cache differs from the built one: the generic code's first call gave y, which the output does not read, a zero gradient (two loops bind u and v)
"""

import collections
import dataclasses

import numpy as np
import scipy.linalg as sl
import scipy.signal as signal
import scipy.special as special
import scipy.stats as stats
import srctrans as st


def helper_mix(a, b):
    return np.tanh(a) * b + a


def helper_loop(a, n):
    total = a * 0.0
    for k in range(n):
        total = total + np.sin(a * (k + 1))
    return total


def helper_branch(a):
    if np.sum(a) > 0.0:
        return a * a
    return -a


@st.checkpoint
def helper_remat(a, b):
    return np.sin(a * b) * np.tanh(a) + b


def helper_keyed(a, scale=None):
    # inlined into its caller (a helper of the same module), where the shape key decides the
    # branch: the names it reassigns there are renamed as in straight-line code
    if scale is None:
        a = np.tanh(a)
        a = a * a + 0.5
    else:
        a = a * scale
    return a


def helper_star(a, *rest):
    return a * rest[0] + np.sin(rest[-1])


def helper_options(a, *rest):
    scale = rest[1] if len(rest) > 1 else 0.5
    return np.tanh(a * rest[0]) * scale


def helper_forward(a, *rest):
    return helper_star(a * 0.5, *rest)


def helper_fill(a):
    # writes only into an array it makes: inlined into its caller (normalize/callees.py)
    out = np.zeros_like(a)
    out[...] = np.sin(a) * 0.5
    return out * a + a


def helper_cached(a, b):
    # returns (output, cache), as course layers do; inlined, the caller's unpacking binds
    # the cache to this dict (normalize/packed_tuples.py)
    cache = {"t": np.tanh(a), "b": b}
    return cache["t"] * b + a, cache


def helper_density(a, c):
    # two returns: called, not inlined (normalize/callees.py); a caller that sums its output
    # calls its spread gradient, which skips the constant (optimise/callee_spreads.py)
    if c > 10.0:
        return a
    return np.log(np.cosh(c) + np.sinh(c)) - 0.5 * (c + 1.0) * np.log1p(a * a / c)


def helper_seq(xs, *rest):
    return xs[0] * np.cos(xs[1][0]) + rest[0][1] * xs[1][1]


class Affine:
    def __init__(self, scale, shift):
        self.scale, self.shift = scale, shift

    def __call__(self, a):
        return np.tanh(a * self.scale) + self.shift

    def apply(self, a, b):
        return self(a) * b


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, a):
        for layer in self.layers:
            a = layer(a)
        return a


MODEL = Stack([Affine(0.8, 0.1), Affine(1.3, -0.2)])


@dataclasses.dataclass
class Pair:
    first: object
    second: object
    weight: float = 0.5


Carry = collections.namedtuple("Carry", ["h", "c"])


def program(x, y, s, W):
    v2 = y * 1.0
    v4 = W * 0.5 + np.tanh(W)
    v5_pairs = [(v4[0], v2), (v4[-1] * 0.5, v2 + 1.0), (v4[0] - 1.0, v2)]
    v5 = 0.0
    for u, v in v5_pairs:
        v5 = v5 + np.sum(np.tanh(u * v) ** 2)
    v8 = s * 0.5
    for u, v in zip(W, np.tanh(W) + 0.5):
        e = np.sin(u * 2.0) - v
        v8 += np.sum(e * e) * s
    return np.sum(np.tanh(v8) * v8)

def program_of_a_dict(p, s, W):
    x = p['x'] * p.get('unit', 1.0)
    y = p['y'] * 1.0
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    v1 = stats.norm.logpdf(y, 0.2, 1.5)
    v2 = y * 1.0
    for i in range(4):
        v2 = np.tanh(v2 * 0.9 + y * i)
    v3 = np.maximum(W, 0.1 * W)
    v4 = v3 * 0.5 + np.tanh(v3)
    del v3
    v5_pairs = [(v4[0], v2), (v4[-1] * 0.5, v2 + 1.0), (v4[0] - 1.0, v2)]
    v5 = 0.0
    for u, v in v5_pairs:
        v5 = v5 + np.sum(np.tanh(u * v) ** 2)
    v6 = y * 0.5
    v7 = len(W) - 3
    while v7 >= 0:
        v6 = v6 * 0.9 + np.sin(v6)
        v7 -= 1
    else:
        v6 = np.tanh(v6) + 0.5
    v8 = s * 0.5
    for u, v in zip(W, np.tanh(W) + 0.5):
        e = np.sin(u * 2.0) - v
        v8 += np.sum(e * e) * s
    return np.sum(np.tanh(v8) * v8)

def program_with_options(x, y, s, W, c, mode):
    if c > 0.0 and mode == 'on':
        x = x * c
    elif c < -1.0:
        x = x * (-c - 1.0)
    else:
        x = x * 1.0
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    v1 = stats.norm.logpdf(y, 0.2, 1.5)
    v2 = y * 1.0
    for i in range(4):
        v2 = np.tanh(v2 * 0.9 + y * i)
    v3 = np.maximum(W, 0.1 * W)
    v4 = v3 * 0.5 + np.tanh(v3)
    del v3
    v5_pairs = [(v4[0], v2), (v4[-1] * 0.5, v2 + 1.0), (v4[0] - 1.0, v2)]
    v5 = 0.0
    for u, v in v5_pairs:
        v5 = v5 + np.sum(np.tanh(u * v) ** 2)
    v6 = y * 0.5
    v7 = len(W) - 3
    while v7 >= 0:
        v6 = v6 * 0.9 + np.sin(v6)
        v7 -= 1
    else:
        v6 = np.tanh(v6) + 0.5
    v8 = s * 0.5
    for u, v in zip(W, np.tanh(W) + 0.5):
        e = np.sin(u * 2.0) - v
        v8 += np.sum(e * e) * s
    return np.sum(np.tanh(v8) * v8)


ARGS = (-0.2919629625790916, -1.0211752508056169, 0.6455820987465584, np.array([[0.09659949336711227, -0.3110862138112954], [0.6011292748576003, 0.09581035144080251]]), )

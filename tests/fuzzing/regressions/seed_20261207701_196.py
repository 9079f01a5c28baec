"""Fuzzer seed 20261207701, program 196: once internal.

NameError: name 'dv12' is not defined (a spread read by the gradient returned was dropped)
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
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    if s > 0.8:
        v1 = max(np.sum(s), np.sum(s * s) * 0.5) + min(float(np.sum(s)), 1.0)
    else:
        v1 = (max(np.sum(s), np.sum(s * s) * 0.5) + min(float(np.sum(s)), 1.0)) * 0.5 + 1.0
    v2 = np.log(1.0 + x * x)
    v3 = max(np.sum(x), np.sum(x * x) * 0.5) + min(float(np.sum(x)), 1.0)
    v4 = np.amax(W)
    v6 = np.log(np.sum(np.exp(W - v4), axis=-1, keepdims=True)) + v4
    v7 = np.square(v4)
    v8 = x * 1.0
    for i in range(2, 6, 2):
        if np.sum(v8) > 2.0:
            break
        v8 = v8 * 0.5 + helper_mix(x, v8)
    else:
        v8 = v8 * 0.5 + np.cos(v8) * 0.5
    v9 = np.mean(v6, axis=0)
    v10 = np.var(v6, axis=0)
    v11 = (v6 - v9) / np.sqrt(v10 + 0.1)
    v12 = s * 1.0
    for i in range(3, 6, 2):
        v12 += np.sin(v7 * i) * 0.5
    return np.sum(v12) + np.sum(v11) + np.sum(np.tanh(v6) * v6)

def program_with_varargs(x, *args):
    return program_spread(x, *args)


def program_spread(x, *rest):
    x = x * 1.0
    y = rest[0] * 1.0
    s = rest[1]
    W = rest[2] * 1.0
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    if s > 0.8:
        v1 = max(np.sum(s), np.sum(s * s) * 0.5) + min(float(np.sum(s)), 1.0)
    else:
        v1 = (max(np.sum(s), np.sum(s * s) * 0.5) + min(float(np.sum(s)), 1.0)) * 0.5 + 1.0
    v2 = np.log(1.0 + x * x)
    v3 = max(np.sum(x), np.sum(x * x) * 0.5) + min(float(np.sum(x)), 1.0)
    v4 = np.amax(W)
    v6 = np.log(np.sum(np.exp(W - v4), axis=-1, keepdims=True)) + v4
    v7 = np.square(v4)
    v8 = x * 1.0
    for i in range(2, 6, 2):
        if np.sum(v8) > 2.0:
            break
        v8 = v8 * 0.5 + helper_mix(x, v8)
    else:
        v8 = v8 * 0.5 + np.cos(v8) * 0.5
    v9 = np.mean(v6, axis=0)
    v10 = np.var(v6, axis=0)
    v11 = (v6 - v9) / np.sqrt(v10 + 0.1)
    v12 = s * 1.0
    for i in range(3, 6, 2):
        v12 += np.sin(v7 * i) * 0.5
    return np.sum(v12) + np.sum(v11) + np.sum(np.tanh(v6) * v6)

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
    if s > 0.8:
        v1 = max(np.sum(s), np.sum(s * s) * 0.5) + min(float(np.sum(s)), 1.0)
    else:
        v1 = (max(np.sum(s), np.sum(s * s) * 0.5) + min(float(np.sum(s)), 1.0)) * 0.5 + 1.0
    v2 = np.log(1.0 + x * x)
    v3 = max(np.sum(x), np.sum(x * x) * 0.5) + min(float(np.sum(x)), 1.0)
    v4 = np.amax(W)
    v6 = np.log(np.sum(np.exp(W - v4), axis=-1, keepdims=True)) + v4
    v7 = np.square(v4)
    v8 = x * 1.0
    for i in range(2, 6, 2):
        if np.sum(v8) > 2.0:
            break
        v8 = v8 * 0.5 + helper_mix(x, v8)
    else:
        v8 = v8 * 0.5 + np.cos(v8) * 0.5
    v9 = np.mean(v6, axis=0)
    v10 = np.var(v6, axis=0)
    v11 = (v6 - v9) / np.sqrt(v10 + 0.1)
    v12 = s * 1.0
    for i in range(3, 6, 2):
        v12 += np.sin(v7 * i) * 0.5
    return np.sum(v12) + np.sum(v11) + np.sum(np.tanh(v6) * v6)


ARGS = (-0.9425701235710435, -0.13990028698311746, 1.385254247214894, np.array([[0.24912621210398098, -0.3317842360270418], [-0.4421441828898497, 0.7697692510767967]]), )

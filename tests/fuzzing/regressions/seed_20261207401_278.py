"""Fuzzer seed 20261207401, program 278: once refused.

UnsupportedSyntaxError: /tmp/tmp542y769i/fuzz_program_31504_278.py:120 (in program): writing into `v1`, which may be (a view of) an argument
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
    if np.sum(s) > 4.0:
        return np.sum(s * s)
    v1 = np.zeros_like(W)
    for i in range(W.shape[0]):
        for j in range(W.shape[1]):
            v1[i, j] = np.tanh(W[i, j]) * 0.5 + W[i, 0] * W[0, j]
    v1 = np.sum(v1 * W)
    return np.sum(np.tanh(x) * x)


ARGS = (0.24471038540654175, -0.6042916595541051, 0.5773267574751688, np.array([[0.27310784380900016, -0.7158421885387715], [0.12503853242004098, -0.2811738521260197]]), )

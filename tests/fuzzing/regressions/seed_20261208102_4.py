"""Fuzzer seed 20261208102, program 4: once refused.

UnsupportedSyntaxError: /tmp/tmp6008hsa5/fuzz_program_4672_4.py:97 (in program): `v2` is changed in place here while `W` may share its memory and is read after the change (line 96)
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


def helper_star(a, *rest):
    return a * rest[0] + np.sin(rest[-1])


def helper_options(a, *rest):
    scale = rest[1] if len(rest) > 1 else 0.5
    return np.tanh(a * rest[0]) * scale


def helper_forward(a, *rest):
    return helper_star(a * 0.5, *rest)


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
    v5 = np.amax(x)
    return np.sum(np.tanh(W) * W) + np.sum(np.tanh(v5) * v5)
    return np.sum(np.tanh(W) * W) + np.sum(np.tanh(v5) * v5), x

class Holder:
    def __init__(self, W):
        self.W = W

    def weights(self):
        return self.W * 1.0

    def program_as_method(self, x, y, s):
        W = self.weights()
        def loc(a):
            return np.tanh(a * 2.0) + a
        lam = lambda a: a * a * 0.5 + a
        y, x = x * 0.5 + np.sum(y) * 0.1, np.tanh(y) - 0.1 * np.sum(x)
        v1_pairs = [(W[0], y), (W[-1] * 0.5, y + 1.0), (W[0] - 1.0, y)]
        v1 = 0.0
        for u, v in v1_pairs:
            v1 = v1 + np.sum(np.tanh(u * v) ** 2)
        v2 = np.zeros_like(W)
        v2[0] = W[0]
        for t in range(1, len(W)):
            v2[t] = 0.3 * W[t] + 0.7 * np.tanh(v2[t - 1])
        v4 = Carry(W, np.sin(x))
        for _ in range(2):
            v4 = Carry(np.tanh(v4.h) * v4.c, v4.c * 0.5)
        v3 = v4.h + v4[1]
        v5 = np.amax(x)
        v7 = np.log(np.sum(np.exp(x - v5), axis=-1, keepdims=True)) + v5
        v2, v5 = v5 * 0.5 + np.sum(v2) * 0.1, np.tanh(v2) - 0.1 * np.sum(v5)
        return np.sum(np.tanh(W) * W) + np.sum(np.tanh(v5) * v5)


ARGS = (np.array([0.44226879431779914, -0.7159544101904971, -0.33443350085729107]), np.array([-1.4460138645253922]), 1.1035011040063276, np.array([[0.25733838082256727, 0.2550831234755075, -0.24705422396854407], [-0.1454304533809529, -1.6773602071959164, 0.11221092254289501], [-0.12203731669824995, -0.10898268686679395, -0.22231415487757394]]), )

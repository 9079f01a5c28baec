"""Fuzzer seed 20261207101, program 180: once internal.

Traceback (most recent call last):
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
    if np.sum(x) > 4.0:
        return np.sum(x * x)
    y, s = s * 0.5 + np.sum(y) * 0.1, np.tanh(y) - 0.1 * np.sum(s)
    v1, v2 = stats.gamma.logpdf(1.0 + s * s, 2.0, scale=s), stats.norm.logcdf(s)
    v3 = v1 / (1.5 + np.cos(s))
    v5 = np.mean(W, axis=0, keepdims=True)
    v7 = W - v5 - np.log(np.sum(np.exp(W - v5), axis=0, keepdims=True))
    if s > 0.8:
        v9 = MODEL(v3)
    else:
        v9 = (MODEL(v3)) * 0.5 + 1.0
    return np.mean(np.sin(v7)) + np.sum(np.tanh(W) * W)


ARGS = (np.array([-0.947016940047589, 0.366962968264636, -0.5488760766249525]), np.array([0.5530059631449725]), 0.9268062775958393, np.array([[-0.15062674107141874, 0.019073244080760218, 0.25242774507866217], [0.5046831475189092, -0.23730567171751207, 0.0020278179321345535], [-0.6509048489921219, 0.6871498847757438, -0.2822816274829224]]), )

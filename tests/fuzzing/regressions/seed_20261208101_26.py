"""Fuzzer seed 20261208101, program 26: once wrong.

the gradient read back from the persistent cache differs from the built one
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
    v1 = np.zeros_like(W)
    v2 = W.max(axis=0, keepdims=True)
    v7 = v1 / (1.5 + np.cos(y))
    v12 = special.logsumexp(W * 2.0)
    v13 = v12 * 0.5 + np.tanh(v12)
    return np.sum(np.tanh(v13) * v13) + np.sum(np.tanh(v7) * v7) + np.mean(np.sin(v2))
def program_with_aux(x, y, s, W):
    v1 = np.zeros_like(W)
    v2 = W.max(axis=0, keepdims=True)
    v7 = v1 / (1.5 + np.cos(y))
    v12 = special.logsumexp(W * 2.0)
    v13 = v12 * 0.5 + np.tanh(v12)
    return np.sum(np.tanh(v13) * v13) + np.sum(np.tanh(v7) * v7) + np.mean(np.sin(v2)), {'W': W, 'v1': v1, 'count': len(W), 'label': 'aux'}


ARGS = (np.array([-0.17551773782490815, 0.14651686149771426, 0.16330910411568864]), np.array([0.6347790942196222]), 1.0582473173480573, np.array([[-0.9853382774108631, 0.7023569035457973, -0.07116290504335417], [-0.6251859649658048, -0.3316557482612527, -0.2689512066947684], [0.3612436881133051, -0.6438461303770695, 0.7074183989968714]]), )

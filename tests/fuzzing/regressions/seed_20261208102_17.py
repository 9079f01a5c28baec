"""Fuzzer seed 20261208102, program 17: once internal.

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
    v2 = (y, y)
    v1 = v2[0] + v2[1] * v2[0]
    v3 = np.maximum(W, s - 1.0)
    v4 = v3 * 0.5 + np.tanh(v3)
    v8 = helper_options(v4, v1) + helper_options(v4, v1, s)
    return np.sum(np.tanh(v8) * v8)


ARGS = (np.array([[-1.5054452605081772, -1.004007396591494, -1.1784374237088437], [0.2977463017408731, 0.6297534250675363, 0.07179404423274516]]), np.array([-0.33679231945138377, 0.4355693288819286, -0.20054299940432194]), 0.9026742493106531, np.array([[-0.17313034719893977, 0.06440052477789071, 0.0528950088838131], [0.539144835182717, -0.4134874930030103, -0.4582359037688749], [-0.08819977398746852, 0.02184565940480386, -0.5504683057968127]]), )

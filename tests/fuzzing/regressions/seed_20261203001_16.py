"""Fuzzer seed 20261203001, program 16: once internal.

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
    v2 = sorted([x, W * 2.0, np.sin(x)], key=lambda v: float(np.sum(v)))
    v1 = v2[0] * 2.0 + v2[-1]
    return np.sum(np.tanh(v1) * v1)


ARGS = (np.array([0.1344247005107107, -0.058341021655121054, -1.1849672129578757]), np.array([-0.18660224842001333]), 1.0522774534594885, np.array([[-0.4081890241747864, 0.33730796442004723, 1.0997792611033368], [0.14810557058884746, -0.095210666519628, 0.12773837701219143], [-0.1530391166686443, 0.5159287125994212, -0.2398053193920015]]), )

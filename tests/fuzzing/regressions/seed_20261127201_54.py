"""Fuzzer seed 20261127201, program 54: once wrong.

on duck arrays, srctrans converted one: a duck array was converted to a NumPy array
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
    v3 = np.gradient(y, 0.5 + s, axis=0, edge_order=2)
    v4 = v3 * 0.5 + np.tanh(v3)
    return np.sum(np.tanh(v4) * v4)
    return np.sum(np.tanh(v4) * v4), {'v7': v7, 'W': W, 'count': len(W), 'label': 'aux'}


ARGS = (np.array([[0.19829127257520543, -0.25029104664096585, 2.1452155065689067], [0.8091250746483416, -0.7521650552074786, -0.5069578288374772]]), np.array([-1.3520016230612457, 0.021962876909161714, -0.06423271239242126]), 1.27376908104962, np.array([[-0.17379114344767058, -0.9596545211448373, 0.011624496735580667], [-0.35959300451464626, -0.29607397142005604, -0.8076680918847303], [-1.0310049997146506, 0.11898381732656556, 0.33202824289630944]]), )

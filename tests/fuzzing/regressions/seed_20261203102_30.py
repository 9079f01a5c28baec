"""Fuzzer seed 20261203102, program 30: once internal.
(The whole program as generated: its shrunk form no longer showed the fault.)
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
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    v1 = W[..., ::2]
    v2 = stats.beta.logpdf(0.5 + 0.3 * np.tanh(y), 2.0, 3.0)
    v3 = v2 * 0.5 + np.tanh(v2)
    del v2
    v4 = v1[1:]
    v5 = np.gradient(y, axis=-1)
    return np.sum(np.tanh(W) * W) + np.sum(np.tanh(v1) * v1)

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
    v1 = W[..., ::2]
    v2 = stats.beta.logpdf(0.5 + 0.3 * np.tanh(y), 2.0, 3.0)
    v3 = v2 * 0.5 + np.tanh(v2)
    del v2
    v4 = v1[1:]
    v5 = np.gradient(y, axis=-1)
    return np.sum(np.tanh(W) * W) + np.sum(np.tanh(v1) * v1)


ARGS = (np.array([[[-0.04780376, -0.43779116,  0.07309478],
        [-1.19680295,  0.20869407,  0.34761466]],

       [[-1.46558527, -0.25587797, -0.69895345],
        [-0.06483133, -0.05110004,  0.57339797]],

       [[ 0.28660057, -0.07802297, -0.06296171],
        [-0.61307727,  0.08293685, -0.11324839]],

       [[ 0.468629  , -1.82420602,  0.03547166],
        [-0.44661095, -0.83892575,  0.65295751]]]), np.array([[ 0.09068272,  0.64772322,  0.42871158],
       [-0.09162169, -0.82738937,  0.00465307]]), 0.8628280344363419, np.array([[ 0.54170279,  0.06844577,  0.10182366],
       [ 0.21506477,  0.69115961,  0.25738276],
       [-0.1373352 ,  0.03845998,  1.1052231 ]]))

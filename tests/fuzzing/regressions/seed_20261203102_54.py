"""Fuzzer seed 20261203102, program 54: once wrong.
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
    v1 = helper_forward(s, W, s * s)
    v3 = x[np.array([0, 1, 0])]
    if np.mean(s) < 0.3:
        v4 = np.nansum(y, axis=-1, keepdims=True)
    else:
        v4 = (np.nansum(y, axis=-1, keepdims=True)) * 0.5 + 1.0
    v5 = v1 * 0.5
    v6 = 0
    while v6 < 3:
        v5 = v5 * 0.9 + np.sin(v5)
        v6 += 1
    v8 = np.sqrt(s + 3.0j) / (s + 2.0 - 1.0j)
    v7 = np.abs(v8) ** 2 + np.var(np.atleast_1d(v8))
    return np.sum(np.tanh(v1) * v1)


ARGS = (np.array([[[ 1.74737491e-01,  6.46716009e-01,  1.11240233e+00,
         -3.52990731e-01],
        [ 3.79194429e-01, -6.10658531e-01,  3.24977269e-01,
          1.45480925e-01],
        [-5.24931833e-01, -1.15690402e+00, -1.92062725e+00,
          1.14210815e-02]],

       [[ 8.22599642e-01, -4.54879046e-01, -1.21497325e-03,
         -2.13969925e-01],
        [ 3.58744482e-01,  2.69465745e-01,  3.75106259e-01,
          1.28552418e-01],
        [-4.11108493e-01,  2.12432329e-02, -1.24623136e+00,
         -6.75197710e-01]]]), np.array([[ 1.63514373],
       [-1.4440109 ],
       [ 1.11978104]]), 0.5363893526430913, np.array([[ 0.33698118, -0.55477885,  0.57629557, -0.60202382],
       [-0.55144031,  0.09923101,  0.24162867,  0.29721221],
       [-0.86702433, -0.84504339,  0.05446873, -0.51496057],
       [ 0.0065571 ,  0.14164873,  0.15575534, -0.0919834 ]]))

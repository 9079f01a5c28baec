"""Fuzzer seed 20261203102, program 58: once internal.
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
    v1 = 0.0
    for i, row in enumerate(W):
        v1 = v1 + np.sum(np.tanh(row)) * i
    v2 = np.cos(s)
    v4 = np.fft.fft(W + 0.5j * y, n=3, axis=-1)
    v3 = np.real(np.fft.ifft(np.fft.fftshift(v4, axes=-1), axis=-1))[..., :2]
    v5 = W[1:]
    v7 = {'p': x, 'q': np.sin(s)}
    v6 = v7['p'] * v7['q']
    for key, val in v7.items():
        v6 = v6 + val * 0.5
    v8 = v3.copy()
    v8[np.array([1, 1])] -= v3[np.array([1, 1])] * v3[np.array([1, 1])]
    return np.sum(np.tanh(y) * y)

def program_with_aux(x, y, s, W):
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    v1 = 0.0
    for i, row in enumerate(W):
        v1 = v1 + np.sum(np.tanh(row)) * i
    v2 = np.cos(s)
    v4 = np.fft.fft(W + 0.5j * y, n=3, axis=-1)
    v3 = np.real(np.fft.ifft(np.fft.fftshift(v4, axes=-1), axis=-1))[..., :2]
    v5 = W[1:]
    v7 = {'p': x, 'q': np.sin(s)}
    v6 = v7['p'] * v7['q']
    for key, val in v7.items():
        v6 = v6 + val * 0.5
    v8 = v3.copy()
    v8[np.array([1, 1])] -= v3[np.array([1, 1])] * v3[np.array([1, 1])]
    return np.sum(np.tanh(y) * y), {'s': s, 'v1': v1, 'count': len(W), 'label': 'aux'}


ARGS = (-1.342681137305229, -0.2139508672678912, 1.143083038237, np.array([[ 0.23758913,  0.04047622],
       [-0.00949639, -0.74503283]]))

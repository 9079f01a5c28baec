"""Fuzzer seed 20261129001, program 42: once internal.

Traceback (most recent call last):
"""

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


def program(x, y, s, W):
    v1 = np.deg2rad(s) * 30.0
    v9 = np.sqrt(v1 + 3.0j) / (v1 + 2.0 - 1.0j)
    v8 = np.abs(v9) ** 2 + np.var(np.atleast_1d(v9))
    return np.sum(np.tanh(s) * s) + np.sum(np.tanh(v8) * v8)


ARGS = (np.array([[0.6172764049564601, -1.1276833225517342, -1.1847736629265613], [-0.20469002111463744, 0.5106670684195916, 0.8525883657518266]]), np.array([0.4112375991452966, 1.4008544690282299, 0.2938640484291999]), 0.5009131915510973, np.array([[-0.1506638832977011, -0.07894608908660489, -0.23536818498159665], [-0.7127145889930726, 0.17707411059888073, -0.161234514741415], [-0.21883250833066742, 0.1267831618951649, -0.8596062021676993]]), )

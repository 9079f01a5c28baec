"""Fuzzer seed 20261129006, program 204: once wrong.

reverse-mode (generic code) derivative of the JVP of program disagrees with finite differences: <vjp(v), u> = -0.16961627126919 but <v, J u> ~= -0.1821166524846889 (difference 0.0125, arguments (0, 1, 2, 3))
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
    if np.sum(s) > 4.0:
        return np.sum(s * s)
    v5 = np.cumsum(y, axis=-1)
    v6 = np.sin(v5)
    v7 = v6 * 1.0
    v7 = v7 * 1.0
    return np.mean(np.sin(v7)) + np.sum(s)


ARGS = (np.array([[0.26337055590055086, -1.7327225387023653, -0.27765437346072214], [0.2123705699873143, -0.5081829506068306, 0.023088100550790448]]), np.array([-0.7000231408480507, 0.3268036539295632, 0.4803796321210037]), 0.5658094373639522, np.array([[-0.09664354873851425, 0.22674485268702488, 0.09163383221446289], [0.918389744718933, -0.14428519360674394, -0.30541805151045315], [0.1565634880480893, -0.32022545702511634, 0.1867394126822937]]), )

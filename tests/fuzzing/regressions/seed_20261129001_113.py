"""Fuzzer seed 20261129001, program 113: once wrong.

reverse-mode (generic code) derivative of program disagrees with finite differences: <vjp(v), u> = 1.1511309988894969 but <v, J u> ~= 1.9866712664607924 (difference 0.836, arguments (0, 1, 2, 3))
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
    v2 = np.polyval(np.array([0.5, -1.0, 0.3]), x)
    v3 = s * 1.0
    v4 = []
    for i in st.checkpointed(range(4), 1):
        v4.append(v3 * 0.5)
        v3 = np.sin(v3) + v4[-1] * s
    v5 = v2 / (1.5 + np.cos(s))
    return np.sum(np.tanh(v5) * v5) + np.sum(np.tanh(v3) * v3)


ARGS = (np.array([0.25005637442929773, 0.29656826006064274, 0.45852006718578947]), np.array([-0.12418549649602613]), 0.9327495669150093, np.array([[-0.38840024613864027, -0.5381725085456275, 0.3133863755656892], [0.4521048840463871, -0.16660661265427576, -0.1767022118996603], [-1.424994397271555, -0.39753769262447414, 0.3906896405349439]]), )

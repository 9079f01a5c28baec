"""Fuzzer seed 20261129005, program 0: once wrong.

at -1.0 * args + 0.0 (the same shapes): reverse-mode (specialised code) derivative of program disagrees with finite differences: <vjp(v), u> = 0.7964692912532638 but <v, J u> ~= 0.5997941396792846 (difference 0.197, arguments (0, 1, 2, 3))
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
    v2 = s * 1.0
    for i in range(2):
        if np.sum(v2) > 2.0:
            break
        v2 = v2 * 0.5 + helper_mix(x, v2)
    return np.sum(np.tanh(y) * y) + np.mean(np.sin(v2))


ARGS = (np.array([[-0.5066776857565504, 0.3109987250896965, 0.1350709620313343], [0.5455182975825776, -0.23637011756086118, 0.005146225837657044]]), np.array([-0.3751340550332384, 0.48852344832309974, 1.5322362938740262]), 0.9729276800699672, np.array([[-0.1989166361967805, -0.6887729278085734, -0.19097907126824826], [0.1830111201104411, 0.09531743247501025, 0.36742419915820995], [-0.5624483419461139, -0.24862328280443452, -0.5529557208710968]]), )

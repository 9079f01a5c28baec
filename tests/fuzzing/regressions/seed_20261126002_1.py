"""Fuzzer seed 20261126002, program 1: once refused.

UnsupportedSyntaxError: /tmp/tmp63eamfid/fuzz_program_19816_1.py:65 (in program): writing into `x`, which may be (a view of) an argument
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
    for i in range(2):
        x[i] += np.cos(x[i])
    v2 = [x * 1.0, x * 0.5]
    x = v2[0] + v2[1]
    return np.tanh(y) * 2.0


ARGS = (np.array([[[[-0.6806977333094374, 1.5692097971193155], [1.2573185632173716, 0.959555824829109], [-0.48043386041508296, 0.07493355331983897]], [[0.6995360482029822, 0.5725861385403479], [0.9964625547860747, 0.03934750969000744], [1.3196873545622756, 0.8528938846750719]]], [[[1.4743703593723312, 0.7209509089364365], [1.3748097247795834, 0.3212823824191874], [1.2954937197408634, 1.5697109421946516]], [[-0.1861755742446779, 1.561127288023207], [0.7428240228765827, 1.357798603463022], [0.6896158585813024, -0.4253514524276897]]]]), np.array([[-0.3836883255118926], [-0.21549153595308623], [0.1412629585213322]]), 1.3852226185671923, np.array([[-0.25733220037349563, 0.8493273462384828], [0.6510416113624633, 0.999756527238087]]), )

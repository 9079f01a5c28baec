"""Fuzzer seed 20261129191, program 216: once wrong.

at 0.5 * args + 0.7 (the same shapes): reverse-mode (specialised code) derivative of program disagrees with finite differences: <vjp(v), u> = 3.1383011913030527 but <v, J u> ~= 2.573420622151175 (difference 0.565, arguments (0, 1, 2, 3))
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


def helper_keyed(a, scale=None):
    # inlined into its caller (a helper of the same module), where the shape key decides the
    # branch: the names it reassigns there are renamed as in straight-line code
    if scale is None:
        a = np.tanh(a)
        a = a * a + 0.5
    else:
        a = a * scale
    return a


def helper_star(a, *rest):
    return a * rest[0] + np.sin(rest[-1])


def helper_options(a, *rest):
    scale = rest[1] if len(rest) > 1 else 0.5
    return np.tanh(a * rest[0]) * scale


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
    v4 = np.linalg.eigvals(W + x * np.array([[0.0, 1.0], [-1.0, 0.0]])[:W.shape[0], :W.shape[0]])
    v3 = np.sum(np.abs(v4)) + np.max(np.real(v4))
    return np.mean(np.sin(y)) + np.sum(np.tanh(v3) * v3) + np.sum(W)


ARGS = (0.2513585776894977, 0.15282581415336435, 1.2648294292473101, np.array([[0.19655619068993935, -0.3164966352035068], [-0.25596100545142847, -0.4249100737012642]]), )

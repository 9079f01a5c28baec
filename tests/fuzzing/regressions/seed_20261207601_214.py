"""Fuzzer seed 20261207601, program 214: once wrong.

reverse-mode (specialised code) derivative of the gradient of program disagrees with finite differences: <vjp(v), u> = 0.5067833723157331 but <v, J u> ~= 0.8187882793229391 (difference 0.312, arguments (0, 1, 2, 3))
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


def helper_fill(a):
    # writes only into an array it makes: inlined into its caller (normalize/callees.py)
    out = np.zeros_like(a)
    out[...] = np.sin(a) * 0.5
    return out * a + a


def helper_cached(a, b):
    # returns (output, cache), as course layers do; inlined, the caller's unpacking binds
    # the cache to this dict (normalize/packed_tuples.py)
    cache = {"t": np.tanh(a), "b": b}
    return cache["t"] * b + a, cache


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
    v1 = special.erf(y)
    v2 = v1 * 0.5 + np.tanh(v1)
    v3 = special.gammaln(1.5 + v2 * v2)
    v8, v9 = np.maximum(v2, v2 - 1.0), v3 @ sl.solve_triangular(W + 3.0 * np.eye(len(W)), W, lower=True)
    return np.sum(np.tanh(v9) * v9)


ARGS = (np.array([[-0.5388954432237162, -0.32597282111314196, 0.26607518112237694], [0.6548232254657732, -0.8333306987887432, 0.5886305704351815]]), np.array([-0.2830679786515479, -0.8761555203382694, -1.3694869055298167]), 0.9687114321371101, np.array([[-0.09694009587896418, 0.6850208489374469, 0.3904750697013156], [0.28743771992582295, -0.5419327280287248, -0.8791522656188556], [-0.8903039051890052, -0.069853157648546, -0.6153987957277598]]), )

"""Fuzzer seed 20261206301, program 216: once wrong.

the gradient read back from the persistent cache differs from the built one
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
    v1 = np.amax(s)
    v2 = np.exp(s - v1) * (1.5 + np.cos(y))
    v3 = v2 / np.sum(v2, axis=-1, keepdims=True)
    return np.tanh(v3) * 2.0


ARGS = (np.array([[0.03116986978701293, 0.2897910478633633, 0.5472107939439845], [0.37832639060619383, -0.6911346323703946, 1.1156464571207343]]), np.array([-0.9066307288832477, 0.3959155920505918, -0.19787428657185233]), 1.2519554197906446, np.array([[-1.050604757873874, -0.4080523425142036, -0.7975343013257816], [-0.01392470745247156, 0.03711502973930712, 0.30380028033545026], [0.4538057000540559, -0.341969364033703, -0.9702857399896849]]), )

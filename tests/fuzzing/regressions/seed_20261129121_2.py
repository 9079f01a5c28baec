"""Fuzzer seed 20261129121, program 2: once internal.

TypeError: rt.container_cotangent of an array (W[0]'s cotangent in the reverse pass of the JVP), unshrunk: the shrinker left the varargs twin reading an undefined name
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
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    v1 = np.amax(y)
    v3 = np.log(np.sum(np.exp(y - v1), axis=0, keepdims=True)) + v1
    v4 = y - y
    v5 = W * 1.0
    v5[0] += np.tanh(W[0]) + 1.0
    v6 = np.zeros_like(y)
    v6[0] -= np.tanh(y[0]) + 1.0
    v7 = v1 + v6
    v8 = np.maximum(s, v5 - 1.0)
    return np.tanh(v5) * 2.0

def program_with_varargs(x, *args):
    return program_spread(x, *args)


def program_spread(x, *rest):
    x = x * 1.0
    y = rest[0] * 1.0
    s = rest[1]
    W = rest[2] * 1.0
    def loc(a):
        return np.tanh(a * 2.0) + a
    lam = lambda a: a * a * 0.5 + a
    v1 = np.amax(y)
    v3 = np.log(np.sum(np.exp(y - v1), axis=0, keepdims=True)) + v1
    v4 = y - y
    v5 = W * 1.0
    v5[0] += np.tanh(W[0]) + 1.0
    v6 = np.zeros_like(y)
    v6[0] -= np.tanh(y[0]) + 1.0
    v7 = v1 + v6
    v8 = np.maximum(s, v5 - 1.0)
    return np.tanh(v5) * 2.0


ARGS = (np.array([[[[0.5589330726657795, 0.6546076116932983], [-0.548388622918734, -0.5663947136413511], [0.1774158180703584, -0.280339949925092]], [[-0.2501259523253402, -0.16306865258583467], [-1.621696169039188, 0.4082476622015738], [0.07369114506757472, 0.45581382415050187]]], [[[-0.19066974768816686, -1.668643352550685], [0.46810899722506644, 0.7109640308552773], [-1.6867335674417652, 0.834467609306436]], [[-0.38799183235054957, 0.3365555220401804], [0.50867743491365, 0.8320525853673062], [-0.27398865702671893, -1.0032824234496185]]]]), np.array([[-1.4533405794942245], [-1.1881909044768415], [-1.2413556966407933]]), 0.622817222050885, np.array([[0.2520950500584404, -0.2873672749403686], [0.38173687922271105, 0.14234215446951887]]), )

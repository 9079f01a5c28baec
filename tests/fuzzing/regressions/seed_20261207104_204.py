"""Fuzzer seed 20261207104, program 204: once internal.

Traceback (most recent call last):
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
    v4 = helper_options(x, s) + helper_options(x, s, s)
    return np.tanh(v4) * 2.0


ARGS = (np.array([[[-0.7847568169757098, 0.06108904961481405, 1.4906295322078247], [0.1251146817840918, 0.430677454415466, 0.30374064231854814]], [[-1.7769035991646358, 1.112627261409604, 0.612552839061676], [-0.5460580896469017, -0.14185100797154984, -0.5098532232434746]], [[-0.6048761773711837, 0.9379204887842599, 0.12562888883788367], [0.5628087460113977, -0.9961887197430787, -0.3199011671317905]], [[-0.6249895323034537, -0.6675505142983252, 0.20516680541587526], [0.5670961868785155, 0.05672842222697068, -0.08364575640113911]]]), np.array([[-0.5771760086589242, -0.11192021687749736, 0.37765088938858166], [0.4294537110698902, -0.23151460393605436, 0.38187872467107553]]), 1.0391262015574694, np.array([[0.4906705441643378, -0.40860957901376865, 0.6385418065999867], [-0.0468295278817034, 0.5882279191290474, 0.07086079286995023], [-0.3786984058378223, 0.24148183406980442, 0.14836410475714387]]), )

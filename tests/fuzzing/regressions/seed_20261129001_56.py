"""Fuzzer seed 20261129001, program 56: once wrong.

reverse-mode (generic code) derivative of program disagrees with finite differences: <vjp(v), u> = 3.781291605673773 but <v, J u> ~= 4.085001766703938 (difference 0.304, arguments (0, 1, 2, 3))
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
    v8 = W * 1.0
    v11 = x * 1.0
    v12 = []
    for i, w in st.checkpointed(enumerate([x * 0.5, np.sin(x), x + 1.0][:2]), 1):
        v12.append(v11 * 0.5)
        v11 = np.sin(v11) + v12[-1] * x
        v11 = v11 + w * 0.25
    return np.sum(np.tanh(v8) * v8) + np.sum(np.tanh(x) * x) + np.sum(np.tanh(v11) * v11)


ARGS = (np.array([[-0.13860418192514246, 0.03415006607294624, -0.5328194042277961], [1.116161789349748, -0.27870228003990094, -0.06344123035899779]]), np.array([1.0974227766292721, -0.1203054391230862, 0.30101695478544843]), 1.4307332047561734, np.array([[0.6510399043201931, 0.24038803414511611, -0.8122657374777047], [-0.7644117708692768, -0.860515182927095, -0.2772061242208941], [0.3090141558638146, 0.03248396514079534, -0.3958654709905432]]), )

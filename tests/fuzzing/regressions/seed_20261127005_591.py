"""Fuzzer seed 20261127005, program 591: once internal.

Traceback (most recent call last):
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
    v2 = {'p': W, 'q': np.sin(y)}
    v3 = {k: v * 2.0 for k, v in v2.items()}
    v1 = v2['p'] * 0.5
    v4 = sum([np.sum(s * k) for k in range(3)])
    v7 = {'p': v4, 'q': np.sin(W)}
    v6 = v7['p'] * v7['q']
    return np.sum(np.tanh(v6) * v6) + np.sum(np.tanh(v1) * v1) + np.sum(np.tanh(W) * W)


ARGS = (np.array([[-0.8657603642346157, 0.7669079537357182, -0.1426759824103714], [-0.6763734982248044, -0.6241526810974454, 0.4902435967526898]]), np.array([1.4415664854032426, -0.13020746538780267, -0.13120132878867308]), 0.7624908875281992, np.array([[0.22318746134448622, 0.39348067685631954, -0.39308070987224397], [-0.528623982040064, -0.212697738344238, -0.14892962900947895], [0.21525858839897485, 0.6454275488114104, 0.6743183360775271]]), )

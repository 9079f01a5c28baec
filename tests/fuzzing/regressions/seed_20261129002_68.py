"""Fuzzer seed 20261129002, program 68: once internal.

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
    v4 = s * 1.0
    for i in st.checkpointed(range(0), 2):
        v4 = v4 + helper_loop(v4, 2) * 0.3
    v8 = helper_seq([v4, (s, v4 * 2.0)], (v4, np.sin(s)))
    return np.sum(np.tanh(v8) * v8)


ARGS = (np.array([[[-1.1051202459038052, 0.11078377543449455, -1.3916047913392857, -0.11395724387010205], [-0.131797096524516, -0.7257836264458501, 0.14355662183351062, -0.014600300424225195], [-0.4084712250546992, -1.2077186826821538, 0.791755830844301, 0.09892857707065765]], [[0.6066073091547718, 0.19226661231140563, 0.15065667815019304, -0.42742117093531656], [-0.6431478401862242, -1.5532990864920424, -0.6108116764119214, -0.6699393972502702], [-0.037926137910485005, 0.27104255409997535, 0.040256752327511434, 1.3419495283634357]]]), np.array([[-1.164338829357667], [0.4429250991822122], [-0.8433371531954843]]), 1.2456472577964863, np.array([[0.6767822475449401, 0.600295345671666, -0.1306249750955914, 0.5241612336782797], [0.1854314640761928, 0.020596705723655895, -0.20780747378278933, 0.0905252874283729], [0.41955090805822587, 0.17559831532858292, 0.3233085152351273, 0.22517600813943425], [0.6999856947845552, -0.3057753338312433, -0.2917260815411451, -0.17210535513677552]]), )

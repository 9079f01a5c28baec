"""Fuzzer seed 5150, program 3: once wrong.

reverse-mode (generic code) derivative of program disagrees with finite differences: <vjp(v), u> = 0.07710090806748471 but <v, J u> ~= 1.375868943498515 (difference 1.3, arguments (0, 1, 2, 3))
"""

import numpy as np


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


def helper_seq(xs, *rest):
    return xs[0] * np.cos(xs[1][0]) + rest[0][1] * xs[1][1]


def program(x, y, s, W):
    v1 = W * W
    v3 = helper_seq([v1, (v1, v1 * 2.0)], (v1, np.sin(v1)))
    return np.sum(np.tanh(v3) * v3) + np.sum(np.tanh(x) * x)


ARGS = (np.array([[0.874011561619546, 0.8908690615470469, -0.8456503470958936], [0.38217549782788357, -0.7044062614779637, 0.24660662331313954]]), np.array([-0.01968034937627605, -0.5588550588704624, -0.10303550597122578]), 1.1154150703820833, np.array([[0.2532169809869498, 0.888985569509515, 0.10653558897472494], [0.1890269131612602, -0.1799249335961419, -0.1257683948619721], [0.3607339213796398, -0.6770702209918122, 0.32088675633727487]]), )

"""Fuzzer seed 5150, program 69: once wrong.

reverse-mode (generic code) derivative of program disagrees with finite differences: <vjp(v), u> = -0.05143403213431645 but <v, J u> ~= -0.2281186684292921 (difference 0.177, arguments (0, 1, 2, 3))
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
    v1 = y * 2.0 + 1.0
    v2 = np.mean(y, axis=0)
    v3 = helper_seq([v1, (v2, v1 * 2.0)], (v1, np.sin(v2)))
    v7 = -v1
    return np.sum(np.tanh(W) * W) + np.sum(np.tanh(v7) * v7) + np.sum(np.tanh(v3) * v3)


ARGS = (np.array([[[[-0.4505589862718136, 1.7692203041109333], [-0.9679613432549162, -0.2804114450843957], [0.046099975949523087, 0.7939750805761813]], [[-0.3043024422736597, -0.41576996593221605], [0.4927961677235301, -0.3694170722348172], [-0.4792256740862682, -0.9399013878981024]]], [[[0.7789878629560338, -1.3485459799857664], [0.8213437762071825, -0.09717263462530584], [-0.9448698649500333, -1.0253421572482795]], [[0.31815008856750454, -0.13195533203133303], [0.3740121022507922, -0.2652828132141307], [0.5020889086816086, 0.7399457363987642]]]]), np.array([[0.7398188750094185], [-0.5398697758543868], [1.7630409942718777]]), 0.6786373013282115, np.array([[0.1273637596603416, -0.6597673816973104], [-0.047883363712537055, -0.5032505220545358]]), )

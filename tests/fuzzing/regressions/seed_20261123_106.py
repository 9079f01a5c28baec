"""Fuzzer seed 20261123, program 106: once internal.

Traceback (most recent call last):
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


def program(x, y, s, W):
    if np.sum(s) > 4.0:
        return np.sum(s * s)
    v2 = W * 1.0
    for i in range(3):
        v2[i] += 1.0
    v4 = []
    for k in range(3):
        v4.append(v2 * (k + 1.0))
    v3 = np.stack(v4)
    v6 = v3.copy()
    for i in range(3):
        v6[i] += 2.0 * np.pi
    return np.sum(np.tanh(W) * W) + np.sum(np.tanh(s) * s) + np.sum(np.tanh(v6) * v6)


ARGS = (np.array([-0.06110413185033686, 0.3546970159593163, 0.6881891078072118]), np.array([-0.06440064521890505]), 1.0780450421571048, np.array([[-0.15805037672199396, 0.17414857069133535, 0.4585995960317973], [0.37129209685425313, -0.0418983920990444, -0.5871376015094165], [-0.20554149021359658, 1.037947809168182, -0.12367257680461331]]), )

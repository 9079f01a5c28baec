"""Fuzzer seed 1001, program 145: once internal.

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
    v1 = helper_branch(s)
    v2 = helper_mix(v1, W)
    return np.sum(np.tanh(W) * W) + np.sum(np.tanh(x) * x) + np.sum(np.tanh(v2) * v2)


ARGS = (np.array([[-0.3883367514532121, -0.8523511906996155, 0.5677384582309102], [-0.4809081751798547, -0.15022336039983486, -0.021285735156327423]]), np.array([0.4284701740017491, 0.5539492339179092, 1.1809657604365151]), 0.5375152984248326, np.array([[-0.5471120471914924, 0.37755597174396754, 0.4236255492397913], [-0.7071787550709934, -0.1546236239800092, -0.6615456982814821], [0.6978102789969568, 0.27484668480131946, -0.47513684936728734]]), )

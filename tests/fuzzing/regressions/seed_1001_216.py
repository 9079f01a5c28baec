"""Fuzzer seed 1001, program 216: once internal.

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
    v1 = np.exp(np.tanh(y))
    v2 = 1.0 / (1.5 + np.sin(v1))
    v5 = helper_branch(v2)
    return np.sum(np.tanh(v5) * v5) + np.sum(np.tanh(y) * y)


ARGS = (np.array([0.8966419268182814, -0.2935225780531435, 0.8626004553090193]), np.array([0.5619093606654362]), 1.2957412801127515, np.array([[-0.6764774256401458, -0.4040263423804306, 0.6055404532383073], [0.116043949878172, -0.2558193996322967, -0.095710003212909], [0.4302058718656251, 1.2358795551113215, -0.3487566021204579]]), )

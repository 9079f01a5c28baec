"""Fuzzer seed 1001, program 228: once internal.

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
    v2 = helper_branch(y)
    if np.sum(v2) > 4.0:
        return np.sum(v2 * v2)
    return np.sum(np.tanh(W) * W)


ARGS = (np.array([[-0.2922283987844852, 0.03456468611331911, -0.29846286325301846], [-0.06825163298792299, -1.2221959413597396, 0.6063933150359723]]), np.array([-1.1019557495194108, 1.0439749961010174, 0.1458337188262862]), 0.710194842394386, np.array([[0.22686396352610766, -1.128652962139923, -0.3347061486196517], [-0.8067227356782014, -0.2246753830133527, 0.2132262937177621], [-0.04159913750442182, 0.19101346738195826, -0.409026872114555]]), )

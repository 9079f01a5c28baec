"""Fuzzer seed 1, program 35: once refused.

MissingRuleError: /tmp/srctrans-generated/program_reverse_ec75e363ab96.py:329 (in program_grad): no forward-mode rule for np.logical_not
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
    v3 = y * 1.0
    v4 = y * 1.0
    v4[1:] += np.sin(y[1:])
    v5 = np.zeros_like(v4)
    v5[...] *= v4[...] * v4[...]
    if np.sum(x) > 4.0:
        return np.sum(x * x)
    return np.sum(np.tanh(y) * y) + np.sum(np.tanh(v3) * v3) + np.sum(np.tanh(v5) * v5)


ARGS = (np.array([[[[0.37418479459120224, -1.1716813944381732], [0.47766075983740014, -0.17130125009880395], [0.2403739988733923, 0.4854825087480011]], [[0.64855657366924, -0.08202107489283057], [-0.9978490193686843, 0.7923360425107344], [0.45707515850949476, -0.10047206070448259]]], [[[-0.06424025840032518, -0.36742031280400095], [-0.13407938126887872, 0.35720397689238725], [-0.48771853420272576, 0.2749213544726272]], [[0.021618676964818763, 0.47874294246776916], [0.24388330933773325, 0.19717334032830375], [-0.018039037135151974, -0.7368888181356039]]]]), np.array([[0.752736518007142], [-0.9882807502619233], [-0.5271021639140231]]), 0.5076431639207061, np.array([[-1.190910398457189, -0.45605914986243967], [0.11245221168818174, 0.38311837484566086]]), )

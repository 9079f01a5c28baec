"""Fuzzer seed 1, program 38: once refused.

MissingRuleError: /tmp/srctrans-generated/program_reverse_12f0c274c882.py:212 (in program_grad): no forward-mode rule for np.logical_not
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
    v3 = np.tanh(x)
    v9 = x * 1.0
    for i in range(2):
        if i == 1:
            continue
        v9 = np.tanh(v9 * 0.9 + x * i)
    return np.sum(np.tanh(v9) * v9) + np.sum(np.tanh(v3) * v3)


ARGS = (np.array([-1.092730856293665, 0.27002458291673453, -0.40183340696294234]), np.array([1.2419389411154893]), 0.8106602441984138, np.array([[0.14911363829980268, 0.7336393588020508, -0.3397257618704178], [0.35396800932902395, 0.22298860322520928, 0.1175206451982078], [0.8306929634693121, -0.04417052359125017, -0.20356939023476678]]), )

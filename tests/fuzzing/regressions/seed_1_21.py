"""Fuzzer seed 1, program 21: once wrong.

forward-mode derivative of the gradient of program disagrees with finite differences: <v, jvp(u)> = -1.6270948319687903 but <v, J u> ~= -1.342869893995263 (difference 0.284, arguments (0, 1, 2, 3))
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
    v4 = x.copy()
    v4[...] *= np.sin(x[...])
    return np.tanh(v4) * 2.0


ARGS = (np.array([0.3485497938679574, -0.5103945373308827, -1.1373091895807146]), np.array([-0.6194291737545274]), 1.3237674434101931, np.array([[1.3024292771492518, -0.5122034387821427, 1.2094289019468232], [0.09824841341659245, 0.1450649106897491, -0.3325348027824853], [0.28545744414070917, -0.1854977682099437, 0.3333299047403278]]), )

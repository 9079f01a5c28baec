"""Fuzzer seed 5150, program 113: once wrong.

reverse-mode (generic code) derivative of program disagrees with finite differences: <vjp(v), u> = 0.0 but <v, J u> ~= 0.2861311155405697 (difference 0.286, arguments (0, 1, 2, 3))
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
    v4 = []
    v4.append([W, s * 2.0])
    v4.append((W * W,))
    v3 = v4[0][1] * v4[1][0]
    return np.sum(np.tanh(v3) * v3)


ARGS = (np.array([[[[-0.1265674311937382, -0.20529724063951993], [0.5010430744230147, -0.19595594620435172], [0.0009069045178672577, 1.7701964841106603]], [[-0.43469134762637435, -1.188973549543664], [-0.2640346718656443, -0.278685855497265], [-1.2271086513549754, 1.0022732023344647]]], [[[0.028206649464344737, 0.18121738567717902], [-0.23396480570983055, -0.25082101845815374], [-0.1791870583532273, 0.09456046533750406]], [[0.4482406295549521, -0.267886529462919], [-1.0200463793106673, 1.039338262600478], [-0.5127897661646021, -0.10642916007556584]]]]), np.array([[0.45187910891121913], [-0.6531860961972447], [1.461247740498077]]), 0.791350820357238, np.array([[-0.6828321247419706, -0.07575595687649413], [0.38897351473904523, 0.648901187763983]]), )

"""Functions whose JVPs srctrans specialises on the shapes of a call (tests/test_forward_specialised.py)."""

import numpy as np


def mlp(W1, b1, W2, b2, x, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return np.sum((y - t) ** 2)


def broadcast_sum(x, b):
    # the tangent of x + b along b alone is b's tangent, smaller than the sum
    return np.mean((x + b) ** 2, axis=0)


def grows_in_a_loop(x, n):
    # h changes shape at every step: its measured shape must not be trusted
    h = x
    for i in range(n):
        h = np.concatenate([h, np.sin(h[-1:]) * x[:1]])
    return np.sum(h * h)


def branch_shapes(x, s):
    # y has one shape on one path and another on the other
    if s > 0.0:
        y = np.outer(x, x)
    else:
        y = x * 2.0
    return np.sum(np.tanh(y)) * s


def calls_a_helper(x, w):
    return np.sum(helper(x, w) ** 2)


def helper(a, w):
    return np.tanh(a @ w)


SCALE = 2.0


def reads_a_global(x):
    return np.sum(SCALE * x * x)


def loop_of_scalars(a, x):
    for i in range(20):
        x = a * x * (1.0 - x)
    return x


def other_helper(a, w):
    return np.sin(a @ w)



def list_then_array_over_lines(x):
    # v holds a list, then each of its arrays, assigned by statements spread over lines:
    # the measuring run must see each line's assignments to leave v generic
    v = [x,
         x * x]
    s = 0.0
    for v in (
            v):
        s = s + np.sum(
            v * x)
    return s

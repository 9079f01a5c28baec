"""Loops over numbers and arrays that exercise the loop optimisations.

Each function is written as a user would write it. The comments say which
pass a program exercises: recomputing cheap scalar values in the reversed
loop instead of saving them (``optimise/remat.py``), a reversed loop that
iterates over its saved values (``control.iterate_saved_values``), and the
folding of adjoint contributions and negations (``optimise/accumulate.py``,
``optimise/negation.py``).
"""

import numpy as np


def logistic(a, x):
    # two temporaries recomputed from the restored x; one value saved per step
    for i in range(30):
        x = a * x * (1.0 - x)
    return x


def dependent_temporaries(a, x):
    # u, v and w read each other: each is recomputed before the one that reads it
    for i in range(12):
        u = a * x
        v = u + 1.0
        w = v * u
        x = 0.1 * w + 0.5 * x
    return x


def loop_variable_in_temporary(a, x):
    # s reads the loop variable, which the reversed loop reads back from the range
    for i in range(8):
        s = a * i
        x = x * (1.0 - 0.01 * s)
    return x


def old_value_read(a, x):
    # y reads the t of the previous step: t's saved value is needed, not recomputed
    t = 0.5
    y = 0.0
    for i in range(10):
        y = y + t * x
        t = a * x
        x = 0.9 * x + 0.1 * t
    return y + t


def temporary_read_after_the_loop(a, x):
    # t's last value is read after the loop, by the backward pass of `t * t`
    t = 0.0
    for i in range(6):
        t = a * x
        x = x - 0.1 * t
    return x + t * t


def nested_scalar_loops(a, x):
    # inner temporaries, an outer temporary read inside the inner loop
    for i in range(4):
        scale = a * x
        for j in range(3):
            x = x * (1.0 - 0.1 * scale) + 0.01 * j
        x = x + 0.05 * scale
    return x


def scalars_and_arrays(a, v):
    # scalar temporaries are recomputed; array temporaries stay saved
    s = 0.3
    for i in range(5):
        c = a * s
        v = np.tanh(v * c + 0.1)
        s = s + 0.1 * np.sum(v)
    return np.sum(v * v) + s


def branch_in_scalar_loop(a, b, x):
    # a branch inside the loop: its condition and branch values stay on the tape
    for i in range(10):
        s = a * b
        if x > 0.0:
            x = s * x - 0.5
        else:
            x = x * x + s
    return x


def subtraction_chain(x, W):
    # the adjoint of a subtracted log-sum: a negation that a difference absorbs
    z = x @ W
    return np.sum(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)) * 0.5)


def negated_and_added(x):
    # x gets two contributions, the second a negation: one subtraction
    y = 1.0 - x
    return np.sum(np.exp(y) * x)


def while_scalar_loop(a, x):
    # a while loop: its reversed loop has no loop variable to read back
    n = 0.0
    while n < 5.0:
        s = a * x
        x = x * (1.0 - 0.1 * s)
        n = n + 1.0
    return x

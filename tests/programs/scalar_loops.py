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


# --- a loop's saved values in a list of its own (optimise/step_lists.py) ---------------

def two_loops_in_turn(a, x):
    # each loop saves x once a step: each gets its own list
    for i in range(6):
        x = a * x * (1.0 - x)
    for k in range(4):
        x = x * x + 0.1 * a
    return x


def loop_over_an_array(a, x, weights):
    # a loop over an array's rows is a loop over range(len(...)): its own list too
    for w in weights:
        x = np.sin(a * x + w)
    return x


def loop_left_early(a, x):
    # a break: the steps that ran are counted, the tape stays
    for i in range(50):
        x = a * x * (1.0 - x)
        if x > 0.64:
            break
    return x


def loop_from_a_start(a, x):
    # range(2, 9): the variable is not the step, the tape stays
    for i in range(2, 9):
        x = a * x * (1.0 - x) + 0.001 * i
    return x


def loop_inside_a_loop(a, x):
    # the inner loop is not at the top: its saved values share the outer loop's tape
    for i in range(3):
        for j in range(4):
            x = a * x * (1.0 - x)
        x = x + 0.01
    return x


def values_saved_around_loops(a, x):
    # a while loop's values stay on the tape, pushed after the first loop's and before the
    # last one's: each for loop gets its own list, the tape keeps its order
    for i in range(4):
        x = a * x * (1.0 - x)
    n = 0.0
    while n < 3.0:
        x = a * x * (1.0 - x) + 0.01
        n = n + 1.0
    for k in range(5):
        x = x * x + 0.1 * a
    return x


def saved_names_that_make_keywords(x, y):
    # i is saved each step: its list cannot be called `is` (a is x[i], read again from x)
    for i, a in enumerate(x):
        y = np.sin(a * y) * (i + 1.0)
    return y


# --- a parameter's gradient summed in place (optimise/in_place.py) ---------------------

def rnn_sums(Wx, Wh, b, xs, h0):
    # dWx, dWh, db start at zeros and only sum a term a step: added in place
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def counted_factor(a, x):
    """A factor computed from the loop's counter: recomputed from the range in the
    backward pass, not saved."""
    for i in range(3):
        c = i * a
        x = x * c + x
    return x


# loops over lists: their cotangents written entry by entry (optimise/entry_cotangents.py)

def over_a_list(ws, x):
    for w in ws:
        x = np.tanh(w * x)
    return np.sum(x)


def over_a_tuple_of_dicts(layers, x):
    for layer in layers:
        x = np.tanh(x @ layer["W"] + layer["b"])
    return np.sum(x * x)


def over_pairs(pairs, w):             # per-example loss over (x, y) pairs, an int among them
    total = 0.0
    for x, y, n in pairs:
        total = total + n * np.sum((np.tanh(x @ w) - y) ** 2)
    return total


def over_a_list_left_early(ws, x):
    for w in ws:
        if np.sum(x) > 50.0:
            break
        x = x * w + 1.0
    return np.sum(x)


def entry_read_twice(ws, x):          # two reads of each step's entry: still one write
    for i in range(len(ws)):
        x = np.sin(ws[i] * x) + ws[i]
    return np.sum(x)


def damped(w, x, steps):
    # no backward step, nor the code after the loop, reads a value the steps overwrite
    # (x * w's derivative reads x and w): nothing saved, a counted reversed loop
    r = x * w
    for _ in range(steps):
        r = 0.5 * r
    return np.sum(r * r)

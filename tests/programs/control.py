"""Programs with branches and loops (test_control_flow.py). One function per construct."""

import numpy as np


def branch_on_data(x, W):
    h = x @ W
    if np.sum(h) > 0:
        y = np.tanh(h)
    else:
        y = h * 2.0
    return np.sum(y * y)


def elif_chain(x):
    s = np.sum(x)
    if s > 1.0:
        y = x * x
    elif s > -1.0:
        y = np.sin(x)
    else:
        y = -x
    return np.sum(y)


def branch_assigns_only_one_side(x, y):
    z = x * y
    if np.max(x) > 0.5:
        z = z + np.exp(x)
    return np.sum(z)


def rnn(xs, W, U, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h * h)


def scalar_recurrence(a, x):
    for i in range(100):
        x = a * x * (1.0 - x)
    return x


def grows_until_large(x):
    n = 0.0
    while np.sum(x * x) < 100.0:
        x = x * 1.5
        n = n + 1.0
    return np.sum(x) + n


def nested_loops(x, W):
    acc = x * 0.0
    for i in range(3):
        for j in range(2):
            acc = acc + np.sin(x * (i + 1) + j) @ W
    return np.sum(acc * acc)


def branch_inside_loop(x):
    y = x
    for i in range(4):
        if np.sum(y) > 2.0:
            y = y * 0.5
        else:
            y = y * y + 1.0
    return np.sum(y)


def loop_inside_branch(x, flag):
    y = x
    if flag:
        for i in range(3):
            y = np.tanh(y) + x
    else:
        y = y * 3.0
    return np.sum(y)


def zero_trip_loop(x, n):
    y = x * 2.0
    for i in range(n):
        y = y * x
    return np.sum(y)


def self_reference(x):
    for i in range(3):
        x = x * x + x
    return np.sum(x)


def two_carried_values(x, y):
    a = x
    b = y
    for i in range(5):
        a, b = b, a * b + 0.1
    return np.sum(a) + np.sum(b * b)


def loop_index_in_arithmetic(x):
    total = x * 0.0
    for i in range(1, 6):
        total = total + x ** i / i
    return np.sum(total)


def temporary_inside_loop(x, W):
    out = 0.0
    for i in range(3):
        z = x @ W
        out = out + np.sum(np.tanh(z) * (i + 1))
        x = np.tanh(z) @ W.T
    return out


def helper_step(h, W):
    return np.tanh(h @ W)


def helper_in_loop(h, W):
    for i in range(3):
        h = helper_step(h, W)
    return np.sum(h)


def augmented_in_loop(x):
    s = 0.0
    for i in range(4):
        s += np.sum(np.cos(x * i))
    return s


def loop_over_rows(X, w):
    total = 0.0
    for row in X:
        total = total + np.sum(np.tanh(row * w))
    return total


def loop_over_zip(X, Y):
    total = 0.0
    for x, y in zip(X, Y):
        total = total + np.sum(x * y * y)
    return total


def loop_over_enumerate(X):
    total = 0.0
    for i, row in enumerate(X):
        total = total + (i + 1.0) * np.sum(row ** 2)
    return total


def loop_over_list_of_arrays(x, W1, W2):
    h = x
    for W in [W1, W2]:
        h = np.tanh(h @ W)
    return np.sum(h)


def continue_skips(x):
    total = 0.0
    for i in range(6):
        if i % 2 == 0:
            continue
        total = total + np.sum(x ** i)
    return total


def break_stops(x):
    y = x
    for i in range(20):
        y = y * 1.3
        if np.sum(y) > 10.0:
            break
        y = y + 0.1
    return np.sum(y * y)


def while_with_break(x):
    y = x
    while True:
        y = np.sin(y) + y
        if np.max(y) > 3.0:
            break
    return np.sum(y)


def early_return(x):
    if np.sum(x) > 0.0:
        return np.sum(x * x)
    y = np.exp(x)
    return np.sum(y)


def return_from_loop(x):
    y = x
    for i in range(10):
        y = y * 2.0
        if np.sum(y) > 5.0:
            return np.sum(np.sin(y))
    return np.sum(y)


def conditional_expression(x, y):
    z = x * y if np.sum(x) > 0 else x - y
    return np.sum(z * z)


def and_or_conditions(x):
    s = np.sum(x)
    if s > 0.0 and np.max(x) < 2.0 or s < -5.0:
        y = np.sin(x)
    else:
        y = x * 3.0
    return np.sum(y)


def not_condition(x):
    y = x
    if not np.sum(x) > 1.0:
        y = y * y
    return np.sum(y)


def break_reads_loop_variable(x):
    y = x
    for i in range(1, 6):
        y = y * i
        if np.sum(y) > 3.0:
            break
    return np.sum(y)


def break_in_loop_over_rows(X):
    t = 0.0
    for row in X:
        t = t + np.sum(row * row)
        if t > 1.0:
            break
    return t


def enumerate_with_start(X):
    total = 0.0
    for i, row in enumerate(X, 1):
        total = total + i * np.sum(row)
    return total


def shaped_like(alpha, x):
    """The output reads x only for its number of dimensions: its tangent along x is zero."""
    return alpha[:, None] if np.ndim(x) == 2 else alpha


def parameter_reassigned_in_a_branch(x, w):
    # x is assigned once, in a branch, but had a value before: its old value is saved
    if np.sum(w) > 0.0:
        x = np.sin(x) * w
    else:
        w = np.cos(w) * x
    return np.sum(x * w)


def branches_outside_loops(x, w):
    # each branch's temporaries are assigned once: nothing needs the tape
    r = x * w
    if np.mean(r * r) > 1.0:
        loss = np.sum(np.sqrt(r * r + 1.0))
    elif np.mean(r) > 0.0:
        loss = 0.5 * np.sum(r * r)
    else:
        loss = np.sum(np.tanh(r) * w)
    return loss


def shape_depends_on_the_path(x, w, c):
    # y is (3,) on one path and () on the other, and z follows it
    if c > 0.0:
        y = x * w
    else:
        y = np.sum(x * w)
    z = y * 2.0
    return np.sum(z * x)


def output_shape_depends_on_the_path(x, c):
    if c > 0.0:
        out = x * x
    else:
        out = np.sum(x * x)
    return out


def list_grows_on_one_path(x, c):
    hs = [x]
    if c > 0.0:
        hs.append(x * 2.0)
    s = np.stack(hs)
    return np.sum(s * s)


def while_loop_grows_the_state(x, w):
    h = x * 1.0
    while np.sum(h * h) < 40.0:
        h = np.concatenate([h, h * w[0]])
    return np.sum(np.sin(h))


def _mix(a, b):
    return np.tanh(a) * b + a


def loop_breaks_after_the_state_changes_shape(x, s):
    # a number on the first step, an array after: how many steps run depends on values, and
    # so do the shapes _mix is called with
    v = s * 1.0
    for i in range(2):
        if np.sum(v) > 2.0:
            break
        v = v * 0.5 + _mix(x, v)
    return np.mean(np.sin(v))


def while_grows_when_it_runs(x, c):
    # no step at all on one path: the state keeps its shape; steps on the other: it grows
    h = x * 1.0
    while np.sum(h) < c:
        h = np.concatenate([h, h * 0.5]) + 1.0
    return np.sum(np.sin(h))


def fixed_point_iteration(W, x):
    # the state keeps its shape however many steps run
    h = np.tanh(x @ W)
    delta = 1.0
    while delta > 1e-10:
        h_next = np.tanh(x + h @ W)
        delta = np.max(np.abs(h_next - h))
        h = h_next
    return np.sum(h * h)


def while_then_broadcast(x, b, c):
    h = x * 1.0
    while np.sum(h) < c:
        h = h * 1.5 + 1.0
    return np.sum(h * b)


def piecewise_loss(w, X, y):
    """A loss with one formula per range of the residuals' scale (each branch adds to dw)."""
    r = X @ w - y
    scale = np.mean(r * r)
    if scale > 4.0:
        loss = np.sum(np.sqrt(r * r + 1.0))
    elif scale > 0.25:
        loss = 0.5 * np.sum(r * r)
    else:
        loss = 0.5 * np.sum(r * r) + 0.1 * np.sum(w * w)
    return loss


def products_of_a_spread_seed(x, c):
    """The cotangent np.sum spreads is read by several products, and by a square."""
    s = np.sum(x * x)
    if c > 0.0:
        s = s * s
    return s


def while_then_broadcast_rolled(x, b, c):    # a body whose shape srctrans cannot follow
    h = x * 1.0
    while np.sum(h) < c:
        h = np.roll(h, 1) * 1.5 + 1.0
    return np.sum(h * b)


def parameter_reused_as_loop_variable(xs, k):
    """``k`` picks a row, then names the loop's counter: the row read before the loop is
    ``xs[k]`` of the argument ``k``."""
    x = xs[k] * 1.0
    for k in range(3):
        x = x * (1.0 + 0.1 * k)
    return np.sum(x * x)

"""Programs that once gave silently wrong derivatives (issue 9; test_trust.py)."""

import collections
import functools

import numpy as np


# 1. augmented assignment of a constant into a subscript
def augmented_constant(x):
    y = x * 1.0
    y[0] += 1.0
    return np.sum(y * y)


def augmented_constant_kinds(x):
    y = x * 1.0
    y[1:3] *= 2.0
    y[x > 0] += 2.0 * np.pi
    y[-1] -= 3
    return np.sum(y * y)


def augmented_constant_in_loop(x):
    y = x * 1.0
    for i in range(3):
        y[i] += 1.0
    return np.sum(y * y)


def sum_seeds_a_loop_carried_adjoint(x):
    # np.sum(h) seeds h's adjoint with a scalar, which the specialised code once put in
    # place of every later value of the adjoint the loop carries
    w = x * 0.5
    hs = []
    h = x
    for t in range(3):
        hs.append(np.sin(h))
        h = np.tanh(h * w)
    return np.sum(np.stack(hs)) + np.sum(h)


# 2. in-place calls in statement position
def add_at(x):
    y = np.zeros(3)
    np.add.at(y, np.array([0, 1, 1]), x)
    return np.sum(y * y)


def copy_to(x):
    y = np.zeros(3)
    np.copyto(y, x * 2.0)
    return np.sum(y * y)


def put(x):
    y = x * 1.0
    np.put(y, [0, 2], x[:2] * 3.0)
    return np.sum(y * y)


def fill(x):
    y = x * 1.0
    y.fill(2.0)
    return np.sum(y * x)


def sort_in_place(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * np.arange(3.0))


def out_keyword(x):
    y = np.zeros(3)
    np.sin(x, out=y)
    return np.sum(y * y)


def out_keyword_clip(x):
    y = x * 1.0
    np.clip(y, -0.5, 0.5, out=y)
    return np.sum(y * y)


def fill_into(buf, v):
    buf[:] = v * 2.0


def writes_through_helper(x):
    y = np.zeros(3)
    fill_into(y, x)
    return np.sum(y * y)


# 3. repeated indices in a fancy-index write
def repeated_index_write(x):
    y = x * 1.0
    y[np.array([1, 1])] = x[:2]
    return np.sum(y * y)


def repeated_index_augmented(x):
    y = x * 1.0
    y[np.array([1, 1, 2])] += x * x
    return np.sum(y * y)


# 4. aliases
def alias_augmented(x):
    u = np.sin(x)
    v = u
    v += 1.0
    return np.sum(u * v)


def view_before_write(x):
    y = x * 1.0
    v = y[1:]
    y[1] = 5.0
    return np.sum(v * x[1:])


def reshape_view_before_write(x):
    y = x * 1.0
    v = y.reshape(3, 1)
    y[0] = 2.0
    return np.sum(v * v)


# 5. a loop variable reused by a later loop
def loop_variable_reused(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * i
    for i in range(1):
        s = s * 1.0
    return s


# 6. functools.wraps decorators
def doubled(f):
    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


@doubled
def decorated(x):
    return x * x


# 8. values treated as constant
def r_concat(x):
    return np.sum(np.r_[x, x * 2.0] ** 2)


def c_concat(x):
    return np.sum(np.c_[x, x * 2.0] ** 2)


def linspace_active(a, b):
    return np.sum(np.linspace(a, b, 5) ** 2)


def einsum_interleaved(x):
    return np.sum(np.einsum(x, (0, 1), (1, 0)) * x.T)


AXES = (0, 1)


def einsum_computed_axes(x):
    return np.sum(np.einsum(x, AXES, (1, 0)) * x.T)


def copy_call(x):
    y = np.copy(x)
    return np.sum(y * x)


# 9. every derivative differentiable again
def sin_loop(x):
    for k in range(2):
        x = np.sin(x)
    return np.sum(x)


def unused_list_loop(x):
    xs = []
    for k in range(3):
        xs.append(k)
    return np.sum(x * x)


def subscript_write_loop(x):
    z = np.zeros(3)
    for i in range(3):
        z[i] = x[i] * x[i]
    return np.sum(z * x)


def einsum_second(x):
    return np.einsum("ij,jk->ik", x, x).sum()


def builtin_max_args(a, b):
    return max(a * a, b * 3.0, a * b)


def stack_rows(x):
    return np.sum(np.vstack([x, x * x]) ** 2) + np.sum(np.hstack([x, np.sin(x)]) ** 2)


# 11. local functions and lambdas
def local_function(x):
    def h(a):
        return a * 2.0 + 1.0
    return np.sum(h(x))


def local_function_nested(x):
    def h(a):
        return np.sin(a * 2.0)
    return np.sum(h(x))


def local_lambda(x):
    g = lambda a: a * a + x
    return np.sum(g(x))


# 12. boolean masks
def relu_masks(x):
    return np.sum((x > 0) * x) + np.sum((x < 1) * x)


# 13. builtin max/min over a list
def max_of_list(a, b):
    return max([a, b * 2.0])


def min_of_list(a, b):
    return min([a * a, b * 2.0])


# 15. second order on containers
def loop_over_list(xs):
    s = 0.0
    for v in xs:
        s = s + np.sum(v * v * v)
    return s


def loop_over_dict(d):
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * v * v)
    return s


def list_call_append(x):
    xs = list()
    xs.append(x * x)
    xs.append(x)
    return np.sum(xs[0] * xs[1])


# 14. keywords a rule does not model
def sum_initial(x):
    return np.sum(x * x, initial=2.0)


# 10. outputs and inputs with no derivative
def returns_none(x):
    y = x * 2.0
    return None


def returns_string(x):
    return "done"


def uses_label(x, label):
    return np.sum(x * x)


def complex_output(x):
    return np.sum(x * 1j)


def abs_of(z):
    return np.sum(np.abs(z))


def full_of(x):
    return np.sum(np.full((2, 3), x * 2.0) ** 2) + np.sum(np.full_like(np.ones(3), x) * x)


def arange_from(a):
    return np.sum(np.arange(a, a + 3.5, 0.5) ** 2)


def stacked(x):
    return np.sum(np.vstack([x, x * x]) ** 2)


def hstacked(x):
    return np.sum(np.hstack([x, np.sin(x)]) ** 3)


def cubic_loop(x):
    for k in range(2):
        x = np.sin(x) * x
    return np.sum(x)


def appends_to_argument(xs, x):
    xs.append(x * 2.0)
    return np.sum(xs[-1])


Params = collections.namedtuple("Params", "w b n")


def named_tuple_loss(p):
    return np.sum(p.w * p.w * p.w * p.n) + p.b ** 3


def view_read_before_write(x):
    y = x * 1.0
    a = y[0:2]
    b = np.sum(a * a * a)
    y[0] = 5.0
    return b + np.sum(y * x)


def sorts_a_list(x):
    xs = [x[2], x[0], x[1]]
    xs.sort()
    return xs[0] * 2.0


# Displays handed on whole: each entry's cotangent goes back to it (reverse mode once
# dropped them, giving None or a partial gradient)
def takes_a_sequence(xs, *rest):
    return xs[0] * np.cos(xs[1][0]) + rest[0][1] * xs[1][1]


def display_to_helper(x, y):
    return np.sum(takes_a_sequence([x, (y, x * 2.0)], (x, np.sin(y))))


def display_appended(x, y):
    out = []
    out.append([x, y * 2.0])
    out.append((x * x,))
    return np.sum(out[0][1] * out[1][0])


def lists_made_in_one_statement(x, y):
    """Two lists made by one tuple assignment, then appended to in a loop."""
    xs, ys = [], []
    for i in range(3):
        x, y = x * np.cos(y), y + 0.1 * x
        xs.append(x)
        ys.append(y * y)
    return np.sum(np.array(xs)) + np.sum(np.stack(ys))


# -- lists that grow while they are read ----------------------------------------
# A read of xs[-1] (or np.stack(xs), or a helper given xs) before a later append saw
# the entry that was last *then*; the backward pass used to place its cotangent by the
# list's final length, so the gradient went to the wrong entry, or was lost.

def grows_from_last(a):
    xs = [a]
    for _ in range(3):
        xs.append(xs[-1] * a)
    return np.sum(xs[2] + xs[-1])


def matrix_powers(a, g):
    powers = [np.eye(3)]
    for _ in range(3):
        powers.append(powers[-1] @ a)
    return np.sum(sum(powers[k] @ g @ powers[3 - k] for k in range(4)))


def grows_from_stack(a):
    xs = [a]
    for _ in range(3):
        xs.append(np.sum(np.stack(xs), axis=0) * a)
    return np.sum(xs[-1])


def _mean_of(items):
    return np.mean(np.array(items), axis=0)


def grows_through_helper(a):
    xs = [a]
    for _ in range(3):
        xs.append(_mean_of(xs) * a)
    return np.sum(xs[-1])


def grows_from_slices(a):
    xs = [a, 2.0 * a]
    for _ in range(3):
        xs.append(xs[-2] * xs[-1] + np.sum(np.stack(xs[1:]), axis=0) + xs[::-1][0])
    return np.sum(xs[-1])


def grows_then_read_by_variable(a):
    xs = [a]
    for i in range(3):
        xs.append(np.sin(xs[i - 1]) * a)       # i - 1 is -1 on the first trip
    return np.sum(xs[-1])


# -- a named tuple's cotangent meeting a plain tuple's ------------------------------
# rt.add matched entries by key: a named tuple's are field names, a plain tuple's
# positions, so the plain tuple's contributions were dropped.

def _unpacked_logdet(result):
    sign, logdet = result
    return logdet * 3.0


def named_tuple_read_two_ways(a):
    result = np.linalg.slogdet(a)
    return result.logabsdet * 2.0 + _unpacked_logdet(result)


def named_tuple_returned(a):
    return np.linalg.eigh(a @ a.T + 3.0 * np.eye(3))


# -- assigning to an entry of a list ---------------------------------------------
# The write was modelled as an array write: the list became an array (an error for
# entries of different shapes, a zero second derivative for equal ones).

def list_entry_replaced(a, b):
    xs = [np.asarray(x) for x in [a, b]]
    xs[0] = xs[0] * 2.0
    return np.sum(xs[0] ** 2) + np.sum(xs[1] ** 3)


def list_entry_reshaped(a, b):
    xs = [a, b]
    xs[-1] = xs[-1][:, None] * a
    return np.sum(xs[-1] ** 2) + np.sum(xs[0])


# -- concatenating and repeating lists and tuples ---------------------------------
# `+` and `*` of sequences were differentiated as NumPy's elementwise arithmetic.

def concatenated_lists(a, b, c):
    xs = [a] + [b * c] + list([a, b][1:])
    return np.sum(xs[0] * xs[1] ** 2 * xs[2])


def concatenated_tuples(a, b, c):
    t = (a, b) + (c,)
    return np.sum(t[0] * t[2] ** 2 * t[1])


def repeated_list(a, b):
    xs = [a, np.sin(b)] * 2
    return np.sum(xs[0] * xs[-1] * xs[1] * xs[2])


def concatenated_parameters(xs, ys):
    zs = xs + ys
    return np.sum(zs[0] * zs[-1])


def sines(x):
    for _ in range(3):
        x = np.sin(x)
    return x


def through_a_looping_helper(x):
    return sines(x) * x


def _steps(a, n):
    t = a * 0.0
    for k in range(n):
        t = t + np.sin(a * (k + 1))
    return t


def loop_that_never_runs_calls_a_function(s, n):
    # the call's saved values are the placeholder None: the gradient of the gradient once
    # failed measuring their shapes
    v = s * 1.0
    for i in range(n):
        v = v + _steps(v, 2) * 0.3
    return np.sum(np.tanh(v) * v)


def read_then_appended_after(x, w):
    # hs[-1] is read before the last append, which nothing reads: the read's cotangent was
    # once sized like the list after it, so the inner loop's appends took the wrong entries
    total = 0.0
    for it in range(3):
        hs = [x]
        for k in range(it):
            item = hs[-1]
            h = item * w
            hs.append(h)
        item = hs[-1]
        hs.append(item * w)
        total = total + np.sum(item * item)
    return total


def self_assignment_in_a_branch(x, s):
    # y = y changes nothing; its backward statement once added y's adjoint to itself
    y = np.sin(x)
    if s > 0.0:
        y = y
    return np.sum(y * y)


def list_rebound_in_its_loop(x):
    # Python iterates the list the loop started with; the loop once read the new one's items
    xs = [x, 2.0 * x, np.sin(x)]
    s = 0.0
    for v in xs:
        s = s + np.sum(v * v)
        xs = [x * 10.0, x * 10.0, x * 10.0]
    return s


def array_rebound_in_its_loop(x):
    t = np.tanh(x)
    s = 0.0
    for v in t:
        s = s + v * v
        t = x * 10.0
    return s


def loop_target_named_as_its_sequence(x):
    v = [x, x * x, np.cos(x)]
    s = 0.0
    for v in v:
        s = s + np.sum(v * x)
    return s


def zip_rebound_in_its_loop(x):
    a, b = [x, x * x], [np.sin(x), 3.0 * x]
    s = 0.0
    for u, w in zip(a, b):
        s = s + np.sum(u * w)
        a = [x, x]
        b = [x, x]
    return s


def enumerate_rebound_in_its_loop(x):
    xs = [x, 2.0 * x, x * x]
    s = 0.0
    for i, v in enumerate(xs, 1):
        s = s + i * np.sum(v * v)
        xs = [x, x, x]
    return s


def items_rebound_in_their_loop(x):
    d = {"a": x, "b": x * x}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * np.sin(v))
        d = {"a": x * 10.0, "b": x * 10.0}
    return s


def loop_over_a_slice(x):
    xs = [x, 2.0 * x, np.sin(x), x * x]
    s = 0.0
    for v in xs[::-1]:
        s = s * 0.5 + np.sum(v * v)
    for v in xs[1:3]:
        s = s * 0.5 + np.sum(v)
    return s


def comprehension_over_a_slice(x):
    xs = [x, 2.0 * x, np.sin(x)]
    ys = [np.sum(v * v) for v in xs[::-1]]
    return ys[0] * 0.5 + ys[2]


def reversed_list(x):
    hs = []
    h = x
    for i in range(4):
        hs.append(h)
        h = np.tanh(h * 1.5 + 0.1)
    s = 0.0
    for v in reversed(hs):
        s = s * 0.5 + np.sum(v * v)
    return s


def reversed_array(x):
    s = 0.0
    for v in reversed(x):
        s = s * 0.7 + v * v
    for i, v in enumerate(reversed(x)):
        s = s + i * np.sin(v)
    return s


def reversed_ranges(x):
    s = 0.0
    for t in reversed(range(3)):
        s = s * 0.9 + x[t] * t
    for t in reversed(range(1, 3)):
        s = s * 0.8 + x[t] ** 2
    for t in reversed(range(0, 3, 2)):
        s = s * 0.7 + np.sin(x[t])
    n = 3
    for t in reversed(range(n - 1, -1, -2)):
        s = s * 0.6 + x[t] * s
    for t in reversed(range(n, 0)):
        s = s + x[t]                 # an empty range, reversed: no step
    return s


def reversed_sorted(x):
    s = 0.0
    for v in reversed(sorted([x[0], x[1] * 2.0, x[2] - 1.0])):
        s = s * 0.5 + v * v
    return s


def loop_writes_and_rebinds_its_sequence(x):
    X = np.outer(x, x)
    s = 0.0
    for row in X:
        X[0] = X[0] * 2.0
        s = s + np.sum(row * row)
        X = X * 0.5
    return s


# -- else blocks of loops: they run when the loop ends without break -----------------------

def for_else_over_an_array(x):
    s = 0.0
    for v in x:
        s = s + v
    else:
        s = s * 2.0
    return s


def for_else_over_a_list(x):
    s = 0.0
    for v in [x[0], x[1] * x[2]]:
        s = s + v * v
    else:
        s = s + np.sum(x)
    return s


def for_else_over_a_range(x):
    y = x
    for _ in range(3):
        y = y * x
    else:
        y = y + 1.0
    return np.sum(y)


def while_else(x):
    y, n = x, 0
    while n < 3:
        y = np.sin(y) * x
        n += 1
    else:
        y = y * y
    return np.sum(y)


def for_else_with_a_break_taken(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i]
        if i == 1:
            break
    else:
        s = s * 10.0
    return s


def for_else_with_a_break_not_taken(x):
    s = 0.0
    for v in x:
        if v > 100.0:
            break
        s = s + np.exp(v)
    else:
        s = s * 3.0
    return s


def nested_loop_else(x):
    s = 0.0
    for i in range(2):
        for v in x:
            if v * i > 100.0:
                break
            s = s + v * x[i]
        else:
            s = s * 1.5
    else:
        s = s + x[0]
    return s


def loop_else_with_a_return(x):
    for v in x:
        if v > 100.0:
            return v * 2.0
    else:
        return np.sum(x * x)

"""Programs that pin guards no other test noticed (issue 36): each gives a wrong answer or
an error when the guard it names is removed."""

import numpy as np


def exp_sum(x):                    # the fused gradient's del of dead arrays spares `_exp`
    return np.sum(np.exp(x))


def sorted_rows(x, w):             # y.sort() of a 2-D array sorts along the last axis
    y = x * 1.0
    y.sort()
    return np.sum(y * w)


def mask_entries(x, mask):         # booleans read from a mask by subscript stay not-float
    a = mask[0]
    b = mask[1]
    return x * a + x * b          # its gradient 1.0 * a + 1.0 * b must not fold to a + b


def _activation(x):
    return np.sin(x)


def _helper(x):
    return _activation(x) * 1.0


def calls_a_helper(x):             # the short path checks its callees are the ones it built for
    return np.sum(_helper(x) * x)


def times_transpose(x, a):         # the fused gradient of x is a.T, a view of an argument
    return np.sum(x * a.T)


def view_read_in_a_loop(x):        # the alias check sees `v` read before `y` is written
    y = x * 1.0
    v = y[0:2]
    s = 0.0
    for _ in range(2):
        s = s + np.sum(v * v)
        y[0] = y[0] * 2.0
    return s


def _mixed_steps(s, W):            # u is an array, then a float, then an array again
    v1 = W * 0.5
    v3 = v1 * 0.5
    for u in [v1, np.sin(s), v1 * s]:
        v3 = v3 * 0.5 + u * s
    return np.sum(np.tanh(v3) * v3)


def calls_a_loop_over_mixed_shapes(s, W):   # the callee's loop: specialised on its residuals,
    return _mixed_steps(s, W)               # u's last shape would stand for every step's


def squares(x):                    # specialised on its shapes
    return np.sum(x * x)


def positive_squares(x):           # a mask makes a shape depend on values
    return np.sum(x[x > 0] ** 2)


def dict_squares(d):               # a dict argument is not keyed on its shapes
    return np.sum(d["w"] ** 2)


def _counts(x):
    return np.sum(np.nonzero(x)[0] * 1.0) + np.sum(x * x)


def calls_counts(x):               # a callee that cannot be specialised
    return _counts(x) * 2.0


def scaled_by_spec(x, spec):       # spec holds a function: not keyed on shapes
    return np.sum(x * spec[0])


class Scales:
    def __init__(self, w):
        self.w = w


def dict_and_object(d, obj, x):    # specialised on d's and obj's entries' shapes
    return np.mean(d["w"]) * np.sum(x) + np.mean(obj.w) * np.sum(x * x)   # (a mean's count)


def scaled_attribute(obj, x):
    return np.sum(obj.w * x)


# -- the README's guarantees (tests/test_guarantees.py) ----------------------------------

def sine_into(x):
    y = np.zeros(3)
    np.sin(x, out=y)
    return np.sum(y)


def _fill(buf, v):
    buf[:] = v


def fills_a_buffer(x):
    y = np.zeros(3)
    _fill(y, x)
    return np.sum(y)


def alias_read_after_a_change(x):
    u = np.sin(x)
    v = u
    v += 1.0
    return np.sum(u * v)


def raises_on_negative(x):
    if np.any(x < 0):
        raise ValueError("negative entries")
    return np.sum(x)

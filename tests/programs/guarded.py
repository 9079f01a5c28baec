"""Programs that pin guards no other test noticed (issue 36): each gives a wrong answer or
an error when the guard it names is removed."""

import numpy as np
from scipy.special import logsumexp


def exp_sum(x):                    # the fused gradient's del of dead arrays spares `_exp`
    return np.sum(np.exp(x))


def sorted_rows(x, w):             # y.sort() of a 2-D array sorts along the last axis
    y = x * 1.0
    y.sort()
    return np.sum(y * w)


def sorted_columns(x, w):          # y.sort(0, "stable"): axis and kind given by position
    y = x * 1.0
    y.sort(0, "stable")
    return np.sum(y * w)


def mask_entries(x, mask):         # booleans read from a mask by subscript stay not-float
    a = mask[0]
    b = mask[1]
    return x * a + x * b          # its gradient 1.0 * a + 1.0 * b must not fold to a + b


def tested_entries(x, y):       # booleans made by NumPy's predicates stay not-float
    a = np.greater(y[0], 0.0)
    b = np.isfinite(y[1])
    return x * a + x * b          # its gradient is a + b as numbers: 2 when both hold


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


def positive_squares(x):           # a mask makes a shape depend on values (the picked
    return np.sum(x[x > 0] ** 2)    # entries' only: the rest is specialised)


def eigenvalue_sum(x):             # eigenvalues are real or complex as values decide
    return np.sum(np.real(np.linalg.eigvals(np.outer(x, x) + np.diag(x))))


def calls_eigenvalues(x):          # a callee that cannot be specialised
    return eigenvalue_sum(x) * 2.0


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


def unpacked_then_copied(xy):
    x, y = xy              # (the list may hold one array twice)
    x = x * 1.0            # new arrays: what x and y held is theirs no more
    y = y * 1.0
    x[0] *= 2.0
    return np.sum(x * y)


def copied_after_an_alias(x):
    u = np.sin(x)
    v = u
    u = u * 2.0            # u holds a new array; v holds the old one, which is written
    v += 1.0
    return np.sum(u * v)


def copied_in_a_branch(x, flag):
    u = np.sin(x)
    v = u
    if flag:
        v = v * 1.0        # not on every path: v may still be u
    v += 1.0
    return np.sum(u * v)


def raises_on_negative(x):
    if np.any(x < 0):
        raise ValueError("negative entries")
    return np.sum(x)


def dict_filled_in_a_loop(x):     # its backward pass restores the dict: a dict at 2nd order
    d = {}
    for i in range(3):
        d[i] = np.sin(x * (i + 1.0))
        d[i] = d[i] * x
    total = 0.0
    for i in range(3):
        total = total + np.sum(d[i] * d[i])
    return total



def _bump(p):
    p[0] += 1.0                   # an augmented write into the caller's array
    return np.sum(p * p)


def calls_a_bumping_helper(x):
    y = x * 2.0
    return _bump(y) + np.sum(y * y)   # reads the bumped array


def written_then_rebound(x):      # the write goes into srctrans's copy, not the caller's x
    x[0] = x[0] * 3.0
    x = x * 2.0
    return np.sum(x * x)


def every_shaped_helper(x, W, v):      # its derivatives call each helper of specialise's table
    # (the norms of x - x[0] include a 0: their cotangent keeps rt.ratio_or_zero)
    a = np.sum(x * v)
    b = np.sum(np.sum(x, axis=0) ** 2)
    c = np.sum(np.mean(x, axis=1) ** 2) + np.sum(np.var(x, axis=0))
    d = np.sum(np.max(x, axis=1)) + np.sum(np.prod(x, axis=0)) + np.sum(np.std(x, axis=1))
    e = np.sum((x @ W) ** 2) + np.sum(np.dot(x, W)) + np.sum(np.inner(x, v)) \
        + np.sum(np.outer(v, x[:, 0]))
    f = np.sum(np.tensordot(x, W, axes=1)) + np.sum(x[0] * x[1])
    g = np.sum(x / (1.0 + x * x)) + np.sum((v + WIDE) ** 2) + np.sum(logsumexp(x, axis=1) ** 2) \
        + np.sum(np.abs(x) * v) + np.sum(np.maximum(x, 0.5) * v) \
        + np.sum(np.linalg.norm(x, axis=1) ** 2) + np.sum(logsumexp(x * 0.5, axis=0)) \
        + np.sum(np.linalg.norm(x - x[0], axis=1)) \
        + np.sum((1.0 + x * x) ** v)
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] * 2.0 + 0.5 * y[i - 1]
    # a Cholesky factor's terms, after the writes (normalize/cholesky_terms.py)
    L = np.linalg.cholesky(x[:3] @ x[:3].T + 3.0 * np.eye(3))
    h = np.sum(np.log(np.diag(L))) + np.sum(np.linalg.solve(L, v) ** 2) \
        + np.linalg.solve(L.T, np.linalg.solve(L, v)) @ v + np.log(np.diag(L)) @ v \
        + np.diag(L) @ v
    lse = x[:, 0]
    for j in range(1, x.shape[1]):                   # a fold (normalize/folds.py) from x's
        lse = np.logaddexp(lse, x[:, j])             # slice, and one from another value
    started = np.tanh(x[:, 1])
    for m in range(2, x.shape[1]):
        started = np.logaddexp(started, x[:, m])
    ex = np.exp(x * 0.5)
    probabilities = ex / ex.sum(axis=1, keepdims=True)
    k = np.sum(np.log(probabilities) * v)            # a softmax's log (normalize/softmax_logs.py)
    z = x * 0.5                                      # softplus terms (normalize/softplus_terms.py)
    soft = np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z))) - z * v \
        + np.log(1.0 + np.exp(-np.abs(x))) + np.maximum(0.0, x)
    q = np.sum(np.diff(x, axis=0) ** 2) + np.sum(np.cumsum(x, axis=1) * v) \
        + np.sum(np.cumprod(1.0 + 0.1 * x, axis=0)) + np.trace(x[:3] @ x[:3].T) \
        + np.sum(np.diagonal(x[:3]) ** 2) + np.sum(np.take_along_axis(x, PICKS, axis=1) ** 2) \
        + np.sum(np.tile(v, (2, 1)) ** 2) \
        + np.linalg.slogdet(x[:3] @ x[:3].T + 3.0 * np.eye(3))[1]   # (rt.inv, rt.real_only)
    return a + b + c + d + e + f + g + h + np.sum(y * y) + np.sum(lse ** 2) + k \
        + np.sum(started ** 2) + np.sum(soft * v) + q


WIDE = np.linspace(0.0, 1.0, 9).reshape(3, 3)      # a constant wider than v
PICKS = np.array([[0], [2], [1], [0]])              # a column of x's each row


def smoothed(alpha, y):           # indices computed from a loop's counter are ints: specialised
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def picked_by_a_flag(x):          # a bool index adds an axis of length 1 or 0: by its value
    flag = np.sum(x) > 0
    return np.sum(x[flag] ** 2)

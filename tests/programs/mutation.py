"""Programs that write into arrays (test_mutation.py)."""

import numpy as np


def fill_rows(x, W):
    out = np.zeros((x.shape[0], W.shape[1]))
    for i in range(x.shape[0]):
        out[i] = np.tanh(x[i] @ W)
    return np.sum(out * out)


def overwrite_slice(x):
    y = x.copy()
    y[1:3] = y[1:3] * 2.0
    y[0] = np.sin(y[0])
    return np.sum(y * y)


def augmented_subscript(x, v):
    y = np.zeros_like(x)
    y[0] += v
    y[1:] += x[1:] * v
    y[::2] *= x[::2]
    return np.sum(y ** 2)


def masked_write(x):
    y = x * 1.0
    y[x > 0] = np.exp(y[x > 0])
    return np.sum(y)


def read_before_write(x):
    y = x.copy()
    z = y * y                  # reads y before the write below
    y[0] = 3.0
    return np.sum(z) + np.sum(y * x)


def write_scalar_broadcast(x, s):
    y = x * 1.0
    y[:, 0] = s
    return np.sum(y * y)


def writes_argument(x):
    x[0] = 1.0
    return np.sum(x)


def writes_argument_in_a_loop(x, a):
    for i in range(3):
        x[i] = x[i] * a + np.sin(x[(i + 1) % 3])
    x[1:] += a
    return np.sum(x * x)


def writes_dict_argument(d, a):
    d["w"] = d["w"] * a
    return np.sum(d["w"])


def writes_copied_dict_argument(d, a):
    d = dict(w=d["w"], b=d["w"] + 1.0)
    d["w"] = d["w"] * a
    return np.sum(d["w"] * d["b"])


def fills_then_reduces(x):
    """A fresh array filled entry by entry, its name then bound to a reduction of it (a new
    number, no view of anything: the writes are the function's own)."""
    v = np.zeros_like(x)
    for i in range(len(x)):
        v[i] = np.tanh(x[i]) * x[0]
    v = np.sum(v * x)
    return v * v


def reduces_into_an_argument(x, out):
    """np.sum(..., out=out) is ``out`` itself: writing into it writes into the argument."""
    v = np.sum(x * x, axis=0, out=out)
    v[0] = 1.0
    return np.sum(v)


def writes_view_of_argument(x):
    y = x.T
    y[0] = 1.0
    return np.sum(y)


def reads_with_every_index_kind(x, idx):
    a = x[-1]
    b = x[::-2]
    c = x[..., 0]
    d = x[None, :, 1]
    e = x[idx]                       # integer array with a repeat
    f = x[x > 0.0]
    g = x[1:, np.newaxis, :2]
    return (np.sum(a * a) + np.sum(b ** 3) + np.sum(np.sin(c)) + np.sum(d * 2.0)
            + np.sum(e ** 2) + np.sum(f) + np.sum(g * g))


def scatters_along_an_axis(x, v):
    """np.put_along_axis into an array of the function's and into the argument x, with a
    position named twice (the last value written is kept)."""
    y = x * 1.0
    np.put_along_axis(y, np.array([[1, 1, 0], [2, 0, 2]]), v * v, axis=1)
    np.put_along_axis(x, np.array([[0], [2]]), np.sin(v[:, :1]), axis=1)
    return np.sum(y ** 3) + np.sum(x * y)

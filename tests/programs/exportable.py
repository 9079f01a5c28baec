"""Functions whose derivatives the export tests write out as standalone modules."""

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

SCALE = 0.5
OFFSETS = np.array([0.25, -0.5, 1.0])
TOLERANCE = 1e-12


def mlp_loss(w1, b1, w2, b2, x, y):
    hidden = np.tanh(x @ w1 + b1)
    return np.mean((hidden @ w2 + b2 - y) ** 2)


def _shifted(v):
    return v + OFFSETS


def helper_loop(x, y):
    """A helper from this module, a global array, a loop and a reduction with a max."""
    z = _shifted(x) * y * SCALE
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sin(z[i]) * x[i]
    return total + np.max(z) + math.pi


def piecewise(x, a):
    """`if`/`elif` on values and a `while` loop."""
    if a > 1.0:
        y = np.exp(x * a)
    elif a > 0.0:
        y = x * x * a
    else:
        y = -x
    steps = 0
    while np.sum(y * y) > 1.0 and steps < 20:
        y = 0.5 * y
        steps += 1
    return np.sum(y)


@dataclass
class Params:
    w: np.ndarray
    b: float


def containers(params, data):
    """A dataclass and a dict as arguments."""
    pred = data["x"] @ params.w + params.b
    return np.sum((pred - data["y"]) ** 2)


def with_scipy(z):
    return np.sum(special.logsumexp(z, axis=1)) + np.sum(special.expit(z))


class Opaque:
    """A global of a kind an exported module cannot rebuild."""
    def __init__(self, value):
        self.value = value


GLOBAL_OBJECT = Opaque(2.0)
LIBRARY_METHOD = stats.norm.logpdf    # a method of a library's object: not importable by name


def reads_an_object(x):
    return np.sum(x * GLOBAL_OBJECT.value)


def reads_a_library_method(x):
    return np.sum(LIBRARY_METHOD(x) * x)


def _weight(n):
    return 1.0 / (n + SCALE)


def constant_helper(x):
    """Calls a helper of its own on constants only: the helper's source is copied."""
    return np.sum(x * x) * _weight(3)


def l1_spectrum(x):
    """Complex values (np.fft), and helpers whose derivatives read other runtime helpers."""
    spectrum = np.fft.rfft(x)
    return np.sum(np.abs(spectrum)) + np.sum(np.abs(x) * x)


# -- issue 36: what export must keep apart, keep as it is, and bind --------------------------

from programs.exportable_other import scaled, square as sq  # noqa: E402
from programs.exportable_other import SCALE as OTHER_SCALE  # noqa: E402,F401

HALF32 = np.float32(0.5)


def reads_two_scales(x):
    """SCALE here is 0.5; the callee reads its own module's SCALE, 3.0."""
    return np.sum(scaled(x) * SCALE)


def float32_constant(x):
    return np.sum(x * HALF32)


def renamed_import(x):
    return np.sum(sq(x) * sq(2.0))          # sq(2.0) is a constant: the export calls sq itself


# -- one function per kind of output, for exports run without srctrans ------------------

def output_array(x):
    return np.tanh(x) * x


def output_float(x):
    return float(np.sum(x * x))


def output_tuple(x):
    return np.sum(np.sin(x)), x * 2.0


def output_dict(x):
    return {"energy": np.sum(x ** 2), "direction": np.cos(x)}


def output_dataclass(x):
    return Params(np.exp(x), np.sum(x))


# -- issue 34: exports built for example arguments ------------------------------------

class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


def model_loss(model, x, y):
    return np.mean((model(x) - y) ** 2)


def times_transpose(x, a):           # the fused gradient of x is a.T, a view of an argument
    return np.sum(x * a.T)


LABEL = "scaled"                 # constants of every plain kind, read as globals
ENABLED = True
NOTHING = None


def reads_plain_constants(x):
    if ENABLED and LABEL == "scaled" and NOTHING is None:
        return np.sum(x * x) * 2.0
    return np.sum(x)


def with_a_shared_part(x, c):
    """A tuple output whose second entry is the same for every member (c unbatched)."""
    return np.tanh(x) * c, c * 2.0

"""Functions srctrans must refuse with a clear error (tests/test_bad_inputs.py).

Each function's offending line carries ``# marker: NAME``; the error must name
this file and that line. The constructs already in unsupported.py (try, with,
yield, async, global, nonlocal, del, import, recursion, loop else, writes into
arguments) are checked there too; this module adds the rest of the catalogue.
"""

import math
import statistics

import numpy as np
import scipy.linalg
import scipy.special

import srctrans as st


class Box:
    pass


def defines_class(x):
    class Local:  # marker: class
        pass
    return x * 2.0


def yields_from(x):
    yield from [x]  # marker: yield-from


def writes_attribute(x, box):
    box.value = x * 2.0  # marker: attribute-write
    return x


def leaves_stop_recording(x):
    for i in range(3):
        with st.stop_recording():
            if i > 1:
                break  # marker: jump-out-of-block
            x = x * 2.0
    return x


def assigns_loop_variable(x):
    for i in range(3):
        i = 2  # marker: range-variable
        x = x * 2.0
    return x


def unpacks_items(x, pairs):
    scales = [1.0]
    for scales[0], b in pairs:  # marker: unpacking-loop
        x = x * scales[0] + b
    return x


def loops_over_reversed(x):
    total = 0.0
    for v in reversed(np.tanh(x)):  # marker: reversed
        total = total + v
    return total


def chained_subscript_write(x):
    a = np.zeros(3)
    b = np.zeros(3)
    a[0] = b[1] = np.sum(x)  # marker: chained-write
    return a + b


def out_keyword(x):
    y = np.zeros_like(x)
    np.sin(x, out=y)  # marker: out
    return y


def unused_numpy_call(x):
    y = x * 1.0
    np.place(y, y > 0, 0.0)  # marker: unused-call
    return y


def partitions_in_place(x):
    y = x * 1.0
    y.partition(1)  # marker: partition
    return y


def sorts_list_in_place(x):
    items = [x[0], x[1]]
    items.sort()  # marker: list-sort
    return items[0]


def aliases(x):
    u = np.sin(x)
    v = u
    v += 1.0  # marker: alias
    return np.sum(u * v)


def set_display(x):
    s = {1.0, 2.0}  # marker: set-display
    return x * len(s)


def set_comprehension(x):
    s = {v for v in range(3)}  # marker: set-comprehension
    return x * len(s)


def dict_unpacking(x):
    d = {"a": x}
    e = {"b": x, **d}  # marker: dict-unpack
    return e["a"] + e["b"]


def lambda_argument(x):
    return np.sum(np.apply_along_axis(lambda r: r * 2.0, 0, x))  # marker: lambda-argument


def starred_call(x, *parts):
    return np.add(x, *parts)  # marker: starred-call


def walrus(x):
    if (y := x * 2.0) is not None:  # marker: walrus
        return y
    return x


def def_in_branch(x):
    if np.sum(x) > 0:
        def inner(z):  # marker: def-in-branch
            return z * 2.0
        return inner(x)
    return x


def local_early_return(x):
    def inner(z):
        if np.sum(z) > 0:
            return z  # marker: local-early-return
        return z * 2.0
    return inner(x)


def local_keyword_args(x):
    def inner(**zs):  # marker: local-keyword-args
        return zs["a"] * 2.0
    return inner(a=x)


def local_recursion(x):
    def inner(z):
        return inner(z)  # marker: local-recursion
    return inner(x)


def reserved_parameter(x, output_gradients=None):  # marker: reserved
    return x * 2.0


def grad_of_local(x):
    def inner(z, scale=2.0):         # a default: refused when passed to st.grad
        return np.sum(z * z) * scale
    return np.sum(st.grad(inner)(x))  # marker: grad-of-local


def jvp_of_local(x):
    def square(z):
        return z * z

    def inner(z):                    # calls another local function: refused when passed
        return np.sum(square(z))
    return st.jvp(inner, (x,), (x,))[1]  # marker: jvp-of-local


def einsum_computed_axes(a, axes):
    return np.sum(np.einsum(a, axes))  # marker: einsum-axes


LOG = []


def appends_to_global(x):
    LOG.append(x)  # marker: global-append
    return np.sum(x)


def appends_to_argument(x, items):
    items.append(x)  # marker: argument-append
    return np.sum(x)


def r_with_slice(x):
    return np.sum(np.r_[0:3, x])  # marker: r-slice


def pads_with_mean(x):
    return np.sum(np.pad(x, 1, mode="mean") ** 2)  # marker: pad-mode


def pads_with_values(x):
    return np.sum(np.pad(x, 1, constant_values=3.0) ** 2)  # marker: pad-keyword


# -- missing rules ------------------------------------------------------------------------------

def calls_scipy(x):
    return np.sum(scipy.linalg.logm(x))  # marker: scipy


def calls_stdlib_python(x):
    return statistics.fmean([x, 2.0 * x])  # marker: stdlib


def calls_three_without_rules(x):
    a = math.remainder(x, 0.3)  # marker: three-missing
    b = np.sum(scipy.linalg.logm(np.array([[x, x], [x, x]])))
    c = scipy.special.i0e(x)
    return a + b + c


def calls_unknown_name(x):
    return helper_that_does_not_exist(x)  # noqa: F821  # marker: unresolved


def calls_unknown_method(x):
    y = x * 2.0
    return y.tobytes()  # marker: unknown-method


@st.custom_gradient
def reverse_only(x):
    def backward(g):
        return g * 2.0
    return x * 2.0, backward


def calls_reverse_only(x):
    return reverse_only(x) * 3.0  # marker: reverse-only


# -- sources srctrans cannot read ---------------------------------------------------------------

made_by_exec = {}
exec("def from_exec(x):\n    return x * 2.0\n", made_by_exec)
from_exec = made_by_exec["from_exec"]
typed_lambda = eval("lambda x: x * 2.0")       # as typed at a prompt: no source to read


def returns_none(x):
    return None


def returns_string(x):
    return "x"


def plain(x, y):  # marker: plain
    return np.sum(x * y)


def rest_args(x, *rest):
    return np.sum(x * rest[0]) + np.sum(rest[1] ** 2)


def keyword_args(x, **options):
    return np.sum(x * options["scale"])


# -- np.linalg arguments and shapes without a derivative here --------------------------

def wide_qr(a):
    q, r = np.linalg.qr(a)  # marker: wide-qr
    return np.sum(r)


def pinv_rcond(a):
    return np.sum(np.linalg.pinv(a, rcond=1e-10))  # marker: pinv-rcond


# -- lists ------------------------------------------------------------------------------

def list_slice_write(a, b):
    xs = [a, b, a]
    xs[0:2] = [b]  # marker: list-slice-write
    return np.sum(xs[0])


def concatenates_parameters(xs, ys):
    zs = xs + ys  # marker: unseen-concatenation
    return np.sum(zs[0] * zs[-1])

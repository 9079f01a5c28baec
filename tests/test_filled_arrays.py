"""Layers that fill an array they make, one entry at a time, in nested loops (a convolution
written with ``out[n, f, i] = ...``, as course code writes it):

* a helper that writes only into arrays it makes is inlined (normalize/callees.py);
* entries written into such an array that nothing reads after are dead, with the array,
  in a gradient that does not return its value (optimise/dce.py);
* an inner loop's ``range`` and count, the same at every step of the loops around it, are
  not saved and restored step by step (differentiate/control.py, ``same_at_every_step``);
* a recurrence that adds into the slot behind its step does not zero its own slot after
  reading it (optimise/zeroings.py).

The derivatives are finite differences' either way, in both modes and to second order."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.differentiate.control import same_at_every_step

R = np.random.default_rng(41)


def _conv1d_forward(x, w, b, stride=1):
    N, C, L = x.shape
    F, _, K = w.shape
    L_out = 1 + (L - K) // stride
    out = np.zeros((N, F, L_out))
    for n in range(N):
        for f in range(F):
            for i in range(L_out):
                start = i * stride
                out[n, f, i] = np.sum(x[n, :, start:start + K] * w[f]) + b[f]
    return out


def conv1d_loss(x, w, b, dout):
    return np.sum(_conv1d_forward(x, w, b, 2) * dout)


def pairwise(X):
    """The inner loop's range depends on the outer step: saved and restored."""
    total = 0.0
    for i in range(X.shape[0]):
        for j in range(i + 1, X.shape[0]):
            total = total + np.sum(np.tanh(X[i] - X[j]) ** 2)
    return total


def filled_then_read(x):
    """The filled array is read after its loop: its entries stay."""
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out * out)


def conv_args():
    return (R.standard_normal((2, 3, 7)), R.standard_normal((2, 3, 3)), R.standard_normal(2),
            R.standard_normal((2, 2, 3)))


def test_the_convolution_is_inlined_and_its_output_never_made():
    args = conv_args()
    text = st.source(conv1d_loss, args=args, wrt=(0, 1, 2))
    fused = text.split("def conv1d_loss_grad(")[1]
    assert "_conv1d_forward_fwd" not in text
    assert "np.zeros((" not in fused and ".sum() + b[" not in fused


def test_an_inner_loops_range_the_same_at_every_step_is_not_saved():
    args = conv_args()
    text = st.source(conv1d_loss, args=args, wrt=(0, 1, 2))
    for name in ("_range", "trips"):
        assert f"tape.append({name}" not in text and f"{name}_2 = tape.pop()" not in text
    text = st.source(pairwise, args=(R.standard_normal((4, 2)),))
    assert "tape.append(_range" in text                   # range(i + 1, n): saved


def test_same_at_every_step_reads_the_loops_around_the_assignment():
    body = gast.parse(
        "for n in r:\n"
        "    a = range(F)\n"
        "    t = len(a)\n"
        "    b = range(n + 1, F)\n"
        "    c = t * 2\n"
        "    d = F\n"
        "    d = 3\n"
        "    for i in a:\n"
        "        e = len(b)\n"
        "    h = len(hs)\n"            # a dict the loop writes into
        "    hs[n] = t\n"
        "    k = len(xs)\n"            # a list it appends to
        "    xs.append(n)\n"
        "    m = len(ys)\n"            # a list it passes to a call
        "    f(ys)\n").body
    assert same_at_every_step(body) == {"a", "t", "c"}


def smoothing(alpha, y):
    """A recurrence from 1: the backward step adds into the slot behind it, never its own
    again, so zeroing its own after reading it is dead."""
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def wrapping(alpha, y):
    """From 0, ``level[t - 1]`` is the last slot at the first step: the zeroing stays."""
    level = y * 1.0
    for t in range(0, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum(level ** 2)


def two_behind(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    level[1] = y[1]
    for t in range(2, len(y)):
        level[t] = alpha * level[t - 1] + (1.0 - alpha) * level[t - 2]
    return np.sum(level * y)


def _zeroes(f, args):
    fused = st.source(f, args=args).split(f"def {f.__name__}_grad(")[1]
    return "] = 0.0" in fused or "zero_at" in fused


def test_a_recurrence_adding_behind_its_step_does_not_zero_its_own_slot():
    y = R.standard_normal(7)
    assert not _zeroes(smoothing, (0.4, y)) and not _zeroes(two_behind, (0.4, y))
    assert _zeroes(wrapping, (0.4, y))


CASES = [conv1d_loss, pairwise, filled_then_read, smoothing, wrapping, two_behind]


def args_of(f):
    if f is conv1d_loss:
        return conv_args(), (0, 1, 2)
    if f is pairwise:
        return (R.standard_normal((4, 2)),), 0
    if f in (smoothing, wrapping, two_behind):
        return (0.4, R.standard_normal(7)), 0
    return (R.standard_normal(5),), 0


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_derivatives_match_finite_differences_in_both_modes_to_second_order(f):
    args, wrt = args_of(f)
    st.check_grads(f, args, order=2, wrt=wrt)
    gradient = st.grad(f, wrt=wrt)
    want = st.grad(f, wrt=wrt, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(*args)
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_float32_stays_float32():
    x, w, b, dout = (a.astype(np.float32) for a in conv_args())
    gradient = st.grad(conv1d_loss, wrt=(0, 1, 2))
    for _ in range(3):
        for g in gradient(x, w, b, dout):
            assert g.dtype == np.float32

"""Callees with loops are specialised inside their caller's code (measuring.looping_callees):
the measuring run watches their lines as it watches the caller's, over all their calls, so a
name whose shape changes from one call or one step to the next keeps the generic helpers."""

import numpy as np

import srctrans as st
from programs import basic
from srctrans import measuring

R = np.random.default_rng(5)


def recurrent_loss(x, h0, Wx, Wh, dout):
    """A layer of another module: built on its own, called from here (one of this module
    would be inlined: srctrans/normalize/callees.py)."""
    return np.sum(basic.recurrent(x, h0, Wx, Wh) * dout)


def growing(v, n):
    """A loop whose state changes shape: [a] -> [a, a] -> ..."""
    out = v
    for _ in range(n):
        out = np.concatenate([out, v])
    return out


def repeated_product(a, b, n):
    total = 0.0
    for _ in range(n):
        total = total + np.sum(np.sin(a * b))
    return total


def two_sites(v, w):
    """One callee called with two shapes (``b`` broadcast at the second), a growing loop
    state in another: their names vary between calls, or steps."""
    return (repeated_product(v, w[:1], 1) + repeated_product(v, w, 2)
            + np.sum(growing(v, 2) ** 2))


def _numeric(f, args, wrt, eps=1e-6):
    x = args[wrt]
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        plus, minus = list(args), list(args)
        plus[wrt], minus[wrt] = x + e, x - e
        g[i] = (f(*plus) - f(*minus)) / (2 * eps)
    return g


def test_a_layer_with_a_loop_is_specialised_inside_its_caller():
    args = (R.standard_normal((2, 3, 4)), R.standard_normal((2, 5)), R.standard_normal((4, 5)),
            R.standard_normal((5, 5)), R.standard_normal((2, 3, 5)))
    source = st.source(recurrent_loss, args=args, wrt=2)
    backward = source.split("def recurrent_bwd")[1].split("\ndef ")[0]
    assert "rt.matmul_lhs" not in backward and "rt.matmul_rhs" not in backward
    g = st.grad(recurrent_loss, wrt=(0, 2, 3))
    for _ in range(3):
        for got, wrt in zip(g(*args), (0, 2, 3)):
            np.testing.assert_allclose(got, _numeric(recurrent_loss, args, wrt), rtol=1e-6)
    longer = (R.standard_normal((2, 6, 4)),) + args[1:4] + (R.standard_normal((2, 6, 5)),)
    for _ in range(3):                                 # another T: code of its own
        for got, wrt in zip(g(*longer), (0, 2, 3)):
            np.testing.assert_allclose(got, _numeric(recurrent_loss, longer, wrt), rtol=1e-6)


def test_a_callee_whose_names_change_shape_keeps_its_generic_helpers():
    v, w = R.standard_normal(3), R.standard_normal(3)
    g = st.grad(two_sites, wrt=(0, 1))
    for _ in range(4):
        gv, gw = g(v, w)
        np.testing.assert_allclose(gv, _numeric(two_sites, (v, w), 0), rtol=1e-6)
        np.testing.assert_allclose(gw, _numeric(two_sites, (v, w), 1), rtol=1e-6)
    st.check_grads(two_sites, (v, w), order=2, wrt=(0, 1))


def _inner(a, n):
    b = a
    for _ in range(n):
        c = b * 2.0
    return c + a


def _outer(x, y):
    return np.sum(_inner(x, 2)) + np.sum(_inner(y, 1))


def test_the_watch_marks_a_callees_names_that_differ_between_its_calls():
    watched = measuring.Watched()
    out, values, varying, _ = measuring.run_keeping_locals(
        _outer, (np.ones(3), np.ones(2)), {}, True, {_inner.__code__: watched})
    assert watched.calls == 2 and {"a", "b", "c"} <= watched.varying and "n" not in watched.varying
    assert np.shape(watched.values["a"]) == (2,) and out == 9.0 + 6.0
    same = measuring.Watched()
    measuring.run_keeping_locals(_outer, (np.ones(3), np.ones(3)), {}, True, {_inner.__code__: same})
    assert same.calls == 2 and not same.varying & {"a", "b", "c"}


def test_a_specialised_callees_backward_pass_sums_its_gradients_in_place():
    """The callee's own backward pass (not a fused gradient) adds each step's terms into its
    gradients' arrays, ``dWx += ...`` and ``dx[:, t, :] += ...``, where it made a new sum a
    step and a whole array of zeros for each row's cotangent; it is right to second order."""
    args = (R.standard_normal((2, 3, 4)), R.standard_normal((2, 5)), R.standard_normal((4, 5)),
            R.standard_normal((5, 5)), R.standard_normal((2, 3, 5)))
    source = st.source(recurrent_loss, args=args, wrt=(0, 2, 3))
    backward = source.split("def recurrent_bwd")[1].split("\ndef ")[0]
    assert "dWx += " in backward and "dx[:, t, :] += " in backward, backward
    assert "getitem_grad" not in backward, backward
    g = st.grad(recurrent_loss, wrt=(0, 2, 3))
    for _ in range(4):
        for got, wrt in zip(g(*args), (0, 2, 3)):
            np.testing.assert_allclose(got, _numeric(recurrent_loss, args, wrt), rtol=1e-6)
    st.check_grads(recurrent_loss, args, order=2, wrt=(0, 2, 3))


def test_a_slot_no_later_step_reads_is_not_zeroed():
    """Each step reads its own slot of ``dh`` and no step after it reads that slot again, so
    the backward pass does not copy ``dh`` to zero it (optimise/zeroings.py)."""
    args = (R.standard_normal((2, 3, 4)), R.standard_normal((2, 5)), R.standard_normal((4, 5)),
            R.standard_normal((5, 5)), R.standard_normal((2, 3, 5)))
    source = st.source(recurrent_loss, args=args, wrt=(0, 2, 3))
    backward = source.split("def recurrent_bwd")[1].split("\ndef ")[0]
    assert "zero_at" not in backward and "dh[:, t, :]" in backward, backward


def overwritten_slot(x, W):
    """``range(-1, 3)`` over 3 rows: ``t = -1`` and ``t = 2`` write the same row, so the
    first write's cotangent is zero (the second overwrote it)."""
    h = np.zeros((3, 2))
    for t in range(-1, 3):
        h[t] = np.tanh(x[t + 1] @ W)
    return np.sum(h * h * np.arange(1.0, 4.0)[:, None])


def test_a_slot_a_later_step_reads_again_is_zeroed():
    x, W = R.standard_normal((4, 3)), R.standard_normal((3, 2))
    gradient = st.grad(overwritten_slot, wrt=(0, 1))
    for _ in range(3):
        for got, wrt in zip(gradient(x, W), (0, 1)):
            np.testing.assert_allclose(got, _numeric(overwritten_slot, (x, W), wrt), rtol=1e-6,
                                       atol=1e-9)
    assert "zero_at" in st.source(overwritten_slot, args=(x, W), wrt=(0, 1)) or \
        "= 0.0" in st.source(overwritten_slot, args=(x, W), wrt=(0, 1))


def nested_fill(x, w):            # (inlined into its caller, whose backward pass zeroes)
    out = np.zeros((2, 3))
    for n in range(2):
        for i in range(3):
            out[n, i] = np.sum(x[n, i:i + 2] * w)
    return out


def nested_loss(x, w, d):
    return np.sum(nested_fill(x, w) * d)


def inner_slot_only(x, w):
    """Each step of the outer loop writes the same slots again: only the last one's values
    reach the output, so an earlier step's cotangent must read zeros."""
    out = np.zeros(3)
    for n in range(2):
        for i in range(3):
            out[i] = np.sum(x[n, i:i + 2] * w) * (n + 1.0)
    return out


def inner_slot_loss(x, w, d):
    return np.sum(inner_slot_only(x, w) * d)


def test_a_slot_picked_by_every_counter_of_a_nest_is_not_zeroed():
    args = (R.standard_normal((2, 4)), R.standard_normal(2), R.standard_normal((2, 3)))
    source = st.source(nested_loss, args=args, wrt=(0, 1))
    backward = source.split("def nested_loss_bwd")[1].split("\ndef ")[0]
    assert "zero_at" not in backward, backward
    gradient = st.grad(nested_loss, wrt=(0, 1))
    for _ in range(3):
        for got, wrt in zip(gradient(*args), (0, 1)):
            np.testing.assert_allclose(got, _numeric(nested_loss, args, wrt), rtol=1e-6)


def test_a_slot_an_outer_step_writes_again_is_zeroed():
    args = (R.standard_normal((2, 4)), R.standard_normal(2), R.standard_normal(3))
    source = st.source(inner_slot_loss, args=args, wrt=(0, 1))
    assert "zero_at" in source.split("def inner_slot_loss_bwd")[1].split("\ndef ")[0]
    gradient = st.grad(inner_slot_loss, wrt=(0, 1))
    for _ in range(3):
        for got, wrt in zip(gradient(*args), (0, 1)):
            np.testing.assert_allclose(got, _numeric(inner_slot_loss, args, wrt), rtol=1e-6,
                                       atol=1e-9)


def test_a_steps_sum_spread_over_its_terms_is_read_as_the_number():
    """``np.sum(x[n, i:i + 2] * w)`` in a loop: its seed, a number, multiplies the terms'
    factors directly (optimise/spreads.py in a loop's body), with no array spread a step."""
    args = (R.standard_normal((2, 4)), R.standard_normal(2), R.standard_normal((2, 3)))
    source = st.source(nested_loss, args=args, wrt=(0, 1))
    backward = source.split("def nested_loss_bwd")[1].split("\ndef ")[0]
    assert "unreduce" not in backward, backward
    st.check_grads(nested_loss, args, order=2, wrt=(0, 1))


def test_a_callees_cotangent_has_its_arguments_shape_in_the_callers_code():
    """A user function's backward pass gives each argument a cotangent of the argument's
    shape (``Anno.COTANGENTS_OF``), so the caller's specialised code needs no unbroadcast of
    what it computes from one."""
    from programs import callees_elsewhere as elsewhere
    rng = np.random.default_rng(2)
    args = (rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2),
            rng.standard_normal((4, 2)))
    fused = st.source(elsewhere.layer_of_scaled, args=args, wrt=(0, 1, 2)).split(
        "def layer_of_scaled_grad(")[1].split("\ndef ")[0]
    assert "layer_bwd(" in fused and "unbroadcast" not in fused
    gradient, want = st.grad(elsewhere.layer_of_scaled, wrt=(0, 1, 2)), None
    for _ in range(3):
        got = gradient(*args)
        want = want or got
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-13)
    st.check_grads(elsewhere.layer_of_scaled, args, wrt=(0, 1, 2), order=2)

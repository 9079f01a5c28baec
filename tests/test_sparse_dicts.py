"""A dict the function fills by step keeps a sparse cotangent (optimise/sparse_dicts.py): the
fused gradient adds each read's term at its key (rt.added_at_key) where it made a whole dict
of zeros per read and added it, which cost T * T arrays over T steps. The gradients are the
same as the generic code's and as finite differences', whatever the keys."""

import re

import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt

R = np.random.default_rng(53)


def states_by_step(W, U, xs, h0):
    """Its length read, so the dict stays a dict (one used only by its entries at the step
    and the step before becomes names: normalize/step_dicts.py)."""
    hs, ys = {}, {}
    hs[-1] = np.copy(h0)
    loss = 0.0
    for t in range(len(xs)):
        hs[t] = np.tanh(W @ xs[t] + U @ hs[t - 1])
        ys[t] = np.exp(hs[t]) / np.sum(np.exp(hs[t]))
        loss += -np.log(ys[t][0]) + 0.1 * np.sum(hs[t - 1] * hs[t]) / len(hs)
    return loss


def rewritten_keys(W, xs, h0):
    """Each key written twice (the second write overwrites the first), an int entry read
    with the states, and a key read before the loop writes it."""
    hs = {"start": h0 * 1.0, "count": 2}
    total = np.sum(hs["start"]) * hs["count"]
    for t in range(len(xs)):
        hs[t] = W @ xs[t] + hs["start"]
        hs[t] = np.sin(hs[t]) * hs["count"]
        total = total + np.sum(hs[t] ** 2) + np.sum(hs["start"] * hs[t])
    return total


def returned_dict(W, xs):
    """The dict's cotangent is no gradient here (the dict is made inside), but its entries
    flow into W's: still kept sparse."""
    hs = {}
    for t in range(len(xs)):
        hs[t] = W @ xs[t]
    return sum(np.sum(h ** 2) for h in hs.values())


def args_of(f, steps):
    W, U = R.standard_normal((3, 2)), R.standard_normal((3, 3)) * 0.4
    xs = [R.standard_normal(2) for _ in range(steps)]
    h0 = R.standard_normal(3) * 0.1
    return {states_by_step: (W, U, xs, h0), rewritten_keys: (W, xs, h0),
            returned_dict: (W, xs)}[f]


CASES = [states_by_step, rewritten_keys]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_the_fused_gradient_adds_each_reads_term_at_its_key(f):
    args = args_of(f, 4)
    fused = st.source(f, args=args).split(f"def {f.__name__}_grad(")[1]
    assert "rt.added_at_key(" in fused and "dhs = {}" in fused, fused
    assert not re.search(r"getitem_grad\([^()]*, hs, ", fused) and "zeros_like(hs)" not in fused


@pytest.mark.parametrize("steps", [1, 4, 9])
@pytest.mark.parametrize("f", CASES + [returned_dict],
                         ids=[f.__name__ for f in CASES + [returned_dict]])
def test_the_gradient_is_the_generic_codes(f, steps):
    args = args_of(f, steps)
    wrt = {states_by_step: (0, 1, 3), rewritten_keys: (0, 2), returned_dict: 0}[f]
    gradient = st.grad(f, wrt=wrt)
    want = st.grad(f, wrt=wrt, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(*args)
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_finite_differences_to_second_order(f):
    args = args_of(f, 3)
    st.check_grads(f, args, order=2, wrt=0, rtol=1e-5, atol=1e-7)


def test_added_at_key_adds_at_one_key_and_makes_no_other_entry():
    mapping = {0: np.ones(2), 1: np.ones(2), "n": 3}
    g = np.array([1.0, 2.0])
    first = rt.added_at_key({}, 0, g, mapping)
    assert list(first) == [0] and first[0] is not g
    np.testing.assert_array_equal(first[0], g)
    second = rt.added_at_key(first, 0, g, mapping)
    np.testing.assert_array_equal(second[0], 2 * g)
    np.testing.assert_array_equal(first[0], g)            # a new dict and a new sum
    assert rt.added_at_key(second, "n", 5.0, mapping)["n"] == 0.0    # an int entry: zero
    with pytest.raises(KeyError):
        rt.added_at_key({}, 7, g, mapping)                 # as rt.getitem_grad's read

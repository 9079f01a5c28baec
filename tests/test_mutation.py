"""Subscript writes: the forward pass mutates; the adjoint restores what was overwritten."""

import numpy as np
import pytest

import srctrans as st
from programs import mutation

CASES = [
    (mutation.fill_rows, lambda r: (r.standard_normal((4, 3)), r.standard_normal((3, 2))), (0, 1)),
    (mutation.overwrite_slice, lambda r: (r.standard_normal(5),), (0,)),
    (mutation.augmented_subscript, lambda r: (r.standard_normal(5), 0.7), (0, 1)),
    (mutation.masked_write, lambda r: (r.standard_normal(6),), (0,)),
    (mutation.read_before_write, lambda r: (r.standard_normal(4),), (0,)),
    (mutation.write_scalar_broadcast, lambda r: (r.standard_normal((3, 2)), 0.5), (0, 1)),
    (mutation.reads_with_every_index_kind, lambda r: (r.standard_normal((4, 3)), np.array([0, 2, 0])), (0,)),
]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_matches_finite_differences(index):
    fn, build, wrt = CASES[index]
    st.check_grads(fn, build(np.random.default_rng(index)), wrt=wrt, seed=index, order=2)


def test_the_caller_s_arrays_are_not_changed():
    x = np.arange(5.0)
    before = x.copy()
    st.grad(mutation.overwrite_slice)(x)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_writing_into_an_argument_differentiates_its_value_on_entry(mode):
    """x[0] = 1.0 on an argument: the derivative is with respect to x as it came in (its
    first entry has none), and the caller's array is left as it was."""
    x = np.array([2.0, 3.0, 4.0])
    if mode == "reverse":
        np.testing.assert_array_equal(st.grad(mutation.writes_argument)(x), [0.0, 1.0, 1.0])
    else:
        out, tangent = st.jvp(mutation.writes_argument, (x,), (np.ones(3),))
        assert out == 8.0 and tangent == 2.0
    np.testing.assert_array_equal(x, [2.0, 3.0, 4.0])
    st.check_grads(mutation.writes_argument_in_a_loop, (x, 0.7), order=2)
    np.testing.assert_array_equal(x, [2.0, 3.0, 4.0])


def test_writing_into_a_view_of_an_argument_is_an_error():
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(mutation.writes_view_of_argument)(np.ones(3))
    assert "may be (a view of) an argument" in str(info.value)
    assert "copy()" in str(info.value) and "mutation.py:" in str(info.value)


def test_a_name_bound_to_a_reduction_holds_a_new_value():
    """A fresh array's name bound again to a reduction of it still holds nothing of the
    caller's (a fuzzer program was refused for it); a reduction told ``out=`` is refused."""
    x = np.array([0.5, -1.0, 2.0])
    st.check_grads(mutation.fills_then_reduces, (x,), order=2)
    with pytest.raises(st.SrcTransError):
        st.grad(mutation.reduces_into_an_argument)(np.ones((2, 3)), np.zeros(3))


def test_writing_into_a_dict_argument_asks_for_a_copy():
    with pytest.raises(st.UnsupportedSyntaxError, match=r"dict\(d\)"):
        st.grad(mutation.writes_dict_argument)({"w": np.ones(2)}, 0.5)
    d = {"w": np.ones(2)}
    st.check_grads(mutation.writes_copied_dict_argument, (d, 0.5), order=2)


def test_put_along_axis_is_a_functional_write():
    rng = np.random.default_rng(9)
    x, v = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    before = x.copy()
    st.check_grads(mutation.scatters_along_an_axis, (x, v), order=2)
    st.grad(mutation.scatters_along_an_axis, wrt=(0, 1))(x, v)
    np.testing.assert_array_equal(x, before)


def refilled_then_rebound(W):
    v = np.zeros_like(W)          # new: a row stored into it is copied in, W is not shared
    v[0] = W[0]
    for t in range(1, len(W)):
        v[t] = 0.3 * W[t] + 0.7 * np.tanh(v[t - 1])
    v = v * 0.5 + np.sum(W)       # arithmetic: new again
    return np.sum(v * W)


def test_an_array_made_anew_by_arithmetic_stays_a_new_array():
    """Every binding of ``v`` is a new array (a NumPy constructor, then arithmetic), so
    storing a row of ``W`` into it shares nothing: it was once refused as an alias of ``W``."""
    W = np.random.default_rng(4).standard_normal((4, 3))
    st.check_grads(refilled_then_rebound, (W,), order=2)

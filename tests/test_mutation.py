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


@pytest.mark.parametrize("fn", [mutation.writes_argument, mutation.writes_view_of_argument])
def test_writing_into_an_argument_is_an_error(fn):
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(fn)(np.ones(3))
    assert "may be (a view of) an argument" in str(info.value)
    assert "copy()" in str(info.value) and "mutation.py:" in str(info.value)

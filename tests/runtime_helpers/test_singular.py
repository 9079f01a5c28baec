"""Tests for runtime.singular: zero cotangents stay zero, everything else is kept."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.singular
from srctrans import runtime
from srctrans.runtime.singular import zero_guard

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def test_a_finite_product_is_returned_as_it_is():
    g = np.array([[0.0, 1.0], [2.0, 0.0]])
    value = g * 3.0
    assert zero_guard(g, value) is value


def test_only_entries_with_a_zero_cotangent_are_repaired():
    g = np.array([0.0, 0.0, 1.0, -1.0, 0.0, 2.0])
    value = np.array([np.nan, np.inf, np.inf, np.nan, 0.0, 4.0])
    np.testing.assert_array_equal(zero_guard(g, value), [0.0, 0.0, np.inf, np.nan, 0.0, 4.0])


def test_a_smaller_cotangent_broadcasts():
    g = np.array([[0.0], [1.0]])
    value = np.array([[np.nan, 1.0], [np.inf, 2.0]])
    np.testing.assert_array_equal(zero_guard(g, value), [[0.0, 0.0], [np.inf, 2.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_and_shape_are_kept(dtype):
    g = np.zeros((2, 3), dtype=dtype)
    value = np.full((2, 3), np.nan, dtype=dtype)
    repaired = zero_guard(g, value)
    assert repaired.dtype == dtype and repaired.shape == (2, 3)
    np.testing.assert_array_equal(repaired, 0.0)


@pytest.mark.parametrize("g, value, expected", [
    (0.0, float("nan"), 0.0),
    (0.0, float("inf"), 0.0),
    (2.0, float("inf"), float("inf")),
    (1.0, 0.5, 0.5),
    (np.float32(0.0), np.float32("nan"), 0.0),
    (np.array(0.0), np.array(np.nan), 0.0),
])
def test_scalars(g, value, expected):
    got = zero_guard(g, value)
    assert np.ndim(got) == 0 and not isinstance(got, np.ndarray)
    assert got == expected
    assert np.result_type(got) == np.result_type(value)


def test_squares_that_overflow_take_the_exact_path():
    """The check sums squares; a large finite product must come back unchanged."""
    value = np.array([1e200, -1e200, 0.0])
    np.testing.assert_array_equal(zero_guard(np.ones(3), value), value)


def test_an_empty_product():
    value = np.zeros((0, 3))
    assert zero_guard(np.zeros((0, 3)), value) is value


def test_docstring_examples():
    assert doctest.testmod(runtime.singular).failed == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ratio_or_zero_is_the_quotient_with_zero_where_the_divisor_is_zero(dtype):
    """``rt.ratio_or_zero(a, b)``: ``a / b`` (its short path when no entry of ``b`` is 0, NaN
    kept), 0 where ``b`` is 0, broadcasting, in the quotient's dtype, a new array."""
    a = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, np.nan]], dtype=dtype)
    for b in (np.array([2.0, 4.0, np.nan], dtype=dtype), np.array([2.0, 0.0, 8.0], dtype=dtype)):
        got = runtime.ratio_or_zero(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.where(b == 0, 0.0, a / b).astype(dtype)
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == dtype and got is not a and not np.shares_memory(got, a)

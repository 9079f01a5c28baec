"""Tests for runtime.broadcast.unbroadcast."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.broadcast
from srctrans import runtime
from srctrans.runtime.broadcast import unbroadcast

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

# (shape of x, shape of the other operand x is broadcast against)
BROADCAST_CASES = [
    ((3,), (3,)),
    ((3,), (2, 3)),
    ((1, 3), (2, 3)),
    ((2, 1), (2, 3)),
    ((1, 1), (2, 3)),
    ((), (2, 3)),
    ((4, 1, 5), (3, 1)),
    ((3, 1), (4, 1, 5)),
    ((1,), (2, 3, 4)),
    ((2, 1, 4), (2, 3, 4)),
]


@pytest.mark.parametrize("x_shape, other_shape", BROADCAST_CASES)
def test_matches_finite_differences(x_shape, other_shape, check_vjp):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape)
    other = rng.standard_normal(other_shape)
    check_vjp(lambda x: x * other,
              lambda g, x: unbroadcast(g * other, x),
              [x], 0, rng)


@pytest.mark.parametrize("x_shape, other_shape", BROADCAST_CASES)
def test_result_has_exactly_the_input_shape(x_shape, other_shape):
    x = np.zeros(x_shape)
    g = np.ones(np.broadcast_shapes(x_shape, other_shape))
    result = unbroadcast(g, x)
    assert np.shape(result) == x_shape
    assert np.sum(result) == g.size


def test_same_shape_returns_g_itself():
    g = np.ones((2, 3))
    assert unbroadcast(g, np.zeros((2, 3))) is g


def test_same_shape_scalars_return_g_itself():
    g = 2.5
    assert unbroadcast(g, 1.0) is g


@pytest.mark.parametrize("x", [3.0, 3, np.float64(3.0), np.float32(3.0)],
                         ids=["float", "int", "float64", "float32-scalar"])
def test_scalar_input_gets_the_total_sum(x):
    result = unbroadcast(np.arange(6.0).reshape(2, 3), x)
    assert np.shape(result) == ()
    assert result == 15.0


def test_zero_d_array_input_gets_the_total_sum():
    result = unbroadcast(np.ones((2, 2)), np.array(1.0))
    assert np.shape(result) == ()
    assert result == 4.0


def test_float32_stays_float32():
    g = np.ones((4, 3), dtype=np.float32)
    assert unbroadcast(g, np.zeros((1, 3), dtype=np.float32)).dtype == np.float32
    assert unbroadcast(g, np.zeros(3, dtype=np.float32)).dtype == np.float32


def test_scalar_gradient_is_broadcast_up_to_the_input():
    result = unbroadcast(0.0, np.zeros((2, 3)))
    assert result.shape == (2, 3)
    assert not result.any()


def test_incompatible_shapes_raise():
    with pytest.raises(ValueError):
        unbroadcast(np.ones((2, 3)), np.zeros((4,)))


def test_docstring_examples():
    assert doctest.testmod(runtime.broadcast).failed == 0


@pytest.mark.parametrize("values", [
    (np.ones(3), 0), (np.ones(3, np.float32), 1e300), (np.ones(3, np.float16), 100000),
    (np.ones(3), np.ones(3, np.float32)), (np.ones(3, np.float32), np.float64(1.0)),
    (np.ones(3, np.float32), True), (np.ones(3, np.float32), np.ones(2, np.float32), 2.5),
    (np.ones(3, int), 1.0), (np.ones(3, np.float32), 1j), (np.ones(3, np.float32), [1.0, 2.0]),
    (np.float32(1.0), 2.0), (2, 3),
])
def test_the_float_dtype_of_values_is_what_arithmetic_on_them_gives(values):
    """(its short path for a float array with numbers or arrays of its dtype included)"""
    want = np.result_type(*[np.asarray(v) if isinstance(v, list) else v for v in values])
    want = want if want.kind in "fc" else np.dtype(np.float64)
    assert srctrans.runtime.broadcast.float_dtype(*values) == want

"""Tests for runtime.elementwise: clip masks and maximum/minimum tie weights."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.elementwise
from srctrans import runtime
from srctrans.runtime.broadcast import unbroadcast
from srctrans.runtime.elementwise import clip_mask, tie_weight

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

# (shape of x, lo, hi); random x rarely lands within a step of a bound.
CLIP_CASES = [
    ((5,), -0.5, 0.5),
    ((3, 4), -0.5, None),
    ((3, 4), None, 0.5),
    ((3, 4), None, None),
    ((3, 4), np.array([-1.0, -0.5, 0.0, -2.0]), 0.7),
    ((4,), np.full((3, 4), -0.3), np.full((3, 1), 0.4)),
    ((), -0.5, 0.5),
]


@pytest.mark.parametrize("shape, lo, hi", CLIP_CASES)
def test_clip(shape, lo, hi, check_vjp):
    rng = np.random.default_rng(30)
    check_vjp(lambda x: np.clip(x, lo, hi),
              lambda g, x: unbroadcast(g * clip_mask(x, lo, hi), x),
              [rng.standard_normal(shape)], 0, rng)


def test_clip_passes_the_gradient_at_the_bounds():
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    np.testing.assert_array_equal(clip_mask(x, 0.0, 1.0),
                                  [False, True, True, True, False])


def test_clip_mask_is_boolean_with_the_broadcast_shape():
    mask = clip_mask(np.zeros(3), np.zeros((2, 1)), None)
    assert mask.dtype == bool
    assert mask.shape == (2, 3)


def test_clip_mask_is_false_at_nan():
    assert not clip_mask(np.array([np.nan]), 0.0, 1.0)[0]


def _maximum_grads(g, x, y):
    return (unbroadcast(g * tie_weight(x, y), x),
            unbroadcast(g * tie_weight(y, x), y))


def _minimum_grads(g, x, y):
    return (unbroadcast(g * tie_weight(y, x), x),
            unbroadcast(g * tie_weight(x, y), y))


EXTREMUM_SHAPES = [
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((3, 1), (1, 4)),
    ((), (2, 3)),
]


@pytest.mark.parametrize("forward, grads", [(np.maximum, _maximum_grads),
                                            (np.minimum, _minimum_grads)],
                         ids=["maximum", "minimum"])
@pytest.mark.parametrize("x_shape, y_shape", EXTREMUM_SHAPES)
def test_maximum_and_minimum(forward, grads, x_shape, y_shape, check_vjp):
    rng = np.random.default_rng(31)
    x = rng.standard_normal(x_shape)
    y = rng.standard_normal(y_shape)
    check_vjp(forward, lambda g, x, y: grads(g, x, y)[0], [x, y], 0, rng)
    check_vjp(forward, lambda g, x, y: grads(g, x, y)[1], [x, y], 1, rng)


def test_tie_weight_values():
    x = np.array([3.0, 2.0, 1.0])
    np.testing.assert_array_equal(tie_weight(x, 2.0), [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(tie_weight(2.0, x), [0.0, 0.5, 1.0])


def test_tie_weight_of_nan_is_zero_and_infinities_tie():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
    y = np.array([1.0, np.inf, -np.inf, -0.0, 0.0])
    np.testing.assert_array_equal(tie_weight(x, y), [0.0, 0.5, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(tie_weight(x, 0.0), [0.0, 1.0, 0.0, 0.5, 0.5])
    first = tie_weight(x, y)
    first[...] = 7.0                                      # a new array each call
    np.testing.assert_array_equal(tie_weight(x, y), [0.0, 0.5, 0.5, 0.5, 0.5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("zero", [0, 0.0, -0.0])
def test_tie_weight_of_a_relu_is_the_step_with_ties_halved(dtype, zero):
    """np.maximum(x, 0) takes one ufunc (np.heaviside); at NaN, infinities, signed zeros
    and subnormals it gives what the definition gives, of the same type, dtype and shape."""
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 5e-324, 1.0, -2.0,
                       60000.0, -60000.0]).astype(dtype)
    for x in (values, values[1:], values.reshape(3, 4), values[::3], values[3:4], values[8:]):
        want = np.greater(x, zero).astype(dtype)
        want[np.equal(x, zero)] = 0.5
        got = tie_weight(x, zero)
        assert type(got) is np.ndarray and got.dtype == dtype and got.shape == x.shape
        np.testing.assert_array_equal(got, want)


def test_tie_weights_of_both_arguments_sum_to_one():
    rng = np.random.default_rng(32)
    x = rng.integers(0, 3, (4, 5)).astype(float)
    y = rng.integers(0, 3, (5,)).astype(float)
    np.testing.assert_array_equal(tie_weight(x, y) + tie_weight(y, x), 1.0)


@pytest.mark.parametrize("x, y, dtype", [
    (np.ones(3, np.float32), np.float32(1.0), np.float32),
    (np.ones(3, np.float32), 1.0, np.float32),
    (np.ones(3), np.ones(3, np.float32), np.float64),
    (np.arange(3), 1, np.float64),
    (2.0, 1.0, np.float64),
], ids=["float32", "float32-python-scalar", "mixed", "int", "python-floats"])
def test_tie_weight_dtype(x, y, dtype):
    assert tie_weight(x, y).dtype == dtype


def test_docstring_examples():
    assert doctest.testmod(runtime.elementwise).failed == 0

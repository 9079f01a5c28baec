"""Tests for runtime.accumulate: the derivatives of the builtins sum, max and min."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.accumulate
from srctrans import runtime
from srctrans.runtime.accumulate import choice_grads, choice_tangent, spread_grads, sum_tangents

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


# (arguments of max, their tangents as choice_tangent takes them, each one's share)
TIES = [
    ((2.0, 2.0, 1.0), (1.0, 3.0, 5.0), [0.5, 0.5, 0.0]),
    (([1.0, 3.0, 3.0],), ([1.0, 3.0, 5.0],), [0.0, 0.5, 0.5]),
    (((3.0, 3.0, 3.0),), ((1.0, 3.0, 5.0),), [1 / 3, 1 / 3, 1 / 3]),
    ((np.array([1.0, 3.0, 3.0]),), ([1.0, 3.0, 5.0],), [0.0, 0.5, 0.5]),
]


@pytest.mark.parametrize("args, tangents, shares", TIES, ids=["arguments", "list", "tuple", "array"])
def test_ties_share_equally_in_both_modes(args, tangents, shares):
    ans = max(*args)
    grads = choice_grads(1.0, ans, args)
    grads = grads if len(args) > 1 else grads[0]
    np.testing.assert_allclose(np.array(grads, dtype=float), shares, rtol=1e-15)
    flat = tangents if len(args) > 1 else tangents[0]
    np.testing.assert_allclose(choice_tangent(tangents, ans, args), np.dot(flat, shares), rtol=1e-15)


def test_choice_tangent_skips_arguments_without_tangent():
    assert choice_tangent((None, 3.0), 2.0, (2.0, 2.0)) == 1.5
    assert choice_tangent((None, None), 2.0, (2.0, 1.0)) == 0.0


def test_choice_tangent_of_float32_is_float32():
    t = choice_tangent((np.float32(1.0), np.float32(2.0)), 1.0, (1.0, 1.0))
    assert np.result_type(t) == np.float32


def test_sum_tangents_is_the_transpose_of_spread_grads():
    rng = np.random.default_rng(0)
    items = [rng.standard_normal(3) for _ in range(4)]
    tangents = [rng.standard_normal(3) for _ in range(4)]
    g = rng.standard_normal(3)
    forward = np.sum(sum_tangents(tangents, g) * g)
    backward = sum(np.sum(v * c) for v, c in zip(tangents, spread_grads(g, items)))
    np.testing.assert_allclose(forward, backward, rtol=1e-12)


def test_sum_tangents_skips_missing_and_starts_at_zero():
    np.testing.assert_array_equal(sum_tangents([np.ones(2), None, np.ones(2)], np.ones(2)), [2.0, 2.0])
    assert sum_tangents([], 0.0) == 0.0
    assert sum_tangents([np.ones(2, dtype=np.float32)], np.ones(2)).dtype == np.float32


def test_sum_tangents_has_the_shape_of_the_sum():
    """``sum([a, B])`` broadcasts ``a`` against ``B``: so does the tangent of ``a`` alone."""
    ans = sum([np.ones(3), np.ones((2, 3))])
    np.testing.assert_array_equal(sum_tangents([np.arange(3.0), None], ans), [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(sum_tangents([], ans), np.zeros((2, 3)))


def test_docstring_examples():
    assert doctest.testmod(runtime.accumulate).failed == 0

"""Tests for runtime.accumulate: the derivatives of the builtins sum, max and min."""

import doctest

import numpy as np
import pytest

import runtime.accumulate
from runtime.accumulate import choice_grads

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


# (arguments of max, each one's share of the cotangent)
TIES = [
    ((2.0, 2.0, 1.0), [0.5, 0.5, 0.0]),
    (([1.0, 3.0, 3.0],), [0.0, 0.5, 0.5]),
    (((3.0, 3.0, 3.0),), [1 / 3, 1 / 3, 1 / 3]),
    ((np.array([1.0, 3.0, 3.0]),), [0.0, 0.5, 0.5]),
]


@pytest.mark.parametrize("args, shares", TIES, ids=["arguments", "list", "tuple", "array"])
def test_ties_share_equally(args, shares):
    grads = choice_grads(1.0, max(*args), args)
    grads = grads if len(args) > 1 else grads[0]
    np.testing.assert_allclose(np.array(grads, dtype=float), shares, rtol=1e-15)


def test_docstring_examples():
    assert doctest.testmod(runtime.accumulate).failed == 0

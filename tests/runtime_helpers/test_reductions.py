"""Tests for runtime.reductions against finite differences and exact values."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.reductions
from srctrans import runtime
from srctrans.runtime.reductions import (
    extremum_grad, extremum_jvp, mean_grad, prod_grad, prod_jvp, std_grad, std_jvp, unreduce,
    var_grad, var_jvp)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

# (shape of x, axis, keepdims)
AXIS_CASES = [
    ((5,), None, False),
    ((5,), 0, True),
    ((5,), -1, False),
    ((3, 4), None, False),
    ((3, 4), None, True),
    ((3, 4), 0, False),
    ((3, 4), 1, True),
    ((3, 4), -1, False),
    ((3, 4), -2, True),
    ((2, 3, 4), 1, False),
    ((2, 3, 4), (0, 2), False),
    ((2, 3, 4), (0, 2), True),
    ((2, 3, 4), (-1, 0), False),
    ((2, 3, 4), (-3, -2, -1), True),
    ((2, 3, 4), (), False),
    ((), None, False),
]


def _vjp_with_ans(grad_rule, forward):
    """A vjp(g, x) for a rule that also takes the forward result."""
    return lambda g, x: grad_rule(g, forward(x), x)


@pytest.mark.parametrize("shape, axis, keepdims", AXIS_CASES)
def test_sum(shape, axis, keepdims, check_vjp):
    rng = np.random.default_rng(1)
    check_vjp(lambda x: np.sum(x, axis=axis, keepdims=keepdims),
              lambda g, x: unreduce(g, x, axis, keepdims),
              [rng.standard_normal(shape)], 0, rng)


@pytest.mark.parametrize("shape, axis, keepdims", AXIS_CASES)
def test_mean(shape, axis, keepdims, check_vjp):
    rng = np.random.default_rng(2)
    check_vjp(lambda x: np.mean(x, axis=axis, keepdims=keepdims),
              lambda g, x: mean_grad(g, x, axis, keepdims),
              [rng.standard_normal(shape)], 0, rng)


@pytest.mark.parametrize("reduce", [np.max, np.min, np.amax, np.amin],
                         ids=["max", "min", "amax", "amin"])
@pytest.mark.parametrize("shape, axis, keepdims", AXIS_CASES)
def test_extremum_without_ties(reduce, shape, axis, keepdims, check_vjp):
    rng = np.random.default_rng(3)
    forward = lambda x: reduce(x, axis=axis, keepdims=keepdims)  # noqa: E731
    check_vjp(forward,
              lambda g, x: extremum_grad(g, forward(x), x, axis, keepdims),
              [rng.standard_normal(shape)], 0, rng)


@pytest.mark.parametrize("shape, axis, keepdims", AXIS_CASES)
def test_prod(shape, axis, keepdims, check_vjp):
    rng = np.random.default_rng(4)
    forward = lambda x: np.prod(x, axis=axis, keepdims=keepdims)  # noqa: E731
    check_vjp(forward,
              lambda g, x: prod_grad(g, forward(x), x, axis, keepdims),
              [rng.uniform(0.5, 1.5, shape)], 0, rng)


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("shape, axis, keepdims",
                         [case for case in AXIS_CASES if case[0] != ()
                          and case[1] != ()])
def test_var_and_std(shape, axis, keepdims, ddof, check_vjp):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    check_vjp(lambda x: np.var(x, axis=axis, ddof=ddof, keepdims=keepdims),
              lambda g, x: var_grad(g, x, axis, ddof, keepdims),
              [x], 0, rng)
    forward = lambda x: np.std(x, axis=axis, ddof=ddof, keepdims=keepdims)  # noqa: E731
    check_vjp(forward,
              lambda g, x: std_grad(g, forward(x), x, axis, ddof, keepdims),
              [x], 0, rng)


# (x, axis): inputs with zeros; prod is a polynomial, so finite differences
# are exact enough even at the zeros.
ZERO_CASES = [
    (np.array([2.0, 0.0, 3.0]), None),
    (np.array([0.0, 0.0, 3.0]), None),
    (np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 6.0]]), 1),
    (np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 6.0]]), 0),
    (np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 6.0]]), None),
    (np.array([[[0.0, 2.0], [3.0, 0.0]], [[1.0, 2.0], [0.0, 4.0]]]), (0, 2)),
]


@pytest.mark.parametrize("x, axis", ZERO_CASES)
def test_prod_with_zeros(x, axis, check_vjp):
    rng = np.random.default_rng(6)
    forward = lambda x: np.prod(x, axis=axis)  # noqa: E731
    check_vjp(forward, lambda g, x: prod_grad(g, forward(x), x, axis),
              [x], 0, rng)


def test_prod_with_zeros_exact_values():
    x = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 6.0]])
    grad = prod_grad(np.ones(3), np.prod(x, axis=1), x, axis=1)
    expected = [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [30.0, 24.0, 20.0]]
    np.testing.assert_array_equal(grad, expected)


# (x, axis, gradient of max for g = 1)
MAX_TIE_CASES = [
    (np.array([1.0, 3.0, 3.0, 2.0]), None, [0.0, 0.5, 0.5, 0.0]),
    (np.array([2.0, 2.0, 2.0]), 0, [1 / 3, 1 / 3, 1 / 3]),
    (np.array([[1.0, 4.0, 4.0], [5.0, 5.0, 0.0]]), 1,
     [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]),
    (np.array([[1.0, 4.0], [1.0, 2.0]]), 0, [[0.5, 1.0], [0.5, 0.0]]),
    (np.array([[7.0, 1.0], [2.0, 7.0]]), None, [[0.5, 0.0], [0.0, 0.5]]),
]


@pytest.mark.parametrize("x, axis, expected", MAX_TIE_CASES)
def test_max_ties_share_the_gradient(x, axis, expected):
    ans = np.max(x, axis=axis)
    grad = extremum_grad(np.ones_like(ans), ans, x, axis)
    np.testing.assert_allclose(grad, expected)


def test_min_ties_share_the_gradient_with_keepdims():
    x = np.array([[3.0, 1.0, 1.0, 2.0]])
    ans = np.min(x, axis=1, keepdims=True)
    grad = extremum_grad(np.array([[4.0]]), ans, x, axis=1, keepdims=True)
    np.testing.assert_allclose(grad, [[0.0, 2.0, 2.0, 0.0]])


def test_max_of_nan_slice_is_zero_without_warning():
    x = np.array([[1.0, np.nan], [2.0, 3.0]])
    ans = np.max(x, axis=1)
    grad = extremum_grad(np.ones(2), ans, x, axis=1)
    np.testing.assert_array_equal(grad, [[0.0, 0.0], [0.0, 1.0]])


def test_std_of_constant_slice_is_zero_not_nan():
    x = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
    ans = np.std(x, axis=1)
    grad = std_grad(np.ones(2), ans, x, axis=1)
    assert np.all(np.isfinite(grad))
    np.testing.assert_array_equal(grad[0], 0.0)
    np.testing.assert_allclose(grad[1], [-1, 0, 1] / (3 * ans[1]))


def test_var_and_std_without_degrees_of_freedom_are_nan_without_warning():
    x = np.array([1.0, 2.0])
    assert np.all(np.isnan(var_grad(1.0, x, ddof=2)))
    assert np.all(np.isnan(std_grad(1.0, 0.0, x, ddof=2)))
    assert np.isnan(var_jvp(np.ones(2), x, ddof=2))
    assert np.isnan(std_jvp(np.ones(2), 0.0, x, ddof=2))


def test_without_degrees_of_freedom_a_zero_derivative_stays_zero():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    for grad in (var_grad(np.array([0.0, 1.0]), x, 1, 2), std_grad(np.array([0.0, 1.0]), np.zeros(2), x, 1, 2)):
        np.testing.assert_array_equal(np.isnan(grad), [[False, False], [True, True]])
        np.testing.assert_array_equal(grad[0], 0.0)
    dx = np.array([[0.0, 0.0], [0.0, 1.0]])
    for tangent in (var_jvp(dx, x, 1, 2), std_jvp(dx, np.zeros(2), x, 1, 2)):
        assert tangent[0] == 0 and np.isnan(tangent[1])


def test_unreduce_of_scalar_sum_has_the_input_shape():
    assert unreduce(2.0, np.zeros((2, 3))).shape == (2, 3)
    assert np.all(unreduce(2.0, np.zeros((2, 3))) == 2.0)


def test_out_of_range_axis_raises():
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        mean_grad(np.ones(3), np.zeros((3, 4)), axis=2)


# name -> vjp(g, x) along axis 1, for the float32 dtype test
FLOAT32_RULES = {
    "sum": lambda g, x: unreduce(g, x, axis=1),
    "mean": lambda g, x: mean_grad(g, x, axis=1),
    "max": lambda g, x: extremum_grad(g, np.max(x, axis=1), x, axis=1),
    "prod": lambda g, x: prod_grad(g, np.prod(x, axis=1), x, axis=1),
    "var": lambda g, x: var_grad(g, x, axis=1, ddof=1),
    "std": lambda g, x: std_grad(g, np.std(x, axis=1), x, axis=1),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_RULES))
@pytest.mark.parametrize("x", [
    np.array([[1.0, 2.0, 0.5], [3.0, 1.5, 4.0]], dtype=np.float32),
    np.array([[1.0, 2.0, 0.5], [3.0, 0.0, 4.0]], dtype=np.float32),
], ids=["nonzero", "with-zero"])
def test_float32_stays_float32(name, x):
    grad = FLOAT32_RULES[name](np.ones(2, dtype=np.float32), x)
    assert grad.dtype == np.float32
    assert grad.shape == x.shape


# -- tangents: each JVP is the transpose of its VJP ---------------------------------

def _with_ddof(reduction, ddof):
    return lambda x, axis, keepdims: reduction(x, axis=axis, ddof=ddof, keepdims=keepdims)


# name -> (forward(x, axis, keepdims), vjp(g, ans, x, axis, keepdims), jvp(dx, ans, x, axis, keepdims))
TRANSPOSES = {
    "max": (lambda x, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims), extremum_grad,
            extremum_jvp),
    "min": (lambda x, axis, keepdims: np.min(x, axis=axis, keepdims=keepdims), extremum_grad,
            extremum_jvp),
    "prod": (lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims), prod_grad, prod_jvp),
    "var": (_with_ddof(np.var, 1), lambda g, ans, x, axis, keepdims: var_grad(g, x, axis, 1, keepdims),
            lambda dx, ans, x, axis, keepdims: var_jvp(dx, x, axis, 1, keepdims)),
    "std": (_with_ddof(np.std, 1),
            lambda g, ans, x, axis, keepdims: std_grad(g, ans, x, axis, 1, keepdims),
            lambda dx, ans, x, axis, keepdims: std_jvp(dx, ans, x, axis, 1, keepdims)),
}


def _assert_transposes(name, x, axis, keepdims, rng):
    forward, grad, tangent = TRANSPOSES[name]
    ans = forward(x, axis, keepdims)
    dx = rng.standard_normal(np.shape(x))
    g = rng.standard_normal(np.shape(ans))
    t = tangent(dx, ans, x, axis, keepdims)
    assert np.shape(t) == np.shape(ans)
    np.testing.assert_allclose(np.sum(t * g), np.sum(dx * grad(g, ans, x, axis, keepdims)),
                               rtol=1e-12, atol=1e-12)


# var and std of one element per slice have no degree of freedom with ddof=1: not generated
@pytest.mark.parametrize("name, shape, axis, keepdims", [
    (name, *case) for name in sorted(TRANSPOSES) for case in AXIS_CASES
    if not (name in ("var", "std") and (case[0] == () or case[1] == ()))])
def test_jvp_is_the_transpose_of_the_vjp(name, shape, axis, keepdims):
    rng = np.random.default_rng(7)
    _assert_transposes(name, rng.uniform(0.5, 1.5, shape), axis, keepdims, rng)


@pytest.mark.parametrize("x, axis", ZERO_CASES)
def test_prod_jvp_with_zeros(x, axis):
    _assert_transposes("prod", x, axis, False, np.random.default_rng(8))


@pytest.mark.parametrize("x, axis, expected", MAX_TIE_CASES)
def test_max_jvp_at_ties(x, axis, expected):
    """The tangent is the mean of the tied positions' tangents: ``<dx, grad(1)>``."""
    ans = np.max(x, axis=axis)
    dx = np.random.default_rng(9).standard_normal(x.shape)
    np.testing.assert_allclose(extremum_jvp(dx, ans, x, axis),
                               np.sum(dx * np.array(expected), axis=axis))
    _assert_transposes("max", x, axis, False, np.random.default_rng(10))


def test_std_jvp_of_constant_slice_is_zero():
    x = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
    t = std_jvp(np.array([[1.0, 2.0, 3.0], [1.0, 0.0, 0.0]]), np.std(x, axis=1), x, axis=1)
    assert t[0] == 0 and np.isfinite(t[1])


FLOAT32_TANGENTS = {
    "max": lambda dx, x: extremum_jvp(dx, np.max(x, axis=1), x, axis=1),
    "prod": lambda dx, x: prod_jvp(dx, np.prod(x, axis=1), x, axis=1),
    "var": lambda dx, x: var_jvp(dx, x, axis=1, ddof=1),
    "std": lambda dx, x: std_jvp(dx, np.std(x, axis=1), x, axis=1),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_TANGENTS))
@pytest.mark.parametrize("x", [
    np.array([[1.0, 2.0, 0.5], [3.0, 1.5, 4.0]], dtype=np.float32),
    np.array([[1.0, 2.0, 0.5], [3.0, 0.0, 4.0]], dtype=np.float32),
], ids=["nonzero", "with-zero"])
def test_float32_tangent_stays_float32(name, x):
    t = FLOAT32_TANGENTS[name](np.ones_like(x), x)
    assert t.dtype == np.float32
    assert t.shape == (2,)


def test_docstring_examples():
    assert doctest.testmod(runtime.reductions).failed == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.complex64, np.int64])
@pytest.mark.parametrize("g", [1.0, 0.3, np.float32(0.7), np.float64(1 / 3), np.complex128(1 + 2j)],
                         ids=["one", "float", "float32", "third", "complex"])
def test_a_scalar_seed_of_a_whole_mean_fills_what_the_spread_divided_gives(dtype, g):
    """``mean_grad``'s fast path (a number over a whole array: one division, then a fill)
    gives the general path's values bit for bit, dtype and shape included."""
    x = np.arange(12).reshape(3, 4).astype(dtype) - 5
    general = unreduce(g, x) / 12                          # the spread, then the division
    fast = mean_grad(g, x)
    assert fast.dtype == general.dtype and fast.shape == general.shape
    assert np.array_equal(fast, general)


def test_the_seed_of_an_empty_mean_warns_of_nothing():
    """An empty array's mean has no entries to fill: no division by its size of 0."""
    assert mean_grad(1.0, np.zeros((0, 3))).shape == (0, 3)


def test_a_scalar_seed_of_a_whole_mean_takes_the_short_path(monkeypatch):
    """No spread then division (two passes over the array and an axes count): one fill."""
    def spread(*args):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(srctrans.runtime.reductions, "unreduce", spread)
    assert np.array_equal(mean_grad(2.0, np.ones(4)), np.full(4, 0.5))

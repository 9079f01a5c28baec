"""Zero cotangents stay zero: no NaN gradient from a branch that was not taken.

``np.where(x > 0, np.sqrt(x), 0.0)`` computes ``np.sqrt`` everywhere, NaN
where ``x < 0``; the ``where`` sends a zero cotangent to those entries, and
a rule that multiplies that zero by an infinite or NaN factor (``0 / 0``,
``0 * NaN``) would make the gradient NaN there. srctrans's rules with
singular points keep a zero cotangent (and, in forward mode, a zero tangent)
zero, and keep the true derivative, infinite or not, where it is nonzero.

End to end through ``st.grad`` (the functions are module-level ``def``s,
since srctrans reads their source), and for each guarded rule called
directly as a Python function in both modes. NumPy's RuntimeWarnings from
computing ``sqrt(-1)`` or ``0 / 0`` are silenced with ``np.errstate``; they
are the forward computation's, not errors.
"""

import contextlib
import warnings

import numpy as np
import pytest

import srctrans as st
from srctrans.rules import REGISTRY


@contextlib.contextmanager
def quiet():
    """No RuntimeWarning from the forward computation (``sqrt(-1)``, ``0 / 0``, ``ddof``)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# -- end to end ------------------------------------------------------------------------

def where_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))

def where_log(x):
    return np.sum(np.where(x > 0, np.log(x), 0.0))

def where_power_half(x):
    return np.sum(np.where(x > 0, x ** 0.5, 0.0))

def where_power_exponent(x, y):
    return np.sum(np.where(x > 0, x ** y, 0.0))

def where_divide(x, y):
    return np.sum(np.where(y != 0, x / y, 0.0))

def where_reciprocal(x):
    return np.sum(np.where(x != 0, np.reciprocal(x), 0.0))

def where_arcsin(x):
    return np.sum(np.where(np.abs(x) < 1, np.arcsin(x), 0.0))

def where_arccos(x):
    return np.sum(np.where(np.abs(x) < 1, np.arccos(x), 0.0))

def where_arccosh(x):
    return np.sum(np.where(x > 1, np.arccosh(x), 0.0))

def where_arctanh(x):
    return np.sum(np.where(np.abs(x) < 1, np.arctanh(x), 0.0))

def where_log1p(x):
    return np.sum(np.where(x > -1, np.log1p(x), 0.0))

def where_log2(x):
    return np.sum(np.where(x > 0, np.log2(x), 0.0))

def where_log10(x):
    return np.sum(np.where(x > 0, np.log10(x), 0.0))

def where_remainder(x, y):
    return np.sum(np.where(y != 0, np.remainder(x, y), 0.0))

def where_arctan2(y, x):
    return np.sum(np.where(x * x + y * y > 0, np.arctan2(y, x), 0.0))

def where_log_of_sqrt(x):
    return np.sum(np.where(x > 0, np.log(np.sqrt(x)), 0.0))

def masked_norm(x):
    s = np.sum(x * x)
    return np.where(s > 0, np.sqrt(s), 0.0)

def masked_row_norms(x):
    s = np.sum(x * x, axis=1)
    return np.sum(np.where(s > 0, np.sqrt(s), 0.0))

def masked_assignment_sqrt(x):
    y = np.sqrt(x)
    y[x <= 0] = 0.0
    return np.sum(y)

def masked_assignment_log(x):
    y = np.log(x)
    y[x <= 0] = -1.0
    return np.sum(y * 2.0)

def sample_std(x):
    return np.where(x.shape[0] > 1, np.std(x, ddof=1), 0.0)

def sample_var(x):
    return np.where(x.shape[0] > 1, np.var(x, ddof=1), 0.0)

def plain_sqrt(x):
    return np.sum(np.sqrt(x))

def where_x_log_x(x):
    return np.sum(np.where(x > 0, x * np.log(x), 0.0))

def where_x_log_x_double_where(x):
    return np.sum(np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0))


X = [-2.0, -1.0, 0.0, 0.25, 4.0]

# (id, fn, args, wrt, expected gradients); every expected entry is exact
END_TO_END = [
    ("where-sqrt", where_sqrt, (X,), 0, [0.0, 0.0, 0.0, 1.0, 0.25]),
    ("where-log", where_log, (X,), 0, [0.0, 0.0, 0.0, 4.0, 0.25]),
    ("where-power-half", where_power_half, (X,), 0, [0.0, 0.0, 0.0, 1.0, 0.25]),
    ("where-power-exponent", where_power_exponent, (X, [0.5, 1.5, 2.0, 2.0, 0.5]), (0, 1),
     ([0.0, 0.0, 0.0, 0.5, 0.25], [0.0, 0.0, 0.0, 0.0625 * np.log(0.25), 2.0 * np.log(4.0)])),
    ("where-divide", where_divide, ([1.0, 0.0, -3.0, 2.0], [0.0, 0.0, 2.0, 4.0]), (0, 1),
     ([0.0, 0.0, 0.5, 0.25], [0.0, 0.0, 0.75, -0.125])),
    ("where-reciprocal", where_reciprocal, ([0.0, 2.0, -0.5],), 0, [0.0, -0.25, -4.0]),
    ("where-arcsin", where_arcsin, ([-2.0, -1.0, 0.0, 0.6, 1.0, 3.0],), 0,
     [0.0, 0.0, 1.0, 1.25, 0.0, 0.0]),
    ("where-arccos", where_arccos, ([-2.0, -1.0, 0.0, 0.6, 1.0, 3.0],), 0,
     [0.0, 0.0, -1.0, -1.25, 0.0, 0.0]),
    ("where-arccosh", where_arccosh, ([0.0, 1.0, 1.25],), 0, [0.0, 0.0, 1 / 0.75]),
    ("where-arctanh", where_arctanh, ([-2.0, -1.0, 0.5, 1.0],), 0, [0.0, 0.0, 1 / 0.75, 0.0]),
    ("where-log1p", where_log1p, ([-3.0, -1.0, 1.0],), 0, [0.0, 0.0, 0.5]),
    ("where-log2", where_log2, ([-1.0, 0.0, 2.0],), 0, [0.0, 0.0, 1 / (2.0 * np.log(2.0))]),
    ("where-log10", where_log10, ([-1.0, 0.0, 2.0],), 0, [0.0, 0.0, 1 / (2.0 * np.log(10.0))]),
    ("where-remainder", where_remainder, ([1.0, 5.5], [0.0, 2.0]), (0, 1), ([0.0, 1.0], [0.0, -2.0])),
    ("where-arctan2-origin", where_arctan2, ([0.0, 1.0], [0.0, 1.0]), (0, 1), ([0.0, 0.5], [0.0, -0.5])),
    ("where-log-of-sqrt", where_log_of_sqrt, (X,), 0, [0.0, 0.0, 0.0, 2.0, 0.125]),
    ("masked-norm-at-zero", masked_norm, ([0.0, 0.0, 0.0],), 0, [0.0, 0.0, 0.0]),
    ("masked-norm", masked_norm, ([3.0, 0.0, -4.0],), 0, [0.6, 0.0, -0.8]),
    ("masked-row-norms", masked_row_norms, ([[0.0, 0.0], [3.0, 4.0]],), 0, [[0.0, 0.0], [0.6, 0.8]]),
    ("masked-assignment-sqrt", masked_assignment_sqrt, (X,), 0, [0.0, 0.0, 0.0, 1.0, 0.25]),
    ("masked-assignment-log", masked_assignment_log, (X,), 0, [0.0, 0.0, 0.0, 8.0, 0.5]),
    ("std-of-one-sample", sample_std, ([1.5],), 0, [0.0]),
    ("var-of-one-sample", sample_var, ([1.5],), 0, [0.0]),
]


def _arrays(args):
    return tuple(np.array(a, dtype=np.float64) for a in args)


@pytest.mark.parametrize("id, fn, args, wrt, expected", END_TO_END, ids=[e[0] for e in END_TO_END])
def test_gradient_is_finite_and_exact(id, fn, args, wrt, expected):
    with quiet():
        got = st.grad(fn, wrt=wrt)(*_arrays(args))
    if not isinstance(wrt, tuple):
        got, expected = (got,), (expected,)
    for g, e in zip(got, expected):
        assert np.all(np.isfinite(g)), g
        np.testing.assert_allclose(g, np.array(e, dtype=np.float64), rtol=1e-14, atol=0)


@pytest.mark.parametrize("id, fn, args, wrt, expected", END_TO_END, ids=[e[0] for e in END_TO_END])
def test_float32_gradient_is_finite(id, fn, args, wrt, expected):
    args32 = tuple(a.astype(np.float32) for a in _arrays(args))
    with quiet():
        got = st.grad(fn, wrt=wrt)(*args32)
    if not isinstance(wrt, tuple):
        got, expected = (got,), (expected,)
    for g, e in zip(got, expected):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, np.array(e, dtype=np.float32), rtol=1e-6, atol=0)


def test_the_backward_pass_itself_makes_no_nan():
    """The same through ``st.vjp``, whose pullback runs the backward pass alone."""
    x = np.array(X)
    with quiet():
        _, pullback = st.vjp(where_sqrt, x)
        (g,) = pullback(np.float64(1.0))
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 1.0, 0.25])


def test_true_infinities_are_kept():
    """Where the cotangent is not zero, an infinite derivative stays infinite."""
    with quiet():
        g = st.grad(plain_sqrt)(np.array([0.0, 4.0]))
    np.testing.assert_array_equal(g, [np.inf, 0.25])


def test_a_cotangent_that_is_a_number_not_zero_keeps_the_product_as_it_is():
    """``rt.zero_guard(g, product)`` with a float ``g`` other than 0 has no entry to set: the
    product comes back itself, its infinities and NaNs kept; a zero float (Python's or
    NumPy's) still sets every entry to 0."""
    from srctrans import runtime as rt
    product = np.array([1.0, np.inf, np.nan])
    for g in (2.0, np.float64(-0.5), np.nan):
        assert rt.zero_guard(g, product) is product
    for g in (0.0, np.float64(0.0), -0.0):
        np.testing.assert_array_equal(rt.zero_guard(g, product), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(rt.zero_guard(np.array([0.0, 1.0, 1.0]), product),
                                  [0.0, np.inf, np.nan])


def test_a_number_guarded_is_itself_when_finite_and_zero_where_its_cotangent_is():
    """A product that is a number (a loop's step's) comes back itself when finite, its kind
    kept; an infinity or NaN becomes 0 where the cotangent is 0, and stays where it is not."""
    from srctrans import runtime as rt
    for product in (1.5, np.float64(-2.5), 0.0):
        assert rt.zero_guard(0.0, product) is product
        assert rt.zero_guard(np.float64(3.0), product) is product
    for bad in (np.inf, np.nan, np.float64(-np.inf)):
        assert rt.zero_guard(0.0, bad) == 0.0 and rt.zero_guard(np.float64(0.0), bad) == 0.0
        assert not np.isfinite(rt.zero_guard(1.0, bad))


def test_nan_where_the_derivative_is_undefined():
    """Where the cotangent is not zero, an undefined derivative is still NaN."""
    with quiet():
        g = st.grad(plain_sqrt)(np.array([-1.0, 4.0]))
    assert np.isnan(g[0]) and g[1] == 0.25


@pytest.mark.xfail(strict=True, reason="the rule of * multiplies the zero cotangent by log(x), "
                   "NaN in the discarded branch (docs/rules.md: guard the argument instead)")
def test_a_value_computed_from_a_nan_still_carries_it():
    with quiet():
        g = st.grad(where_x_log_x)(np.array([-1.0, 1.0]))
    assert np.all(np.isfinite(g))


def test_the_double_where_keeps_the_gradient_finite():
    with quiet():
        g = st.grad(where_x_log_x_double_where)(np.array([-1.0, 0.0, 1.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def power_int(x):
    return np.sum(x ** 2)

def power_fractional(x):
    return np.sum(x ** 1.5)


def test_no_guard_where_none_is_needed():
    """``x ** 2`` has a finite derivative everywhere: its gradient is not guarded.

    The guard is one extra pass over the product; the simplifier drops it
    where no entry can be ``0 * inf``.
    """
    assert "zero_guard" not in st.source(power_int)
    assert "zero_guard" in st.source(power_fractional)


# -- the rules directly ------------------------------------------------------------------

# (primal, arguments at singular points, differentiated positions)
SINGULAR = [
    (np.sqrt, ([-1.0, 0.0, 4.0],), (0,)),
    (np.log, ([-1.0, 0.0, 2.0],), (0,)),
    (np.log1p, ([-2.0, -1.0, 1.0],), (0,)),
    (np.log2, ([-1.0, 0.0, 2.0],), (0,)),
    (np.log10, ([-1.0, 0.0, 2.0],), (0,)),
    (np.reciprocal, ([0.0, 2.0],), (0,)),
    (np.arcsin, ([-2.0, -1.0, 1.0, 0.5],), (0,)),
    (np.arccos, ([-2.0, -1.0, 1.0, 0.5],), (0,)),
    (np.arccosh, ([0.0, 1.0, 2.0],), (0,)),
    (np.arctanh, ([-2.0, -1.0, 1.0, 0.5],), (0,)),
    (np.divide, ([1.0, 0.0, 2.0], [0.0, 0.0, 4.0]), (0, 1)),
    (np.power, ([-1.0, 0.0, 0.0, 2.0], [0.5, 0.5, -1.0, 3.0]), (0, 1)),
    (np.remainder, ([1.0, 2.0], [0.0, 3.0]), (0, 1)),
    (np.arctan2, ([0.0, 1.0], [0.0, 2.0]), (0, 1)),
]


def _call(primal, args):
    with quiet():
        return primal(*args)


@pytest.mark.parametrize("primal, args, wrt", SINGULAR, ids=[p.__name__ for p, _, _ in SINGULAR])
def test_vjp_rule_of_a_zero_cotangent_is_zero(primal, args, wrt):
    rule = REGISTRY.lookup(primal)
    args = tuple(np.array(a) for a in args)
    ans = _call(primal, args)
    g = np.zeros_like(ans)
    with quiet():
        cotangents = rule.vjp(g, ans, *args)
    cotangents = cotangents if rule.template.is_tuple else (cotangents,)
    for i in wrt:
        assert np.all(np.asarray(cotangents[i]) == 0), (i, cotangents[i])


@pytest.mark.parametrize("primal, args, wrt", SINGULAR, ids=[p.__name__ for p, _, _ in SINGULAR])
def test_jvp_rule_of_a_zero_tangent_is_zero(primal, args, wrt):
    """Each argument's contribution, for a zero tangent, is exactly zero."""
    rule = REGISTRY.lookup(primal)
    args = tuple(np.array(a) for a in args)
    ans = _call(primal, args)
    zeros = [np.zeros_like(a) for a in args]
    with quiet():
        tangent = rule.jvp(*[zeros[i] for i in wrt], ans, *args)
    contributions = tangent if rule.jvp_template.per_argument else (tangent,)
    for contribution in contributions:
        assert np.all(np.asarray(contribution) == 0), contribution


@pytest.mark.parametrize("primal, args, wrt", SINGULAR, ids=[p.__name__ for p, _, _ in SINGULAR])
def test_zero_entries_only_are_repaired(primal, args, wrt):
    """With a tangent of ones except one zero entry, only that entry is forced to zero:
    the others keep the rule's value, finite or not."""
    rule = REGISTRY.lookup(primal)
    args = tuple(np.array(a) for a in args)
    ans = _call(primal, args)
    ones = np.ones_like(ans)
    ones[0] = 0.0
    with quiet():
        plain = rule.vjp(np.ones_like(ans), ans, *args)
        guarded = rule.vjp(ones, ans, *args)
    plain = plain if rule.template.is_tuple else (plain,)
    guarded = guarded if rule.template.is_tuple else (guarded,)
    for i in wrt:
        assert guarded[i][0] == 0
        np.testing.assert_array_equal(guarded[i][1:], plain[i][1:])


def test_reductions_with_no_degrees_of_freedom():
    """``np.var``/``np.std`` with ``n - ddof <= 0`` are undefined: NaN, but zero for a zero
    cotangent or tangent, in both modes."""
    from srctrans import runtime as rt
    x = np.array([[1.5], [2.0]])
    for grad in (rt.var_grad, lambda g, x, *a: rt.std_grad(g, np.zeros(2), x, *a)):
        got = grad(np.array([0.0, 1.0]), x, 1, 1, False)
        assert got[0, 0] == 0 and np.isnan(got[1, 0])
    for tangent in (rt.var_jvp(np.array([[0.0], [1.0]]), x, 1, 1),
                    rt.std_jvp(np.array([[0.0], [1.0]]), np.zeros(2), x, 1, 1)):
        assert tangent[0] == 0 and np.isnan(tangent[1])


def softplus_sum(z):           # (two sums: the terms keep their rules, normalize/softplus_terms.py)
    return np.sum(np.log1p(np.exp(-np.abs(z)))) + np.sum(np.maximum(z, 0.0))


def test_a_division_by_one_plus_a_value_never_negative_needs_no_guard():
    """log1p's derivative divides by ``1 + e``: with ``e = np.exp(...)`` (never negative, an
    overflow is inf, never NaN) the divisor is at least 1, so the cotangent divided by it is
    zero where the cotangent is, and the fused gradient has no guard. (``np.exp`` alone
    underflows to 0: a division by it keeps its guard.)"""
    z = np.array([-800.0, -1.0, 0.0, 2.0, 900.0])
    source = st.source(softplus_sum, args=(z,))
    fused = source[source.index("def softplus_sum_grad("):]
    assert "zero_guard" not in fused.split("d_exp =")[1].splitlines()[0], fused
    gradient = st.grad(softplus_sum)
    for _ in range(3):
        got = gradient(z)
    np.testing.assert_allclose(got, 1.0 / (1.0 + np.exp(-z)), rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(got))


def standardised(x, gamma):
    scale = np.sqrt(np.var(x, axis=0) + 1e-5)
    return np.sum(np.tanh(gamma * (x - np.mean(x, axis=0)) / scale))


def standardised_with_ddof(x, gamma):
    scale = np.sqrt(x.var(axis=0, ddof=1) + 1e-5)     # n - 1 may be 0: NaN, and it keeps its guard
    return np.sum(np.tanh(gamma * (x - np.mean(x, axis=0)) / scale))


@pytest.mark.parametrize("rows", [4, 1])
def test_a_division_by_the_root_of_a_variance_plus_a_number_needs_no_guard(rows):
    """A variance (``ddof`` 0) is a mean of squares, never negative nor NaN at finite inputs,
    so ``np.sqrt(var + 1e-5)`` is at least ``sqrt(1e-5)``: a cotangent divided by it (times a
    number, too) is zero where the cotangent is. With ``ddof=1`` the variance of one row is
    NaN, and the guard stays. Specialised and generic code agree either way."""
    x = np.random.default_rng(3).standard_normal((rows, 3))
    x[0, 0] = 0.0
    gamma = np.array([0.0, 1.0, 2.0])
    source = st.source(standardised, args=(x, gamma))
    fused = source[source.index("def standardised_grad("):]
    assert "zero_guard(" not in "".join(line for line in fused.splitlines()
                                        if "/ scale" in line and "_div /" not in line)
    for fn in (standardised, standardised_with_ddof):
        gradient = st.grad(fn)
        with np.errstate(invalid="ignore", divide="ignore"):
            for _ in range(3):
                got = gradient(x, gamma)
            generic = st.grad(fn, specialize=False)(x, gamma)
        np.testing.assert_allclose(got, generic, rtol=1e-12, equal_nan=True)
        if fn is standardised:
            assert np.all(got[:, 0] == 0) and np.all(np.isfinite(got))   # gamma's 0: none
    guarded = st.source(standardised_with_ddof, args=(x, gamma))
    assert "zero_guard(d_div, d_div / scale)" in guarded


def sigmoid_layers(W, x):
    a = x
    for _ in range(2):
        h = 1.0 / (1.0 + np.exp(-(W @ a)))          # a sigmoid in each step
        a = np.tanh(h) + h
    return np.sum(a)


def sometimes_signed(x, w):
    s = 1.0 + np.exp(x)
    total = 0.0
    for i in range(2):
        total = total + np.sum(w * (np.tanh(x) / s))
        s = x - 2.0 * i                             # s may be 0 in the next step
    return total


def test_a_sigmoids_cotangent_needs_no_guard_in_a_loop_and_a_value_of_any_sign_keeps_it():
    """``1.0 / (1.0 + np.exp(-z))`` is in ``(0, 1]`` wherever it is computed, and its
    denominator at least 1: ``g * sig / (1 + e)`` is zero where ``g`` is, in every step of a
    loop too. A name also assigned a value of any sign keeps its guard."""
    W, x = np.random.default_rng(6).standard_normal((3, 3)), np.array([800.0, -1.0, 0.0])
    for _ in range(3):
        got = st.grad(sigmoid_layers)(W, x)
    fused = st.source(sigmoid_layers, args=(W, x)).split("def sigmoid_layers_grad")[1]
    assert "zero_guard" not in fused, fused
    np.testing.assert_allclose(got, st.grad(sigmoid_layers, specialize=False)(W, x), rtol=1e-12)
    assert np.all(np.isfinite(got))
    y, w = np.array([0.0, 0.5]), np.array([0.0, 1.0])  # s = 0 where w = 0 in the second step
    source = st.source(sometimes_signed, args=(y, w))
    assert "zero_guard(" in source.split("def sometimes_signed_grad")[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(3):
            got = st.grad(sometimes_signed)(y, w)
        generic = st.grad(sometimes_signed, specialize=False)(y, w)
    np.testing.assert_allclose(got, generic, rtol=1e-12)


def scaled_residuals(y, mu, log_scale, mask):
    z = (y - mu) / np.exp(log_scale)
    return np.sum(np.where(mask, z, 0.0) ** 2) - len(y) * log_scale


def test_a_guarded_products_whole_sum_checks_the_sum():
    """A number's cotangent ``-(dz * z / scale).sum()`` is one ``rt.zero_guard_sum``
    (optimise/guarded_sums.py): the same gradient, and where an entry whose cotangent is 0 is
    infinite (a masked-off outlier) the guard still sets it to 0 before the sum."""
    y, mu, mask = np.array([1.0, 2.0, np.inf, -0.5]), 0.3, np.array([True, True, False, True])
    source = st.source(scaled_residuals, args=(y, mu, 0.2, mask), wrt=(1, 2))
    fused = source[source.index("def scaled_residuals_grad("):]
    assert "rt.zero_guard_sum(" in fused and ").sum()" not in fused.split("zero_guard_sum")[1]
    gradient = st.grad(scaled_residuals, wrt=(1, 2))
    kept = y[mask]
    scale = np.exp(0.2)
    want = (-2 * np.sum(kept - mu) / scale ** 2, -2 * np.sum((kept - mu) ** 2) / scale ** 2 - 4)
    with quiet():
        for _ in range(3):                               # generic, specialised, short path
            np.testing.assert_allclose(gradient(y, mu, 0.2, mask), want, rtol=1e-12)


def test_zero_guard_sum_is_the_guarded_sum():
    from srctrans import runtime as rt
    g, product = np.array([0.0, 1.0, 2.0]), np.array([np.nan, 2.0, 3.0])
    assert rt.zero_guard_sum(g, product) == 5.0 == rt.zero_guard(g, product).sum()
    with quiet():
        assert rt.zero_guard_sum(np.ones(2), np.array([np.inf, 1.0])) == np.inf
        assert np.isnan(rt.zero_guard_sum(np.ones(2), np.array([np.nan, 1.0])))
    small = rt.zero_guard_sum(np.ones(2, np.float32), np.array([1.0, 2.0], np.float32))
    assert small == 3.0 and small.dtype == np.float32
    with quiet():
        wide = rt.zero_guard_sum(np.ones(2), np.array([1e308, 1e308]))    # overflows: the guard's
    assert wide == np.inf
    complex_ = rt.zero_guard_sum(np.array([0.0, 1.0]), np.array([np.nan + 1j, 1 - 1j]))
    assert complex_ == 1 - 1j


def test_zero_guard_sums_rules_are_the_guards_then_the_sums():
    """A Hessian differentiates a fused gradient again: ``rt.zero_guard_sum``'s rules send the
    sum's cotangent, and its tangent sums, wherever the guard passes its value on."""
    from srctrans import runtime as rt
    rule, guard = REGISTRY.lookup(rt.zero_guard_sum), REGISTRY.lookup(rt.zero_guard)
    v, value = np.array([0.0, 1.0, 0.0]), np.array([np.inf, 2.0, 3.0])
    t = np.array([0.5, -1.0, 2.0])
    with quiet():
        ans = rt.zero_guard_sum(v, value)
        _, dvalue = rule.vjp(1.5, ans, v, value)
        _, want = guard.vjp(np.full(3, 1.5), rt.zero_guard(v, value), v, value)
        np.testing.assert_array_equal(dvalue, want)
        np.testing.assert_array_equal(dvalue, [0.0, 1.5, 1.5])
        assert rule.jvp(t, ans, v, value) == np.sum(guard.jvp(t, rt.zero_guard(v, value), v, value))


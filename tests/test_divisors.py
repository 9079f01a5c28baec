"""A number the measuring call divided by, neither 0 nor NaN, or an array all above 0, is
checked once rather than each quotient guarded (optimise/divisors.py,
runtime.branches.expect_divisor, expect_positive)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.emit.printer import block_lines
from srctrans.optimise.divisors import divide_by_checked
from srctrans.runtime.branches import MissedBranch, expect_divisor, expect_positive


def _divided(text, numbers, parameters=(), arrays=()):
    from srctrans.front_end import NUMPY_ALIAS, RUNTIME_ALIAS
    aliases = {RUNTIME_ALIAS: "rt", NUMPY_ALIAS: "np"}
    body, _ = divide_by_checked(gast.parse(text).body, set(numbers), set(arrays),
                                set(parameters), aliases)
    return "\n".join(block_lines(body, 0))


@pytest.mark.parametrize("text, numbers, parameters, divided", [
    ("s = a * 2\nd = rt.zero_guard(g, g / s)", {"s"}, (),
     "s = a * 2\nrt.expect_divisor(s)\nd = g / s"),
    ("d = rt.zero_guard(g, g / s)\ne = f(rt.zero_guard(h, h / s))", {"s"}, ("s",),
     "rt.expect_divisor(s)\nd = g / s\ne = f(h / s)"),
    ("s = a * 2\nd = -rt.zero_guard_sum(g, g * z / s)", {"s"}, (),       # the sum divided
     "s = a * 2\nrt.expect_divisor(s)\nd = -(rt.zero_guard_sum(g, g * z) / s)"),
])
def test_a_quotient_by_a_checked_number_is_unguarded(text, numbers, parameters, divided):
    assert _divided(text, numbers, parameters) == divided


@pytest.mark.parametrize("text, numbers, parameters", [
    ("s = a * 2\nd = rt.zero_guard(g, g / s)", (), ()),                 # not measured
    ("s = a * 2\ns = s + 1\nd = rt.zero_guard(g, g / s)", {"s"}, ()),   # assigned twice
    ("for i in r:\n    s = a\nd = rt.zero_guard(g, g / s)", {"s"}, ()),  # in a loop
    ("s = a * 2\nd = rt.zero_guard(g, g * z / s)", {"s"}, ()),          # z may be infinite
    ("s = a * 2\nd = rt.zero_guard(g, g * 1e309 / s)", {"s"}, ()),      # an infinite factor
    ("s = a * 2\nd = rt.zero_guard(g, h * 0.5 / s)", {"s"}, ()),        # not g's multiple
    ("s = a * 2\nd = rt.zero_guard_sum(g, g * z / t)", {"s"}, ()),      # t not measured
    ("d = rt.zero_guard(g, g / s)", {"s"}, ()),                          # assigned nowhere here
])
def test_a_quotient_that_may_not_lose_its_guard_keeps_it(text, numbers, parameters):
    assert _divided(text, numbers, parameters) == text


@pytest.mark.parametrize("text, arrays, parameters, divided", [
    ("s = a * 2\nd = rt.zero_guard(g, g / s)\ne = h * rt.ratio_or_zero(x, s)", {"s"}, (),
     "s = a * 2\nrt.expect_positive(s)\nd = g / s\ne = h * (x / s)"),
    ("d = rt.zero_guard(g, g / s)", {"s"}, ("s",), "rt.expect_positive(s)\nd = g / s"),
    ("d = rt.zero_guard(g, g * 0.5 / s)\ne = rt.zero_guard(g, 2 * g / s)", {"s"}, ("s",),
     "rt.expect_positive(s)\nd = g * 0.5 / s\ne = 2 * g / s"),           # a square root's
])
def test_a_quotient_by_a_checked_array_is_unguarded(text, arrays, parameters, divided):
    assert _divided(text, (), parameters, arrays) == divided


@pytest.mark.parametrize("text, arrays", [
    ("s = a * 2\nd = rt.zero_guard_sum(g, g * z / s)", {"s"}),      # each entry divides a term
    ("s = a * 2\ns[0] = 0.0\nd = rt.zero_guard(g, g / s)", {"s"}),   # changed in place
    ("s = a * 2\nv = s[1:]\nv *= 0.0\nd = rt.zero_guard(g, g / s)", {"s"}),   # through a view
    ("s = a * 2\nh(s)\nd = rt.ratio_or_zero(x, s)", {"s"}),        # a user's call may change it
    ("s = a * 2\nd = rt.ratio_or_zero(x, s)", ()),                  # not measured
    ("s = np.sqrt(a)\nv = s.reshape(-1)\nv[0] = 0.0\nd = rt.zero_guard(g, g / s)",
     {"s"}),                                                       # a method's view of it
    ("s = np.sqrt(a)\nw = (s, b)\nw[0][0] = 0.0\nd = rt.zero_guard(g, g / s)",
     {"s"}),                                                       # held in a tuple
    ("s = np.sqrt(a)\nv = rt.f(s)[1:]\nv += 1.0\nd = rt.zero_guard(g, g / s)",
     {"s"}),                                                       # what a helper handed back
])
def test_a_quotient_by_an_array_that_may_not_lose_its_guard_keeps_it(text, arrays):
    assert _divided(text, (), (), arrays) == text


def test_expect_positive_passes_arrays_above_zero_and_stops_the_rest():
    for s in (np.array([0.5, 2.0]), np.array([[1e-300]]), np.array([3.0], np.float32),
              np.array([np.inf, 1.0])):
        expect_positive(s)
    for s in (np.array([0.5, 0.0]), np.array([-0.0]), np.array([1.0, np.nan]),
              np.array([np.nan, 1.0]), np.array([2.0, -1.0])):
        with pytest.raises(MissedBranch):
            expect_positive(s)


def test_expect_divisor_passes_numbers_and_stops_zero_and_nan():
    for s in (0.5, -2.0, np.float64(1e-300), np.float32(3.0), np.inf):
        expect_divisor(s)
    for s in (0.0, -0.0, np.float64(0.0), np.nan, np.float32(np.nan)):
        with pytest.raises(MissedBranch):
            expect_divisor(s)


def clipped_ratio(x, s):
    """The cotangent of ``x / s`` is 0 where the maximum takes 0.0: the guard's case."""
    return np.sum(np.maximum(x / s, 0.0))


def test_a_call_dividing_by_zero_gets_the_generic_codes_gradient():
    """Specialised where s = 0.5, the fused gradient divides by s unguarded; where s is 0 the
    generic code's guard gives 0 for the entries the maximum cut (not 0 / 0), on every call."""
    x = np.array([0.7, -0.4, 1.3, -2.0])
    g = st.grad(clipped_ratio, wrt=(0, 1))
    generic = st.grad(clipped_ratio, wrt=(0, 1), optimize=False)
    source = st.source(clipped_ratio, wrt=(0, 1), args=(x, 0.5))
    assert "rt.expect_divisor(s)" in source and "(rt.expect_divisor)" in source
    for s in (0.5, 0.5, 0.5, 0.0, 0.0, 0.25, np.nan, 0.5, 0.0):
        with np.errstate(divide="ignore", invalid="ignore"):
            got, want = g(x, s), generic(x, s)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    st.check_grads(clipped_ratio, (x, 0.5), wrt=(0, 1), order=2)


def mixture(means, X, sigma):
    sq = np.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=-1)
    log_comp = -0.5 * sq / sigma ** 2
    m = log_comp.max(axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(log_comp - m), axis=1)) + m[:, 0])


def test_a_mixtures_responsibilities_are_divided_by_the_variance_unguarded():
    rng = np.random.default_rng(6)
    args = (rng.standard_normal((3, 2)), rng.standard_normal((8, 2)), 0.8)
    fused = st.source(mixture, args=args).split("def mixture_grad")[1]
    assert "zero_guard" not in fused and "rt.expect_divisor(_pow" in fused
    st.check_grads(mixture, args, order=2)


def clipped_ratios(x, s):
    """As ``clipped_ratio``, divided by an array: the guard's case where an entry of s is 0."""
    return np.sum(np.maximum(x / s, 0.0))


def test_a_call_dividing_by_an_array_with_a_zero_gets_the_generic_codes_gradient():
    x = np.array([[0.7, -0.4], [1.3, -2.0]])
    good, zero, nan = np.array([[0.5], [2.0]]), np.array([[0.5], [0.0]]), np.array([[np.nan], [1.0]])
    g = st.grad(clipped_ratios, wrt=(0, 1))
    generic = st.grad(clipped_ratios, wrt=(0, 1), optimize=False)
    source = st.source(clipped_ratios, wrt=(0, 1), args=(x, good))
    assert "rt.expect_positive(s)" in source and "(rt.expect_positive)" in source
    for s in (good, good, good, zero, zero, good, nan, -good, good, zero):
        with np.errstate(divide="ignore", invalid="ignore"):
            got, want = g(x, s), generic(x, s)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    st.check_grads(clipped_ratios, (x, good), wrt=(0, 1), order=2)


def cosine_loss(A, B):
    a = A / np.linalg.norm(A, axis=1, keepdims=True)
    b = B / np.linalg.norm(B, axis=1, keepdims=True)
    return np.mean(1.0 - np.sum(a * b, axis=1))


def test_a_norms_ratio_is_the_forward_passs_quotient():
    """The norm's derivative ``rt.ratio_or_zero(A, norm)`` is ``A / norm`` once the norm is
    checked above 0, which the forward pass computed as ``a``."""
    rng = np.random.default_rng(7)
    args = (rng.standard_normal((5, 3)), rng.standard_normal((5, 3)))
    fused = st.source(cosine_loss, args=args).split("def cosine_loss_grad")[1]
    assert "rt.expect_positive(_norm)" in fused
    assert "ratio_or_zero" not in fused and "A / _norm" not in fused.split("a = A / _norm")[1]
    assert "zero_guard(da, da / _norm)" not in fused
    st.check_grads(cosine_loss, args, order=2)
    g, generic = st.grad(cosine_loss), st.grad(cosine_loss, optimize=False)
    zero_row = args[0].copy()
    zero_row[2] = 0.0
    for A in (args[0], args[0], args[0], zero_row, args[0], zero_row):
        with np.errstate(divide="ignore", invalid="ignore"):     # (NaN where generic's are;
            np.testing.assert_allclose(g(A, args[1]), generic(A, args[1]),   # the code without
                                       rtol=1e-13, atol=0)       # the check divides first)


def test_arithmetic_of_an_array_shares_no_memory_with_it():
    """``r = np.sqrt(x ** 2 + y ** 2)`` holds a new array: a write into what ``x`` and ``y``
    are views of (``dP``, placed into from them) leaves ``r`` alone, and ``r`` is checked
    once rather than each quotient by it guarded."""
    text = ("x = P[:, 0]\ny = P[:, 1]\nr = np.sqrt(x ** 2 + y ** 2)\n"
            "d = rt.zero_guard(g, g * 0.5 / r)\ndP = rt.getitem_grad(d, P, np.s_[:, 1])\n"
            "dP[:, 0] += x * d")
    assert "rt.expect_positive(r)\nd = g * 0.5 / r" in _divided(text, (), ("P",), {"r"})


def positions_energy(P, k):
    """Points' distances from the origin, read from a matrix's columns."""
    x, y = P[:, 0], P[:, 1]
    r = np.sqrt(x ** 2 + y ** 2)
    return np.sum(k * (r - 1.0) ** 2) + np.sum(np.cos(x) * y)


def test_a_distance_from_a_matrixs_columns_is_checked_once():
    P = np.random.default_rng(21).standard_normal((6, 2))
    gradient = st.grad(positions_energy)
    for _ in range(3):
        np.testing.assert_allclose(gradient(P, 0.7),
                                   st.grad(positions_energy, optimize=False)(P, 0.7), rtol=1e-12)
    fused = st.source(positions_energy, args=(P, 0.7)).split("def positions_energy_grad")[1]
    assert "rt.expect_positive(r)" in fused and "zero_guard" not in fused
    st.check_grads(positions_energy, (P, 0.7), order=2, wrt=0)

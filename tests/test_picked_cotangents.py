"""One cotangent of a helper that computes every operand's, where only that one is read
(optimise/picked_cotangents.py): a convolution's as one correlation, a polynomial's
coefficients' as one product, for the shapes at hand; the helper wherever they would not
give its values."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.picked_cotangents import picked_cotangent

R = np.random.default_rng(61)
rt = st.runtime


def _rewritten(text, known):
    node = gast.parse(text).body[0].value
    for call in (n for n in gast.walk(node) if isinstance(n, gast.Call)):
        anno.set_(call, Anno.CALLEE, getattr(rt, call.func.attr))
    found = picked_cotangent(node, known, "np")
    return None if found is None else unparse(found)


@pytest.mark.parametrize("n, m", [(30, 3), (30, 5), (7, 3), (5, 5), (30, 4), (3, 5), (4, 4),
                                  (1, 1), (2, 6)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("k", [0, 1])
@pytest.mark.parametrize("function", [np.convolve, np.correlate])
def test_a_convolutions_picked_cotangent_is_the_helpers_or_left(function, n, m, mode, k):
    a, v = R.standard_normal(n), R.standard_normal(m)
    g = R.standard_normal(function(a, v, mode).shape)
    known = {"g": g.shape, "a": a.shape, "v": v.shape}
    helper = f"{function.__name__}_grads"
    written = _rewritten(f"rt.{helper}(g, a, v, {mode!r})[{k}]", known)
    expected = {(0, "full"): True, (1, "full"): True, (0, "valid"): n >= m,
                (1, "valid"): n >= m, (0, "same"): n >= m and m % 2 == 1, (1, "same"): False}
    assert (written is not None) == expected[k, mode], written
    if written is not None:
        got = eval(written, {"np": np, "g": g, "a": a, "v": v})
        want = getattr(rt, helper)(g, a, v, mode)[k]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n, m", [(5, 3), (3, 5), (1, 1), (4, 4)])
@pytest.mark.parametrize("mode", ["full", "same", "valid", None])
def test_convolutions_have_their_shapes(n, m, mode):
    from srctrans.optimise.expression_shapes import shape_of
    for function in (np.convolve, np.correlate):
        text = f"np.{function.__name__}(a, v{'' if mode is None else f', mode={mode!r}'})"
        node = gast.parse(text).body[0].value
        anno.set_(node, Anno.CALLEE, function)
        args = (np.ones(n), np.ones(m)) + (() if mode is None else (mode,))
        assert shape_of(node, {"a": (n,), "v": (m,)}) == function(*args).shape


def test_the_default_mode_is_full_and_other_shapes_are_left():
    known = {"g": (32,), "a": (30,), "v": (3,), "M": (3, 2)}
    assert _rewritten("rt.convolve_grads(g, a, v)[0]", known) == "np.correlate(g, v, 'valid')"
    assert _rewritten("rt.convolve_grads(g, a, M)[0]", known) is None       # not a vector
    assert _rewritten("rt.convolve_grads(g, a, w)[0]", known) is None       # a shape unknown


@pytest.mark.parametrize("n, shape", [(4, (30,)), (1, (5,)), (3, (2, 3))])
def test_a_polynomials_coefficients_cotangent_is_one_product(n, shape):
    p, x = R.standard_normal(n), R.standard_normal(shape)
    g = R.standard_normal(shape)
    written = _rewritten("rt.polyval_grads(g, p, x)[0]", {"g": g.shape, "p": p.shape,
                                                          "x": x.shape})
    if len(shape) != 1:
        assert written is None                  # the points not a vector: the helper
        return
    got = eval(written, {"np": np, "g": g, "p": p, "x": x})
    np.testing.assert_allclose(got, rt.polyval_grads(g, p, x)[0], rtol=1e-12)
    assert _rewritten("rt.polyval_grads(g, p, x)[1]", {"g": g.shape, "p": p.shape,
                                                       "x": x.shape}) is None


def smoothed_fit(x, kernel, target, c):
    y = np.convolve(x, kernel, mode="same")
    z = np.correlate(y, kernel[:2], mode="valid")
    return np.sum((y - target) ** 2) + np.sum(z ** 2) + np.sum((np.polyval(c, x) - target) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_fused_gradient_correlates_once_and_holds(dtype):
    args = tuple(a.astype(dtype) for a in (R.standard_normal(12), np.array([0.25, 0.5, 0.25]),
                                           R.standard_normal(12), R.standard_normal(3)))
    gradient = st.grad(smoothed_fit, wrt=(0, 3))
    for _ in range(3):
        got = gradient(*args)
    want = st.grad(smoothed_fit, wrt=(0, 3), optimize=False)(*args)
    for a, b in zip(got, want):
        assert a.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=1e-4 if dtype == np.float32 else 1e-11)
    fused = st.source(smoothed_fit, args=args, wrt=(0, 3)).split("def smoothed_fit_grad")[1]
    assert "convolve_grads" not in fused and "correlate_grads" not in fused, fused
    if dtype == np.float64:
        st.check_grads(smoothed_fit, args, order=2, wrt=(0, 3))


def least_squares_polynomial(c, x, y):
    return np.sum((np.polyval(c, x) - y) ** 2)


def test_a_polynomials_coefficients_gradient_is_one_product_and_holds():
    args = (R.standard_normal(4), R.standard_normal(20), R.standard_normal(20))
    gradient = st.grad(least_squares_polynomial)
    for _ in range(3):
        got = gradient(*args)
    residual = np.polyval(args[0], args[1]) - args[2]
    np.testing.assert_allclose(got, 2 * residual @ np.vander(args[1], 4), rtol=1e-12)
    fused = st.source(least_squares_polynomial, args=args).split("def least_squares_polynomial_grad")[1]
    assert "polyval_grads" not in fused and "np.arange(3, -1, -1)" in fused, fused
    st.check_grads(least_squares_polynomial, args, order=2)


def test_interps_values_cotangent_alone_is_the_helpers():
    from srctrans.runtime.composites import interp_grads
    from srctrans.runtime.picked_kernels import interp_values_grad
    for trial in range(60):
        n, m = int(R.integers(2, 9)), int(R.integers(1, 30))
        xp, fp = np.sort(R.standard_normal(n)), R.standard_normal(n)
        x, g = R.standard_normal(m) * 2, R.standard_normal(m)
        if trial % 5 == 0:
            x[0], x[-1] = xp[0], xp[-1]                    # the ends themselves
        if trial % 7 == 0:
            x[0] = np.nan                                   # the helper's own path
        if trial % 11 == 0 and n > 2:
            xp[1] = xp[2]                                   # a segment of width 0 likewise
        with np.errstate(all="ignore"):
            want = interp_grads(g, x, xp, fp)[2]
            got = interp_values_grad(g, x, xp, fp)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    x32 = R.random(5).astype(np.float32)                    # not float64: the helper's
    xp32, fp32 = np.linspace(0, 1, 4, dtype=np.float32), R.standard_normal(4).astype(np.float32)
    got = interp_values_grad(np.ones(5, np.float32), x32, xp32, fp32)
    assert got.dtype == interp_grads(np.ones(5, np.float32), x32, xp32, fp32)[2].dtype


def sampled(y, xq):
    xs = np.linspace(0, 1, len(y))
    return np.sum(np.interp(xq, xs, y) ** 2) + np.sum(np.interp(xq * 2.0, xs, y, left=0.0))


def test_interpolated_values_gradient_holds_and_picks_the_kernel():
    args = (R.standard_normal(8), R.random(20))
    gradient = st.grad(sampled)
    for _ in range(3):
        got = gradient(*args)
    np.testing.assert_allclose(got, st.grad(sampled, optimize=False)(*args), rtol=1e-12)
    fused = st.source(sampled, args=args).split("def sampled_grad")[1]
    assert "rt.interp_values_grad(" in fused and fused.count("interp_grads(") == 1, fused
    st.check_grads(sampled, args, order=2)

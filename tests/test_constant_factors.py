"""Numeric factors of products multiplied together across a fused gradient's statements
(optimise/constant_factors.py): derivatives of squares and halves cancel (``1.0 / (2 * v)``
then ``* 2``), a literal joins a leading number, and nothing changes where a literal taken
out would cost an operation, change a dtype or share an array."""

import ast

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.optimise.constant_factors import multiply_constant_factors

R = np.random.default_rng(97)


def rewritten(text, floats=("v", "w", "x", "q", "p"), keep=("g",), scalars=()):
    body = gast.parse(text).body
    multiply_constant_factors(body, set(keep), set(floats), set(scalars))
    return ast.unparse(gast.gast_to_ast(gast.Module(body, []))).replace("(", "").replace(")", "")


def test_literals_cancel_across_statements():
    code = rewritten("d = 1.0 / (2 * v)\n"
                     "a = d * (2 * (q - p))\n"
                     "m = d * w\n"
                     "g = m * 2 + a")
    assert code.splitlines() == ["d = 1.0 / v", "a = d * q - p", "m = d * w", "g = m + a"]


@pytest.mark.parametrize("text", [
    "d = 2 * v\ng = d + w * d",                                # read outside a product
    "d = 2 * v\nfor i in range(3):\n    w = w * d\ng = w",     # read in a loop: each step
    "d = 2 * v\na = d * w\nb = d * x\ng = a + b",              # two reads, no literal of their own
    "d = 2 * v\nh = d * w\ng = h + w",                         # one, the literal would only move
    "g = 2 * v\nh = g * 3",                                    # returned
])
def test_a_literal_stays_where_taking_it_out_costs(text):
    assert rewritten(text).splitlines()[0] == text.splitlines()[0].replace("(", "").replace(")", "")


def test_a_product_equal_to_a_name_is_not_the_name():
    assert rewritten("z = y * 1.0\ng = z") == "z = y * 1.0\ng = z"       # z may be written into
    assert rewritten("z = 2 * v * 0.5\ng = z").splitlines()[0] == "z = 1.0 * v"


def test_a_literal_1_keeps_a_mask_a_float():
    assert rewritten("g = 2 * (x > 0) * 0.5").splitlines() == ["g = 1.0 * x > 0"]   # a comparison
    assert rewritten("g = m * 2 * 0.5 * k", floats=()).splitlines() == ["g = 1.0 * m * k"]
    assert rewritten("g = m * 2 * 0.5 * v").splitlines() == ["g = m * v"]


def test_the_literal_joins_a_leading_number():
    code = rewritten("s = 0.5 * t\ng = s * (2 * x) * -1", scalars={"s", "t"}, floats=("t", "x"))
    assert code.splitlines() == ["g = -t * x"]     # (-t) * x: one array operation; s, left
                                                    # 1.0 * t, is t itself where g reads it


def test_a_float_copy_read_only_by_arithmetic_is_its_source():
    code = rewritten("d = 1.0 * v\na = d + w\nb = -d", keep=("a", "b"))
    assert code.splitlines() == ["a = v + w", "b = -v"]


@pytest.mark.parametrize("text", [
    "d = 1.0 * m\na = d + w",                   # m may hold ints: the copy makes floats
    "d = 1.0 * v\na = f(d)",                    # passed to a call
    "d = 1.0 * v\nv[0] = 2.0\na = d + w",       # its source written into
    "d = 1.0 * v\nv = w\na = d + w",            # its source assigned again
], ids=["maybe_ints", "call", "written_into", "reassigned"])
def test_a_float_copy_that_must_stay_a_copy_stays(text):
    assert "1.0 * " in rewritten(text, keep=("a",))


def gaussian_kl(q_mu, q_log_sigma, p_mu, p_log_sigma):
    var_q, var_p = np.exp(2 * q_log_sigma), np.exp(2 * p_log_sigma)
    return np.sum(p_log_sigma - q_log_sigma + (var_q + (q_mu - p_mu) ** 2) / (2 * var_p) - 0.5)


def halves(x, w):
    s = 0.5 * np.sum(w * x) / 3.0
    return -0.5 * np.sum(x ** 2) * s + np.sum((2 * x) * w / 4.0)


CASES = [gaussian_kl, halves]


def args_of(f, dtype=np.float64):
    if f is gaussian_kl:
        return tuple(R.standard_normal(4).astype(dtype) for _ in range(4))
    return R.standard_normal(5).astype(dtype), R.standard_normal(5).astype(dtype)


def test_the_fused_gradient_of_a_kl_divergence_has_no_literal_left_in_its_products():
    fused = st.source(gaussian_kl, args=args_of(gaussian_kl)).split("def gaussian_kl_grad(")[1]
    code = [line for line in fused.splitlines() if not line.strip().startswith("#")]
    backward = "\n".join(code).split("np.exp(2 * p_log_sigma)", 1)[1]
    assert "2 *" not in backward and "* 2" not in backward, fused


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_derivatives_and_dtypes_are_the_generic_codes(f, dtype):
    args = args_of(f, dtype)
    if dtype is np.float64:
        st.check_grads(f, args, order=2)
    gradient = st.grad(f, wrt=(0, 1))
    want = st.grad(f, wrt=(0, 1), optimize=False)(*args)
    rtol = 1e-12 if dtype is np.float64 else 1e-5
    for _ in range(3):                                    # generic, specialised, short path
        for a, b in zip(gradient(*args), want):
            assert a.dtype == b.dtype
            # each path rounds its own way: an entry that is a difference of nearly equal
            # terms (gaussian_kl's var_q / var_p - 1) differs by rounding of the terms' size
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())


def test_a_literal_joins_a_leading_number_where_an_array_is_multiplied():
    """``-2 * (d * mu)``, ``d`` a number: ``(-2 * d) * mu`` takes one array operation where
    it took two; among numbers alone nothing is gained, and nothing changes."""
    body = gast.parse("m = -2 * (d * mu)\nr = -(s * t)\ng = m + r").body
    multiply_constant_factors(body, {"g"}, {"mu", "d", "s", "t"}, {"d", "s", "t"})
    code = ast.unparse(gast.gast_to_ast(gast.Module(body, [])))
    assert code.splitlines()[:2] == ["m = -2 * d * mu", "r = -(s * t)"]


def vae_kl(mu, logvar, x):
    return -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar)) / x.shape[0]


def vae_kl_by_len(mu, logvar, x):
    return -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar)) / len(x)


@pytest.mark.parametrize("f", [vae_kl, vae_kl_by_len])
def test_the_normaliser_of_a_batchs_size_is_a_number(f):
    """``1.0 / x.shape[0]`` and ``1.0 / len(x)`` are numbers (``x.shape[0]`` and ``len(x)``
    ints), so a literal joins them rather than an array: the KL term of a VAE's loss scales
    mu once."""
    args = (R.standard_normal((4, 2)), R.standard_normal((4, 2)) * 0.3, np.ones((4, 6)))
    fused = st.source(f, args=args, wrt=(0, 1)).split(f"def {f.__name__}_grad(")[1]
    line = next(line for line in fused.splitlines() if line.strip().startswith("dmu ="))
    assert "(" not in line.split("=", 1)[1], line          # -2 * d * mu: one array operation
    st.check_grads(f, args, order=2, wrt=(0, 1))


@pytest.mark.parametrize("text, written", [
    # a quotient is a float whatever its operands (and a guard of one is too): the literals
    # of the half and the double cancel through the pick of the half's name
    ("q = rt.zero_guard(g, g / s)\nd = q * 0.5\ne = d[:, :, None] * (2 * x)",
     "q = rt.zero_guard(g, g / s)\ne = q[:, :, None] * x"),
    ("q = g / s\nd = q * 0.5\ne = d[:, None] * (2 * x)", "q = g / s\ne = q[:, None] * x"),
    # a product of names of unknown kind may be ints: 0.5 * q is kept, the literals stay
    ("q = g * h\nd = q * 0.5\ne = d[:, None] * (2 * x)",
     "q = g * h\nd = q * 0.5\ne = d[:, None] * (2 * x)"),
])
def test_a_literal_moves_through_a_pick_of_a_name(text, written):
    body = gast.parse(text).body
    multiply_constant_factors(body, {"e"}, {"x"})
    assert ast.unparse(gast.gast_to_ast(gast.Module(body, []))) == written

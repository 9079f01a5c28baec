"""Values a fused gradient reads only to compute its derivatives (optimise/derivative_only.py):
which they are, and the inner products they may then be computed by."""

import doctest

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.optimise import derivative_only
from srctrans.optimise.derivative_only import derivative_only_names

TAPE = "tape.append(r2)\nr2 = (d * d).sum()\n"          # a forward step saving r2's last value


def test_the_example_in_the_docstring():
    assert doctest.testmod(derivative_only).failed == 0


@pytest.mark.parametrize("text, expected", [
    (TAPE + "ds = g / r2\nr2 = tape.pop()", {"r2"}),                 # pushed, popped back
    (TAPE + "ds = g / r2\nw = tape.pop()", set()),                   # popped into another
    (TAPE + "ds = g / r2\nr2 = tape.pop()\nall = tape", set()),      # the stack read whole
    ("r2 = (d * d).sum()\nif r2 > 1.0:\n    ds = g", set()),         # a branch's test
    ("r2 = (d * d).sum()\nds = g * (r2 > 1.0)", set()),              # a comparison
    ("r2 = (d * d).sum()\nds = g[r2]", set()),                       # an index
    ("r2 = (d * d).sum()\nds = g * r2\nout = r2 + 1.0", set()),      # a value returned
    ("r2 = (d * d).sum()\nds = g * f(r2)", set()),                   # an unknown function
    ("r2 = (d * e).sum()\nrt.expect_divisor(r2)\nds = g / r2", set()),   # a check of it
    ("r2 = (d * d).sum()\nrt.expect_divisor(r2)\nds = g / r2", {"r2"}),  # ... of squares
    ("r2 = (d ** 2).sum()\nrt.expect_divisor(r2)\nr2 = r2 - 1.0\nds = g / r2",
     set()),                                                           # ... and another value
    ("r2 = (d * d).sum()\nds = g * r2.sum()", {"r2"}),               # an array method
    ("r2 = (d * d).sum()\nq = r2 * 2.0\nds = g * -q", {"r2", "q"}),   # through another
    ("r2 = (d * d).sum()\nq = r2 * 2.0\nds = g * q\nif q:\n    pass", set()),   # decided
    ("r2 = (d * d).sum()\nds = g * r2\nds = ds + r2", {"r2"}),       # summed into ds
    ("r2 = (d * d).sum()\nds = g * r2\ndel r2", {"r2"}),             # deleted, not read
    ("r2 = (d * d).sum()\nwhile r2:\n    ds = g * r2", set()),       # a loop's test
    ("r2 = (d * d).sum()\nds = g * r2\nprint(r2)", set()),           # run for its effect
])
def test_a_value_read_only_by_smooth_arithmetic_into_derivatives_is_derivative_only(
        text, expected):
    """Of the values whose rounding could matter (r2, q; the others are read by nothing or
    are what the body returns: ds, out), those found."""
    found = derivative_only_names(gast.parse(text).body, {"ds"}, {"ds", "out"}, "np")
    assert found & {"r2", "q"} == expected


def test_a_returned_value_is_not_derivative_only():
    body = gast.parse("r2 = (d * d).sum()\nds = g * r2").body
    assert derivative_only_names(body, {"ds"}, {"ds", "r2"}, "np") == set()


def pair_energy(x):
    """A pair potential over the rows of ``x``: each distance's square is read only by the
    derivative in the fused gradient."""
    energy = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            r2 = np.sum((x[i] - x[j]) ** 2)
            energy += 1.0 / (1.0 + r2) + 0.1 * r2 * r2
    return energy


def cut_pair_energy(x):
    """The same with a cut-off: the square decides a branch."""
    energy = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            r2 = np.sum((x[i] - x[j]) ** 2)
            if r2 < 4.0:
                energy += 1.0 / (1.0 + r2)
    return energy


def _fused(fn, args):
    gradient = st.grad(fn)
    for _ in range(3):
        gradient(*args)
    source = st.source(fn, args=args)
    return gradient, source.split(f"def {fn.__name__}_grad")[1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_pair_potentials_squares_are_dot_products_and_its_derivatives_hold(dtype):
    x = np.random.default_rng(3).standard_normal((5, 3)).astype(dtype)
    gradient, fused = _fused(pair_energy, (x,))
    assert "_sub.dot(_sub)" in fused
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(gradient(x), st.grad(pair_energy, optimize=False)(x),
                               rtol=tolerance * 10, atol=tolerance)
    if dtype == np.float64:
        st.check_grads(pair_energy, (x,), order=2)
        value, _ = st.value_and_grad(pair_energy)(x)
        assert value == pair_energy(x)                 # the program's value, to the last bit


def test_a_square_that_decides_a_branch_keeps_pythons_rounding():
    x = np.random.default_rng(4).standard_normal((5, 3))
    gradient, fused = _fused(cut_pair_energy, (x,))
    assert ".dot(" not in fused
    st.check_grads(cut_pair_energy, (x,), order=2)


def normalised_projection(w, X):
    """A norm divides: its divisor check reads the sum of squares, which decides as Python's."""
    n = np.sqrt(np.sum(w * w))
    return np.sum(X @ (w / n))


def test_a_norm_checked_as_a_divisor_is_a_dot_product_and_a_zero_one_runs_the_generic_code():
    rng = np.random.default_rng(5)
    w, X = rng.standard_normal(3), rng.standard_normal((4, 3))
    gradient, fused = _fused(normalised_projection, (w, X))
    assert "n = np.sqrt(w.dot(w))" in fused and "rt.expect_divisor(n)" in fused
    st.check_grads(normalised_projection, (w, X), order=2)
    with np.errstate(all="ignore"):
        got = gradient(np.zeros(3), X)
        want = st.grad(normalised_projection, specialize=False)(np.zeros(3), X)
    np.testing.assert_array_equal(got, want)

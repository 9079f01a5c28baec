"""Comprehensions over a display of names, and sums of NumPy values, written out
(normalize/written_out.py): which are, and the values and derivatives they give."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.emit.printer import unparse
from srctrans.normalize.written_out import consumed_generators, summed, written_out


def user_function(x):
    return x


NAMES = {"np": np, "sum": sum, "max": max, "any": any, "list": list, "f": user_function}


def _resolve(node):
    return eval(unparse(node), dict(NAMES))


def _expression(text):
    return gast.parse(text).body[0].value


@pytest.mark.parametrize("text, display", [
    ("[np.sum(W * W) for W in (W1, W2)]", "[np.sum(W1 * W1), np.sum(W2 * W2)]"),
    ("(W.T @ x for W in [A, B, 2.0])", "[A.T @ x, B.T @ x, 2.0.T @ x]"),
    ("[W for W in (W, V)]", "[W, V]"),                       # the outer W, as the loop reads it
    ("[g(W, k) for W in (a,)]", "[g(a, k)]"),
])
def test_comprehensions_over_displays_of_names_are_written_out(text, display):
    assert unparse(written_out(_expression(text))) == display


@pytest.mark.parametrize("text", [
    "[W for W in (W1, W2) if W.size]",                       # a condition
    "[W + V for W in (a, b) for V in (c, d)]",               # two loops
    "[W for W in (a * 2, b)]",                               # an item computed
    "[W for W in xs]",                                       # not a display
    "[(lambda: W)() for W in (a, b)]",                       # a nested scope
    "[[W for _ in r] for W in (a, b)]",
    "[(y := W) for W in (a, b)]",                            # a name bound
    "[W for W, V in ((a, b),)]",                             # a tuple target
    "[W for W in (" + ", ".join(f"a{i}" for i in range(17)) + ")]",   # many items
])
def test_other_comprehensions_are_left_as_loops(text):
    assert written_out(_expression(text)) is None


@pytest.mark.parametrize("text, rewritten", [
    ("sum(np.sum(W * W) for W in (W1, W2))", "sum([np.sum(W1 * W1), np.sum(W2 * W2)])"),
    ("max(np.max(W) for W in (a, b))", "max([np.max(a), np.max(b)])"),
    ("list(W * 2 for W in (a, b))", "list([a * 2, b * 2])"),
    ("any(np.all(W) for W in (a, b))", "any((np.all(W) for W in (a, b)))"),   # stops early
    ("f(np.sum(W) for W in (a, b))", "f((np.sum(W) for W in (a, b)))"),      # takes items one by one
])
def test_generators_consumed_at_once_are_written_out(text, rewritten):
    assert unparse(consumed_generators(_expression(text), _resolve)) == rewritten


@pytest.mark.parametrize("text, total", [
    ("sum([np.sum(a), np.sum(b)])", "0 + np.sum(a) + np.sum(b)"),
    ("sum((np.dot(a, a), np.linalg.norm(b)), 1.5)", "1.5 + np.dot(a, a) + np.linalg.norm(b)"),
    ("sum([np.sum(a)], start=s)", "s + np.sum(a)"),
    ("sum([np.sum(a), f(b)])", None),                        # a value of unknown kind
    ("sum([np.sum(a), b])", None),
    ("sum([np.random.random(), np.sum(b)])", None),          # a Python float
    ("sum([np.sum(a)], f(s))", None),                        # a start computed after the items
    ("sum(xs)", None),
])
def test_sums_of_numpy_values_are_added_one_by_one(text, total):
    found = summed(_expression(text), _resolve)
    assert (found if found is None else unparse(found)) == total


def regularised(params, X, y, lam):
    """A softmax regression with its weights' squares summed by a generator, as written."""
    W1, b1, W2 = params
    h = np.tanh(X @ W1 + b1)
    s = h @ W2
    log_p = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    loss = -np.mean(log_p[np.arange(X.shape[0]), y])
    return loss + 0.5 * lam * sum(np.sum(W * W) for W in (W1, W2))


def python_floats(a, b):
    """A sum of Python floats: Python's sum rounds them its own way (3.12: compensated)."""
    return sum(float(np.sum(W * W)) * 1.0 for W in (a, b)) + np.sum(a * b)


def test_a_regularisers_generator_is_written_out_and_its_derivatives_hold():
    rng = np.random.default_rng(41)
    params = [rng.standard_normal((3, 5)), rng.standard_normal(5), rng.standard_normal((5, 4))]
    args = (params, rng.standard_normal((6, 3)), rng.integers(0, 4, 6), 0.1)
    value, gradient = st.value_and_grad(regularised)(*args)
    assert value == regularised(*args)                       # Python's value, to the last bit
    for _ in range(3):
        got = st.grad(regularised)(*args)
    for g, want in zip(got, gradient):
        np.testing.assert_allclose(g, want, rtol=1e-12)
    source = "\n".join(line for line in st.source(regularised, args=args).splitlines()
                       if not line.strip().startswith("#"))
    assert "spread_grads" not in source and "for " not in source.split("def regularised_grad")[1]
    assert "dW1 = lam * W1" in source
    st.check_grads(regularised, args, order=2, wrt=0)


def test_a_sum_of_python_floats_keeps_pythons_sum():
    rng = np.random.default_rng(42)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    value, (da, db) = st.value_and_grad(python_floats, wrt=(0, 1))(a, b)
    assert value == python_floats(a, b)
    np.testing.assert_allclose(da, 2 * a + b, rtol=1e-12)
    st.check_grads(python_floats, (a, b), order=2)

"""Arithmetic on numbers a loop does not change is computed once, before the loop, in a fused
gradient (optimise/loop_invariants.py): an exponential smoothing's ``1.0 - alpha``."""

import ast

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.optimise.loop_invariants import hoist_loop_invariants

NUMBERS = {"a", "b", "n", "c"}


def hoisted(text, parameters=("a", "b", "x")):
    body = gast.parse(text).body
    names = iter(f"_invariant{i}" for i in range(1, 10))
    return ast.unparse(gast.gast_to_ast(gast.Module(
        hoist_loop_invariants(body, NUMBERS, parameters, lambda base: next(names)), [])))


def test_invariant_arithmetic_of_numbers_is_computed_before_the_loop():
    code = hoisted("for i in r:\n    d = x[i] * (1.0 - a) + (1.0 - a) * b\n"
                   "    for j in s:\n        e = -a * 2.0 + d * b")
    lines = code.splitlines()
    assert sorted(line.split(" = ")[1] for line in lines[:3]) == ["(1.0 - a) * b", "-a * 2.0",
                                                                   "1.0 - a"]
    names = {line.split(" = ")[1]: line.split(" = ")[0] for line in lines[:3]}
    assert lines[3] == "for i in r:"
    assert f"d = x[i] * {names['1.0 - a']} + {names['(1.0 - a) * b']}" in code
    assert f"e = {names['-a * 2.0']} + d * b" in code


@pytest.mark.parametrize("text", [
    "for i in r:\n    a = a * 0.5\n    d = x[i] * (1.0 - a)",          # the loop changes it
    "for i in r:\n    d = x[i] * (1.0 - x)",                           # not a number
    "for i in r:\n    d = x[i] * (1.0 / a)",                           # a division may raise
    "for i in r:\n    d = x[i] * (1.0 - c)\nc = 2.0",                  # assigned after the loop
    "for i in r:\n    f(b)\n    d = x[i] * (1.0 - b)",                 # passed to a call
    "for i in r:\n    d = x[i] * (1.0 - 2.0)",                         # constants alone
], ids=["changed", "array", "division", "assigned_after", "passed", "constants"])
def test_what_may_change_or_raise_stays_in_the_loop(text):
    assert hoisted(text) == ast.unparse(ast.parse(text))


def smoothing(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def test_the_smoothings_complement_is_computed_once_per_loop():
    y = np.cumsum(np.random.default_rng(3).standard_normal(9))
    fused = st.source(smoothing, args=(0.4, y)).split("def smoothing_grad(")[1]
    code = [line for line in fused.splitlines() if not line.strip().startswith("#")]
    assert sum("1.0 - alpha" in line for line in code) == 2          # one for each loop
    gradient = st.grad(smoothing)
    want = st.grad(smoothing, optimize=False)(0.4, y)
    for _ in range(3):
        np.testing.assert_allclose(gradient(0.4, y), want, rtol=1e-12)
    st.check_grads(smoothing, (0.4, y), order=2)

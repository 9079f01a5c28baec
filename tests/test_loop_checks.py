"""A check of a value's kind that no step of a loop can change is made once, before the loop,
in specialised code (optimise/loop_checks.py): a per-example loop over a network's layers."""

import ast

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.optimise.loop_checks import hoist_loop_checks

CHECK = "rt.expect_branch(rt.has_method(self, Net, 'act'), True)"


def hoisted(text):
    body = gast.parse(text).body
    return ast.unparse(gast.gast_to_ast(gast.Module(hoist_loop_checks(body, "rt"), [])))


def test_a_kind_check_leaves_every_loop_it_may_and_is_made_once():
    code = hoisted(f"tape = []\nfor x in xs:\n    {CHECK}\n    for i in r:\n"
                   f"        tape.append(a)\n        {CHECK}\n        a = -(W[i] @ a)\n"
                   f"        rt.expect_branch(rt.has_class(m, M), False)\n        n = len(a)")
    assert code.splitlines() == [
        "tape = []", CHECK, "rt.expect_branch(rt.has_class(m, M), False)", "for x in xs:",
        "    for i in r:", "        tape.append(a)", "        a = -(W[i] @ a)",
        "        n = len(a)"]


def test_a_check_of_a_name_assigned_before_the_loop_leaves_it():
    assert hoisted(f"self = m\nfor x in xs:\n    {CHECK}\n    a = -x").splitlines() == [
        "self = m", CHECK, "for x in xs:", "    a = -x"]


@pytest.mark.parametrize("text", [
    f"for x in xs:\n    {CHECK}\n    flip(self)",                     # a user's function
    f"for x in xs:\n    {CHECK}\n    self.act = g",                   # an attribute assigned
    f"for x in xs:\n    {CHECK}\n    setattr(self, 'act', g)",        # by setattr
    f"for x in xs:\n    {CHECK}\n    self.step(x)",                   # a method, not an array's
    f"for x in xs:\n    {CHECK}\n    fs[0](x)",                       # a callable an entry holds
    f"for x in xs:\n    {CHECK}\n    out.append(x)",                  # a list not made here
    f"for x in xs:\n    self = x\n    {CHECK}",                       # the loop assigns a name
    f"if c:\n    self = m\nfor x in xs:\n    {CHECK}",          # perhaps unbound before the loop
    "for x in xs:\n    rt.expect_branch(x > 0, True)",                # not a test of a kind
    "for x in xs:\n    rt.expect_branch(rt.has_method(x.a, Net, 'act'), True)",  # not names
    f"if c:\n    {CHECK}",                                           # not in a loop
])
def test_a_check_a_step_may_change_or_not_a_kinds_stays(text):
    assert hoisted(text) == ast.unparse(ast.parse(text))


class Network:
    """A sigmoid network applied example by example: a call through self in a layer loop."""

    def sigmoid(self, z):
        return 1.0 / (1.0 + np.exp(-z))

    def feedforward(self, weights, biases, a):
        for W, b in zip(weights, biases):
            a = self.sigmoid(W @ a + b)
        return a

    def cost(self, weights, biases, data):
        total = 0.0
        for x, y in data:
            total += 0.5 * np.sum((self.feedforward(weights, biases, x) - y) ** 2)
        return total


def test_a_networks_kind_checks_are_made_once_a_call_and_its_gradient_holds():
    rng = np.random.default_rng(3)
    net = Network()
    weights = [rng.standard_normal((4, 3)), rng.standard_normal((2, 4))]
    biases = [rng.standard_normal((4, 1)), rng.standard_normal((2, 1))]
    data = [(rng.standard_normal((3, 1)), rng.random((2, 1))) for _ in range(3)]
    args = (weights, biases, data)
    g = st.grad(net.cost, wrt=(0, 1))
    generic = st.grad(net.cost, wrt=(0, 1), optimize=False)
    for _ in range(4):
        for got, want in zip(g(*args), generic(*args)):
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, rtol=1e-12)
    fused = st.source(net.cost, args=args, wrt=(0, 1)).split("def Network_cost_grad")[1]
    loop = fused.index("for _index in")
    assert fused.count("rt.has_method(") == 2 and fused.rindex("rt.has_method(") < loop
    st.check_grads(net.cost, args, wrt=(0, 1), order=2)
    net.sigmoid = np.tanh                  # an attribute of its own: the check fails first
    got = g(*args)
    want = st.grad(net.cost, wrt=(0, 1), optimize=False)(*args)
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)

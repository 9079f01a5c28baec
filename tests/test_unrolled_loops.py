"""A ``for`` loop over a short display of names, written out step by step
(normalize/unrolled_loops.py): which loops are, and the derivatives they give."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.emit.printer import unparse
from srctrans.normalize.unrolled_loops import unrolled, write_out_loops


def _loop(text):
    return gast.parse(text).body[0]


def test_a_loop_over_pairs_of_names_is_written_out():
    """Each copy reads the item itself; the target holds the last item after them."""
    loop = _loop("for W, b in ((W1, b1), (W2, b2)):\n    h = np.tanh(h @ W + b)")
    assert [unparse(stmt) for stmt in unrolled(loop)] == [
        "h = np.tanh(h @ W1 + b1)", "h = np.tanh(h @ W2 + b2)", "W, b = (W2, b2)"]


def test_a_body_binding_its_target_gets_the_target_bound_at_each_step():
    loop = _loop("for s in (a, 2.0):\n    s = s * 3.0\n    t = t + s")
    assert [unparse(stmt) for stmt in unrolled(loop)] == [
        "s = a", "s = s * 3.0", "t = t + s", "s = 2.0", "s = s * 3.0", "t = t + s"]


@pytest.mark.parametrize("text", [
    "for W in (W1, W2):\n    if W.size:\n        break",            # a jump
    "for W in (W1, W2):\n    continue",
    "for W in (W1, W2):\n    return W",
    "for W in (W1, W2):\n    W2 = W * 2.0",                          # an item's name rebound
    "for V in (W, V):\n    t = V",                                   # ... by the target
    "for V, b in ((b, V),):\n    t = V",
    "for W in (W1 * 2, W2):\n    t = W",                             # an item computed
    "for W in Ws:\n    t = W",                                       # not a display
    "for W, b in ((W1, b1), W2):\n    t = W",                        # an item not a pair
    "for W in (W1, W2):\n    f = lambda: W",                         # a nested scope
    "for W in (" + ", ".join(f"a{i}" for i in range(9)) + "):\n    t = W",   # many items
    "for W in (W1, W2):\n    t = W\nelse:\n    t = 0",               # an else block
    "for W in ():\n    t = W",                                       # nothing to run
])
def test_other_loops_stay_loops(text):
    assert unrolled(_loop(text)) is None


def test_inner_loops_are_written_out_first():
    function = gast.parse("def f(a, b, c):\n    for u in (a, b):\n        for v in (b, c):\n"
                          "            t = u * v\n    return t").body[0]
    write_out_loops(function)
    assert [unparse(stmt) for stmt in function.body[:-1]] == [
        "t = a * b", "t = a * c", "v = c", "t = b * b", "t = b * c", "v = c", "u = b"]


def layers(x, W1, b1, W2, b2):
    """Two layers of other shapes, by a loop over pairs of names."""
    h = x
    for W, b in ((W1, b1), (W2, b2)):
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def regularised(W1, W2, lam):
    total = 0.0
    for W in (W1, W2):
        total += np.sum(W * W)
    return 0.5 * lam * total


def test_a_loop_over_layers_is_straight_line_code_and_its_derivatives_hold():
    rng = np.random.default_rng(51)
    args = (rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal(5),
            rng.standard_normal((5, 2)), rng.standard_normal(2))
    wrt = (1, 2, 3, 4)
    gradient = st.grad(layers, wrt=wrt)
    for _ in range(3):
        got = gradient(*args)
    value, want = st.value_and_grad(layers, wrt=wrt)(*args)
    assert value == layers(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    fused = "\n".join(line for line in st.source(layers, args=args, wrt=wrt).splitlines()
                      if not line.strip().startswith("#")).split("def layers_grad")[1]
    assert "for " not in fused and "unbroadcast" not in fused and "matmul_" not in fused
    st.check_grads(layers, args, order=2)


def test_a_regulariser_looped_over_a_display_gets_its_plain_derivative():
    rng = np.random.default_rng(52)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), 0.1)
    fused = st.source(regularised, args=args, wrt=(0, 1)).split("def regularised_grad")[1]
    dW1, dW2 = st.grad(regularised, wrt=(0, 1))(*args)
    np.testing.assert_allclose(dW1, 0.1 * args[0], rtol=1e-12)
    np.testing.assert_allclose(dW2, 0.1 * args[1], rtol=1e-12)
    assert "for _" not in fused
    st.check_grads(regularised, args, order=2)

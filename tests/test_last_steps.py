"""A backward loop's value for its next step alone is not computed at its last step
(``optimise/last_steps.py``): the cotangent of a network's input at its first layer."""

import numpy as np
import pytest

import srctrans as st
from srctrans import check_grads


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def layers(weights, x):
    """A network applied layer by layer to an input that is data."""
    a = x
    for W in weights:
        a = np.tanh(W @ a)
    return np.sum(a ** 2)


def layers_hand(weights, x):
    activations = [x]
    for W in weights:
        activations.append(np.tanh(W @ activations[-1]))
    delta = 2 * activations[-1] * (1 - activations[-1] ** 2)
    grads = [None] * len(weights)
    for k in range(len(weights) - 1, -1, -1):
        grads[k] = np.outer(delta, activations[k])
        if k:
            delta = (weights[k].T @ delta) * (1 - activations[k] ** 2)
    return grads


def _weights(rng, sizes):
    return [rng.standard_normal((m, n)) * 0.5 for n, m in zip(sizes, sizes[1:])]


@pytest.mark.parametrize("sizes", [(3, 4, 2), (3, 2), (3, 4, 4, 2)])
def test_the_first_layers_input_gets_no_cotangent(sizes, rng):
    weights, x = _weights(rng, sizes), rng.standard_normal(sizes[0])
    g = st.grad(layers, wrt=0)
    for _ in range(3):                     # the generic code, the specialised code, the short path
        grads = g(weights, x)
        for got, expected in zip(grads, layers_hand(weights, x)):
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    fused = st.source(layers, args=(weights, x), wrt=0).split("def layers_grad(")[1]
    assert "if _iteration:" in fused
    check_grads(layers, (weights, x), order=2, wrt=0)


def test_the_input_asked_for_gets_its_cotangent_at_every_step(rng):
    weights, x = _weights(rng, (3, 4, 2)), rng.standard_normal(3)
    g = st.grad(layers, wrt=(0, 1))
    for _ in range(3):
        dweights, dx = g(weights, x)
    fused = st.source(layers, args=(weights, x), wrt=(0, 1)).split("def layers_grad(")[1]
    assert "if _iteration:" not in fused
    h = 1e-6
    e = np.zeros(3)
    e[1] = h
    assert dx[1] == pytest.approx((layers(weights, x + e) - layers(weights, x - e)) / (2 * h),
                                  rel=1e-6)
    check_grads(layers, (weights, x), order=2, wrt=(0, 1))



def _skipped(source):
    """The source of ``source``'s statements after :func:`skip_last_steps`, nothing read
    after them."""
    import ast
    import gast
    from srctrans.optimise.last_steps import skip_last_steps
    body = gast.parse(source).body
    return ast.unparse(gast.gast_to_ast(gast.Module(skip_last_steps(body, set(), lambda s: True),
                                                     [])))


def test_only_a_loop_whose_last_step_counts_zero_skips():
    """A loop counting down to 0 skips its next step's value at its last step; one that
    rebinds its counter, or counts down elsewhere, does not (its last step is another)."""
    assert "if i:" in _skipped("for i in range(4, -1, -1):\n    y = d * v\n    v = y * 2.0")
    assert "if i:" not in _skipped(
        "for i in range(4, -1, -1):\n    y = d * v\n    i = i - 2\n    v = y * 2.0")
    assert "if i:" not in _skipped("for i in range(4, 0, -1):\n    y = d * v\n    v = y * 2.0")
    assert "if i:" not in _skipped(            # (read after the loop)
        "for i in range(4, -1, -1):\n    v = y * 2.0\n    y = d * v\nz = y")

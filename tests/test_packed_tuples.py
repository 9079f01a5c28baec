"""A tuple the function packs and only unpacks again is not made (normalize/packed_tuples.py):
``out, cache = layer_forward(...)`` of an inlined helper binds ``cache`` to the dict the
helper made, so its entries are read as their values. A tuple used any other way is left
as it is. The derivatives are finite differences' either way, in both modes and to second
order."""

import ast
import textwrap

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.normalize.packed_tuples import forward_packed_tuples

R = np.random.default_rng(97)


def rewritten(text):
    """The function ``text`` (already in A-normal and SSA form) after the pass alone."""
    function = gast.parse(textwrap.dedent(text)).body[0]
    forward_packed_tuples(function)
    return ast.unparse(gast.gast_to_ast(function))


def test_a_tuple_packed_then_unpacked_binds_the_targets_to_the_entries():
    code = rewritten("""
        def f(x):
            _add = x + 1.0
            cache = {'x': x}
            _forward = (_add, cache, 2)
            _t = _forward
            out, c, n = _t
            return out * c['x'] * n
        """)
    assert "out = _add\n    c = cache\n    n = 2" in code
    assert "_forward" not in code and "_t" not in code


@pytest.mark.parametrize("text", [
    "t = (x, y)\n    a, b = t\n    return t",                              # also returned
    "t = (x, y)\n    a = t[0]\n    b, c = t\n    return a",                # also indexed
    "t = (x, y)\n    a, *b = t\n    return a",                             # a starred target
    "t = (x, y)\n    (a, b), c = (t, 1)\n    return a",                     # unpacked nested
    "for i in y:\n        t = (a, i)\n        a = x\n        u, v = t\n    return x",   # entry rebound
    "t = (x, y)\n    if x:\n        a, b = t\n    return x",               # unpacked in a branch
    "t = (x, y)\n    t = (y, x)\n    a, b = t\n    return a",               # assigned twice
], ids=["returned", "indexed", "starred", "nested", "entry_rebound", "branch", "twice"])
def test_a_tuple_used_any_other_way_is_left_as_it_is(text):
    text = f"def f(x, y):\n    {text}\n"
    assert rewritten(text) == ast.unparse(ast.parse(text))


def _layer_forward(x, gamma, beta):
    mu = x.mean(axis=1, keepdims=True)
    std = np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    xhat = (x - mu) / std
    cache = {"xhat": xhat, "gamma": gamma, "std": std}
    return gamma * xhat + beta, cache


def layer_loss(x, gamma, beta, dout):
    """A layer returning (out, cache), as course code writes it; the cache read after."""
    out, cache = _layer_forward(x, gamma, beta)
    return np.sum(out * dout) + np.sum(cache["std"] * cache["gamma"][:1])


def unpacked_twice(x, y):
    pair = (np.sin(x), y * 2.0)
    a, b = pair
    c, d = pair
    return np.sum(a * b + c * d * x)


def args_of(f):
    if f is layer_loss:
        return (R.standard_normal((4, 5)), R.standard_normal(5), R.standard_normal(5),
                R.standard_normal((4, 5)))
    return R.standard_normal(3), R.standard_normal(3)


CASES = [layer_loss, unpacked_twice]


def test_the_cache_a_helper_returns_is_read_as_its_entries():
    args = args_of(layer_loss)
    fused = st.source(layer_loss, args=args, wrt=(0, 1, 2)).split("def layer_loss_grad(")[1]
    for helper in ("dcache", "'std'", "'gamma'", "{"):
        assert helper not in fused, (helper, fused)


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_derivatives_match_finite_differences_in_both_modes_to_second_order(f):
    args = args_of(f)
    wrt = (0, 1, 2) if f is layer_loss else (0, 1)
    st.check_grads(f, args, order=2, wrt=wrt)
    gradient = st.grad(f, wrt=wrt)
    want = st.grad(f, wrt=wrt, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        for a, b in zip(gradient(*args), want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)

"""An entry written into a dict the function makes, read back at a constant key, is read as the
value written (normalize/constant_keys.py): ``dict(p, w_eff=...)`` then ``p["w_eff"]`` is the
value, with no cotangent of the copy's entry written, read back and dropped. A dict used any
other way is left as it is. The derivatives are finite differences' either way, in both modes
and to second order, and Python's KeyError is kept."""

import ast
import textwrap

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.normalize.constant_keys import forward_constant_keys

R = np.random.default_rng(83)


def rewritten(text):
    """The function ``text`` (already in A-normal and SSA form) after the pass alone."""
    function = gast.parse(textwrap.dedent(text)).body[0]
    forward_constant_keys(function, "rt")
    return ast.unparse(gast.gast_to_ast(function))


def test_a_key_added_to_a_copy_is_read_as_its_value_and_the_others_from_the_copy():
    code = rewritten("""
        def f(p, X):
            _dict = rt.dict_copy(p)
            _value = p['w'] * p['scale']
            _dict['w_eff'] = _value
            p_2 = _dict
            _item = p_2['w_eff']
            _item_2 = p_2['b']
            return X @ _item + _item_2
        """)
    assert "_item = _value" in code and "_item_2 = _dict['b']" in code
    assert "_dict['w_eff']" not in code and "p_2" not in code


def test_a_display_written_and_read_is_not_made():
    code = rewritten("""
        def f(x, y):
            d = {'a': x, 'n': 2}
            d['b'] = y
            d['a'] = y
            r = d['a'] * d['n'] + d['b']
            return r
        """)
    assert "d" not in code.replace("def", "") and "r = y * 2 + y" in code


@pytest.mark.parametrize("text", [
    "d = {'a': x}\n    r = g(d)\n    return r",                           # passed to a call
    "d = {'a': x}\n    return d",                                           # returned
    "d = {'a': x}\n    k = 'a'\n    r = d[k]\n    return r",                # a key not a constant
    "d = {'a': x}\n    if x:\n        d['a'] = y\n    r = d['a']\n    return r",    # written in a branch
    "d = {'a': x}\n    for i in range(2):\n        y = y * 2\n    d['a'] = y\n    r = d['a']\n    return r",
], ids=["call", "returned", "name_key", "branch", "value_rebound"])
def test_a_dict_used_any_other_way_is_left_as_it_is(text):
    text = f"def f(x, y):\n    {text}\n"
    assert rewritten(text) == ast.unparse(ast.parse(text))


def ridge(p, X, y, lam=0.1):
    p = dict(p, w_eff=p["w"] * p["scale"])
    r = X @ p["w_eff"] + p["b"] - y
    return r @ r + lam * p["w"] @ p["w"]


def ridge_display(p, X, y, lam=0.1):
    """The copy with a key added written as a display (split as dict(p, w_eff=...) is)."""
    p = {**p, "w_eff": p["w"] * p["scale"]}
    r = X @ p["w_eff"] + p["b"] - y
    return r @ r + lam * p["w"] @ p["w"]


def rewritten_key(p, x):
    """A key read from the copy, then written over, then read again: the source's value first,
    the one written after."""
    q = dict(p)
    first = q["w"] * x
    q["w"] = np.sin(first)
    q["extra"] = {"inner": first * 2.0}["inner"]
    return np.sum(q["w"] * first + q["extra"] * p["w"])


def state_dict(w, x):
    cache = {"z": w @ x}
    cache["a"] = np.tanh(cache["z"])
    cache["out"] = cache["a"] * cache["z"]
    return np.sum(cache["out"] ** 2)


def args_of(f):
    if f in (ridge, ridge_display):
        return ({"w": R.standard_normal(3), "scale": 1.3, "b": 0.2, "name": "ridge"},
                R.standard_normal((7, 3)), R.standard_normal(7))
    if f is rewritten_key:
        return {"w": R.standard_normal(3), "b": 0.5}, R.standard_normal(3)
    return R.standard_normal((2, 3)), R.standard_normal(3)


CASES = [ridge, ridge_display, rewritten_key, state_dict]


@pytest.mark.parametrize("f", [ridge, ridge_display], ids=["dict_call", "display"])
def test_the_fused_gradient_reads_the_key_added_as_its_value(f):
    args = args_of(f)
    fused = st.source(f, args=args, wrt=0).split(f"def {f.__name__}_grad(")[1]
    for helper in ("entry_cotangent", "without_entry", "'w_eff'"):
        assert helper not in fused, (helper, fused)


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_derivatives_match_finite_differences_in_both_modes_to_second_order(f):
    args = args_of(f)
    st.check_grads(f, args, order=2, wrt=0)
    gradient = st.grad(f, wrt=0)
    want = st.grad(f, wrt=0, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(*args)
        for a, b in zip(*(list(v.values()) if isinstance(v, dict) else [v] for v in (got, want))):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_a_key_neither_written_nor_in_the_source_is_pythons_key_error():
    def missing(p, x):
        q = dict(p, a=x * 2.0)
        return np.sum(q["a"] * q["missing"])

    with pytest.raises(KeyError):
        st.grad(missing)({"w": np.ones(2)}, np.ones(2))

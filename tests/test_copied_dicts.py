"""The cotangent of a copy of a dict, added to the cotangent of the dict copied, is made with it
in a specialised backward pass (optimise/copied_dicts.py): a ridge loss's
``p = dict(p, w_eff=...)`` makes one dict of cotangents, not two added key by key."""

import ast
import collections
import importlib.util

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.optimise.copied_dicts import dicts_copied, merge_copied_dict_cotangents

R = np.random.default_rng(29)


def _statements(text):
    return gast.parse(text).body


FORWARD = "_dict = rt.dict_copy(p)\na = p['w'] * p['s']\nr = X @ a + _dict['b']"


def test_a_copy_read_by_key_of_a_dict_read_by_key_is_found():
    assert dicts_copied(_statements(FORWARD), "rt") == {"_dict": "p"}


@pytest.mark.parametrize("use", ["_dict['c'] = r", "f(_dict)", "q = _dict", "p['c'] = r",
                                 "f(p)", "p.update(X)", "_dict = {}", "r = _dict[k]"],
                         ids=["copy_written", "copy_passed", "copy_aliased", "source_written",
                              "source_passed", "source_method", "copy_rebound", "name_key"])
def test_a_copy_or_source_used_otherwise_is_not(use):
    assert dicts_copied(_statements(FORWARD + "\n" + use), "rt") == {}


BACKWARD = ("d_dict = rt.container_cotangent({'w': a, 'b': c}, _dict)\n"
            "e = g * 2.0\n"
            "dp = rt.add(rt.container_cotangent({'s': s, 'w': e}, p), d_dict)")


def merged(text, copies=(("_dict", "p"),), live=("dp",)):
    return ast.unparse(gast.gast_to_ast(gast.Module(merge_copied_dict_cotangents(
        _statements(text), dict(copies), set(live), "rt"), [])))


def test_the_copys_cotangent_joins_the_sources():
    assert merged(BACKWARD) == ("e = g * 2.0\ndp = rt.container_cotangent("
                                "{'s': s, 'w': rt.add(e, a), 'b': c}, p)")
    flipped = BACKWARD.replace("rt.add(rt.container_cotangent({'s': s, 'w': e}, p), d_dict)",
                               "rt.add(d_dict, rt.container_cotangent({'s': s, 'w': e}, p))")
    assert merged(flipped).endswith("{'s': s, 'w': rt.add(e, a), 'b': c}, p)")


def test_a_cotangent_of_one_entry_of_the_copy_joins_the_sources():
    text = ("d_dict = rt.getitem_grad(a, _dict, 'w')\n"
            "dp = rt.add(rt.container_cotangent({'s': s, 'w': e}, p), d_dict)")
    assert merged(text) == "dp = rt.container_cotangent({'s': s, 'w': rt.add(e, a)}, p)"


@pytest.mark.parametrize("text, copies, live", [
    (BACKWARD + "\nz = d_dict", (("_dict", "p"),), ("dp",)),             # read twice
    (BACKWARD, (("_dict", "p"),), ("dp", "d_dict")),                     # read after
    (BACKWARD.replace("e = g * 2.0", "a = g * 2.0"), (("_dict", "p"),), ("dp",)),  # a term changes
    (BACKWARD, (("_dict", "q"),), ("dp",)),                              # a copy of another
    (BACKWARD, (), ("dp",)),                                             # not a copy found
    (BACKWARD.replace("e = g * 2.0", "d_dict = f(q)\ne = g * 2.0"),      # assigned again
     (("_dict", "p"),), ("dp",)),
], ids=["read_twice", "live", "term_changed", "other_source", "no_copy", "assigned_again"])
def test_a_cotangent_that_does_not_qualify_stays(text, copies, live):
    assert merged(text, copies, live) == ast.unparse(ast.parse(text))


def ridge(p, X, y, lam=0.1):
    p = dict(p, w_eff=p["w"] * p["scale"])
    r = X @ p["w_eff"] + p["b"] - y
    return r @ r + lam * p["w"] @ p["w"]


def _args(kind=dict):
    p = {"w": R.standard_normal(3), "scale": 1.3, "b": 0.2}
    return (p if kind is dict else kind(float, p)), R.standard_normal((7, 3)), R.standard_normal(7)


def test_a_ridge_loss_makes_one_dict_of_cotangents():
    args = _args()
    fused = st.source(ridge, args=args, wrt=0).split("def ridge_grad(")[1]
    code = [line for line in fused.splitlines() if not line.strip().startswith("#")]
    assert sum("container_cotangent" in line for line in code) == 1
    assert not any("rt.add" in line for line in code)


@pytest.mark.parametrize("kind", [dict, collections.defaultdict], ids=["dict", "defaultdict"])
def test_a_ridge_losss_gradient_is_the_generic_codes(kind):
    args = _args(kind)
    gradient = st.grad(ridge, wrt=0)
    want = st.grad(ridge, wrt=0, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(*args)
        assert list(got) == list(want)
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-12)
    st.check_grads(ridge, _args(), order=2, wrt=0)


def test_a_key_the_source_lacks_is_still_pythons_key_error():
    """The copy's reads stay reads of the copy: a defaultdict's copy lacks a key the
    defaultdict would make up."""
    def lacking(p, x):
        q = dict(p, a=x * 2.0)
        return np.sum(q["a"] * q["missing"])

    p = collections.defaultdict(lambda: np.ones(2), {"w": np.ones(2)})
    gradient = st.grad(lacking)
    for _ in range(3):
        with pytest.raises(KeyError):
            gradient(p, np.ones(2))



def test_a_function_with_no_copy_assumes_nothing_of_dict():
    """Only a copy asks what ``dict`` is: each name a build assumes is tested again on every
    call of its short path, so a function with no copy (this one) tests no ``dict``."""
    def plain(w, x):
        return np.sum(np.exp(x @ w))

    gradient = st.grad(plain)
    gradient(np.ones(2), np.ones((3, 2)))
    assert [name for name, _ in gradient._instance.assumed_globals()] == ["np"]
    copying = st.grad(ridge, wrt=0)
    copying(*_args())
    assert "dict" in [name for name, _ in copying._instance.assumed_globals()]


_SHADOWING = '''
import numpy as np

def dict(source, **added):          # the module's own dict: it scales what it adds
    made = {key: value for key, value in source.items()}
    for key, value in added.items():
        made[key] = 3.0 * value
    return made

def negating(source, **added):
    made = {key: value for key, value in source.items()}
    for key, value in added.items():
        made[key] = -value
    return made

def called(p, x):
    q = dict(p, a=x * 2.0)
    return np.sum(q["a"] * q["w"])

def displayed(p, x):
    q = {**p, "a": x * 2.0}
    return np.sum(q["a"] * q["w"])
'''


@pytest.mark.parametrize("name", ["called", "displayed"])
def test_a_module_that_binds_dict_gets_its_own_dict(name, tmp_path):
    """``dict(p, a=...)`` calls the module's ``dict``, before and after the module binds
    ``dict`` again (the guards test the name); a display copying a dict is refused there
    (srctrans writes it as a call of the builtin ``dict``)."""
    path = tmp_path / f"shadowing_dict_{name}.py"
    path.write_text(_SHADOWING)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    p, x = {"w": R.standard_normal(3)}, R.standard_normal(3)
    gradient = st.grad(getattr(module, name), wrt=1)
    if name == "displayed":
        with pytest.raises(st.errors.UnsupportedSyntaxError, match="dict display"):
            gradient(p, x)
        return
    for _ in range(3):                               # generic, specialised, short path
        np.testing.assert_allclose(gradient(p, x), 6.0 * p["w"], rtol=1e-12)
    module.dict = module.negating
    for _ in range(3):
        np.testing.assert_allclose(gradient(p, x), -2.0 * p["w"], rtol=1e-12)

"""Branches specialised code takes as the measuring call took them, checked as it runs
(``analyse/branch_tests.py``, ``measuring.taken_branches``, ``runtime/branches.py``): a
test the shape key does not decide (an array's value, a helper's test of what its caller
computed) is folded like a keyed one and headed by ``rt.expect_branch``; a call that takes
the other branch runs the generic code, in every API, and later calls with its shape key
code specialised on it that keeps its branches."""

import gast
import numpy as np
import pytest
from scipy import special

import srctrans as st
from srctrans import runtime
from srctrans.analyse.branch_tests import branch_tests, rebound_in_blocks
from srctrans.measuring import taken_branches
from srctrans.runtime.branches import MissedBranch

R = np.random.default_rng(41)


def _statements(text):
    return gast.parse(text).body


def test_each_if_is_listed_with_the_tests_and_sides_around_it():
    found = branch_tests(_statements(
        "if a:\n    if b:\n        x = 1\n    else:\n        if c:\n            x = 2\n"
        "for i in r:\n    if d:\n        y = 1\nif e.f:\n    z = 1"))
    assert found == (("a", ()), ("b", (("a", True),)), ("c", (("a", True), ("b", False))),
                     ("d", ()), (None, ()))


@pytest.mark.parametrize("values, varying, taken", [
    ({"a": True, "b": False, "c": True, "d": np.bool_(False)}, (),
     {"a": True, "b": False, "c": True, "d": False}),
    ({"a": False, "d": True}, (), {"a": False, "d": True}),     # b and c lie in a branch not taken
    ({"a": True, "b": True, "d": True}, (), {"a": True, "b": True, "d": True}),   # c: in b's else
    ({"a": True, "b": False, "d": True}, (), None),             # c was reached, not decided
    ({"a": True, "b": True, "d": True}, ("d",), None),          # d changed as its loop ran
    ({"a": True, "b": True, "d": 1.0}, (), None),               # d is not a bool
])
def test_the_branches_taken_are_given_only_when_every_if_reached_is_decided(values, varying,
                                                                            taken):
    tests = branch_tests(_statements(
        "if a:\n    if b:\n        x = 1\n    else:\n        if c:\n            x = 2\n"
        "for i in r:\n    if d:\n        y = 1"))
    assert taken_branches(tests, values, set(varying)) == taken


@pytest.mark.parametrize("text, rebound", [
    ("if c:\n    s = f(s)", True),              # a parameter rebound in a block
    ("if c:\n    t = f(s)\nt = g(t)", True),      # assigned in a block and outside it
    ("if c:\n    t = f(s)\nelse:\n    t = g(s)", True),
    ("t = f(s)\nu = g(t)", False),                 # straight-line code: SSA renamed it
    ("if c:\n    t = f(s)\n    u = g(t)", False),  # each assigned once
])
def test_a_name_rebound_in_a_block_makes_the_measuring_run_watch_lines(text, rebound):
    assert rebound_in_blocks(_statements(text), ("s",)) is rebound


def test_expect_branch_raises_when_the_test_goes_the_other_way():
    runtime.expect_branch(np.bool_(True), True)
    runtime.expect_branch(0.0 > 1.0, False)
    with pytest.raises(MissedBranch):
        runtime.expect_branch(np.array(2.0) > 1.0, False)


def log_density(x, df):
    """A helper with a test of a value its caller passes (as scipy.stats.t._logpdf)."""
    if np.all(np.isinf(df)):
        return -0.5 * x * x
    if np.any(np.isinf(df)):                   # some infinite: another formula
        return -0.5 * np.log1p(x * x)
    return (special.gammaln(0.5 * df + 0.5) - 0.5 * (np.log(df) + np.log(np.pi))
            - (df + 1.0) / 2 * np.log1p(x * x / df))


def t_loss(w, X, y, df):
    z = y - X @ w
    return -np.sum(log_density(z, df))


def clipped(w, X, y, bound):
    r = X @ w - y
    if np.max(np.abs(r)) > bound:
        r = np.clip(r, -bound, bound)
    return np.sum(r ** 2)


def _numeric(fn, args, eps=1e-6):
    w = args[0]
    out = np.zeros_like(w)
    for k in range(w.size):
        e = np.zeros_like(w)
        e.flat[k] = eps
        out.flat[k] = (fn(w + e, *args[1:]) - fn(w - e, *args[1:])) / (2 * eps)
    return out


def _data(n=7):
    X = R.standard_normal((n, 3))
    return R.standard_normal(3) * 0.5, X, R.standard_normal(n)


def test_a_helpers_test_of_its_callers_value_is_folded_and_checked():
    w, X, y = _data()
    text = st.source(t_loss, args=(w, X, y, 5.0))
    assert "checks the tests its shapes do not decide" in " ".join(   # (the header says so)
        line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    fused = text[text.index("def log_density_fwd"):]
    assert "rt.expect_branch(np.all(np.isinf(df)), False)" in fused and "tape" not in fused
    # its result, renamed where the branch folded, keeps its measured shape: the backward
    # pass knows its cotangent's shape (no rt.unbroadcast of it)
    backward = text[text.index("def log_density_bwd"):]
    assert "rt.unbroadcast" not in backward.split("\ndef ")[0]
    g = st.grad(t_loss)
    for df in (5.0, 5.0, 5.0, np.inf, 3.0, np.inf):      # generic, specialised, short, missed
        np.testing.assert_allclose(g(w, X, y, df), _numeric(t_loss, (w, X, y, df)),
                                   rtol=1e-6, atol=1e-8)


def test_a_missed_branch_runs_the_generic_code_in_every_api():
    w, X, y = _data()
    small, large = 0.1, 1e6                    # clipped; not clipped (same shapes)
    g = st.grad(clipped)
    for bound in (large, large, large):
        g(w, X, y, bound)
    variant = st.cache.instance(clipped, ("w",)).variants
    assert any(v.build.speculates for v in variant.values())
    np.testing.assert_allclose(g(w, X, y, small), _numeric(clipped, (w, X, y, small)),
                               rtol=1e-6, atol=1e-8)
    assert "took a branch" in st.cache.instance(clipped, ("w",)).why_generic(
        clipped, (w, X, y, small), {})
    np.testing.assert_allclose(g(w, X, y, large), _numeric(clipped, (w, X, y, large)),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("api", ["vjp", "value_and_grad", "jacobian", "hessian", "vmap",
                                 "export"])
def test_each_api_is_right_on_both_branches_after_specialising_on_one(api, tmp_path):
    w, X, y = _data()
    small, large = 0.1, 1e6
    # a function of its own per api: each test starts from an empty cache for it
    namespace = {"np": np}
    source = ("def f(w, X, y, bound):\n    r = X @ w - y\n"
              "    if np.max(np.abs(r)) > bound:\n        r = np.clip(r, -bound, bound)\n"
              "    return np.sum(r ** 2)\n")
    path = tmp_path / f"checked_{api}.py"
    path.write_text(source)
    exec(compile(source, str(path), "exec"), namespace)
    f = namespace["f"]
    order = (large, large, large, small, large, small)
    for step, bound in enumerate(order):
        if step == 3 and api in ("vjp", "value_and_grad", "jacobian"):   # the code it ran
            variants = st.cache.instance(f, ("w",)).variants.values()    # checks its branch
            assert any(v.build.speculates for v in variants)
        want = _numeric(f, (w, X, y, bound))
        if api == "vjp":
            _, pullback = st.vjp(f, w, X, y, bound, wrt=0)
            got = pullback(1.0)[0]
        elif api == "value_and_grad":
            value, got = st.value_and_grad(f)(w, X, y, bound)
            assert np.isclose(value, f(w, X, y, bound))
        elif api == "jacobian":
            got = st.jacobian(f)(w, X, y, bound)
        elif api == "hessian":
            h = st.hessian(f)(w, X, y, bound)
            step = 1e-5
            columns = [(_numeric(f, (w + step * e, X, y, bound))
                        - _numeric(f, (w - step * e, X, y, bound))) / (2 * step)
                       for e in np.eye(3)]
            np.testing.assert_allclose(h, np.array(columns).T, rtol=1e-4, atol=1e-4)
            continue
        elif api == "vmap":
            batched = st.vmap(st.grad(f), in_axes=(0, None, None, None))
            got = batched(np.stack([w, w]), X, y, bound)[1]
        else:
            module = tmp_path / f"exported_{len(list(tmp_path.iterdir()))}.py"
            module.write_text(st.export(f, args=(w, X, y, bound)))
            scope = {}
            exec(compile(module.read_text(), str(module), "exec"), scope)
            got = scope["f_grad"](w, X, y, small if bound == large else large)
            want = _numeric(f, (w, X, y, small if bound == large else large))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_checked_branches_to_second_order_in_both_modes(dtype):
    w, X, y = (a.astype(dtype) for a in _data())
    for df in (5.0, np.inf):
        st.check_grads(t_loss, (w, X, y, dtype(df)), wrt=(0,), order=2)


@pytest.mark.parametrize("text, checks", [
    # the test of the code after an early return whose flag is known: no check
    ("def f(x):\n    r = False\n    c = not r\n    if c:\n        x = x + 1\n    return x", 0),
    # a flag set again on the way (the branch returned): the check stays
    ("def f(x):\n    r = False\n    r = g(x)\n    c = not r\n    if c:\n        x = x + 1\n"
     "    return x", 1),
    ("def f(x):\n    c = x > 0\n    if c:\n        x = x + 1\n    return x", 1),
])
def test_a_branch_folded_on_a_flag_known_there_needs_no_check(text, checks):
    from srctrans.naming import RUNTIME_ALIAS
    from srctrans.optimise.keyed_branches import fold_keyed_branches
    function = gast.parse(text).body[0]
    fold_keyed_branches(function, {"c": True}, {"c"}, {RUNTIME_ALIAS: "rt"})
    assert gast.dump(function).count("expect_branch") == checks
    assert not any(isinstance(node, gast.If) for node in gast.walk(function))


def test_second_order_differentiates_code_that_keeps_its_branches():
    """st.hessian differentiates the gradient specialised without branches taken as
    measured (a variant of its own): its derivative holds on both branches."""
    w, X, y = _data()
    small, large = 0.1, 1e6
    st.hessian(clipped_twice)(w, X, y, large)
    found = st.cache.instance(clipped_twice, ("w",), True, True)
    assert found.unguessed and not any(v.build.speculates for v in found.unguessed.values())
    variant = next(iter(found.unguessed.values()))
    assert "rt.expect_branch" not in variant.build.source and "if " in variant.build.source
    for bound in (small, large):
        h = st.hessian(clipped_twice)(w, X, y, bound)
        step = 1e-5
        columns = [(_numeric(clipped_twice, (w + step * e, X, y, bound))
                    - _numeric(clipped_twice, (w - step * e, X, y, bound))) / (2 * step)
                   for e in np.eye(3)]
        np.testing.assert_allclose(h, np.array(columns).T, rtol=1e-4, atol=1e-4)


def clipped_twice(w, X, y, bound):       # clipped, for a test of its own cache
    r = X @ w - y
    if np.max(np.abs(r)) > bound:
        r = np.clip(r, -bound, bound)
    return np.sum(r ** 2)


def repeated(w, x, n):
    total = 0.0
    k = 0
    while k < n:                           # a counted loop: a range loop
        if np.sum(x) > 0:                  # the same value at every step: checked at each
            total = total + np.sum(np.tanh(w * x))
        else:
            total = total + np.sum(w * w)
        k = k + 1
    return total


def alternating(w, x):
    total = 0.0
    for i in range(3):
        if i % 2 == 0:                     # a different value at each step: kept
            total = total + np.sum(w * x[i])
        else:
            total = total + np.sum(np.sin(w) * x[i])
    return total


def test_a_test_in_a_loop_is_checked_at_each_step_and_one_that_varies_is_kept():
    w = R.standard_normal(4)
    positive, negative = np.abs(R.standard_normal(4)), -np.abs(R.standard_normal(4))
    text = st.source(repeated, args=(w, positive, 3))
    fused = text[text.index("def repeated_grad"):]
    assert "rt.expect_branch(x.sum() > 0, True)" in fused and "if " not in fused
    g = st.grad(repeated)
    for x in (positive, positive, positive, negative, positive, negative):
        np.testing.assert_allclose(g(w, x, 3), _numeric(repeated, (w, x, 3)),
                                   rtol=1e-6, atol=1e-8)
    X = R.standard_normal((3, 4))
    text = st.source(alternating, args=(w, X))
    fused = text[text.index("def alternating_grad"):]
    assert "expect_branch" not in fused and "if " in fused
    np.testing.assert_allclose(st.grad(alternating)(w, X), _numeric(alternating, (w, X)),
                               rtol=1e-6, atol=1e-8)

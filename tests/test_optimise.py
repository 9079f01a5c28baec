"""The optimisation passes: their examples, and gradients of programs that exercise them."""

import ast
import importlib.util
import re
import doctest
from pathlib import Path

import gast
import numpy as np
from scipy.special import logsumexp
import pytest

import srctrans.runtime.fastpath
from srctrans import runtime
import srctrans as st
import srctrans.annotations
from srctrans import annotations as anno
from srctrans.annotations import Anno
import srctrans.cache
from programs import control
from programs import scalar_loops as loops
from srctrans import pipeline
from srctrans.analyse import fixed_shapes
from srctrans.emit.printer import block_lines
from srctrans.optimise import (accumulate, expression_shapes, in_place, inline, negation, remat,
                               simplify, specialise)


@pytest.mark.parametrize("module", [accumulate, inline, negation, remat, simplify, specialise,
                                    runtime.fastpath, runtime.reshaping], ids=lambda m: m.__name__)
def test_the_examples_in_the_docstrings(module):
    assert doctest.testmod(module).failed == 0


def _rng(seed):
    return np.random.default_rng(seed)


# program, argument builder (seeded)
CASES = [
    (loops.logistic, lambda r: (2.5, 0.3)),
    (loops.logistic, lambda r: (2.9, r.uniform(0.2, 0.8))),
    (loops.dependent_temporaries, lambda r: (0.7, 0.4)),
    (loops.loop_variable_in_temporary, lambda r: (0.5, 0.8)),
    (loops.old_value_read, lambda r: (0.8, 0.5)),
    (loops.temporary_read_after_the_loop, lambda r: (0.7, 0.9)),
    (loops.nested_scalar_loops, lambda r: (0.6, 0.5)),
    (loops.scalars_and_arrays, lambda r: (0.5, r.standard_normal(3))),
    (loops.branch_in_scalar_loop, lambda r: (0.5, 0.3, 0.4)),
    (loops.branch_in_scalar_loop, lambda r: (0.5, 0.3, -0.4)),
    (loops.subtraction_chain, lambda r: (r.standard_normal((4, 3)), r.standard_normal((3, 5)))),
    (loops.negated_and_added, lambda r: (r.standard_normal(3),)),
    (loops.while_scalar_loop, lambda r: (0.5, 0.8)),
]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_matches_finite_differences(index):
    """Generic, specialised and fused code all agree with finite differences."""
    fn, build = CASES[index]
    st.check_grads(fn, build(_rng(index)), seed=index)


def _fused_source(fn, args):
    source = st.source(fn, wrt=tuple(range(len(args))), args=args)
    return source.split(f"def {fn.__name__}_grad")[1]


def test_cheap_scalar_temporaries_are_recomputed_not_saved():
    backward = st.source(loops.logistic, wrt=(0, 1), args=(2.5, 0.3)).split("def logistic_grad")[0]
    assert "for x in rt.pop_many(tape, trips):" in backward  # the loop walks the saved values
    source = _fused_source(loops.logistic, (2.5, 0.3))
    assert "xs[i] = x" in source                             # the state is saved, once a step
    assert "_mul" not in source.split("for x in")[0] and "_sub" not in source.split("for x in")[0]
    assert "d_mul = dx * (1.0 - x)" in source               # recomputed, then folded in
    assert "for x in rt.reversed(xs):" in source             # the loop walks its saved values


def test_a_chain_of_temporaries_is_recomputed_in_order():
    source = _fused_source(loops.dependent_temporaries, (0.7, 0.4))
    assert "xs[i] = x" in source and "[i] = u" not in source and "[i] = v" not in source
    body = source.split("rt.reversed(xs)")[1]
    assert body.index("u_2 = a * x") < body.index("v_2 = u_2 + 1.0")


def test_shapes_of_folded_temporaries_are_inferred():
    """The probe run never sees 0.9 * x as a name; its shape follows from x's."""
    source = _fused_source(loops.old_value_read, (0.8, 0.5))
    assert "rt.unbroadcast" not in source and "rt.add" not in source
    assert "dx = rt.zeros_of(x)" in source                  # a number: no container checks


def test_a_value_read_before_it_is_assigned_stays_saved():
    source = _fused_source(loops.old_value_read, (0.8, 0.5))
    assert "ts[i] = t" in source and "t = ts[_iteration]" in source


def test_array_temporaries_are_not_recomputed():
    source = _fused_source(loops.scalars_and_arrays, (0.5, np.ones(3)))
    assert "c_2 = a * s" in source                          # a number
    assert "vs[i] = v" in source                            # an array (tanh's rule reads it)


def test_recomputing_inside_a_loop_with_a_branch():
    """The pass on a loop whose body branches (built with explicit shapes)."""
    args = (0.5, 0.3, 0.4)
    shapes = dict.fromkeys(["a", "b", "x", "s", "_mul_2", "i"], ())
    build = pipeline.build_reverse(loops.branch_in_scalar_loop, ("a", "b", "x"),
                                   _no_callees, shapes=shapes)
    assert "s_2 = a * b" in build.source and "tape.append(s)" not in build.source
    fwd, bwd, fused = build.compiled.instantiate(loops.branch_in_scalar_loop)
    generic = srctrans.cache.instance(loops.branch_in_scalar_loop, ("a", "b", "x"))
    out, residuals = generic.fwd(*args)
    expected = generic.bwd(residuals, 1.0)
    np.testing.assert_allclose(fused(*args), expected)
    out, residuals = fwd(*args)
    np.testing.assert_allclose(bwd(residuals, 1.0), expected)


def test_recomputing_inside_a_while_loop():
    args = (0.5, 0.8)
    shapes = dict.fromkeys(["a", "x", "s", "n", "_mul", "_sub", "_mul_2", "_cond"], ())
    build = pipeline.build_reverse(loops.while_scalar_loop, ("a", "x"), _no_callees, shapes=shapes)
    assert "s_2 = a * x" in build.source and "tape.append(s)" not in build.source
    fwd, bwd, fused = build.compiled.instantiate(loops.while_scalar_loop)
    generic = srctrans.cache.instance(loops.while_scalar_loop, ("a", "x"))
    out, residuals = generic.fwd(*args)
    np.testing.assert_allclose(fused(*args), generic.bwd(residuals, 1.0))


def _no_callees(*args):
    raise AssertionError("no user function is called")


def test_the_adjoint_of_an_overwritten_value_restarts_each_reversed_iteration():
    # t is overwritten before it is read in each step; only the last step's t reaches t * t
    a, x = 0.7, 0.9
    da, dx = st.grad(loops.temporary_read_after_the_loop, wrt=(0, 1), specialize=False)(a, x)
    eps = 1e-6
    f = loops.temporary_read_after_the_loop
    assert da == pytest.approx((f(a + eps, x) - f(a - eps, x)) / (2 * eps), rel=1e-6)
    assert dx == pytest.approx((f(a, x + eps) - f(a, x - eps)) / (2 * eps), rel=1e-6)


def test_a_pullback_with_saved_values_walked_at_once_can_be_called_again():
    out, pullback = st.vjp(loops.nested_scalar_loops, 0.6, 0.5)
    first, second = pullback(1.0), pullback(2.0)
    for one, two in zip(first, second):
        assert two == pytest.approx(2.0 * one)


def _statements(text):
    return gast.parse(text).body


def _text(statements):
    return "\n".join(block_lines(statements, 0))


@pytest.mark.parametrize("text", [
    "dx = -d\ny = dx * 2\ndx = dx + e",           # the first value is read in between
    "dx = -d\nd = e * 2\ndx = dx + e",            # what it reads changes in between
    "dx = -f(d)\ndx = dx + e",                    # it calls something: it does not move
    "dx = -d\ndx = dx * e",                       # not a sum
])
def test_a_first_contribution_that_may_not_move_stays(text):
    assert _text(accumulate.fold_accumulations(_statements(text))) == text


def test_a_long_sum_is_not_folded_into_one_statement():
    folded = accumulate.fold_accumulations(_statements("d = a\nd = d + b\nd = d + c"))
    assert _text(folded) == "d = a + b\nd = d + c"


@pytest.mark.parametrize("text, live", [
    ("d = -g\ne = np.exp(d)", set()),              # exp does not let the sign out
    ("d = -g\ne = d * x\nf = e * h + e", set()),   # e read twice: the sign comes out
    ("d = -g\ne = d / s", set()),                  # nothing absorbs it
    ("d = -g\ne = h + d", {"d"}),                  # d itself is returned
])
def test_a_negation_that_would_not_be_absorbed_stays(text, live):
    assert _text(negation.sink_negations(_statements(text), live)) == text


@pytest.mark.parametrize("text, moved", [
    ("d = -g\ne = h - d", "d = g\ne = h + d"),              # a - -b -> a + b
    ("d = -g\ne = h + d", "d = g\ne = h - d"),              # a + -b -> a - b
    ("d = -g\ne = d + h", "d = g\ne = h - d"),              # -a + b -> b - a
    ("d = -g\ne = d * x\nf = h - e", "d = g\ne = d * x\nf = h + e"),   # through a product
    ("d = -g\ne = d * x\nf = e * e", "d = g\ne = d * x\nf = e * e"),   # read twice, squared
    # through a guard of a quotient (zero where d is: where -d is), an entry, a sum
    ("d = -g\ne = rt.zero_guard(d, d / s)\nf = e[:, None] * x\nh = -f.sum(axis=0)",
     "d = g\ne = rt.zero_guard(d, d / s)\nf = e[:, None] * x\nh = f.sum(axis=0)"),
])
def test_a_negation_is_absorbed_by_a_sum_or_difference(text, moved):
    assert _text(negation.sink_negations(_statements(text), set())) == moved


def test_a_negation_moves_through_sums_of_arrays():
    moved = negation.sink_negations(_statements(
        "d = -g\ne = rt.unbroadcast(d, b)\nf = e.sum(axis=0)\nh = k + f"), set())
    assert _text(moved) == "d = g\ne = rt.unbroadcast(d, b)\nf = e.sum(axis=0)\nh = k - f"


def test_dead_code_goes_from_branches_and_an_idle_if_goes():
    kept = pipeline.eliminate_dead_code(_statements(
        "a = f(x)\nif c:\n    b = a * 2\n    u = a + 1\nelse:\n    b = a\nif d:\n    e = 1"),
        {"u"}, lambda stmt: True)
    assert _text(kept) == "a = f(x)\nif c:\n    u = a + 1"


def test_a_branch_left_empty_turns_the_test_around():
    kept = pipeline.eliminate_dead_code(_statements(
        "if c:\n    b = 1\nelse:\n    u = 2"), {"u"}, lambda stmt: True)
    assert _text(kept) == "if not c:\n    u = 2"


def test_numbers_and_copies_are_propagated_inside_branches():
    statements = _statements("if c:\n    d = 1.0 * 0.5\n    e = d * r + d * r\n    f = e\n"
                             "    g = f * 3\nelse:\n    f = r\n    g = f")
    simplify.simplify(statements)
    statements, _ = pipeline.propagate_copies(statements)
    assert _text(statements) == ("if c:\n    d = 0.5\n    e = r\n    f = r\n    g = r * 3\n"
                                 "else:\n    f = r\n    g = r")


@pytest.mark.parametrize("text, propagated", [
    ("if c:\n    a = b\n    for i in r:\n        y = a * 3\n    z = a + y",
     "if c:\n    a = b\n    for i in r:\n        y = b * 3\n    z = b + y"),
    # b changes inside the loop: a there is the old b
    ("if c:\n    a = b\n    for i in r:\n        b = b * 2\n        y = a * 3\n    z = a + y",
     "if c:\n    a = b\n    for i in r:\n        b = b * 2\n        y = a * 3\n    z = a + y"),
])
def test_a_copy_is_propagated_into_a_loop_unless_the_loop_changes_it(text, propagated):
    statements, _ = pipeline.propagate_copies(_statements(text))
    assert _text(statements) == propagated


def test_a_copy_of_a_name_to_itself_goes_in_any_block():
    statements, _ = pipeline.propagate_copies(_statements(
        "d = 1.0\nfor i in r:\n    e = d\n    d = d\n    if c:\n        d = d\n    y = e * x"))
    assert _text(statements) == "d = 1.0\nfor i in r:\n    e = d\n    if c:\n        pass\n" \
                                "    y = d * x"


@pytest.mark.parametrize("text, simplified", [
    ("e = d * r + d * r", "e = 2 * (d * r)"),
    ("e = m * m + m * m", "e = m * m + m * m"),          # booleans: a logical or, not 2
    ("e = d * h + h * d", "e = 2 * (d * h)"),            # factors swapped: the same product
    ("e = d * (h + 1) + (h + 1) * d", "e = 2 * (d * (h + 1))"),
    ("e = d * h + h * e", "e = d * h + h * e"),          # another product
    ("e = d / h + h / d", "e = d / h + h / d"),          # a quotient swapped is another
    ("e = d * m + m * d", "e = d * m + m * d"),          # booleans
    ("e = 2 * (0.75 * y)", "e = 1.5 * y"),               # multiplying by 2 is exact
    ("e = 3.0 * (y * 0.5)", "e = 1.5 * y"),
    ("e = 3.0 * (y * 3.0)", "e = 3.0 * (y * 3.0)"),      # 9.0 * y may round differently
    ("e = f(x) + f(x)", "e = f(x) + f(x)"),              # a call may not give the same twice
    ("e = d[:, None] * r + d[:, None] * r", "e = 2 * (d[:, None] * r)"),   # an entry read alike
    ("e = d[:, None] * r + d[None, :] * r", "e = d[:, None] * r + d[None, :] * r"),
    ("e = -1.0 * y + x * -1", "e = -y - x"),              # a product by minus one: a negation
    ("e = -1.0 * m", "e = -1.0 * m"),                    # booleans: -m is an error
])
def test_sums_of_equal_terms_and_products_of_powers_of_two(text, simplified):
    statements = _statements(text)
    simplify.simplify(statements, not_float={"m"})
    assert _text(statements) == simplified


@pytest.mark.parametrize("text, simplified", [
    ("e = f(1.0 * x)", "e = f(x)"),                                # inside a call's arguments
    ("e = -(1.0 * x)", "e = -x"),                                  # inside a negation
    ("e = rt.unbroadcast(-d, x)", "e = -rt.unbroadcast(d, x)"),    # negated after summing
    ("e = rt.unreduce(-d, x, 0, True)", "e = rt.unreduce(-d, x, 0, True)"),   # only there
])
def test_operands_are_simplified_and_a_sign_leaves_unbroadcast(text, simplified):
    statements = _statements(text)
    simplify.simplify(statements)
    assert _text(statements) == simplified


def test_a_spread_read_by_several_products_or_a_square():
    w = np.array([0.3, -0.2, 0.5, 0.1])
    X = _rng(0).standard_normal((6, 4))
    y = _rng(1).standard_normal(6)
    source = _fused_source(control.piecewise_loss, (w, X, 2.0 * y))        # the middle branch
    # the branches taken as the measuring call took them, checked as the code runs
    assert "rt.expect_branch(scale > 4.0, False)" in source and "if " not in source
    assert "dw = X.T @ r" in source and "rt.unreduce" not in source
    for x, c in [(_rng(2).standard_normal(3), 1.0), (_rng(3).standard_normal(3), -1.0)]:
        st.check_grads(control.products_of_a_spread_seed, (x, c), wrt=(0,), seed=4)


@pytest.mark.parametrize("scale", [0.01, 2.0, 30.0])
def test_a_gradient_added_after_a_branch_moves_into_it(scale):
    """The specialised code keeps the branch the measuring call took (checked as it runs),
    which adds X.T @ r itself: no zeros for dw, one product. (Where the branches stay, each
    adds its own: test_a_sum_after_an_if_moves_into_both_branches_with_what_computes_it.)"""
    w = np.array([0.3, -0.2, 0.5, 0.1])
    X = _rng(0).standard_normal((6, 4))
    y = _rng(1).standard_normal(6)
    source = _fused_source(control.piecewise_loss, (w, X, scale * y))
    assert "zeros" not in source and source.count("X.T @") == 1
    assert "rt.expect_branch(scale > 4.0, " in source and not re.search(r"^\s*if ", source, re.M)
    for other in (0.01, 2.0, 30.0):                        # every path, on the specialised code
        st.check_grads(control.piecewise_loss, (w, X, other * y), wrt=(0,), seed=5)


@pytest.mark.parametrize("left, right, shape", [
    ((3, 4), (4, 5), (3, 5)), ((3, 4), (4,), (3,)), ((4,), (4, 5), (5,)), ((4,), (4,), ()),
    ((3, 4), (5,), None), ((2, 3, 4), (4, 5), (2, 3, 5)), ((1, 3, 4), (6, 4, 5), (6, 3, 5)),
    ((2, 3, 4), (7, 4, 5), None), ((2, 3, 4), (5, 6), None), ((2, 3, 4), (4,), None),
])
def test_shapes_of_matrix_and_vector_products(left, right, shape):
    product = gast.parse("a @ b").body[0].value
    assert expression_shapes.shape_of(product, {"a": left, "b": right}) == shape


def test_a_sum_after_an_if_moves_into_both_branches_with_what_computes_it():
    moved = accumulate.sink_into_branches(_statements(
        "if c:\n    n = rt.zeros_like(w)\nelse:\n    n = a\ne = f(d)\nn = rt.add(n, e)"))
    assert _text(moved) == ("if c:\n    n = rt.zeros_like(w)\n    e = f(d)\n    n = rt.add(n, e)\n"
                            "else:\n    n = a\n    e = f(d)\n    n = rt.add(n, e)")


@pytest.mark.parametrize("text", [
    "if c:\n    n = rt.zeros_like(w)\n    break\nelse:\n    n = a\nn = rt.add(n, e)",   # ends early
    "if c:\n    n = a\nelse:\n    n = b\nn = rt.add(n, e)",                     # no zeros
    "if c:\n    n = rt.zeros_like(w)\nm = n * 2\nn = rt.add(n, e)",            # n read between
    "if c:\n    n = rt.zeros_like(w)\nn = rt.add(n, e * n)",                   # e reads n
])
def test_a_sum_after_an_if_that_may_not_move_stays(text):
    assert _text(accumulate.sink_into_branches(_statements(text))) == text


@pytest.mark.parametrize("before, after", [
    ("d = (t * (2 * r)).sum()", "d = 2 * (t * r).sum()"),
    ("d = ((0.5 * r) * t).sum()", "d = 0.5 * (r * t).sum()"),
    ("d = (t * (3 * r)).sum()", "d = (t * (3 * r)).sum()"),          # not exact: stays
    ("d = (t * (2 * r)).sum(axis=0)", "d = (t * (2 * r)).sum(axis=0)"),   # not a whole sum
    ("d = np.sum(t * (2 * r))", "d = np.sum(t * (2 * r))"),          # not known to be an array
    ("y = (t * (2 * r)).sum()", "y = (t * (2 * r)).sum()"),          # not a tangent
])
def test_a_power_of_two_leaves_a_whole_sum_of_a_tangent(before, after):
    statements = _statements(before)
    assert _text(specialise.factor_out_of_sums(statements, {"d"})) == after


@pytest.mark.parametrize("index, g_shape, after", [
    ("np.s_[:, None]", (4, 1, 3), "d = g[:, 0]"),
    ("np.s_[None, :, :]", (1, 4, 3), "d = g[0, :, :]"),
    ("np.s_[None]", (1, 4, 3), "d = g[0]"),
    ("np.s_[:, None]", (4, 5, 3), "d = rt.getitem_grad(g, x, np.s_[:, None])"),  # g broadcast
    ("np.s_[:, 0]", (4,), "d = rt.getitem_grad(g, x, np.s_[:, 0])"),           # a pick
    ("np.s_[:, :]", (4, 3), "d = rt.getitem_grad(g, x, np.s_[:, :])"),          # no new axis
])
def test_the_cotangent_of_new_axes_takes_them_away(index, g_shape, after):
    statements = _statements(f"d = rt.getitem_grad(g, x, {index})")
    assert _text(specialise.specialise(statements, {"g": g_shape, "x": (4, 3)}, "np")) == after


def test_a_spread_picked_with_new_axes_is_put_back_as_its_number():
    """A spread's cotangent through new axes stays rt.getitem_grad, where the spread's number
    is put back (the specialiser drops spreads after it rewrites the picks)."""
    statements = _statements("d = rt.unreduce(s, P, None, False)\n"
                             "e = rt.getitem_grad(d, X, np.s_[:, None])")
    assert _text(specialise.specialise(statements, {"s": (), "P": (4, 1), "X": (4,)}, "np")) \
        == "e = rt.getitem_grad(s, X, np.s_[:, None])"


def broadcast_columns(x, w):
    m = x[:, None] * w                       # (n, 1) * (k,): x's cotangent is a column's
    return np.sum(np.tanh(m)) + np.sum(x ** 2) + np.sum(x[None, :] * m.T)


def test_a_pick_with_new_axes_has_its_cotangent_as_a_view_and_stays_right():
    rng = np.random.default_rng(12)
    x, w = rng.standard_normal(4), rng.standard_normal(3)
    fused = _fused_source_wrt(broadcast_columns, (x, w), (0, 1))
    assert "rt.getitem_grad" not in fused
    want = st.grad(broadcast_columns, wrt=(0, 1), optimize=False)(x, w)
    for _ in range(3):
        got = st.grad(broadcast_columns, wrt=(0, 1))(x, w)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    st.check_grads(broadcast_columns, (x, w), order=2, wrt=(0, 1))


def test_a_spread_summed_with_a_factor_stays_a_sum():
    """A spread summed with a factor is the number it spreads, times the factor, summed."""
    statements = _statements("d = rt.unreduce(s, A, None, False)\ne = rt.unbroadcast(d * F, t)")
    shapes = {"s": (), "A": (3,), "F": (3,), "t": ()}
    assert _text(specialise.specialise(statements, shapes, "np")) == "e = (s * F).sum()"


def test_a_scalar_factors_cotangent_rounds_as_the_generic_code_rounds():
    """A number's cotangent, the whole sum of a product (``rt.unbroadcast(a * b, s)``), stays
    ``(a * b).sum()`` in specialised code, summed as the generic code sums it. Here the sum
    cancels (the softmax's shift is its number): ``a.dot(b)``, which a session wrote for it,
    added the terms in another order and gave another rounding error, 2.7817e-16 where the
    generic code gives 2.7842e-16, which the fuzzer's read-back check (relative 1e-12)
    caught as a wrong gradient (seed 20261206301, program 216)."""
    path = Path(__file__).parent / "fuzzing" / "regressions" / "seed_20261206301_216.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    gradient = st.grad(module.program, wrt=(0, 1, 2, 3))
    generic = gradient(*module.ARGS)
    for _ in range(2):                       # the specialised code, then its short path
        got = gradient(*module.ARGS)
    for a, b in zip(got, generic):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def _copies_then_dead_code(text, live):
    from srctrans.optimise import dce
    statements, renaming = dce.propagate_copies(_statements(text))
    return _text(dce.eliminate_dead_code(statements, live, lambda s: True))


def test_a_copy_in_a_loop_body_is_read_through_and_dropped():
    text = ("for i in range(n):\n    d2 = g * h\n    d = d2\n    e = d\n"
            "    g = e @ w\n    a = a + d")
    assert _copies_then_dead_code(text, {"a", "g"}) == (
        "for i in range(n):\n    d2 = g * h\n    g = d2 @ w\n    a = a + d2")


@pytest.mark.parametrize("text, live", [
    # d is read by the next step before the copy assigns it: the copy stays, reads keep d
    ("for i in range(n):\n    y = d * 2.0\n    d = e\n    z = d + 1.0", {"y", "z"}),
    # d is read after the loop
    ("for i in range(n):\n    e = f * 2.0\n    d = e", {"d"}),
    # t is assigned in the loop and read by a later step only
    ("for i in range(n):\n    s = s + t\n    t = u * 2.0", {"s"}),
])
def test_what_a_later_step_or_the_code_after_a_loop_reads_stays(text, live):
    assert _copies_then_dead_code(text, live) == text


# --- a loop's saved values in a list of its own (optimise/step_lists.py) ---------------

@pytest.mark.parametrize("fn, args, own_lists", [
    (loops.logistic, (2.5, 0.3), 1),
    (loops.two_loops_in_turn, (0.7, 0.4), 2),
    (loops.loop_over_an_array, (0.7, 0.4, np.array([0.1, -0.3, 0.5])), 1),   # w: weights[i]
    (loops.loop_left_early, (3.2, 0.3), 0),
    (loops.loop_from_a_start, (2.5, 0.3), 1),                # stored at i - _range.start
    (loops.loop_inside_a_loop, (2.5, 0.3), 0),
    (loops.values_saved_around_loops, (0.7, 0.4), 2),
    (loops.old_value_read, (0.8, 0.5), 2),                  # two values a step, popped by index
    (loops.scalars_and_arrays, (0.5, np.linspace(-1.0, 1.0, 3)), 2),
    (loops.saved_names_that_make_keywords, (np.array([0.3, -0.2, 0.4]), 0.6), 2),
])
def test_a_loop_saves_its_steps_in_a_list_of_its_own_where_it_can(fn, args, own_lists):
    """The fused gradient of specialised code, against the generic backward pass and
    finite differences; the loops that may not (a break, a range not from 0, a loop in a
    loop) keep the tape."""
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    source = _fused_source_wrt(fn, args, wrt)
    assert source.count("= [None] * trips") == own_lists
    assert fn is not loops.saved_names_that_make_keywords or "i_s[_index] = i" in source
    assert ("tape" in source) == (own_lists == 0 or fn is loops.values_saved_around_loops)
    gradient = st.grad(fn, wrt=wrt)
    first, second = gradient(*args), gradient(*args)      # generic, then specialised
    for got, expected in zip(second, first):
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    st.check_grads(fn, args, modes=("reverse",), wrt=wrt)


def test_a_loop_whose_values_no_step_reads_saves_none():
    """A reversed loop that iterated over its steps' values reading none of them (nor the
    code after it) counts its steps: no list, no saves (optimise/step_lists.py)."""
    args = (np.linspace(0.5, 1.5, 4), np.linspace(-1.0, 1.0, 4), 3)
    source = _fused_source_wrt(loops.damped, args, (0, 1))
    assert "[None] * trips" not in source and "tape" not in source
    assert "for _step in range(trips):" in source
    gradient = st.grad(loops.damped, wrt=(0, 1))
    first = gradient(*args)
    for _ in range(2):                                # specialised, then the short path
        for got, expected in zip(gradient(*args), first):
            np.testing.assert_allclose(got, expected, rtol=1e-13)
    st.check_grads(loops.damped, args, wrt=(0, 1), order=2)


def _fused_source_wrt(fn, args, wrt):
    source = st.source(fn, wrt=wrt, args=args)
    return source.split(f"def {fn.__name__}_grad")[1]


def test_a_loop_of_its_own_list_reads_as_an_expert_writes_it():
    source = _fused_source(loops.logistic, (2.5, 0.3))
    lines = [line.strip() for line in source.splitlines() if not line.strip().startswith("#")]
    start = lines.index("xs = [None] * trips")
    assert lines[start:start + 4] == ["xs = [None] * trips", "for i in _range:", "xs[i] = x",
                                      "x = a * x * (1.0 - x)"]
    assert "for x in rt.reversed(xs):" in lines
    assert "tape" not in source


@pytest.mark.parametrize("fn, args", [
    (loops.logistic, (2.5, 0.3)),                          # one value a step: rt.reversed
    (loops.old_value_read, (0.8, 0.5)),                    # two values a step: read by index
    (loops.values_saved_around_loops, (0.7, 0.4)),         # own lists and the tape
])
def test_hessians_differentiate_the_loops_own_lists(fn, args):
    """st.hessian and st.hvp differentiate the specialised fused gradient, lists and all."""
    hessian = np.array(st.hessian(fn, wrt=(0, 1))(*args), dtype=float)
    gradient = st.grad(fn, wrt=(0, 1))
    assert "[None] * trips" in _fused_source(fn, args)
    numeric = []
    for k in range(2):
        step = np.eye(2)[k] * 1e-6
        numeric.append((np.array(gradient(*(np.array(args) + step)))
                        - np.array(gradient(*(np.array(args) - step)))) / 2e-6)
    np.testing.assert_allclose(hessian, np.array(numeric).T, rtol=1e-5, atol=1e-7)
    hv = st.hvp(fn, args, (1.0, -0.5))
    np.testing.assert_allclose(hv, hessian @ np.array([1.0, -0.5]), rtol=1e-10)


# --- a parameter's gradient summed in place (optimise/in_place.py) ---------------------

def _rnn_sums_args(dtype=np.float64, data=np.float64):
    rng = np.random.default_rng(3)
    return (rng.standard_normal((3, 4)).astype(dtype) * 0.5, rng.standard_normal((4, 4)).astype(dtype) * 0.5,
            rng.standard_normal(4).astype(dtype) * 0.1, rng.standard_normal((5, 2, 3)).astype(data),
            np.zeros((2, 4), dtype))


def test_a_parameters_gradient_that_only_sums_adds_in_place():
    args = _rnn_sums_args()
    source = _fused_source_wrt(loops.rnn_sums, args, (0, 1, 2))
    for name, parameter in [("dWx", "Wx"), ("dWh", "Wh"), ("db", "b")]:
        assert f"{name} = rt.zeros_of({parameter})" in source and f"{name} += " in source
    gradient = st.grad(loops.rnn_sums, wrt=(0, 1, 2))
    first, second, third = gradient(*args), gradient(*args), gradient(*args)
    for got, again, expected in zip(second, third, first):
        np.testing.assert_array_equal(got, expected)         # float64 throughout: the same sums
        np.testing.assert_array_equal(again, expected)       # and a fresh array each call
        assert got is not again
    st.check_grads(loops.rnn_sums, args, modes=("reverse",), wrt=(0, 1, 2))


def test_a_gradient_summed_in_place_keeps_its_parameters_dtype():
    """float32 weights, float64 data: each step rounds to float32, as JAX and PyTorch do;
    the general code sums in float64 and rounds once."""
    args = _rnn_sums_args(np.float32, np.float64)
    gradient = st.grad(loops.rnn_sums, wrt=(0, 1, 2))
    first, second = gradient(*args), gradient(*args)
    for got, expected, parameter in zip(second, first, args):
        assert got.dtype == expected.dtype == parameter.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_hessian_of_a_gradient_summed_in_place():
    args = _rnn_sums_args()
    assert "dWh += " in _fused_source_wrt(loops.rnn_sums, args, (0, 1, 2))
    hessian = st.hessian(loops.rnn_sums, wrt=1)(*args)
    gradient = st.grad(loops.rnn_sums, wrt=1)
    numeric = np.empty((4, 4, 4, 4))
    for k in np.ndindex(4, 4):
        step = np.zeros((4, 4))
        step[k] = 1e-6
        plus, minus = list(args), list(args)
        plus[1], minus[1] = args[1] + step, args[1] - step
        numeric[(...,) + k] = (gradient(*plus) - gradient(*minus)) / 2e-6
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("text", [
    "dW = dW + 1.0",                                      # not made here as zeros
    "dW = rt.zeros_of(W)\ng = dW\ndW = dW + e",            # another name holds the array
    "dW = rt.zeros_of(W)\ndW = dW + e\ny = dW * 2.0\ndW = dW + e",   # read between its sums
    "dW = rt.zeros_of(W)\nfor t in r:\n    dW = dW + e\n    y = dW * 2.0",  # read in the loop
    "dW = rt.zeros_of(W)\ndW = dW + dW.T",                 # the term reads the sum
    "dW = rt.zeros_of(W)\ndW = e - dW",                    # not a sum onto dW
    "dW = rt.zeros_of(W)\ndW = dW * e",                    # not a sum
    "dW = rt.zeros_of(V)\ndW = dW + e",                    # V is not a parameter array
    "dW = rt.zeros_of(W)\ndW = rt.zeros_of(W)\ndW = dW + e",   # made twice
    "dW = rt.zeros_of(W)\nfor t in range(dW.shape[0]):\n    dW = dW + e",   # read by a loop
    "dW = rt.zeros_of(W)\nif c:\n    dW = e\ndW = dW + e",  # assigned another value
])
def test_what_may_not_be_summed_in_place_is_left(text):
    body = gast.parse(text + "\nreturn (dW,)").body
    before = ast.unparse(gast.gast_to_ast(gast.Module(body, [])))
    after = in_place.accumulate_in_place(body, {"W"}, "rt")
    assert ast.unparse(gast.gast_to_ast(gast.Module(after, []))) == before


def test_sums_in_loops_and_branches_are_made_in_place():
    text = ("dW = rt.zeros_of(W)\nfor t in range(3):\n    if c:\n        dW = dW + e\n"
            "    dW = dW - f\ndel g\nreturn (dW,)")
    after = in_place.accumulate_in_place(gast.parse(text).body, {"W"}, "rt")
    assert ast.unparse(gast.gast_to_ast(gast.Module(after, []))) == (
        "dW = rt.zeros_of(W)\nfor t in range(3):\n    if c:\n        dW += e\n    dW -= f\ndel g\n"
        "return (dW,)")


def test_an_entrys_cotangent_is_added_at_its_index():
    text = ("dU = d * (2 * U)\nfor t in range(3):\n    dU = dU + rt.getitem_grad(e, U, i)\n"
            "    dU = rt.add(dU, rt.getitem_grad(f, U, np.s_[1:, k]))\nreturn (dU,)")
    after = in_place.accumulate_in_place(gast.parse(text).body, {"U"}, "rt", {"dU": "U"},
                                         {"i", "k"})
    assert ast.unparse(gast.gast_to_ast(gast.Module(after, []))) == (
        "dU = d * (2 * U)\nfor t in range(3):\n    dU[i] += e\n    dU[1:, k] += f\n"
        "return (dU,)")


@pytest.mark.parametrize("text", [
    "dU = d * (2 * U)\ndU = dU + rt.getitem_grad(e, U, idx)",      # idx may repeat an entry
    "dU = d * (2 * U)\ndU = dU + rt.getitem_grad(e, V, i)",        # the cotangent of another
    "dU = d * (2 * U)\ndU = dU + rt.getitem_grad(dU, U, i)",       # the term reads the sum
    "dU = g\ndU = dU + rt.getitem_grad(e, U, i)",                  # another name's array
    "dU = d * (2 * U)\nh = dU\ndU = dU + rt.getitem_grad(e, U, i)",   # held by another
])
def test_what_may_not_be_added_at_an_index_is_left(text):
    body = gast.parse(text + "\nreturn (dU,)").body
    before = ast.unparse(gast.gast_to_ast(gast.Module(body, [])))
    after = in_place.accumulate_in_place(body, {"U"}, "rt", {"dU": "U"}, {"i"})
    assert "dU[" not in ast.unparse(gast.gast_to_ast(gast.Module(after, [])))
    if "dU = g" in text or "h = dU" in text:
        assert ast.unparse(gast.gast_to_ast(gast.Module(after, []))) == before


@pytest.mark.parametrize("text, in_place_", [
    ("d = -1.0 * T\ns = d.sum(axis=1)\ndU = d\nfor j in r:\n"        # d read before: in place
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])", True),
    ("d = -1.0 * T\ndU = d\nfor j in r:\n"                           # d read after dU changed
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])\ns = d.sum()", False),
    ("d = -1.0 * T\ndU = d\nfor j in r:\n    s = d[0]\n"              # at the loop's next step
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])", False),
    ("d = T\ndU = d\nfor j in r:\n"                                   # d: another's array
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])", False),
    ("d = -1.0 * T\nv = d\ndU = d\nfor j in r:\n"                    # v, a copy of d, read
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])\n    v = v * 0.8", False),  # after
    ("d = -1.0 * T\nv = d\nw = v\ndU = d\nfor j in r:\n"              # a copy of the copy
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])\ns = w.sum()", False),
    ("d = -1.0 * T\nv = d.T\ndU = d\nfor j in r:\n"                  # a view of d
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])\ns = v.sum()", False),
    ("d = -1.0 * T\nv = d.sum(axis=0)\ndU = d\nfor j in r:\n"        # a new array: in place
     "    dU = dU + rt.getitem_grad(e, U, np.s_[:, j])\ns = v * 2.0", True),
])
def test_a_gradient_copied_from_a_new_array_adds_in_place_when_the_copy_is_done(text, in_place_):
    body = gast.parse(text + "\nreturn (dU,)").body
    after = in_place.accumulate_in_place(body, {"U"}, "rt", {"dU": "U"}, {"j"})
    assert ("dU[:, j] += e" in ast.unparse(gast.gast_to_ast(gast.Module(after, [])))) == in_place_


@pytest.mark.parametrize("text, kept", [
    ("d = rt.dict_copy(p)\nm = d['m']\nd['s'] = m * x\ny = x * 2.0", "y = x * 2.0"),
    ("d = {}\nd['s'] = x * 3.0\ny = x * 2.0", "y = x * 2.0"),             # written, never read
    ("d = {}\nd['s'] = x * 3.0\ny = d['s']",                               # read after: kept
     "d = {}\nd['s'] = x * 3.0\ny = d['s']"),
    ("d = {}\ne = d\nd['s'] = x * 3.0\ny = e['s']",                      # held by another name
     "d = {}\ne = d\nd['s'] = x * 3.0\ny = e['s']"),
    ("d = {}\nd['s'] = x * 3.0\ny = f(d)",                                # passed to a call
     "d = {}\nd['s'] = x * 3.0\ny = f(d)"),
    ("d = {'s': x}\nfor i in r:\n    z = d['s']\n    d['s'] = z * x\ny = z",  # read at the
     "d = {'s': x}\nfor i in r:\n    z = d['s']\n    d['s'] = z * x\ny = z"),  # next step
    ("d = {'s': x}\nfor i in r:\n    z = d['s']\n    d['s'] = z * x\ny = x",  # and by no
     "for i in r:\n    pass\ny = x"),                                           # live name
    ("d = {'s': x}\nfor i in range(n):\n    z = d['s']\n    d['s'] = z * x\ny = x",
     "y = x"),                                                    # a range loop with nothing left
])
def test_an_entry_written_into_a_dict_nothing_reads_after_is_dead(text, kept):
    from srctrans.optimise import dce
    assert _text(dce.eliminate_dead_code(_statements(text), {"y"}, lambda s: True)) == kept


@pytest.mark.parametrize("text, kept", [
    ("t = 0.0\nfor v in xs:\n    e = v * x\n    t = t + e\ny = x",       # an accumulator
     "for v in xs:\n    pass\ny = x"),                                    # nothing reads
    ("t = 0.0\nfor v in xs:\n    t = t + v\ny = t",                      # read after the loop
     "t = 0.0\nfor v in xs:\n    t = t + v\ny = t"),
    ("a = 0.0\nb = 0.0\nfor v in xs:\n    b = b + a\n    a = a + v\ny = b",   # a: read by
     "a = 0.0\nb = 0.0\nfor v in xs:\n    b = b + a\n    a = a + v\ny = b"),  # the next step
    ("a = 0.0\nb = 0.0\nfor v in xs:\n    b = b + v\n    a = a + b\ny = b",   # a: by none
     "b = 0.0\nfor v in xs:\n    b = b + v\ny = b"),
    ("n = 0\nt = 0.0\nwhile n < k:\n    t = t + x\n    n = n + 1\ny = x",   # the test reads
     "n = 0\nwhile n < k:\n    n = n + 1\ny = x"),                          # the count
    ("v = x\nfor v in range(k):\n    t = v\ny = v",                        # the target after
     "v = x\nfor v in range(k):\n    pass\ny = v"),                         # the loop
    ("t = 0.0\nfor i in range(k):\n    t = t + x\ny = x", "y = x"),
    ("t = 0.0\nfor i in range(f(k)):\n    t = t + x\ny = x",               # range of a call
     "for i in range(f(k)):\n    pass\ny = x"),
    ("_r = range(k)\nt = 0.0\nfor i in _r:\n    t = t + x\ny = x", "y = x"),   # a name of one
    ("_r = range(k)\nfor i in _r:\n    pass\n_r = xs\ny = x",                    # and of
     "_r = range(k)\nfor i in _r:\n    pass\ny = x"),                              # another
    ("for i in range(k):\n    pass\ny = x", "y = x"),                        # a step of pass
])
def test_a_loop_update_nothing_live_reads_is_dead(text, kept):
    from srctrans.optimise import dce
    assert _text(dce.eliminate_dead_code(_statements(text), {"y"}, lambda s: True)) == kept


def running_statistics_loss(x, gamma, stats):
    stats = dict(stats)
    mu = x.mean(axis=0)
    stats["mean"] = 0.9 * stats["mean"] + 0.1 * mu         # running statistics: no gradient
    xhat = (x - mu) / np.sqrt(x.var(axis=0) + 1e-5)
    return np.sum(gamma * xhat * xhat)


def test_a_gradient_does_not_compute_what_only_a_dead_entry_write_needs():
    rng = np.random.default_rng(9)
    x, gamma, stats = rng.standard_normal((6, 3)), rng.standard_normal(3), {"mean": np.zeros(3)}
    source = _fused_source_wrt(running_statistics_loss, (x, gamma, stats), (0, 1))
    code = [line for line in source.splitlines() if not line.lstrip().startswith("#")]
    assert not any("0.9 *" in line or "['mean'] =" in line for line in code)
    st.check_grads(running_statistics_loss, (x, gamma, stats), order=2, wrt=(0, 1))
    assert np.all(stats["mean"] == 0.0)


def folded_log_sum_exp(z, T):
    lse = z[:, 0]
    for j in range(1, z.shape[1]):     # (scaled: a pure fold is one call, normalize/folds.py)
        lse = np.logaddexp(lse, z[:, j]) * 1.0
    return -np.sum(T * (z - lse[:, None]))


def test_columns_read_in_a_loop_add_their_cotangents_into_a_copied_start():
    rng = np.random.default_rng(6)
    z, T = rng.standard_normal((5, 4)), rng.uniform(0, 1, (5, 4))
    source = _fused_source_wrt(folded_log_sum_exp, (z, T), (0,))
    assert "dz[:, j] += " in source and "getitem_grad(d_item_2, z" not in source
    g = st.grad(folded_log_sum_exp)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    for _ in range(3):
        np.testing.assert_allclose(g(z, T), p * T.sum(axis=1, keepdims=True) - T, rtol=1e-12)
    st.check_grads(folded_log_sum_exp, (z, T), order=2, wrt=0)
    v = rng.standard_normal(z.shape)
    want = (g(z + 1e-5 * v, T) - g(z - 1e-5 * v, T)) / 2e-5
    np.testing.assert_allclose(st.hvp(folded_log_sum_exp, (z, T), (v, None))[0], want,
                               rtol=1e-5, atol=1e-7)


def ratings_loss(U, V, ratings, reg):
    total = 0.0
    for i, j, r in ratings:
        total += (r - U[i] @ V[j]) ** 2
    return total + reg * (np.sum(U ** 2) + np.sum(V ** 2))


def test_rows_read_in_a_loop_get_their_cotangents_at_their_rows():
    """The fused gradient adds each rating's term at its rows (repeated rows too), as an
    expert's ``dU[i] += ...`` does, and is right to second order."""
    rng = np.random.default_rng(3)
    U, V = rng.standard_normal((4, 2)), rng.standard_normal((5, 2))
    ratings = [(0, 1, 4.0), (2, 3, 1.0), (0, 4, 3.5), (0, 1, 2.0)]
    source = _fused_source_wrt(ratings_loss, (U, V, ratings, 0.1), (0, 1))
    assert "dU[i] += " in source and "dV[j] += " in source and "getitem_grad" not in source
    gradient = st.grad(ratings_loss, wrt=(0, 1))
    expected_U, expected_V = 0.2 * U, 0.2 * V
    for i, j, r in ratings:
        err = r - U[i] @ V[j]
        expected_U[i] -= 2 * err * V[j]
        expected_V[j] -= 2 * err * U[i]
    for _ in range(4):
        got_U, got_V = gradient(U, V, ratings, 0.1)
        np.testing.assert_allclose(got_U, expected_U, rtol=1e-12)
        np.testing.assert_allclose(got_V, expected_V, rtol=1e-12)
    st.check_grads(ratings_loss, (U, V, ratings, 0.1), order=2, wrt=(0, 1))
    numeric = np.empty((4, 2, 4, 2))
    for k in np.ndindex(4, 2):
        step = np.zeros((4, 2))
        step[k] = 1e-6
        numeric[(...,) + k] = (gradient(U + step, V, ratings, 0.1)[0]
                               - gradient(U - step, V, ratings, 0.1)[0]) / 2e-6
    np.testing.assert_allclose(st.hessian(ratings_loss, wrt=0)(U, V, ratings, 0.1), numeric,
                               rtol=1e-5, atol=1e-7)


def layered_cost(weights, biases, data):
    total = 0.0
    for x, y in data:                       # each example runs every layer: each layer's
        a = x                               # entry gets a cotangent per example
        for W, b in zip(weights, biases):
            a = np.tanh(W @ a + b)
        total += 0.5 * np.sum((a - y) ** 2)
    return total


def layered_cost_reading_its_list(weights, biases, data):
    total = 0.0
    for x, y in data:
        a = x
        for W, b in zip(weights, biases):
            a = np.tanh(W @ a + b) * np.sum(weights[0])   # the list read whole, each step
        total += 0.5 * np.sum((a - y) ** 2)
    return total


def _layers(rng):
    weights = [rng.standard_normal((3, 2)) * 0.5, rng.standard_normal((2, 3)) * 0.5]
    biases = [rng.standard_normal(3) * 0.1, rng.standard_normal(2) * 0.1]
    data = [(rng.standard_normal(2), rng.standard_normal(2)) for _ in range(4)]
    return weights, biases, data


@pytest.mark.parametrize("fn", [layered_cost, layered_cost_reading_its_list])
def test_a_loop_in_a_loop_adds_each_entrys_cotangent_at_its_index(fn):
    """A network's layers run once per example: the fused gradient adds each layer's
    cotangent at its index of a list made once (no list of zeros per step), and is right to
    second order; a list the loop also reads whole keeps the general sum."""
    rng = np.random.default_rng(4)
    weights, biases, data = _layers(rng)
    source = _fused_source_wrt(fn, (weights, biases, data), (0, 1))
    added = re.search(r"dweights\[(\w+)\] = rt\.add\(dweights\[\1\], dW", source)
    assert bool(added) == (fn is layered_cost)
    assert ("getitem_grad(" not in source) == (fn is layered_cost)
    gradient = st.grad(fn, wrt=(0, 1))
    flat = np.concatenate([w.ravel() for w in weights] + [b.ravel() for b in biases])

    def unflatten(v):
        sizes = [w.size for w in weights] + [b.size for b in biases]
        parts = np.split(v, np.cumsum(sizes)[:-1])
        return ([p.reshape(w.shape) for p, w in zip(parts[:2], weights)],
                [p.reshape(b.shape) for p, b in zip(parts[2:], biases)])

    numeric = np.array([(fn(*unflatten(flat + e), data) - fn(*unflatten(flat - e), data)) / 2e-6
                        for e in np.eye(flat.size) * 1e-6])
    for _ in range(3):                             # generic, specialised, short path
        got_w, got_b = gradient(weights, biases, data)
        np.testing.assert_allclose(np.concatenate([g.ravel() for g in got_w + got_b]), numeric,
                                   rtol=1e-6, atol=1e-8)
    st.check_grads(fn, (weights, biases, data), order=2, wrt=(0, 1))
    v = rng.standard_normal(flat.size) * 1e-5       # the HVP differentiates the fused gradient
    up, down = (gradient(*unflatten(flat + sign * v), data) for sign in (1, -1))
    want = np.concatenate([(u - d).ravel() for u, d in zip(up[0] + up[1], down[0] + down[1])])
    directions = unflatten(v / 1e-5)
    got = st.hvp(fn, (weights, biases, data), (*directions, None))
    got = np.concatenate([g.ravel() for g in got[0] + got[1]])
    np.testing.assert_allclose(got, want / 2e-5, rtol=1e-4, atol=1e-6)


def test_a_temporary_of_the_loop_counter_is_recomputed_from_the_range():
    source = _fused_source(loops.counted_factor, (0.7, 0.4))
    assert "c_2 = i * a" in source and "cs[i] = c" not in source
    body = source.split("for _iteration in")[1]
    assert body.index("i = _range[_iteration]") < body.index("c_2 = i * a")
    st.check_grads(loops.counted_factor, (0.7, 0.4), order=2)


def test_each_helper_result_has_the_shape_the_specialiser_assumes(monkeypatch):
    """expression_shapes.RESULT_SHAPE_OF_ARGUMENT says which argument's shape each runtime helper's
    result has: the shapes of specialised code are inferred from it. Every helper is called
    by the derivatives of one program, and each call's result is checked against it."""
    from programs import guarded
    seen = {}
    table = dict(expression_shapes.RESULT_SHAPE_OF_ARGUMENT)
    table.update(dict.fromkeys(expression_shapes.BROADCASTING_HELPERS, "both"))
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((4, 3)) + 2.0, rng.standard_normal((3, 2)), rng.standard_normal(3))
    # helpers the front end writes into the program itself (normalize/softplus_terms.py,
    # normalize/cholesky_terms.py, normalize/softmax_logs.py): a
    # wrapper there would be differentiated as the user's code, so they are checked unwrapped
    factor = np.linalg.cholesky(args[0][:3] @ args[0][:3].T + 3.0 * np.eye(3))
    in_program = {"relu_of_softplus": (args[0], 0), "log1p_tail": (args[0], args[0]),
                  "log_tail": (1.0 + args[0], args[0], args[0]),
                  "cholesky_log_diagonal": (np.diag(factor), factor, factor @ factor.T),
                  "softmax_ratio": (np.exp(args[0]), np.exp(args[0]).sum(axis=1, keepdims=True),
                                    args[0], 1)}
    program = st.source(guarded.every_shaped_helper, wrt=(0, 1, 2))
    for name, helper_args in in_program.items():
        assert f"rt.{name}(" in program, name
        index = table.pop(name)
        want = np.shape(helper_args[0]) if index in ("both", 0) else None
        assert np.shape(getattr(runtime, name)(*helper_args)) == want, name
    for name, index in table.items():
        real = getattr(runtime, name)

        def recorded(*args, _real=real, _name=name, _index=index, **keywords):
            out = _real(*args, **keywords)
            seen[_name] = seen.get(_name, 0) + 1
            if _index == "both":
                if not any(isinstance(a, (dict, list, tuple)) or a is None for a in args):
                    assert np.shape(out) == np.broadcast_shapes(*map(np.shape, args)), _name
            elif _index is not None:
                assert np.shape(out) == np.shape(args[_index]), _name
            return out
        monkeypatch.setattr(runtime, name, recorded)
    st.clear_cache()
    for _ in range(3):                        # generic, specialised, then the fused gradient
        st.grad(guarded.every_shaped_helper, wrt=(0, 1, 2))(*args)
    for _ in range(2):                        # the generic JVP, then the specialised one
        st.jvp(guarded.every_shaped_helper, args, args)
    st.clear_cache()
    assert set(seen) == set(table)


@pytest.mark.parametrize("text, names", [
    ("if c:\n    y = x * 2\n    z = y + 1", set()),           # assigned at one place each
    ("y = x\nif c:\n    y = x * 2\nz = y + 1", {"y", "z"}),  # the last place that ran
    ("for i in r:\n    y = x * 2", set()),                     # a loop's body: one place
])
def test_names_whose_shape_depends_on_the_path_taken(text, names):
    found, _ = fixed_shapes.path_dependent_names(_statements(text))
    assert found == names


def test_a_shape_two_branches_give_alike_is_known_after_them_and_what_follows():
    known = expression_shapes.infer_shapes(_statements(
        "if c:\n    y = a * 2\nelse:\n    y = a + 1\nz = y * 3"), {"a": (3,)})
    assert known == {"a": (3,), "y": (3,), "z": (3,)}


def test_a_shape_known_before_a_branch_that_changes_it_is_unknown_after():
    specialised = specialise.specialise(_statements(
        "d = rt.unbroadcast(g, b)\nif c:\n    d = g * 1.0\ne = rt.unbroadcast(d, a)"),
        {"g": (2, 3), "b": (3,), "a": (3,)})
    assert _text(specialised).endswith("\ne = rt.unbroadcast(d, a)")   # d is (3,) or (2, 3)


def test_a_shape_the_branches_disagree_on_is_unknown_after_them():
    specialised = specialise.specialise(_statements(
        "if c:\n    d = g * 1.0\nelse:\n    d = rt.unbroadcast(g, b)\n"
        "e = rt.unbroadcast(d, a)"), {"g": (2, 3), "b": (3,), "a": (3,)})
    assert _text(specialised).endswith("\ne = rt.unbroadcast(d, a)")   # d is (2, 3) or (3,)


@pytest.mark.parametrize("text, specialised", [
    ("d = rt.unreduce(s, P, None, False)\ne = rt.getitem_grad(d, X, (r, c))",   # put back
     "e = rt.getitem_grad(s, X, (r, c))"),
    ("d = rt.unreduce(s, P, None, False)\ne = rt.getitem_grad(d, X, (r, c))\nf = d * P",
     "d = rt.unreduce(s, P, None, False)\ne = rt.getitem_grad(d, X, (r, c))\nf = d * P"),
    ("d = rt.unreduce(t, P, None, False)\ne = rt.getitem_grad(d, X, (r, c))",   # t: an array
     "d = rt.unreduce(t, P, None, False)\ne = rt.getitem_grad(d, X, (r, c))"),
    ("d = rt.unreduce(s, P, None, False)\ne = rt.getitem_grad(d, X, d)",        # d as index
     "d = rt.unreduce(s, P, None, False)\ne = rt.getitem_grad(d, X, d)"),
    ("d = rt.unreduce(s, P, None, False)\ne = rt.getitem_grad(d, L, 0)",        # L: a list,
     "d = rt.unreduce(s, P, None, False)\ne = rt.getitem_grad(d, L, 0)"),       # no shape
])
def test_a_spread_number_put_back_where_it_was_picked_is_the_number(text, specialised):
    shapes = {"s": (), "t": (3,), "X": (4, 3)}         # P (picked by a fancy index): unknown
    assert _text(specialise.specialise(_statements(text), shapes)) == specialised


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_cross_entropy_of_picked_log_probabilities(dtype):
    def cross_entropy(scores, y):
        shifted = scores - np.max(scores, axis=1, keepdims=True)
        log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
        return -np.sum(log_probs[np.arange(len(y)), y]) / len(y)
    rng = np.random.default_rng(8)
    scores, y = rng.standard_normal((6, 4)).astype(dtype), np.array([0, 3, 3, 1, 0, 2])
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    want = probs.copy()
    want[np.arange(6), y] -= 1
    g = st.grad(cross_entropy)
    for _ in range(3):
        got = g(scores, y)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want / 6, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-7 if dtype == np.float32 else 1e-15)
    source = _fused_source_wrt(cross_entropy, (scores, y), (0,))
    # the picks' cotangent placed into zeros at the picked entries (optimise/placed_writes.py:
    # a range of rows with a label per row picks distinct entries), no spread
    assert "unreduce" not in source and "getitem_grad" not in source
    assert "[np.arange(len(y)), y] = d_" in source, source


@pytest.mark.parametrize("text, specialised", [
    ("d = rt.unreduce(s, A, None, False)\ne = E * d", "e = E * s"),     # a factor, either side
    ("d = rt.unreduce(s, A, None, False)\ne = d * E", "e = s * E"),
    ("d = rt.unreduce(s, A, None, False)\ne = d / E", "e = s / E"),     # a dividend
    ("d = rt.unreduce(s, A, None, False)\ne = E / d",                   # a divisor: kept
     "d = rt.unreduce(s, A, None, False)\ne = E / d"),
    ("d = rt.unreduce(s, A, None, False)\ne = d - d * E",               # the shape kept
     "e = s - s * E"),
    ("d = rt.unreduce(s, A, None, False)\nn = -d\ne = n * E\nf = d + E",  # through a negation
     "n = -s\ne = n * E\nf = s + E"),
    ("d = rt.unreduce(s, A, None, False)\ne = rt.zero_guard(d, d / E)",   # a guard's cotangent
     "e = rt.zero_guard(s, s / E)"),
    ("d = rt.unreduce(s, A, None, False)\ne = d - d * E\nf = d + 1.0",   # a number: no shape
     "d = rt.unreduce(s, A, None, False)\ne = d - d * E\nf = d + 1.0"),
    ("d = rt.unreduce(s, A, None, False)\nn = -d\nf = n + 1.0",           # nor through -d
     "d = rt.unreduce(s, A, None, False)\nn = -d\nf = n + 1.0"),
    ("d = rt.unreduce(s, A, None, False)\nm = d * 100.0\ne = m * (2.0 * E)\nf = d * E",
     "m = s * 100.0\ne = m * (2.0 * E)\nf = s * E"),                    # through a scaling
    ("d = rt.unreduce(s, A, None, False)\nm = 0.5 * d\nn = m / 4\ne = n * E",   # two, /
     "m = 0.5 * s\nn = m / 4\ne = n * E"),
    ("d = rt.unreduce(s, A, None, False)\nm = d * 100.0\nf = m + 1.0",    # nor through d * c
     "d = rt.unreduce(s, A, None, False)\nm = d * 100.0\nf = m + 1.0"),
    ("d = rt.unreduce(s, A, None, False)\nm = 100.0 / d\ne = m * E",       # a divisor: kept
     "d = rt.unreduce(s, A, None, False)\nm = 100.0 / d\ne = m * E"),
    ("d = rt.unreduce(s, A, None, False)\ne = d - rt.matmul_lhs(d, E, W)",  # a product's operand
     "d = rt.unreduce(s, A, None, False)\ne = d - W @ d"),
    ("d = rt.unreduce(s, A, None, False)\ne = rt.zero_guard(d, d * rt.power_base_factor(E, p))",
     "e = rt.zero_guard(s, s * rt.power_base_factor(E, p))"),      # a call not reading d
    ("d = rt.unreduce(s, A, None, False)\ne = d * rt.power_base_factor(d, p)",   # one reading it
     "d = rt.unreduce(s, A, None, False)\ne = d * rt.power_base_factor(d, p)"),
])
def test_a_spread_scalar_is_read_where_its_spread_was_a_factor(text, specialised):
    shapes = {"s": (), "A": (3,), "E": (3,), "W": (3, 3), "p": ()}
    assert _text(specialise.specialise(_statements(text), shapes)) == specialised


@pytest.mark.parametrize("text, specialised", [
    ("d = rt.unreduce(s, A, 0, False)\ne = 2 * (d[:, None] * E)",      # a row sum's spread:
     "e = 2 * (s * E)"),                                                # read by row, a number
    ("d = rt.unreduce(s, A, 0, False)\nn = -d\ne = n[:, None] * E",     # through a negation
     "n = -s\ne = n * E"),
    ("d = rt.unreduce(s, A, 0, False)\ne = d[:, None] * F",             # broadcast to the rows':
     "e = s * F"),                                                      # F's shape all the same
    ("d = rt.unreduce(s, A, 0, False)\ne = d[:, None] * G",             # the rows give the shape:
     "d = rt.unreduce(s, A, 0, False)\ne = d[:, None] * G"),           # kept
    ("d = rt.unreduce(s, A, 0, False)\ne = d[:, 0] * E",                # an entry picked: kept
     "d = rt.unreduce(s, A, 0, False)\ne = d[:, 0] * E"),
    ("d = rt.unreduce(s, A, 0, False)\nq = d\ne = q[:, None] * E\nq = q + 1.0",   # a copy's
     "d = rt.unreduce(s, A, 0, False)\nq = d\ne = q[:, None] * E\nq = q + 1.0"),  # reads: kept
])
def test_a_spread_number_read_with_axes_put_in_is_the_number(text, specialised):
    shapes = {"s": (), "A": (4,), "E": (4, 2), "F": (4, 1), "G": (1, 2)}
    assert _text(specialise.specialise(_statements(text), shapes)) == specialised


@pytest.mark.parametrize("text, specialised", [
    ("if c:\n    d = rt.unreduce(s, A, None, False)\nelse:\n    u = E\ne = E * d",
     "if c:\n    pass\nelse:\n    u = E\ne = E * s"),          # an emptied body: pass
    ("if c:\n    u = E\nelse:\n    d = rt.unreduce(s, A, None, False)\ne = E * d",
     "if c:\n    u = E\ne = E * s"),                              # an emptied else: gone
])
def test_a_branch_a_spread_leaves_empty(text, specialised):
    shapes = {"s": (), "A": (3,), "E": (3,)}
    assert _text(specialise.specialise(_statements(text), shapes)) == specialised


@pytest.mark.parametrize("call, shape", [
    ("a.sum(keepdims=True)", (1, 1)), ("a.sum()", ()), ("a.sum(axis=0)", (3,)),
    ("a.sum(axis=-1, keepdims=True)", (2, 1)), ("a.sum(axis=(0, 1))", ()),
])
def test_the_shape_of_a_sum_method(call, shape):
    assert expression_shapes.shape_of(_statements(call)[0].value, {"a": (2, 3)}) == shape


@pytest.mark.parametrize("call, shape", [
    ("rt.scipy_stats.cdf_dx('norm', a, 0.0, 1.0)", (2, 3)),
    ("rt.scipy_stats.logpdf_dscale('t', v, a, 2.0, 3.0)", (2, 3)),     # broadcast
    ("rt.scipy_stats.logpdf_dshape('beta', 1, v, 0.0, 1.0, 2.0, None)", (3,)),
    ("rt.scipy_stats.logcdf_dx('norm', u, a, 0.0, 1.0)", None),        # u unknown
    ("rt.scipy_stats.mvn_logpdf_dx(g, a)", None),                      # not elementwise
    ("rt.scipy_stats.cdf_dx('norm', a, v, 1.0, x=2.0)", None),         # a keyword
])
def test_the_shape_of_a_distributions_derivative_factor(call, shape):
    known = {"a": (2, 3), "v": (3,), "g": (2,)}
    assert expression_shapes.shape_of(_statements(call)[0].value, known) == shape


# --- a loop over a list writes the list's cotangent entry by entry (entry_cotangents.py) ---

def _list_cases():
    rng = np.random.default_rng(3)
    return [
        (loops.over_a_list, ([rng.standard_normal(3) for _ in range(3)], rng.standard_normal(3)),
         True),
        (loops.over_a_tuple_of_dicts, (tuple({"W": rng.standard_normal((2, 2)),
                                              "b": rng.standard_normal(2)} for _ in range(3)),
                                       rng.standard_normal((4, 2))), True),
        (loops.over_pairs, ([(rng.standard_normal(3), rng.standard_normal(2), 2)
                             for _ in range(4)], rng.standard_normal((3, 2))), True),
        (loops.over_a_list_left_early, ([rng.standard_normal(3) + 2.0 for _ in range(6)],
                                        rng.standard_normal(3) + 3.0), True),
        (loops.entry_read_twice, ([rng.standard_normal(3) for _ in range(3)],
                                  rng.standard_normal(3)), False),     # two reads a step: adds
    ]


@pytest.mark.parametrize("fn, args, written", _list_cases(),
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_loop_over_a_list_writes_its_cotangent_entry_by_entry(fn, args, written):
    fused = _fused_source_wrt(fn, args, (0, 1))
    assert ("rt.sequence_cotangent(" in fused) == written
    assert ("= rt.zeros_like(" in fused) != written             # no list of zeros made first
    gradient = st.grad(fn, wrt=(0, 1))
    first, second, third = (gradient(*args) for _ in range(3))  # generic, fused, short path
    for got in (second, third):
        for a, b in zip(_flat(got), _flat(first)):
            assert type(a) is type(b)
            if b is not None:                                  # (an int entry's is None)
                np.testing.assert_allclose(a, b, rtol=1e-12)
    assert type(second[0]) is type(args[0]) and len(second[0]) == len(args[0])
    st.check_grads(fn, args, wrt=(0, 1), order=2, modes=("reverse",))


def _flat(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _flat(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flat(v)]
    return [value]


def test_the_entries_a_loop_left_early_never_read_get_zeros():
    ws = [np.full(3, 2.0), np.full(3, 2.0), np.full(3, 30.0), np.full(3, 2.0)]
    gradient = st.grad(loops.over_a_list_left_early, wrt=0)
    for _ in range(3):
        got = gradient(ws, np.ones(3))
        np.testing.assert_array_equal(got[3], np.zeros(3))     # the loop broke before it
        assert got[3].dtype == np.float64


@pytest.mark.parametrize("text, shapes, r", [
    # both branches and a loop's body keep r's shape: by induction r always has it
    ("r = a - b\nif c:\n    _clip = np.clip(r, lo, hi)\n    r = _clip\nelse:\n"
     "    _mul = r * 1.0\n    r = _mul\nwhile d:\n    _mul_2 = 0.5 * r\n    r = _mul_2\n"
     "_pow = r ** 2", {"a": (8,), "b": (8,), "lo": (), "hi": ()}, (8,)),
    ("r = a\nfor i in s:\n    _m = r @ W\n    r = _m", {"a": (3,), "W": (3, 3)}, (3,)),
    # a step that changes the shape, or one srctrans cannot follow: unknown
    ("r = a\nfor i in s:\n    _m = r @ W\n    r = _m", {"a": (3,), "W": (3, 2)}, None),
    ("r = a\nfor i in s:\n    _m = f(r)\n    r = _m", {"a": (3,)}, None),
    ("r = a\nif c:\n    r = b", {"a": (3,), "b": (2,)}, None),
])
def test_a_name_assigned_in_branches_and_loops_keeps_a_shape_they_all_keep(text, shapes, r):
    known = expression_shapes.infer_shapes(_annotated(_statements(text)), shapes)
    assert known.get("r") == r
    if r is not None and "_pow" in text:
        assert known["_pow"] == r and known["_clip"] == r


def _annotated(statements):
    """The calls of np.* annotated with what they call, as the resolver does."""
    from srctrans import annotations as anno
    from srctrans.annotations import Anno
    for stmt in statements:
        for node in gast.walk(stmt):
            if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                    and isinstance(node.func.value, gast.Name) and node.func.value.id == "np"):
                anno.set_(node, Anno.CALLEE, getattr(np, node.func.attr))
    return statements


def test_products_of_two_vectors_and_an_arrays_entry_zeros_are_specialised_away():
    text = ("da = rt.matmul_lhs(g, a, b)\ndb = rt.matmul_rhs(g, a, b)\n"
            "dh = rt.entry_zero_like(dh, t, h)\ndl = rt.entry_zero_like(dl, t, xs)\n"
            "dA = rt.matmul_lhs(u, A, b)\ndB = rt.matmul_rhs(v, a, B)")
    shapes = {"g": (), "a": (3,), "b": (3,), "h": (4, 2), "dh": (4, 2), "A": (2, 3),
              "u": (2,), "B": (3, 4), "v": (4,)}
    body = specialise.specialise(gast.parse(text).body, shapes)
    assert ast.unparse(gast.gast_to_ast(gast.Module(body, []))) == (
        "da = g * b\ndb = g * a\ndh = dh\ndl = rt.entry_zero_like(dl, t, xs)\n"
        "dA = u[:, None] * b\ndB = a[:, None] * v")


def test_a_transposes_cotangent_of_a_known_array_is_its_transpose():
    text = ("a = rt.transpose_grad(g, None)\nb = rt.transpose_grad(h, None)\n"
            "c = rt.transpose_grad(g, (1, 0))\nd = rt.transpose_grad(k, (2, 0, -2))")
    body = specialise.specialise(gast.parse(text).body, {"g": (2, 3), "h": (), "k": (2, 3, 4)})
    assert ast.unparse(gast.gast_to_ast(gast.Module(body, []))) == (   # (h may be a float)
        "a = g.T\nb = rt.transpose_grad(h, None)\nc = g.transpose((1, 0))\n"
        "d = k.transpose((1, 2, 0))")          # the inverse order: (2, 0, 1) undone


def test_a_spread_over_a_sum_along_the_last_axis_is_filled():
    """``axis=-1`` is a constant too (a minus sign and a number)."""
    from srctrans.optimise.filled_spreads import fill_spreads
    text = "s = np.sum(a * b, axis=-1)\nd = rt.unreduce(1.0, s, 0, False)\ne = d[:, None] * a"
    body = _annotated(gast.parse(text).body)
    after = fill_spreads(body, {"a": (5, 2), "b": (5, 2), "s": (5,)}, "np", "rt",
                         shapes_hold=True)
    assert "d = np.full((5,), 1.0, np.result_type(1.0, a, b))" in \
        ast.unparse(gast.gast_to_ast(gast.Module(after, [])))


@pytest.mark.parametrize("picked, filled", [
    ("np.take_along_axis(logp, idx, axis=1)", "(6, 1), s / 6, np.result_type(s, logp)"),
    ("np.take_along_axis(logp * w, idx, axis=1)", "(6, 1), s / 6, np.result_type(s, logp, w)"),
])
def test_a_mean_s_spread_over_picked_entries_is_filled_in_the_picked_array_s_dtype(picked,
                                                                                    filled):
    """A pick's dtype is the array's, whatever int array picks it: the fill reads no index.
    (A subscript is no such pick: what it reads may be a dict, of no dtype.)"""
    from srctrans.optimise.filled_spreads import fill_spreads
    body = _annotated(gast.parse(f"d = rt.mean_grad(s, {picked}, None, False)").body)
    shapes = {"logp": (6, 4), "w": (6, 4), "idx": (6, 1), "s": ()}
    after = ast.unparse(gast.gast_to_ast(gast.Module(
        fill_spreads(body, shapes, "np", "rt", shapes_hold=True), [])))
    assert after == f"d = np.full({filled})"


def picked_cross_entropy(W, X, y):
    z = X @ W
    logp = z - logsumexp(z, axis=1, keepdims=True)
    return -np.mean(np.take_along_axis(logp, y[:, None], axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_cross_entropy_of_picked_log_probabilities_fills_its_seed(dtype):
    rng = _rng(3)
    args = (rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((8, 3)).astype(dtype),
            rng.integers(0, 4, 8))
    fused = st.source(picked_cross_entropy, args=args).split("def picked_cross_entropy_grad")[1]
    assert "np.full((8, 1), -1.0 / 8, np.result_type(-1.0, logp))" in fused
    gradient = st.grad(picked_cross_entropy)
    for _ in range(3):
        got = gradient(*args)
    assert got.dtype == dtype
    z = args[1] @ args[0]
    p = np.exp(z - logsumexp(z, axis=1, keepdims=True))
    p[np.arange(8), args[2]] -= 1
    np.testing.assert_allclose(got, args[1].T @ p / 8, rtol=1e-4 if dtype == np.float32 else 1e-12)


def kl_to_standard_normal(mu, logvar, counts):
    penalty = mu * counts + np.exp(-np.abs(logvar))
    return -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar)) + np.sum(penalty)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_sums_spread_over_an_expression_is_not_computed(dtype):
    """The fused gradient does not compute the summed expression for its shape: the seed
    is a number where broadcasting spreads it (optimise/spreads.py), and gradients keep
    their arguments' dtypes."""
    rng = np.random.default_rng(8)
    mu, logvar = rng.standard_normal((4, 2)).astype(dtype), rng.standard_normal((4, 2)).astype(dtype)
    counts = rng.integers(0, 3, (4, 2))
    source = _fused_source_wrt(kl_to_standard_normal, (mu, logvar, counts), (0, 1))
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    # neither sum's seed is an array: the KL's reaches dlogvar in a difference that keeps
    # the shape (-0.5 - -0.5 * np.exp(logvar)) and dmu through a negation; penalty's is a
    # factor of counts alone (1.0 * counts)
    assert "np.full_like(" not in code and "1 + logvar - mu ** 2" not in code
    assert "mu * counts" not in code and "1.0 * counts" in code
    g = st.grad(kl_to_standard_normal, wrt=(0, 1))
    for _ in range(3):
        dmu, dlogvar = g(mu, logvar, counts)
        assert dmu.dtype == dlogvar.dtype == dtype
        np.testing.assert_allclose(dmu, mu + counts, rtol=1e-6)
        np.testing.assert_allclose(dlogvar, 0.5 * (np.exp(logvar) - 1)
                                   - np.sign(logvar) * np.exp(-np.abs(logvar)), rtol=1e-5)


def test_a_spread_over_an_objects_attribute_is_left_as_it_is():
    """``np.result_type`` of an object fails: an expression reading ``self.w`` is no
    arithmetic of names and numbers, and its spread is not filled."""
    from srctrans.optimise.filled_spreads import fill_spreads
    text = "t = self.w - x\nd = rt.unreduce(1.0, t, None, False)\ne = rt.unreduce(1.0, x - u, None, False)"
    body = gast.parse(text).body
    after = fill_spreads(body, {"t": (3,), "x": (3,), "u": (3,)}, "np", "rt")
    assert ast.unparse(gast.gast_to_ast(gast.Module(after, []))) == (
        "t = self.w - x\nd = rt.unreduce(1.0, t, None, False)\n"
        "e = np.full_like(x, 1.0, np.result_type(1.0, x, u))")


def mixture_loglik(means, X, log_weights):
    sq = np.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=-1)
    return np.sum(logsumexp(log_weights - 0.5 * sq, axis=1))


def test_a_rules_choice_on_a_default_and_a_sum_over_an_axis_fold_away():
    """logsumexp's rule chooses on ``b``, which the call leaves at None: the fused gradient
    keeps only the branch taken. The cotangent of a sum over the last axis, used only as a
    factor of an array of the summed shape, is read with that axis put back (``dsq[:, :,
    None]``) rather than spread over the whole array."""
    rng = np.random.default_rng(3)
    args = (rng.standard_normal((3, 2)), rng.standard_normal((10, 2)), np.log([0.2, 0.3, 0.5]))
    code = _fused_source_wrt(mixture_loglik, args, 0)
    assert "None is None" not in code and "unreduce(dsq" not in code and "dsq[:, :, None] *" in code
    gradient = st.grad(mixture_loglik)
    for _ in range(3):
        got = gradient(*args)
    means, X, log_weights = args
    diff = X[:, None, :] - means[None, :, :]
    log_comp = log_weights - 0.5 * np.sum(diff ** 2, axis=-1)
    resp = np.exp(log_comp - logsumexp(log_comp, axis=1, keepdims=True))
    np.testing.assert_allclose(got, (resp[:, :, None] * diff).sum(axis=0), rtol=1e-12)
    st.check_grads(mixture_loglik, args, order=2)


def rosenbrock_of_a_copy(x):
    x = np.asarray(x)
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)


def test_a_local_arrays_cotangent_is_summed_in_place_when_read_only_after_the_sums():
    """The cotangent of ``x = np.asarray(x)`` starts as a new array (its first read's) and
    gets the other reads' terms at their slices (``dx_2[1:] += d``): the conversion's
    cotangent reads it only after the last of them. A sum over the only axis of a vector
    is filled like a whole sum, without computing the summed expression."""
    x = np.random.default_rng(4).standard_normal(6)
    code = _fused_source_wrt(rosenbrock_of_a_copy, (x,), 0)
    assert "[1:] += " in code and "[:-1] += " in code and "unreduce" not in code, code
    gradient = st.grad(rosenbrock_of_a_copy)
    for _ in range(3):
        got = gradient(x)
    want = np.zeros_like(x)
    want[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    want[:-1] += -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1 - x[:-1])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    st.check_grads(rosenbrock_of_a_copy, (x,), order=2)


def read_between_sums(x):
    y = x * 1.0
    a = np.sum(y[1:] ** 2)
    b = np.sum(np.sin(y[:-1]))
    return a * b + np.sum(y[:2] * a)


def test_a_cotangent_read_between_its_sums_is_not_summed_in_place():
    x = np.random.default_rng(5).standard_normal(5)
    gradient = st.grad(read_between_sums)
    for _ in range(3):
        got = gradient(x)
    np.testing.assert_allclose(got, st.grad(read_between_sums, optimize=False)(x), rtol=1e-12)
    st.check_grads(read_between_sums, (x,), order=2)


def folded_logaddexp(z):
    lse = z[:, 0]
    for j in range(1, z.shape[1]):
        lse = np.logaddexp(lse, z[:, j]) * 1.0      # (not a pure fold: normalize/folds.py)
    return np.sum(lse * lse)


def every_other_column(z):
    total = z[:, 0] * 0.0
    for j in range(1, z.shape[1], 2):
        total = np.sin(total) + z[:, j] * total + z[:, j]
    return np.sum(total ** 2)


@pytest.mark.parametrize("fn", [folded_logaddexp, every_other_column])
def test_a_loop_over_a_range_with_a_start_or_step_keeps_its_steps_in_lists(fn):
    z = np.random.default_rng(6).standard_normal((4, 6))
    code = _fused_source_wrt(fn, (z,), 0)
    assert "tape" not in code and "j - _range.start" in code, code
    gradient = st.grad(fn)
    for _ in range(3):
        got = gradient(z)
    np.testing.assert_allclose(got, st.grad(fn, optimize=False)(z), rtol=1e-12)
    st.check_grads(fn, (z,), order=2)


def poisson_loglike(params, exog, endog):
    eta = exog @ params
    return np.sum(endog * eta - np.exp(eta))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_sums_seed_only_multiplied_after_its_negation_is_sunk_is_no_array(dtype):
    """``np.sum(y * eta - np.exp(eta))``: the seed's spread reaches both terms, one through a
    negation that a later pass sinks into a difference (leaving a copy of the spread); the
    copy is propagated and the spread dropped, so the gradient reads as an expert's
    ``exog.T @ (y - np.exp(eta))``: no array of ones made and multiplied."""
    rng = np.random.default_rng(9)
    args = (rng.standard_normal(3).astype(dtype) * 0.3, rng.standard_normal((8, 3)).astype(dtype),
            rng.poisson(2.0, 8).astype(dtype))
    code = _fused_source_wrt(poisson_loglike, args, 0)
    assert "full_like" not in code and "unreduce" not in code, code
    gradient = st.grad(poisson_loglike)
    for _ in range(3):
        got = gradient(*args)
    params, exog, endog = args
    assert got.dtype == dtype
    np.testing.assert_allclose(got, exog.T @ (endog - np.exp(exog @ params)), rtol=1e-5)
    st.check_grads(poisson_loglike, args, order=2, wrt=(0,), rtol=1e-3 if dtype == np.float32 else 1e-5)


def mean_cosine_distance(A, B):
    a = A / np.linalg.norm(A, axis=1, keepdims=True)
    b = B / np.linalg.norm(B, axis=1, keepdims=True)
    return np.mean(1.0 - np.sum(a * b, axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_means_seed_over_a_reduction_is_read_as_its_number(dtype):
    """``np.mean(1.0 - np.sum(a * b, axis=1))``: the mean's seed is each entry's share, a
    number spread over the reduction, which the sum's cotangent spreads over ``a * b``
    (``d[:, None]``): each product reads the number itself, which keeps ``b``'s dtype; neither
    the product nor its sum is computed for it, and no array of shares is filled."""
    rng = np.random.default_rng(10)
    A, B = rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal((5, 3)).astype(dtype)
    code = _fused_source_wrt(mean_cosine_distance, (A, B), 0)
    assert "da = -0.2 * b" in code, code
    assert "mean_grad" not in code and "(a * b)" not in code and "np.full" not in code
    gradient = st.grad(mean_cosine_distance)
    for _ in range(3):
        got = gradient(A, B)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, st.grad(mean_cosine_distance, optimize=False)(A, B),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)
    st.check_grads(mean_cosine_distance, (A.astype(float), B.astype(float)), order=2)


def test_names_holding_two_values_lose_their_measured_shape_but_not_for_a_placeholder():
    """``one_valued``: a parameter assigned again, or a name assigned twice, held another
    value before its last; a tape's placeholder (``Y = None`` before ``Y = np.zeros(...)``,
    marked as a save) is no value the code reads."""
    from srctrans import annotations as anno
    from srctrans.annotations import Anno
    body = _statements("Y = None\nY = np.zeros(3)\ns = s * 2.0\nt = x\nt = t * x\nu = x * 2.0")
    anno.set_(body[0], Anno.SAVES, ("Y",))
    shapes = {"Y": (3,), "s": (3,), "t": (3,), "u": (3,), "x": (3,)}
    assert expression_shapes.one_valued(shapes, body, ["s", "x"], loops=False) == {
        "Y": (3,), "u": (3,), "x": (3,)}
    assert expression_shapes.one_valued(shapes, body, ["s", "x"], loops=True) == shapes


def test_a_loops_body_is_simplified_as_a_blocks_is():
    """Constants fold, a guard that changes nothing goes, and a number a name holds is read
    as the number, in a loop's body as in a branch's (a backward pass's loop was once left as
    it was: ``rt.zero_guard(d, d * rt.power_base_factor(r, 2))`` every step)."""
    statements = _statements("c = 0.5\nfor i in range(3):\n    e = c * 2.0 * x\n"
                             "    f = rt.zero_guard(d, d * rt.power_base_factor(r, 2))\n"
                             "while k:\n    g = 1.0 * 3.0 + h")
    simplify.simplify(statements)
    assert _text(statements) == ("c = 0.5\nfor i in range(3):\n    e = x\n"
                                 "    f = d * (2 * r)\nwhile k:\n    g = 3.0 + h")


def hyperparameters(theta, x):
    return np.sum(np.sin(theta[0] * x) * theta[1]) + theta[2] ** 2 * np.sum(x)


def test_a_vectors_entries_read_by_constants_are_summed_in_place():
    """The cotangent of ``theta`` starts as its last read's placement and the others are
    written at their entries (a sum into the returned name is no new start); entries apart,
    they are assigned into an array made empty (optimise/placed_writes.py)."""
    args = (np.array([0.3, -0.7, 1.1]), np.linspace(-1.0, 1.0, 5))
    source = _fused_source(hyperparameters, args)
    assert source.count("dtheta = ") == 1 and "dtheta = np.empty(" in source, source
    assert all(source.count(f"dtheta[{k}] = ") == 1 for k in range(3)), source
    assert "+=" not in source and "rt.add" not in source, source
    gradient = st.grad(hyperparameters)
    for _ in range(3):
        np.testing.assert_allclose(gradient(*args), st.grad(hyperparameters, optimize=False)(*args),
                                   rtol=1e-12)
    st.check_grads(hyperparameters, args, order=2, wrt=0)


@pytest.mark.parametrize("callee, shape", [
    (np.matmul, (3,)),                         # a vector times a matrix, not their broadcast
    (np.add, (3, 3)),
    (getattr(np, "vecdot", None), None),       # a ufunc with a signature: not elementwise
])
def test_a_ufunc_with_a_signature_is_not_elementwise(callee, shape):
    """``np.matmul`` is a ufunc whose signature ``(n?,k),(k,m?)->(n?,m?)`` reduces an axis: its
    result has a product's shape (a second derivative's ``np.matmul(v, dd)`` of a vector and
    a matrix once counted as their broadcast, and a sum then took away an axis it did not
    have: seed 20261207601, program 214)."""
    if callee is None:
        pytest.skip("NumPy before 2.0 has no np.vecdot")
    expression = gast.parse("f(v, M)").body[0].value
    srctrans.annotations.set_(expression, srctrans.annotations.Anno.CALLEE, callee)
    assert expression_shapes.shape_of(expression, {"v": (3,), "M": (3, 3)}) == shape


@pytest.mark.parametrize("text, shape", [
    ("np.where(c, d, 0)", (4,)), ("np.exp(d)", (4,)), ("np.maximum(d, W)", (3, 4)),
    ("np.where(c)", None),                     # the positions where c holds: a value's shape
    ("xp.where(c, d, 0)", None),               # not the template's NumPy
])
def test_a_rule_templates_numpy_call_has_a_shape(text, shape):
    """A template's calls carry no annotation of what the user's code calls; the template's
    ``np`` is NumPy, whatever name generated code gives it (``np_2`` here), so
    ``np.where(small, d, 0)`` has its arguments' broadcast shape."""
    from srctrans.differentiate import templates
    from srctrans.naming import NUMPY_ALIAS
    expression = templates._substitute(_statements(text)[0].value, {}, {NUMPY_ALIAS: "np_2"})
    assert not any(isinstance(n, gast.Name) and n.id == "np" for n in gast.walk(expression))
    known = {"c": (4,), "d": (4,), "W": (3, 4)}
    assert expression_shapes.shape_of(expression, known) == shape
    assert expression_shapes.shape_of(_statements(text)[0].value, known) is None   # a user's


def huber_like(r, delta, scale):
    small = np.abs(r) <= delta
    return np.mean(scale * np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta)))


def where_of_a_number(r, delta, scale):
    return np.mean(scale * np.where(np.abs(r) <= delta, r * r, 1))   # an int array branch


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_means_spread_over_a_where_is_filled_in_the_shape_of_its_branches(dtype):
    """``np.where(c, a, b)`` of arithmetic counts as ``a`` and ``b``'s names: the mean's
    seed, scaled by a number and read only by the products of the one selection its two
    selections merged into, is a number, and the ``np.where`` is not computed for its shape;
    with a number for a branch (an array of its own dtype: an int makes the result float64
    with float32 ``r``) it is computed, the seed is filled like it, and the gradient keeps
    the dtype Python computes."""
    rng = np.random.default_rng(3)
    r = rng.standard_normal(12).astype(dtype)
    source = _fused_source_wrt(huber_like, (r, 0.7, 2.0), (0,))
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    assert "full_like" not in code and "np.where(small, 0.5" not in code
    assert "np.where(small, d_where * r, " in code
    source = _fused_source_wrt(where_of_a_number, (r, 0.7, 2.0), (0,))
    # (a number's selection: NumPy's dtype; the fill times the scale is the scale's
    # product broadcast, optimise/filled_products.py)
    assert "np.empty_like(_where, " in source
    for f, want in ((huber_like, 2.0 * np.where(np.abs(r) <= 0.7, r, 0.7 * np.sign(r)) / 12),
                    (where_of_a_number, 2.0 * np.where(np.abs(r) <= 0.7, 2 * r, 0) / 12)):
        g = st.grad(f)
        for _ in range(3):
            got = g(r, 0.7, 2.0)
            assert got.dtype == (f(r, 0.7, 2.0) * r).dtype
            np.testing.assert_allclose(got, want, rtol=1e-5)


def kl_between_normals(q, p):
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    return np.sum(p["log_sigma"] - q["log_sigma"]
                  + (var_q + (q["mu"] - p["mu"]) ** 2) / (2 * var_p) - 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_nonzero_seed_needs_no_guard_where_it_divides_and_no_array(dtype):
    """The sum's seed is 1.0, never 0: ``rt.zero_guard(d, d / (2 * var_p))``, which would put
    0 where ``d`` is 0, is the quotient itself. Nor is it an array: it reaches
    ``q["log_sigma"]`` negated, copied into the first term of that entry's sum
    (``dq_entry = d_neg; ...; dq_entry = dq_entry + e``), a sum that keeps the entry's shape
    with the number read instead (a fill of 1.0 was made, negated and divided)."""
    rng = np.random.default_rng(4)
    q, p = ({"mu": rng.standard_normal(5).astype(dtype),
             "log_sigma": rng.standard_normal(5).astype(dtype)} for _ in range(2))
    source = _fused_source_wrt(kl_between_normals, (q, p), (0,))
    assert "zero_guard" not in source and "full_like" not in source and "unreduce" not in source
    g = st.grad(kl_between_normals)
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    for _ in range(3):
        got = g(q, p)
        assert got["mu"].dtype == got["log_sigma"].dtype == dtype
        np.testing.assert_allclose(got["mu"], (q["mu"] - p["mu"]) / var_p, rtol=1e-5)
        np.testing.assert_allclose(got["log_sigma"], -1 + var_q / var_p, rtol=1e-5)
    st.check_grads(kl_between_normals, (q, p), order=2, wrt=(0,),
                   rtol=1e-3 if dtype == np.float32 else 1e-5)


@pytest.mark.parametrize("text, specialised", [
    ("d = rt.unbroadcast(g * rt.clip_mask(r, lo, hi, None, None), r)",   # both bounds: the
     "d = g * ((r >= lo) & (r <= hi))"),                                  # comparisons
    ("d = rt.unbroadcast(g * rt.clip_mask(r, lo, B, None, None), r)",    # an array bound
     "d = (g * ((r >= lo) & (r <= B))).sum(axis=0)"),
    ("d = g * rt.clip_mask(r, None, hi, None, None)",                     # one bound: kept
     "d = g * rt.clip_mask(r, None, hi, None, None)"),
    ("d = g * rt.clip_mask(r, lo, hi, None, None)\ne = g * rt.clip_mask(u, lo, hi)",
     "d = g * ((r >= lo) & (r <= hi))\ne = g * rt.clip_mask(u, lo, hi)"),   # u's shape unknown
    ("d = rt.abs_grad(g, r)", "d = g * np.sign(r)"),                     # real: its sign
    ("d = rt.abs_grad(g, u)", "d = rt.abs_grad(g, u)"),
])
def test_a_clip_mask_and_abs_grad_of_known_arrays_are_numpy_expressions(text, specialised):
    shapes = {"g": (3,), "r": (3,), "lo": (), "hi": (), "B": (2, 3)}
    assert _text(specialise.specialise(_statements(text), shapes)) == specialised


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clipped_and_absolute_values_of_known_shapes_match_finite_differences(dtype):
    def clipped(w, X, lo, hi):
        r = X @ w
        return np.sum(np.clip(r, lo, hi) ** 2) + np.sum(np.abs(r - 0.1) * 0.5)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 3)).astype(dtype)
    w = rng.standard_normal(3).astype(dtype)
    r = X @ w
    lo, hi = np.sort(r)[1] - 0.05, np.sort(r)[4] + 0.05        # away from the kinks
    for bounds in ((float(lo), float(hi)), (np.full(6, lo, dtype), float(hi))):
        g = st.grad(clipped)
        for _ in range(3):
            got = g(w, X, *bounds)
            assert got.dtype == dtype
            want = [(clipped(w + e, X, *bounds) - clipped(w - e, X, *bounds)) / 2e-3
                    for e in np.eye(3, dtype=dtype) * 1e-3]
            np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == np.float32 else 1e-6)
        text = st.source(clipped, args=(w, X, *bounds))
        fused = text[text.index("_grad("):]
        assert "clip_mask" not in fused and "abs_grad" not in fused and "np.sign(" in fused


# --- a tuple made to be taken apart again (tuple_picks.py) --------------------------------

@pytest.mark.parametrize("text, folded", [
    ("t = (a, b)\nx = t[0]\ny = t[1] * 2.0", "t = (a, b)\nx = a\ny = b * 2.0"),
    ("t = (a, b)\nx = t[-1]", "t = (a, b)\nx = b"),
    ("t = (a, b)\na = a + 1.0\nx = t[0]", "t = (a, b)\na = a + 1.0\nx = t[0]"),   # a changed
    ("t = (a, b)\nx = t[0]\nf(t)", "t = (a, b)\nx = t[0]\nf(t)"),           # t read whole
    ("t = (a, b)\nif c:\n    x = t[0]", "t = (a, b)\nif c:\n    x = a"),      # in a branch
    ("t = (a, b)\nif c:\n    a = 1.0\n    x = t[0]",                       # a changed there
     "t = (a, b)\nif c:\n    a = 1.0\n    x = t[0]"),
    ("t = (a, b)\nt = (b, a)\nx = t[0]", "t = (a, b)\nt = (b, a)\nx = t[0]"),   # t twice
    ("t = (a, f(b))\nx = t[0]", "t = (a, f(b))\nx = a"),                  # an atom picked
    ("t = (a, f(b))\nx = t[1]", "t = (a, f(b))\nx = t[1]"),   # f may act: not moved
    ("t = (a, np.exp(b))\nx = t[1]", "t = (a, np.exp(b))\nx = np.exp(b)"),   # NumPy's: moved
    ("t = (a, np.exp(b))\nx = t[1]\ny = t[1]",                            # computed twice
     "t = (a, np.exp(b))\nx = t[1]\ny = t[1]"),
    ("t = (a, np.exp(b))\nfor i in r:\n    x = t[1]",                     # each step
     "t = (a, np.exp(b))\nfor i in r:\n    x = t[1]"),
    ("t = (a, np.exp(b))\nb = b + 1.0\nx = t[1]",                         # b changed
     "t = (a, np.exp(b))\nb = b + 1.0\nx = t[1]"),
    ("t = (a, b)\nx = t[0]\na = x * 2.0\ny = t[0]",                       # a changed between
     "t = (a, b)\nx = t[0]\na = x * 2.0\ny = t[0]"),
])
def test_a_tuples_picks_at_constant_indices_are_its_entries(text, folded):
    from srctrans.optimise.tuple_picks import fold_tuple_picks
    statements = _statements(text)
    for call in (n for s in statements for n in gast.walk(s) if isinstance(n, gast.Call)):
        if isinstance(call.func, gast.Attribute):                 # np.exp: NumPy's, with a rule
            anno.set_(call, Anno.CALLEE, getattr(np, call.func.attr))
    fold_tuple_picks(statements)
    assert _text(statements) == folded


@pytest.mark.parametrize("text, split", [
    ("out, cache = (e, c)", "out = e\ncache = c"),
    ("_f = (e, c)\n_t = _f\nout, cache = _t", "_f = (e, c)\n_t = _f\nout = e\ncache = c"),
    ("a, b = (b, a)", "a, b = (b, a)"),                                   # a swap: kept
    ("_f = (e, c)\nz = 1\nout, cache = _f", "_f = (e, c)\nz = 1\nout, cache = _f"),  # not next
    ("_f = (e, c)\nout, cache = _f\ng(_f)", "_f = (e, c)\nout, cache = _f\ng(_f)"),  # read again
    ("a, (b, c) = (e, (f, g))", "a, (b, c) = (e, (f, g))"),               # a nested target
])
def test_a_tuple_unpacked_where_it_is_made_is_its_entries_assigned(text, split):
    from srctrans.optimise.tuple_picks import split_tuple_assignments
    assert _text(split_tuple_assignments(_statements(text))) == split


def layer_returning_a_cache(x, gamma):
    def forward(x, gamma):
        out = gamma * np.tanh(x)
        return out, {"x": x, "gamma": gamma}
    out, cache = forward(x, gamma)
    return np.sum(out * out) + np.sum(cache["gamma"])


def test_a_helper_returning_out_and_cache_is_differentiated_without_its_tuple():
    rng = np.random.default_rng(12)
    args = (rng.standard_normal((3, 4)), rng.standard_normal(4))
    source = _fused_source(layer_returning_a_cache, args)
    code = [line.strip() for line in source.splitlines() if not line.strip().startswith("#")]
    assert not any("[0]" in line or "[1]" in line for line in code), source
    gradient = st.grad(layer_returning_a_cache, wrt=(0, 1))
    expected = st.grad(layer_returning_a_cache, wrt=(0, 1), optimize=False)(*args)
    for _ in range(3):
        for a, b in zip(gradient(*args), expected):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    st.check_grads(layer_returning_a_cache, args, order=2)


# --- entries read again rather than saved; entries of arrays uncopied ----------------------

def smoothed(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def smoothed_in_a_copy(alpha, y):
    z = y * 1.0
    level = np.zeros(len(y))
    for t in range(1, len(y)):
        level[t] = alpha * z[t] + (1.0 - alpha) * level[t - 1]
        z[t - 1] = 0.0                        # z changes: its entries are saved, not read again
    return np.sum((y - level) ** 2) + np.sum(z)


def test_an_entry_of_an_array_nothing_writes_is_read_again_not_saved():
    """``y[t]`` in a loop's step: ``y`` is never written (every array written into is one the
    function made), so the reversed loop reads ``y[t]`` again; ``level[t - 1]``, an entry of
    a float array, is a NumPy number, read without ``rt.copied``."""
    y = np.cumsum(np.random.default_rng(13).standard_normal(8))
    source = _fused_source_wrt(smoothed, (0.4, y), 0)
    assert source.count("= [None] * trips") == 1, source      # level[t - 1]'s values only
    assert "rt.copied(level[t - 1])" not in source
    gradient = st.grad(smoothed)
    for _ in range(3):
        np.testing.assert_allclose(gradient(0.4, y), st.grad(smoothed, optimize=False)(0.4, y),
                                   rtol=1e-12)
    st.check_grads(smoothed, (0.4, y), order=2, wrt=(0, 1))


def smoothed_rows(alpha, Y):
    level = np.zeros(Y.shape)
    level[0] = Y[0]
    for t in range(1, Y.shape[0]):
        level[t] = alpha * Y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((Y[1:] - level[:-1]) ** 2)


def test_an_entry_of_a_vectors_cotangent_is_read_uncopied_and_a_row_copied():
    """The fused gradient reads ``dlevel[t]`` and then zeroes it in place: an entry of a
    vector at an int is a NumPy number, read as it is; a row of a matrix is a view, which
    the zeroing would change, so it is copied. (With respect to the data too: the backward
    pass reads ``dlevel`` after the loop, so the zeroing is not dead, optimise/zeroings.py.)"""
    y = np.cumsum(np.random.default_rng(15).standard_normal(8))
    Y = np.cumsum(np.random.default_rng(16).standard_normal((6, 3)), axis=0)
    vector = _fused_source_wrt(smoothed, (0.4, y), (0, 1))
    matrix = _fused_source_wrt(smoothed_rows, (0.4, Y), (0, 1))
    assert "dlevel[t] = 0.0" in vector and "rt.copied(dlevel[t])" not in vector, vector
    assert "rt.copied(dlevel[t])" in matrix, matrix
    for f, data in ((smoothed, y), (smoothed_rows, Y)):
        gradient = st.grad(f, wrt=(0, 1))
        expected = st.grad(f, wrt=(0, 1), optimize=False)(0.4, data)
        for _ in range(3):
            for a, b in zip(gradient(0.4, data), expected):
                np.testing.assert_allclose(a, b, rtol=1e-12)


def test_an_entry_of_an_array_written_after_is_saved():
    y = np.cumsum(np.random.default_rng(14).standard_normal(6))
    source = _fused_source_wrt(smoothed_in_a_copy, (0.4, y), 0)
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    assert "z[t]" not in code.split("for _iteration")[1] and "_items[_iteration]" in code, code
    gradient = st.grad(smoothed_in_a_copy, wrt=(0, 1))
    expected = st.grad(smoothed_in_a_copy, wrt=(0, 1), optimize=False)(0.4, y)
    for _ in range(3):
        for a, b in zip(gradient(0.4, y), expected):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    st.check_grads(smoothed_in_a_copy, (0.4, y), order=2, wrt=(0, 1))


def entry_of_an_array_copy_added_to(s, W):
    v = W * 1.0
    v[0] += np.tanh(W[0]) + 1.0               # an array's entry: its cotangent is no container's
    return np.tanh(v) * 2.0


def test_an_arrays_entry_cotangents_are_not_summed_as_a_containers():
    """The fuzzer's seed 20261129121 (program 2): in the reverse pass of the JVP (second
    order), ``W[0]``'s cotangent was summed as a container's entry, and
    ``rt.container_cotangent`` of an array failed."""
    args = (0.6, np.random.default_rng(15).standard_normal((2, 2)))
    st.check_grads(entry_of_an_array_copy_added_to, args, order=2, wrt=(1,))


def _after_negations_into_updates(text, saves=()):
    body = gast.parse(text).body
    for node in gast.walk(gast.Module(body, [])):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) \
                and node.targets[0].id in saves:               # a pop of the tape
            srctrans.annotations.set_(node, srctrans.annotations.Anno.SAVES, node.targets[0].id)
    return "\n".join(ast.unparse(gast.gast_to_ast(s)) for s in negation.negations_into_updates(body))


def test_a_negated_value_added_into_an_entry_is_subtracted_there():
    code = _after_negations_into_updates(
        "for j in r:\n    d = g * x[j]\n    n = -d\n    t = tape.pop()\n    dx[j] += n\n"
        "    dx[0] += d", saves={"t"})
    assert "n = -d" not in code and "dx[j] -= d" in code


@pytest.mark.parametrize("text, moved", [
    ("n = -d\nu = X.T @ n\ndx[:-1] += u", "u = X.T @ d\ndx[:-1] -= u"),     # a map reduces it
    ("n = -d\nu = n @ A\nv = 1\ndx += u", "u = d @ A\nv = 1\ndx -= u"),
    ("n = -d\nu = n / s\ndx[0] += u", "u = d / s\ndx[0] -= u"),
    ("n = -d\nu = n * y\ndx += X.T @ u", "u = d * y\ndx -= X.T @ u"),     # maps in a chain,
    ("n = -d\nu = y * n\nv = u / s\nw = 2 * v\ndx[0] += w",                # the last one
     "u = y * d\nv = u / s\nw = 2 * v\ndx[0] -= w"),                        # in the update
])
def test_a_negation_moves_through_a_linear_map_into_an_update(text, moved):
    """t_regression's dbeta = X.T @ -d_sub, added into an entry: subtracted, no negation; a
    hinge loss's dw += X.T @ (-dmargins * y) likewise."""
    assert _after_negations_into_updates(text) == moved


@pytest.mark.parametrize("text", [
    "n = -d\nu = X.T @ n\ndx[:-1] += u\ny = u * 2",      # the map's result read again
    "n = -d\nu = s / n\ndx[0] += u",                      # not linear in n
    "n = -d\nu = n @ n\ndx += u",                         # n twice
    "n = -d\nu = X.T @ n\ndx[:-1] *= u",                  # not a sum
    "n = -d\nd[0] = 1.0\nu = X.T @ n\ndx += u",          # the negated array changes between
    "n = -d\nu = n * y\nv = u * u\ndx += v",              # the chain's link not linear
    "n = -d\nu = n * y\ndx += X.T @ u\nz = u + 1",        # a link read again
    "n = -d\nu = n * y\ndx += u @ u",                      # the update reads the link twice
    "n = -d\nu = n * y\nif c:\n    dx += u",               # the update in another block
])
def test_a_negation_that_may_not_move_through_a_map_stays(text):
    assert _after_negations_into_updates(text) == ast.unparse(ast.parse(text))


@pytest.mark.parametrize("text", [
    "n = -d\nd[0] = 1.0\ndx[j] += n",                  # the negated array changes between
    "n = -d\nd = g\ndx[j] += n",                       # rebound between
    "n = -d\nf(d)\ndx[j] += n",                        # a call between
    "n = -d\ndx[j] += n\ny = n * 2.0",                 # read again
    "n = -d\ndx[j] *= n",                              # not a sum
    "n = -d\ndel d\ndx[j] += n",                       # released between
], ids=["written", "rebound", "call", "read_twice", "product", "released"])
def test_a_negation_that_may_not_move_into_an_update_stays(text):
    assert _after_negations_into_updates(text) == ast.unparse(ast.parse(text))


def _after_sinking_in_loops(text, live=()):
    body = gast.parse(text).body
    return "\n".join(ast.unparse(gast.gast_to_ast(s))
                     for s in negation.sink_negations_in_loops(body, set(live)))


def test_a_sigmoids_two_signs_cancel_in_a_loops_body():
    code = _after_sinking_in_loops(
        "for i in r:\n    a = -(dz * s / b)\n    n = a * e\n    d = -n\n    dW += x * d")
    assert "-" not in code, code


@pytest.mark.parametrize("text, live", [
    ("for i in r:\n    a = -(dz * s / b)\n    n = a * e\n    d = -n\n    dW += x * d\ny = n", ()),
    ("for i in r:\n    y = n * 2.0\n    a = -(dz * s)\n    n = a * e\n    d = -n\n    dW += d", ()),
    ("for i in r:\n    a = -(dz * s / b)\n    n = a * e\n    d = -n\n    dW += x * d", ("n",)),
], ids=["read_after_the_loop", "read_by_the_next_step", "live_out"])
def test_a_loops_sign_whose_names_are_read_elsewhere_stays(text, live):
    assert _after_sinking_in_loops(text, live) == ast.unparse(ast.parse(text))


def ridge_validation(log_lam, X, y, Xv, yv):
    """Closed-form ridge weights scored on held-out rows: a penalty times an identity."""
    lam = np.exp(log_lam)
    A = X.T @ X + lam * np.eye(X.shape[1])
    w = np.linalg.solve(A, X.T @ y)
    r = Xv @ w - yv
    return r @ r


def ridge_validation_of_columns(log_lam, X, Y, Xv, Yv):
    """Ridge weights of several targets (a matrix of solutions): the trace is a vdot."""
    lam = np.exp(log_lam)
    A = X.T @ X + lam * np.eye(X.shape[1])
    W = np.linalg.solve(A, X.T @ Y)
    return np.sum((Xv @ W - Yv) ** 2)


def test_the_trace_of_a_solves_matrix_cotangent_for_several_columns_is_a_vdot():
    rng = _rng(13)
    args = (0.3, rng.standard_normal((9, 3)), rng.standard_normal((9, 2)),
            rng.standard_normal((5, 3)), rng.standard_normal((5, 2)))
    source = _fused_source_wrt(ridge_validation_of_columns, args, 0)
    assert "-np.vdot(rt.solve(A.T, dW), W)" in source
    st.check_grads(ridge_validation_of_columns, args, wrt=(0,), order=2)
    g = st.grad(ridge_validation_of_columns)
    first = g(*args)
    for _ in range(3):
        assert g(*args) == pytest.approx(first, rel=1e-12)


def penalty_of_counts(lam, C, v):
    """An int matrix times an identity, summed: a float (its trace would be an int)."""
    E = np.eye(C.shape[0])
    return lam * np.sum(C * E) + np.sum(v * lam)


def test_a_solves_cotangents_have_their_shapes_and_an_identitys_sum_is_a_trace():
    """rt.solve_grads' pair has the matrix's and the right-hand side's shapes (no
    unbroadcast of dA), and the cotangent of lam in A + lam * np.eye(n) is dA's trace."""
    rng = _rng(7)
    args = (-0.5, rng.standard_normal((12, 3)), rng.standard_normal(12),
            rng.standard_normal((6, 3)), rng.standard_normal(6))
    source = _fused_source_wrt(ridge_validation, args, (0, 1))
    assert "unbroadcast" not in source and "dA.trace()" in source and "_eye)" not in source
    st.check_grads(ridge_validation, args, wrt=(0, 1), order=2)
    # read for its trace alone, dA is not made: its trace is -vdot(solve(A.T, dw), w)
    source = _fused_source_wrt(ridge_validation, args, 0)
    assert "dlam = -rt.solve(A.T, dw).dot(w)" in source and "solve_grads" not in source
    st.check_grads(ridge_validation, args, wrt=(0,), order=2)
    C = np.array([[1, 2], [3, 4]])
    source = _fused_source_wrt(penalty_of_counts, (0.5, C, np.ones(2)), 0)
    assert "trace" not in source
    got = st.grad(penalty_of_counts)(0.5, C, np.ones(2))
    assert got == 7.0
    M = np.array([[1.5, 2.0], [3.0, 4.25]])      # floats: the derivative reads the trace
    source = _fused_source_wrt(penalty_of_counts, (0.5, M, np.ones(2)), 0)
    assert "C.trace()" in source
    assert st.grad(penalty_of_counts)(0.5, M, np.ones(2)) == 7.75


@pytest.mark.parametrize("text, rewritten", [
    ("d = (g * x).sum()", "d = g.dot(x)"),                          # vectors
    ("d = np.sum(-g * -x)", "d = g.dot(x)"),
    ("d = 2 * (-g * x[1:4]).sum()", "d = 2 * -g.dot(x[1:4])"),      # a negation outside
    ("d = (G * X).sum()", "d = np.vdot(G, X)"),                     # matrices
    ("d = (g * m).sum()", "d = (g * m).sum()"),                     # m may hold booleans
    ("d = (g * G).sum()", "d = (g * G).sum()"),                     # broadcast: other shapes
    ("d = (g * x).sum(axis=0)", "d = (g * x).sum(axis=0)"),         # along an axis
    ("u = (g * x).sum()", "u = (g * x).sum()"),                     # not a derivative
    ("d[0] = (g * x).sum()", "d[0] = g.dot(x)"),                    # an entry of one
    ("d = (g ** 2).sum()", "d = g.dot(g)"),                         # a name's square
    ("d = np.sum(G ** 2)", "d = np.vdot(G, G)"),
    ("d = (g ** 3).sum()", "d = (g ** 3).sum()"),                   # a cube
    ("d = ((g - x) ** 2).sum()", "d = ((g - x) ** 2).sum()"),       # not a name: read twice
    ("d, u = (g * x).sum(), 1.0", "d, u = ((g * x).sum(), 1.0)"),   # and a value of the program's
])
def test_a_derivatives_sum_of_a_product_is_an_inner_product(text, rewritten):
    from srctrans.optimise.inner_products import inner_products
    known = {"g": (3,), "x": (5,), "m": (3,), "G": (3, 2), "X": (3, 2), "d": (2,)}
    known["x"] = (3,) if "x[1:4]" not in text else (5,)
    statements = inner_products(_statements(text), {"d"}, known, {"m"}, "np")
    assert _text(statements) == rewritten


def exponential_smoothing(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def test_inner_products_in_both_modes_are_the_derivatives_to_second_order():
    """The forward-mode gradient of a number (and the reverse pass of a vector) read the
    derivative's sum of products as an inner product; both to second order."""
    y = np.cumsum(_rng(9).standard_normal(12))
    assert ".dot(y[1:] - level[:-1])" in st.source(exponential_smoothing, args=(0.4, y))
    st.check_grads(exponential_smoothing, (0.4, y), order=2)
    rng = _rng(10)
    args = (-0.5, rng.standard_normal((12, 3)), rng.standard_normal(12),
            rng.standard_normal((6, 3)), rng.standard_normal(6))
    st.check_grads(ridge_validation, args, order=2)


@pytest.mark.parametrize("text, absorbed, live_out", [
    ("d = -T\ne = -d.sum(axis=1)\nf = d + g(e)",
     "e = T.sum(axis=1)\nf = g(e) - T", ()),                        # a sum, an addition
    ("d = -T\nf = a - d\nh = -d", "f = a + T\nh = T", ()),
    ("d = -T\nf = d * a", "d = -T\nf = d * a", ()),                 # a product keeps the sign
    ("d = -T\nf = d + d", "d = -T\nf = d + d", ()),                 # two reads in one
    ("d = -T\nT[0] = 1.0\nf = a + d", "d = -T\nT[0] = 1.0\nf = a + d", ()),   # T written
    ("d = -T\nu[0] = 1.0\nf = a + d", "d = -T\nu[0] = 1.0\nf = a + d", ()),   # (u may be T)
    ("d = -T\nf = a + d\nd2 = T * 2", "f = a - T\nd2 = T * 2", ()),  # T read after the last
    ("d = -T\nf = d + T", "d = -T\nf = d + T", ()),                 # T read with d
    ("d = -T\nf = a + d", "d = -T\nf = a + d", ("d",)),             # d is returned
])
def test_a_negated_name_read_where_the_sign_goes_in_is_not_made(text, absorbed, live_out):
    from srctrans.optimise.negated_names import absorb_negated_names
    statements = absorb_negated_names(_statements(text), set(live_out))
    assert _text(statements) == absorbed


def test_a_cross_entropys_cotangent_is_negated_nowhere():
    """-np.sum(T * (z - lse[:, None])), lse a fold of np.logaddexp: the cotangent -T, read by
    a row sum and by an addition, is not made; the gradient is the generic code's."""
    from corpus import models as corpus_models
    rng = _rng(11)
    z, T = rng.standard_normal((5, 4)), rng.random((5, 4))
    source = _fused_source(corpus_models.softmax_xent_logaddexp, (z, T))
    assert "-T" not in source and " - T" in source
    st.check_grads(corpus_models.softmax_xent_logaddexp, (z, T), order=2)


def test_negated_names_walk_the_body_a_bounded_number_of_times(monkeypatch):
    """A body of n negated names, each read once, is walked O(n) times, not once per name
    for every statement after it (a 1,000-statement chain of subtractions took 18 s)."""
    from srctrans.optimise import negated_names
    walked = [0]
    real = negated_names.walk

    def counted(node):
        walked[0] += 1
        return real(node)
    monkeypatch.setattr(negated_names, "walk", counted)

    def walks(n):
        walked[0] = 0
        text = "\n".join(f"d{i} = -x{i}\ny{i} = a + d{i}" for i in range(n))
        statements = negated_names.absorb_negated_names(_statements(text), set())
        assert len(statements) == n and _text(statements[:1]) == "y0 = a - x0"
        return walked[0]
    assert walks(400) <= 2.2 * walks(200)


def test_a_mixtures_responsibilities_are_negated_nowhere():
    """log_weights - 0.5 * sq / s: the cotangent of ``sq`` is ``-resp / s``, and its sum
    over the rows is the means' cotangent negated again; the two signs cancel, through the
    guard of the quotient and the entry ``[:, :, None]``, and no array is negated."""
    from corpus import models as corpus_models
    rng = _rng(12)
    args = (rng.standard_normal((3, 2)), rng.standard_normal((10, 2)),
            np.log(np.array([0.2, 0.3, 0.5])), 0.8)
    source = st.source(corpus_models.gmm_loglik, args=args).split("def gmm_loglik_grad")[1]
    backward = source.split("rt.softmax_share")[1]
    assert "-" not in "".join(line for line in backward.splitlines()
                              if not line.strip().startswith("#"))
    st.check_grads(corpus_models.gmm_loglik, args, order=2)


def test_a_regressions_coefficients_subtract_the_map_of_the_residuals_cotangent():
    """z = (y - X @ beta) / s: beta's cotangent X.T @ -(dz / s), written into params[:-1],
    is subtracted there (the first write there: its negation written into the part); no
    negated array is made."""
    from corpus import estimators
    rng = _rng(14)
    exog = rng.standard_normal((10, 2))
    model = estimators.TRegression(exog @ np.array([0.5, -1.0]) + rng.standard_t(5, 10), exog)
    params = np.array([0.4, -0.8, 0.1])
    source = st.source(model.loglike, args=(params,)).split("def TRegression_loglike_grad")[1]
    source = source.split("\ndef ")[0]
    assert "np.multiply(dbeta, -1, out=dparams[:-1])" in source and "= -d_sub" not in source
    st.check_grads(model.loglike, (params,), order=2)


def _branching_loop(x, W):
    """Fuzzer seed 20261214501, program 109, reduced: dv9 and dx both started as dv11, and
    the fused gradient added into dx in place, changing dv9, which the loop read after."""
    v9 = x * 1.0
    for _ in range(4):
        if np.sum(v9) > 0.5:
            v9 = v9 * 0.8 + np.cos(x)
        else:
            v9 = np.tanh(v9) * x + v9
    v11 = v9 + x
    return np.sum(np.tanh(v11) * v11) + np.sum(np.tanh(W) * W)


def _branching_loop_transposed(x, W):
    """The same with ``v9.T + x``: dv9 starts as a view, ``dv11.T``."""
    v9 = x * 1.0
    for _ in range(4):
        if np.sum(v9) > 0.5:
            v9 = v9 * 0.8 + np.cos(x)
        else:
            v9 = np.tanh(v9) * x + v9
    v11 = v9.T + x
    return np.sum(np.tanh(v11) * v11) + np.sum(np.tanh(W) * W)


@pytest.mark.parametrize("fn", [_branching_loop, _branching_loop_transposed])
def test_a_cotangent_two_names_start_from_is_not_summed_into_in_place(fn):
    x = np.array([[-0.9, 0.2], [-1.1, 0.3]])
    W = np.array([[0.5, -0.2], [0.1, 0.4]])
    generic = st.grad(fn, optimize=False)(x, W)
    gradient = st.grad(fn)
    for _ in range(4):                               # generic, specialised, short path
        np.testing.assert_allclose(gradient(x, W), generic, rtol=1e-12)
    st.check_grads(fn, (x, W), order=1)

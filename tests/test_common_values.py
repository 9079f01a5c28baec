"""Values computed once in a fused gradient (``optimise.common_values``), and the cotangents
of means, variances and Euclidean norms written out where the shapes are known
(``optimise.specialise``)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import block_lines
from srctrans.optimise import specialise
from srctrans.optimise.common_values import share_common_values


def _statements(text, callees=None):
    """``text`` parsed; each call ``f(...)`` of a name in ``callees`` annotated as calling it."""
    body = gast.parse(text).body
    for node in gast.walk(gast.Module(body, [])):
        if isinstance(node, gast.Call) and callees:
            func = node.func
            name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
            if name in callees:
                anno.set_(node, Anno.CALLEE, callees[name])
    return body


def _text(statements):
    return "\n".join(block_lines(statements, 0))


def _shared(text, shapes=None, returned=(), callees=None):
    return _text(share_common_values(_statements(text, callees), shapes or {}, set(returned),
                                     ["x", "y"]))


@pytest.mark.parametrize("text, shared", [
    ("a = x * y\nb = x * y\nc = a + b", "a = x * y\nc = a + a"),
    ("a = x * y\nb = np.sqrt(x * y + 1.0)\nc = np.sqrt(a + 1.0)\nd = b * c",   # nested, then whole
     "a = x * y\nb = np.sqrt(a + 1.0)\nd = b * b"),
    ("a = x.mean(axis=1, keepdims=True)\nb = x - a\nc = g * (x - x.mean(axis=1, keepdims=True))",
     "a = x.mean(axis=1, keepdims=True)\nb = x - a\nc = g * b"),
    ("a = x[0]\nfor i in range(3):\n    t = x[0] + i", "a = x[0]\nfor i in range(3):\n    t = a + i"),
    ("a = x[:-1]\nb = 1 - x[:-1]\nc = x[1:] * x[:-1]", "a = x[:-1]\nb = 1 - a\nc = x[1:] * a"),
    ("a = x * y\nb = y * x\nc = a + b", "a = x * y\nc = a + a"),    # either way round
    ("a = x + 2.0\nb = 2.0 + x\nc = a * b", "a = x + 2.0\nc = a * a"),
])
def test_a_value_assigned_once_is_read_where_computed_again(text, shared):
    callees = {"sqrt": np.sqrt}
    assert _shared(text, {"x": (4, 5), "y": (4, 5)}, callees=callees) == shared


@pytest.mark.parametrize("text", [
    "a = x * y\nx = x + 1.0\nb = x * y",                     # x assigned again
    "a = x * y\nb = a + 1.0\nb = x * y",                     # the second name assigned again
    "a = x * y\na = a + 1.0\nb = x * y",                     # the first name assigned again
    "a = x[0] * 2.0\nx[0] = 5.0\nb = x[0] * 2.0",            # x changed in place
    "v = x[0]\na = v * 2.0\nx[0] = 5.0\nb = v * 2.0",        # ... through a view of it
    "v = x[0]\na = v * 2.0\nv += 1.0\nb = x[0] * 2.0",       # ... through a view of it, changed
    "a = x * y\nx.fill(0.0)\nb = x * y",                     # ... by a method
    "a = [x]\nb = [x]",                                      # a new list each time
    "a = {'k': x}\nb = {'k': x}",
    "a = np.random.rand(3) * x\nb = np.random.rand(3) * x",  # a new draw each time
    "a = helper(x)\nb = helper(x)",                          # a user's function
    "a = x.copy()\nb = x.copy()",                            # a new array, to be changed
    "a = x[0] * 2.0\nhelper(x)\nb = x[0] * 2.0",             # a user's function may change x
    "a = x[0] * 2.0\nx.update(y)\nb = x[0] * 2.0",           # ... and a method
    "a = x * 2.0\ns = rt.added_at(x, 0, y, x)\nb = x * 2.0",  # a helper adding into x
    "a = x * y\nb = (lambda x: x * y)(y)",                   # a name of the lambda's own
    "a = x * y\nb = [x * y for x in range(3)]",
    "a = x - y\nb = y - x",                                  # not the same either way round
    "a = u + v\nb = v + u",                                  # lists, perhaps: joined in order
])
def test_a_value_that_may_differ_is_computed_again(text):
    callees = {"rand": np.random.rand, "helper": lambda v: v}
    assert _shared(text, {"x": (4, 5), "y": (4, 5)}, callees=callees) == text


def test_a_returned_name_keeps_an_array_of_its_own():
    text = "a = x * y\nb = x * y\nc = np.sqrt(x * y)"
    assert _shared(text, {"x": (3,)}, returned={"a", "b"}, callees={"sqrt": np.sqrt}) == \
        "a = x * y\nb = x * y\nc = np.sqrt(a)"


@pytest.mark.parametrize("call, shapes, written", [
    ("rt.var_grad(g, x, 1, 0, True)", {"g": (4, 1), "x": (4, 5)},
     "g * (x - x.mean(axis=1, keepdims=True)) * 0.4"),
    ("rt.var_grad(g, x, 0, 1, False)", {"g": (5,), "x": (4, 5)},     # leading axis: as reduced
     "g * (x - x.mean(axis=0)) * 0.6666666666666666"),
    ("rt.var_grad(g, x, 1, 0, False)", {"g": (4,), "x": (4, 5)},     # the axis put back
     "g[:, None] * (x - x.mean(axis=1, keepdims=True)) * 0.4"),
    ("rt.var_grad(g, x, None, 0, False)", {"g": (), "x": (4, 5)},
     "g * (x - x.mean(axis=None)) * 0.1"),
    ("rt.var_grad(g, x, 1, 5, True)", {"g": (4, 1), "x": (4, 5)},    # undefined: the helper
     "rt.var_grad(g, x, 1, 5, True)"),
    ("rt.var_grad(g, x, 1, 0, True)", {"g": (4, 1)},                 # x's shape unknown
     "rt.var_grad(g, x, 1, 0, True)"),
])
def test_a_variances_cotangent_is_written_out_for_known_shapes(call, shapes, written):
    assert _text(specialise.specialise(_statements(f"dx = {call}"), shapes)) == f"dx = {written}"


@pytest.mark.parametrize("text, written", [
    ("dx = a + rt.mean_grad(g, x, 1, True)", "dx = a + g / 5"),
    ("dx = rt.unreduce(g, x, 0, False) - a", "dx = g - a"),
    ("dx = rt.add(a, rt.mean_grad(g, x, 1, False))", "dx = a + (g / 5)[:, None]"),
    ("dx = b + rt.mean_grad(g, x, 1, True)", "dx = b + rt.mean_grad(g, x, 1, True)"),  # b: (5,)
    ("dx = rt.unreduce(g, x, 1, True) + rt.mean_grad(g, x, 1, True)",   # one side only: the
     "dx = g + rt.mean_grad(g, x, 1, True)"),                          # sum keeps x's shape
])
def test_a_spread_added_to_an_array_of_its_shape_is_broadcast_by_the_sum(text, written):
    shapes = {"a": (4, 5), "b": (5,), "x": (4, 5), "g": (4, 1) if "True" in text else
              (5,) if ", 0," in text else (4,)}
    assert _text(specialise.specialise(_statements(text), shapes)) == written


@pytest.mark.parametrize("call, shapes, written", [
    ("rt.norm_grad(g, n, x, None, 1, True)", {"g": (4, 1), "n": (4, 1), "x": (4, 5)},
     "g * rt.ratio_or_zero(x, n)"),
    ("rt.norm_grad(g, n, x, 2, 1, False)", {"g": (4,), "n": (4,), "x": (4, 5)},
     "g[:, None] * rt.ratio_or_zero(x, n[:, None])"),
    ("rt.norm_grad(g, n, x, None, None, False)", {"g": (), "n": (), "x": (4, 5)},
     "g * rt.ratio_or_zero(x, n)"),
    ("rt.norm_grad(g, n, x, 2, None, False)", {"g": (), "n": (), "x": (4, 5)},   # spectral
     "rt.norm_grad(g, n, x, 2, None, False)"),
    ("rt.norm_grad(g, n, x, 1, 1, True)", {"g": (4, 1), "n": (4, 1), "x": (4, 5)},
     "rt.norm_grad(g, n, x, 1, 1, True)"),
    ("rt.norm_grad(g, n, x, None, (0, 1), False)", {"g": (), "n": (), "x": (4, 5)},
     "rt.norm_grad(g, n, x, None, (0, 1), False)"),
])
def test_a_euclidean_norms_cotangent_is_written_out_for_known_shapes(call, shapes, written):
    assert _text(specialise.specialise(_statements(f"dx = {call}"), shapes)) == f"dx = {written}"


def row_cosines(A, B):
    a = A / np.linalg.norm(A, axis=1, keepdims=True)
    return np.sum(np.tanh(a * B)) + np.linalg.norm(A) + np.sum(np.linalg.norm(B - A, axis=0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_euclidean_norms_gradients_agree_with_the_generic_code_even_at_a_zero_norm(dtype):
    rng = np.random.default_rng(8)
    A, B = (rng.standard_normal((4, 3)).astype(dtype) for _ in range(2))
    B[:, 1] = A[:, 1]                                   # a column of B - A is 0: its norm too
    grad = st.grad(row_cosines, wrt=(0, 1))
    for _ in range(3):
        fast = grad(A, B)
    source = st.source(row_cosines, args=(A, B), wrt=(0, 1))
    assert "rt.norm_grad" not in source[source.index("def row_cosines_grad"):]
    generic = st.grad(row_cosines, wrt=(0, 1), specialize=False)(A, B)
    for got, expected in zip(fast, generic):
        assert got.dtype == dtype and np.all(np.isfinite(got))
        np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)
    if dtype == np.float64:
        st.check_grads(row_cosines, (A + 0.1, B), order=2, rtol=1e-4, atol=1e-6)


def layer_norm(x, gamma, beta):
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + 1e-3)
    scale = np.sqrt(var + 1e-3)                              # computed again
    return np.sum(np.tanh(gamma * xhat + beta)) + 0.1 * np.sum(scale)


def batch_norm(x, gamma, beta):
    mu = np.mean(x, axis=0)
    var = np.var(x, axis=0, ddof=1)
    return np.sum(np.sin(gamma * (x - mu) / np.sqrt(var + 1e-3) + beta) * (x - mu))


@pytest.mark.parametrize("fn", [layer_norm, batch_norm])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_normalisations_gradients_agree_with_the_generic_code_and_finite_differences(fn, dtype):
    rng = np.random.default_rng(5)
    args = tuple(rng.standard_normal(shape).astype(dtype) for shape in [(4, 5), (5,), (5,)])
    grad = st.grad(fn, wrt=(0, 1, 2))
    for _ in range(3):
        fast = grad(*args)                                   # the specialised code by now
    generic = st.grad(fn, wrt=(0, 1, 2), specialize=False)(*args)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for got, expected in zip(fast, generic):
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=tolerance * 10, atol=tolerance)
    wide = tuple(a.astype(np.float64) for a in args)
    for position, got in enumerate(st.grad(fn, wrt=(0, 1, 2))(*wide)):
        direction = rng.standard_normal(wide[position].shape)
        step = 1e-6
        moved = [list(wide), list(wide)]
        moved[0][position] = wide[position] + step * direction
        moved[1][position] = wide[position] - step * direction
        slope = (fn(*moved[0]) - fn(*moved[1])) / (2 * step)
        assert np.isclose(np.sum(got * direction), slope, rtol=1e-6, atol=1e-8)
    if dtype == np.float64:                     # every pass, in both modes, to second order
        st.check_grads(fn, wide, order=2, rtol=1e-4, atol=1e-6)


def test_the_specialised_normalisation_computes_each_value_once():
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal(5))
    for _ in range(3):
        st.grad(layer_norm, wrt=(0, 1, 2))(*args)
    source = st.source(layer_norm, args=args, wrt=(0, 1, 2))
    fused = "\n".join(line for line in source[source.index("def layer_norm_grad"):].splitlines()
                      if not line.strip().startswith("#"))
    assert fused.count("np.sqrt(") == 1 and fused.count(".mean(") == 1
    assert "rt.var_grad" not in fused and "rt.mean_grad" not in fused

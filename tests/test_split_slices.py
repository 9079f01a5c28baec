"""A split of an array of known shape read as its slices (optimise/split_slices.py), and
the shape of a concatenation of pieces (optimise/expression_shapes.py), which lets a
split's cotangent be specialised."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.expression_shapes import infer_shapes, shape_of
from srctrans.optimise.specialise import specialise
from srctrans.optimise.split_slices import slice_splits

SHAPES = {"z": (4, 20), "y": (7,), "w": (2, 3), "m": (6, 2, 2)}


def _sliced(text):
    body = gast.parse(text).body
    for node in (n for stmt in body for n in gast.walk(stmt)):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
            anno.set_(node, Anno.CALLEE, getattr(np, node.func.attr))
    return "\n".join(unparse(stmt) for stmt in slice_splits(body, SHAPES))


@pytest.mark.parametrize("text, sliced", [
    ("i, f, o, g = np.split(z, 4, axis=1)",
     "i = z[:, :5]\nf = z[:, 5:10]\no = z[:, 10:15]\ng = z[:, 15:]"),
    ("a, b = np.split(z, 2, -1)", "a = z[:, :10]\nb = z[:, 10:]"),
    ("parts = np.array_split(y, 3)", "parts = [y[:3], y[3:5], y[5:]]"),      # uneven
    ("a, b = np.hsplit(w, [1])", "a = w[:, :1]\nb = w[:, 1:]"),
    ("a, b, c = np.hsplit(y, [2, 5])", "a = y[:2]\nb = y[2:5]\nc = y[5:]"),   # 1-D: axis 0
    ("a, b = np.vsplit(m, 2)", "a = m[:3]\nb = m[3:]"),
    ("a, b = np.split(y, [-2, 9])", "a, b = [y[:-2], y[-2:9], y[9:]]"),  # 3 for 2: an error
    ("z, b = np.split(z, 2, axis=1)", "z, b = [z[:, :10], z[:, 10:]]"),     # z assigned
    ("s = np.sum(np.split(y, [2])[0])", "s = np.sum([y[:2], y[2:]][0])"),
])
def test_splits_read_as_slices(text, sliced):
    assert _sliced(text) == sliced


@pytest.mark.parametrize("text", [
    "a, b, c = np.split(y, 3)",                # 7 entries do not divide into 3: NumPy says so
    "a, b = np.split(y, n)",                   # sections not a literal
    "a, b = np.split(z, 2, axis=k)",           # an axis not a literal
    "a, b = np.split(z, 2, axis=2)",           # no such axis
    "a, b = np.split(q, 2)",                   # a shape not known
    "a, b = np.vsplit(y, 7)",                  # vsplit of a vector: NumPy's error
])
def test_splits_left_as_they_are(text):
    assert _sliced(text) == text


def test_a_concatenation_of_pieces_of_known_shapes_has_a_shape():
    body = gast.parse("d = (a, b, c)\ndz = np.concatenate(d, axis=1)\n"
                      "dq = rt.unbroadcast(dz, q)\ndb = rt.unbroadcast(dz, bias)").body
    for node in (n for stmt in body for n in gast.walk(stmt)):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr == "concatenate":
            anno.set_(node, Anno.CALLEE, np.concatenate)
    shapes = {"a": (4, 5), "b": (4, 5), "c": (4, 10), "q": (4, 20), "bias": (20,)}
    assert "\n".join(unparse(s) for s in specialise(body, shapes)).splitlines()[2:] == [
        "dq = dz", "db = dz.sum(axis=0)"]
    call = gast.parse("np.concatenate([a, c], 0)").body[0].value
    anno.set_(call, Anno.CALLEE, np.concatenate)
    assert shape_of(call, {"a": (4, 5), "c": (2, 5)}) == (6, 5)
    assert shape_of(call, {"a": (4, 5), "c": (2, 4)}) is None        # NumPy's error
    body = gast.parse("d = [a, b]\nd[0] = c\ndz = np.concatenate(d, axis=1)").body
    anno.set_(body[2].value, Anno.CALLEE, np.concatenate)
    known = infer_shapes(body, {"a": (4, 5), "b": (4, 5), "c": (4, 7)})
    assert shape_of(body[2].value, known) is None    # a list's entries may be replaced
    body[0].value = gast.Tuple(body[0].value.elts, gast.Load())
    known = infer_shapes(body[:1] + body[2:], {"a": (4, 5), "b": (4, 5)})
    assert shape_of(body[2].value, known) == (4, 10)  # a tuple's may not


def lstm_cell(x, h, c, W, U, b):
    """An LSTM cell whose gates come from np.split."""
    z = x @ W + h @ U + b
    i, f, o, g = np.split(z, 4, axis=1)
    i, f, o = 1 / (1 + np.exp(-i)), 1 / (1 + np.exp(-f)), 1 / (1 + np.exp(-o))
    c2 = f * c + i * np.tanh(g)
    return np.sum((o * np.tanh(c2)) ** 2) + np.sum(c2)


def test_an_lstm_cells_split_gates_are_slices_and_its_derivatives_hold():
    rng = np.random.default_rng(31)
    args = (rng.standard_normal((4, 3)), rng.standard_normal((4, 5)),
            rng.standard_normal((4, 5)), rng.standard_normal((3, 20)),
            rng.standard_normal((5, 20)), rng.standard_normal(20))
    wrt = (0, 3, 4, 5)
    gradient = st.grad(lstm_cell, wrt=wrt)
    for _ in range(3):
        got = gradient(*args)
    for g, want in zip(got, st.grad(lstm_cell, wrt=wrt, optimize=False)(*args)):
        np.testing.assert_allclose(g, want, rtol=1e-12)
    fused = st.source(lstm_cell, args=args, wrt=wrt).split("def lstm_cell_grad")[1]
    fused = "\n".join(line for line in fused.splitlines() if not line.strip().startswith("#"))
    assert "i = z[:, :5]" in fused and "np.split" not in fused
    assert "db = dz.sum(axis=0)" in fused and "unbroadcast" not in fused
    st.check_grads(lstm_cell, args, order=2, wrt=wrt)

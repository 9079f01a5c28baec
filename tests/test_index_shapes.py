"""Subscripts by ints have known shapes in specialised code (analyse.values.index_integers,
optimise.expression_shapes): a loop's counter and the indices computed from it drop an
axis, so a write's cotangent is read as the part it is, with no helper around it."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import int_literal
from srctrans.optimise import expression_shapes
from srctrans.optimise.expression_shapes import INTEGER, shape_of

R = np.random.default_rng(5)


@pytest.mark.parametrize("text, shape", [
    ("x[t]", (3,)), ("x[t - 1]", (3,)), ("x[-t, 0]", ()), ("x[2 * t // 2 % 5]", (3,)),
    ("x[:, t]", (5,)), ("x[1:]", (4, 3)), ("x[:-1, ::2]", (4, 2)), ("x[::-1]", (5, 3)),
    ("x[t, 1:]", (2,)),
    ("x[n]", None),                 # a number of unknown type: a bool adds an axis
    ("x[True]", None), ("x[t:n]", None), ("x[..., t]", None),
    ("x[None]", (1, 5, 3)), ("x[:, None]", (5, 1, 3)), ("x[None, t]", (1, 3)),   # new axes
    ("x[t, t, t]", None),           # more indices than axes
])
def test_the_shape_of_a_subscript(text, shape):
    expression = gast.parse(text).body[0].value
    known = {"x": (5, 3), "t": INTEGER, "n": ()}
    assert shape_of(expression, known) == shape


def test_the_integer_shape_is_the_shape_of_a_number():
    assert INTEGER == () and expression_shapes.shape_of(
        gast.parse("t + 1.5").body[0].value, {"t": INTEGER}) == ()


def smoothed(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def rows_filled(w, X):
    H = np.zeros((len(X), 2, len(w)))
    for t in range(len(X)):
        H[t, 1] = np.tanh(w * X[t])
        H[t, 0] = H[t, 1] * H[t - 1, 0] if t > 0 else w
    return np.sum(H * H)


def indexed_by_an_argument(w, X, k):
    H = np.zeros((len(X), len(w)))
    for t in range(len(X)):
        H[t] = np.sin(w * X[t]) + H[k]
    return np.sum(H ** 2)


def indexed_by_a_flag(w, X):
    flag = len(X) > 2                               # X[flag]: X[True] has a new first axis
    H = np.zeros((len(X), len(w)))
    for t in range(len(X)):
        H[t] = np.sin(w * X[flag][0, t])
    return np.sum(H ** 2)


CASES = [(smoothed, lambda: (0.4, np.cumsum(R.standard_normal(8)))),
         (rows_filled, lambda: (R.standard_normal(3), R.standard_normal((4, 3)))),
         (indexed_by_an_argument, lambda: (R.standard_normal(3), R.standard_normal((4, 3)), 1)),
         (indexed_by_a_flag, lambda: (R.standard_normal(3), R.standard_normal((4, 3))))]


@pytest.mark.parametrize("fn, make", CASES)
def test_indexed_code_is_right_on_every_path(fn, make):
    args = make()
    st.check_grads(fn, args, order=2, wrt=0)
    gradient, generic = st.grad(fn), st.grad(fn)(*args)
    for _ in range(3):                              # generic, specialised, the short path
        np.testing.assert_allclose(gradient(*args), generic, rtol=1e-12, atol=1e-14)


def test_a_written_part_read_by_a_counter_is_the_part_itself():
    args = (0.4, np.cumsum(R.standard_normal(8)))
    st.grad(smoothed)(*args)
    fused = st.source(smoothed, args=args).split("def smoothed_grad")[1]
    loop = fused.split("for _iteration in")[1]
    assert "written_part" not in loop and "unbroadcast" not in loop, fused
    # an entry of a vector at an int is a NumPy number: read as it is, no copy (a matrix's
    # row, a view, is copied: tests/test_restores.py)
    assert "= dlevel[t]\n" in loop and "rt.copied(dlevel[t])" not in loop, fused


@pytest.mark.parametrize("text, known, want", [
    ("np.take_along_axis(a, i, axis=1)", {"a": (20, 4), "i": (20, 1)}, (20, 1)),
    ("np.take_along_axis(a, i, 0)", {"a": (5, 4), "i": (2, 4)}, (2, 4)),
    ("np.take_along_axis(a, i, axis=1)", {"a": (5, 4, 3), "i": (1, 2, 3)}, (5, 2, 3)),
    ("np.take_along_axis(a, i, axis=k)", {"a": (5, 4), "i": (5, 1)}, None),   # axis unknown
    ("np.take_along_axis(a, i, axis=1)", {"a": (5, 4), "i": (5,)}, None),      # NumPy's error
    ("np.take_along_axis(a, i, axis=1)", {"a": (5, 4), "i": (3, 1)}, None),    # likewise
])
def test_the_shape_of_a_pick_along_an_axis(text, known, want):
    call = gast.parse(text).body[0].value
    anno.set_(call, Anno.CALLEE, np.take_along_axis)
    assert shape_of(call, known) == want
    if want is not None:
        axis = int_literal(call.args[2] if len(call.args) == 3 else call.keywords[0].value)
        picked = np.take_along_axis(np.zeros(known["a"]), np.zeros(known["i"], int), axis)
        assert picked.shape == want

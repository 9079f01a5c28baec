"""A cotangent made of a masked pick's entries and put back through the mask is a selection in a
fused gradient (optimise/masked_picks.py)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans import runtime
from srctrans.optimise.masked_picks import select_masked_picks

R = np.random.default_rng(89)
SHAPES = {"z": (6,), "t": (6,), "v": (3,), "m": (6,), "s": ()}


def _rewritten(text, not_float=frozenset()):
    body = gast.parse(text).body
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
                module = runtime if node.func.value.id == "rt" else np
                anno.set_(node, Anno.CALLEE, getattr(module, node.func.attr))
    return unparse(gast.Module(select_masked_picks(body, SHAPES, not_float, "np", "rt"),
                               [])).strip()


@pytest.mark.parametrize("text, written", [
    ("m = z > 0\ng = 2 * z[m]\nd = rt.getitem_grad(g, z, m)",
     "m = z > 0\nd = np.where(m, 2 * z, 0)"),
    ("m = (z > 0) & ~(t < 1)\ng = -(z[m] - t[m]) ** 2 / 3.0 * s\nd = rt.getitem_grad(g, z, m)",
     "m = (z > 0) & ~(t < 1)\nd = np.where(m, -(z - t) ** 2 / 3.0 * s, 0)"),
    ("m = z > t\ng = z[m] + 1\nh = t * 2\nd = rt.getitem_grad(g, z, m)",
     "m = z > t\nh = t * 2\nd = np.where(m, z + 1, 0)"),
    ("m = z > t\nd = rt.getitem_grad(z[m] * 2.0, z, m)",            # written in place
     "m = z > t\nd = np.where(m, z * 2.0, 0)"),
])
def test_a_masked_picks_cotangent_is_selected(text, written):
    assert _rewritten(text) == written


@pytest.mark.parametrize("text", [
    "m = np.isfinite(z)\ng = 2 * z[m]\nd = rt.getitem_grad(g, z, m)",      # a mask of a call
    "m = z > 0\ng = 2 * z[m]\nd = rt.getitem_grad(g, z, m)\ne = g + 1",  # g read again
    "m = z > 0\ng = 2 * t[m]\nd = rt.getitem_grad(g, z, m)",       # z's own entries not read
    "m = z > 0\ng = z[m] * v\nd = rt.getitem_grad(g, z, m)",       # an array of another shape
    "m = z > 0\ng = z[m] / 0\nd = rt.getitem_grad(g, z, m)",       # a quotient by zero
    "m = z > 0\ng = z[m] ** 0.5\nd = rt.getitem_grad(g, z, m)",    # a root: NaN left out
    "m = z > 0\ng = 1.0 / z[m]\nd = rt.getitem_grad(g, z, m)",     # a quotient by an array
    "m = z > 0\ng = np.exp(z[m])\nd = rt.getitem_grad(g, z, m)",   # a call
    "m = z > 0\ng = 2 * z[m]\nd = rt.getitem_grad(g, u, m)",       # a shape not known
    "m = z > 0\nm = z < 1\ng = 2 * z[m]\nd = rt.getitem_grad(g, z, m)",   # m assigned twice
    "m = z > 0\ng = 2 * z[m]\nz = t + 1\nd = rt.getitem_grad(g, z, m)",    # z changed after g
    "m = z > 0\ng = 2 * z[m]\nz[0] = 1.0\nd = rt.getitem_grad(g, z, m)",  # or written into
    "m = z > 0\ng = 2 * z[m]\nm[0] = False\nd = rt.getitem_grad(g, z, m)",  # the mask too
])
def test_other_cotangents_of_picks_are_left_as_they_are(text):
    assert _rewritten(text) == unparse(gast.Module(gast.parse(text).body, [])).strip()


def test_a_pick_of_a_name_that_may_hold_ints_is_left():
    text = "m = z > 0\ng = 2 * z[m]\nd = rt.getitem_grad(g, z, m)"
    assert "getitem_grad" in _rewritten(text, not_float={"z"})


def positive_squares(x, w):
    z = x * w
    return np.sum(z[z > 0] ** 2)


def clipped_difference(a, b):
    r = a - b
    return np.sum(r[(r > 0) & (r < 1.0)] ** 2) * 0.5


@pytest.mark.parametrize("f, args", [
    (positive_squares, (R.standard_normal(12), R.standard_normal(12))),
    (positive_squares, (R.standard_normal((3, 4)).astype(np.float32),
                        R.standard_normal((3, 4)).astype(np.float32))),
    (clipped_difference, (R.standard_normal(10), R.standard_normal(10))),
])
def test_the_gradient_is_the_selection_bit_for_bit(f, args):
    fused = st.source(f, args=args).split(f"def {f.__name__}_grad(")[1]
    assert "np.where(" in fused and "getitem_grad" not in fused
    gradient = st.grad(f, wrt=(0, 1))
    for _ in range(3):                          # generic, then specialised and fused
        got = gradient(*args)
    want = st.grad(f, wrt=(0, 1), optimize=False)(*args)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_a_mask_that_keeps_nothing_gives_zeros():
    x, w = -np.abs(R.standard_normal(5)), np.ones(5)
    gradient = st.grad(positive_squares)
    for _ in range(3):
        got = gradient(x, w)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.zeros(5))


@pytest.mark.parametrize("f, args", [
    (positive_squares, (R.standard_normal(12), R.standard_normal(12))),
    (clipped_difference, (R.standard_normal(10), R.standard_normal(10))),
])
def test_derivatives_match_finite_differences_in_both_modes_to_second_order(f, args):
    st.check_grads(f, args, order=2)

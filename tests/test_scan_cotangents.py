"""A matrix trace's and a tile's cotangents written for known shapes in specialised code
(optimise/scan_cotangents.py)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt
from srctrans.emit.printer import unparse
from srctrans.optimise.specialise import specialise

R = np.random.default_rng(59)
SHAPES = {"g": (), "M": (3, 4), "S": (2, 3, 3), "d": (6, 4), "a": (4,), "e": (6, 8), "b": (3, 4),
          "h": (6, 2), "u": (3, 1)}


@pytest.mark.parametrize("text, written", [
    ("c = rt.trace_grad(g, M, 0, 0, 1)", "c = g * np.eye(3, 4)"),
    ("c = rt.trace_grad(g, M, 0, 1, 0)", "c = g * np.eye(3, 4)"),
    ("c = rt.trace_grad(g, M, 1, 0, 1)", "c = rt.trace_grad(g, M, 1, 0, 1)"),   # off the diagonal
    ("c = rt.trace_grad(g, S, 0, 1, 2)", "c = rt.trace_grad(g, S, 0, 1, 2)"),   # a stack
    ("c = rt.trace_grad(d, M, 0, 0, 1)", "c = rt.trace_grad(d, M, 0, 0, 1)"),   # not a number
    ("c = rt.tile_grad(d, b, (2, 1))", "c = d.reshape((2, 3, 4)).sum(axis=0)"),
    ("c = rt.tile_grad(e, b, (2, 2))", "c = e.reshape((2, 3, 2, 4)).sum(axis=(0, 2))"),
    ("c = rt.tile_grad(d, a, (6, 1))", "c = d.sum(axis=0)"),                   # a row copied
    ("c = rt.tile_grad(h, u, (2, 2))", "c = h.reshape((2, 3, 2)).sum(axis=(0, 2)).reshape((3, 1))"),
    ("c = rt.tile_grad(b, b, (1, 1))", "c = b"),                                 # no copies
    ("c = rt.tile_grad(d, b, k)", "c = rt.tile_grad(d, b, k)"),                  # reps not known
    ("c = rt.tile_grad(e, b, (2, 1))", "c = rt.tile_grad(e, b, (2, 1))"),       # shapes disagree
])
def test_a_trace_and_a_tile_written_for_their_shapes(text, written):
    assert unparse(specialise(gast.parse(text).body, SHAPES)[0]) == written


def trace_of_inverse(A, B):
    return np.trace(np.linalg.inv(A) @ B)


def tiled_rows(a, b):
    return np.sum(np.sin(np.tile(a, (3, 2)) * b))


def test_a_tile_written_for_its_shapes_gives_the_helper_s_values():
    for shape in [(4,), (1, 3), (3, 1), (2, 1, 3)]:
        for reps in [2, (3, 1), (1, 1), (2, 1, 2), (1, 2, 1, 3)]:
            a = R.standard_normal(shape)
            g = R.standard_normal(np.tile(a, reps).shape)
            text = f"c = rt.tile_grad(g, a, {reps!r})"
            code = unparse(specialise(gast.parse(text).body, {"g": g.shape, "a": a.shape})[0])
            scope = {"g": g, "a": a, "np": np, "rt": rt}
            exec(code, scope)
            want = rt.tile_grad(g, a, reps)
            assert scope["c"].shape == want.shape and np.array_equal(scope["c"], want), code


@pytest.mark.parametrize("f, args", [
    (trace_of_inverse, (R.standard_normal((4, 4)) + 4 * np.eye(4), R.standard_normal((4, 4)))),
    (tiled_rows, (R.standard_normal(4), R.standard_normal((3, 8)))),
    (tiled_rows, (R.standard_normal((2, 4)), R.standard_normal((6, 8)))),
])
def test_traces_and_tiles_specialised_hold_to_second_order(f, args):
    gradient = st.grad(f, wrt=(0, 1))
    for _ in range(3):
        got = gradient(*args)
    for g, w in zip(got, st.grad(f, wrt=(0, 1), optimize=False)(*args)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
    fused = st.source(f, args=args, wrt=(0, 1)).split(f"def {f.__name__}_grad")[1]
    assert "trace_grad" not in fused and "tile_grad" not in fused
    st.check_grads(f, args, order=2)

"""An array's cotangent summed from its picks alone is added pick by pick into one array
(``optimise/picked_sums.py``, ``rt.added_at``)."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt
from srctrans.emit.printer import block_lines
from srctrans.optimise.picked_sums import add_picks_in_place, add_picks_into_made

SHAPES = {"X": (5, 3), "Y": (5, 3), "Z": (4, 3), "e": (3,), "f": (3,), "k": (), "j": ()}


def _rewritten(text, shapes=SHAPES):
    body = gast.parse(text).body
    return "\n".join(block_lines(add_picks_in_place(body, "rt", shapes), 0))


def test_a_sum_of_picks_from_none_adds_each_pick_in_place():
    text = ("s = None\nfor k in ks:\n    d = rt.getitem_grad(e, X, k)\n    s = rt.add(s, d)\n"
            "s = rt.add(s, rt.getitem_grad(f, Y, j + 1))\nout = rt.container_cotangent({'w': s}, p)")
    assert _rewritten(text) == (
        "s = None\nfor k in ks:\n    s = rt.added_at(s, k, e, X)\ns = rt.added_at(s, j + 1, f, Y)\n"
        "out = rt.container_cotangent({'w': s}, p)")


@pytest.mark.parametrize("text", [
    # read before the last sum: it would see the array change
    "s = None\nfor k in ks:\n    s = rt.add(s, rt.getitem_grad(e, X, k))\n    t = s\nu = t",
    "s = None\ns = rt.add(s, rt.getitem_grad(e, X, k))\nt = s\ns = rt.add(s, rt.getitem_grad(f, Y, j))",
    # arrays of different shapes, an index that may pick twice, an array of no known shape
    "s = None\ns = rt.add(s, rt.getitem_grad(e, X, k))\ns = rt.add(s, rt.getitem_grad(f, Z, j))",
    "s = None\ns = rt.add(s, rt.getitem_grad(e, X, idx))",
    "s = None\ns = rt.add(s, rt.getitem_grad(e, W, k))",
    # another start, another term
    "s = rt.zeros_of(X)\ns = rt.add(s, rt.getitem_grad(e, X, k))",
    "s = None\ns = rt.add(s, rt.getitem_grad(e, X, k))\ns = rt.add(s, e)",
    # the picked term read twice, or its operand assigned before the sum
    "s = None\nd = rt.getitem_grad(e, X, k)\ns = rt.add(s, d)\nu = d",
    "s = None\nd = rt.getitem_grad(e, X, k)\nu = s\ns = rt.add(s, d)",
])
def test_a_sum_that_is_read_meanwhile_or_not_of_picks_alone_is_left_as_it_is(text):
    assert _rewritten(text) == text


def test_the_sum_is_made_where_its_pick_was_made():
    text = "s = None\nd = rt.getitem_grad(e, X, k)\nk = k + 1\ns = rt.add(s, d)"
    assert _rewritten(text) == "s = None\ns = rt.added_at(s, k, e, X)\nk = k + 1"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_added_at_makes_the_zeros_once_then_adds_in_place(dtype):
    x = np.ones((4, 2), dtype)
    first = rt.added_at(None, 1, np.array([1.0, 2.0], dtype), x)
    assert first.dtype == dtype and first.shape == (4, 2) and not np.shares_memory(first, x)
    again = rt.added_at(first, 1, np.array([0.5, 0.5], dtype), x)
    assert again is first
    np.testing.assert_array_equal(again, [[0, 0], [1.5, 2.5], [0, 0], [0, 0]])
    np.testing.assert_array_equal(rt.added_at(None, np.s_[1:3, 0], 1.0, x)[:, 0], [0, 1, 1, 0])


def skipgram(emb, center, context, negatives):
    v = emb["in"][center]
    loss = -np.log(1.0 / (1.0 + np.exp(-(emb["out"][context] @ v))))
    for k in negatives:
        loss = loss - np.log(1.0 / (1.0 + np.exp(emb["out"][k] @ v)))
    return loss


@pytest.mark.parametrize("negatives", [[1, 3, 1, 4], [2], []])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_picks_summed_in_place_give_the_generic_codes_gradient(negatives, dtype):
    rng = np.random.default_rng(4)
    emb = {"in": rng.standard_normal((5, 3)).astype(dtype),
           "out": rng.standard_normal((6, 3)).astype(dtype)}
    grad = st.grad(skipgram)
    for _ in range(3):
        fast = grad(emb, 2, 1, negatives)
    source = st.source(skipgram, args=(emb, 2, 1, negatives))
    fused = source[source.index("def skipgram_grad"):]
    if negatives:             # (a loop that never ran measured no shape of its picks)
        assert "rt.added_at(" in fused and "rt.getitem_grad(" not in fused
    generic = st.grad(skipgram, specialize=False)(emb, 2, 1, negatives)
    for key in emb:
        assert fast[key].dtype == dtype
        np.testing.assert_allclose(fast[key], generic[key], rtol=1e-5 if dtype == np.float32
                                   else 1e-13)
    again = grad(emb, 2, 1, negatives)                # a new array each call
    assert again["out"] is not fast["out"]
    if dtype == np.float64 and negatives:
        st.check_grads(skipgram, (emb, 2, 1, negatives), order=2, wrt=0, rtol=1e-4, atol=1e-6)


def _into_made(text, shapes=SHAPES):
    body = gast.parse(text).body
    return "\n".join(block_lines(add_picks_into_made(body, "rt", shapes), 0))


def test_picks_of_one_array_are_added_into_the_cotangent_the_first_pick_made():
    text = ("for t in r:\n    s = rt.getitem_grad(e, X, np.s_[:, 3:])\n    u = e * 2.0\n"
            "    s = s + rt.getitem_grad(f, X, np.s_[:, :3])\n    s = s + rt.getitem_grad(u, X, k)\n"
            "    v = s.sum(axis=0)")
    assert _into_made(text) == (
        "for t in r:\n    s = rt.getitem_grad(e, X, np.s_[:, 3:])\n    u = e * 2.0\n"
        "    s[:, :3] += f\n    s[k] += u\n"
        "    v = s.sum(axis=0)")


@pytest.mark.parametrize("text", [
    "s = rt.getitem_grad(e, X, k)\nt = s\ns = s + rt.getitem_grad(f, X, j)",      # an alias
    "s = rt.getitem_grad(e, X, k)\ns = s + rt.getitem_grad(f, Y, j)",            # another array
    "s = rt.getitem_grad(e, X, k)\ns = s + rt.getitem_grad(f, X, idx)",          # may pick twice
    "s = rt.getitem_grad(e, X, k)\ns = s + rt.getitem_grad(s * f, X, j)",        # reads the sum
    "s = rt.zeros_of(X)\ns = s + rt.getitem_grad(f, X, j)",                      # another start
    "s = rt.getitem_grad(e, X, k)\nif c:\n    s = s + rt.getitem_grad(f, X, j)",  # another block
], ids=["alias", "another_array", "index_array", "reads_itself", "zeros", "branch"])
def test_picks_that_may_not_be_added_into_the_first_are_left(text):
    assert _into_made(text) == text


def gates(x, W, h0):
    """An LSTM-like step: four slices of one pre-activation, each through its own gate."""
    h = h0
    H = h0.shape[1]
    for t in range(x.shape[1]):
        a = x[:, t, :] @ W + h
        i = 1.0 / (1.0 + np.exp(-a[:, :H // 4]))
        f = np.tanh(a[:, H // 4:H // 2])
        g = np.sin(a[:, H // 2:3 * H // 4])
        o = a[:, 3 * H // 4:] ** 2
        h = np.concatenate([i * f, g, o, f], axis=1)
    return np.sum(h * h)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_gates_added_into_one_cotangent_give_the_generic_codes_gradient(dtype):
    rng = np.random.default_rng(8)
    args = (rng.standard_normal((2, 3, 4)).astype(dtype), rng.standard_normal((4, 8)).astype(dtype),
            rng.standard_normal((2, 8)).astype(dtype) * 0.5)
    gradient = st.grad(gates, wrt=(0, 1, 2))
    generic = st.grad(gates, wrt=(0, 1, 2), specialize=False)(*args)
    for _ in range(3):
        for got, want in zip(gradient(*args), generic):
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    fused = st.source(gates, args=args, wrt=(0, 1, 2)).split("def gates_grad(")[1]
    assert "rt.getitem_grad(" in fused and "] += " in fused and " + rt.getitem_grad(" not in fused
    if dtype == np.float64:
        st.check_grads(gates, args, order=2, wrt=(0, 1, 2))

"""An einsum's cotangents and tangent written as einsums in specialised code
(optimise/einsum_cotangents.py, analyse/einsum_labels.py), and the shapes einsums give."""

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans import annotations as anno
from srctrans.analyse.einsum_labels import cotangent_subscripts, einsum_labels
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.expression_shapes import shape_of
from srctrans.optimise.specialise import specialise, specialise_tangents
from srctrans.optimise.tuple_picks import fold_tuple_picks

R = np.random.default_rng(43)


@pytest.mark.parametrize("subscripts, shapes, k, spec", [
    ("ij,j->i", [(4, 3), (3,)], 0, "i,j->ij"),
    ("ij,j->i", [(4, 3), (3,)], 1, "i,ij->j"),
    ("i,i", [(3,), (3,)], 0, ",i->i"),                       # implicit output: none
    ("ij,jk", [(2, 3), (3, 4)], 1, "ik,ij->jk"),              # implicit: 'ik'
    ("...j,jk->...k", [(5, 2, 3), (3, 4)], 0, "abk,jk->abj"),  # '...' spelled out
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], 1, "bik,bij->bjk"),
])
def test_an_operands_cotangent_is_one_einsum(subscripts, shapes, k, spec):
    labels = einsum_labels(subscripts, shapes)
    assert cotangent_subscripts(labels, k) == spec
    operands = [R.standard_normal(s) for s in shapes]
    g = R.standard_normal(labels.shape)
    others = [op for j, op in enumerate(operands) if j != k]
    want = st.runtime.einsum_grads(g, subscripts, operands)[k]
    np.testing.assert_array_equal(np.einsum(spec, g, *others), want)   # the helper's, exactly


@pytest.mark.parametrize("subscripts, shapes, k", [
    ("ii->i", [(3, 3)], 0),                    # a diagonal
    ("ij->i", [(3, 4)], 0),                    # j summed away: a broadcast cotangent
    ("ij,j->", [(3, 4), (4,)], 0),             # i likewise
])
def test_cotangents_that_are_not_one_einsum(subscripts, shapes, k):
    assert cotangent_subscripts(einsum_labels(subscripts, shapes), k) is None


@pytest.mark.parametrize("subscripts, shapes", [
    ("i,i", [(3,), (1,)]),                     # a length-1 axis broadcast
    ("ij,j->i", [(4, 3), (2,)]),               # lengths that do not fit
    ("ij,j->i", [(4, 3)]),                     # too few operands
    ("ij->k", [(4, 3)]),                       # an output label no operand has
    ("ij,j->i", [(4, None), (3,)]),            # a length not known
])
def test_labels_refused(subscripts, shapes):
    assert einsum_labels(subscripts, shapes) is None


def _annotated(text):
    body = gast.parse(text).body
    for node in (n for stmt in body for n in gast.walk(stmt)):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.value.id == "np":
            anno.set_(node, Anno.CALLEE, getattr(np, node.func.attr))
    return body


def test_specialised_cotangents_are_einsums_and_picks_fold():
    body = _annotated("_g = rt.einsum_grads(d, 'ij,j->i', (X, b))\ndX = _g[0]\ndb = _g[1]\n"
                      "dw = rt.einsum_grads(1.0, 'i,i->', (w, b))[0]\n"
                      "dM = rt.einsum_grads(e, 'ii->i', (M,))[0]\n"
                      "dN = rt.einsum_grads(d, 'ij,j->i', (X, c))[1]")
    shapes = {"d": (4,), "X": (4, 3), "b": (3,), "w": (3,), "e": (3,), "M": (3, 3), "c": (1,)}
    statements = specialise(body, shapes)
    fold_tuple_picks(statements)                # (the tuple, unread now, is dead code)
    assert [unparse(s) for s in statements[1:]] == [
        "dX = d[:, None] * b", "db = d @ X",                  # products written as such
        "dw = 1.0 * b",
        "dM = rt.einsum_grads(e, 'ii->i', (M,))[0]",          # a diagonal: the helper
        "dN = rt.einsum_grads(d, 'ij,j->i', (X, c))[1]"]      # c broadcast: the helper
    assert shape_of(statements[1].value, shapes) == (4, 3)


@pytest.mark.parametrize("spec, written", [
    ("i,ij->j", "a @ b"), ("ij,j->i", "a @ b"), ("i,i->", "a @ b"), ("ij,jk->ik", "a @ b"),
    ("ik,ij->jk", "b.T @ a"), ("ij,kj->ik", "a @ b.T"), ("ji,jk->ik", "a.T @ b"),
    ("i,j->ij", "a[:, None] * b"), (",i->i", "a * b"), ("ij,->ij", "a * b"),
    ("ij,jk->ki", "b.T @ a.T"), ("ii,i->i", None), ("i,j->ji", None), ("ij,jk->ijk", None),
    ("bij,bjk->bik", None), ("ij,ij->", None), (",ij->ji", None),
])
def test_two_operand_einsums_that_are_products_are_written_so(spec, written):
    from srctrans.optimise.einsum_cotangents import product
    names = [gast.Name(n, gast.Load(), None, None) for n in "ab"]
    node = product(spec, names)
    assert (None if node is None else unparse(node)) == written
    if written is not None:
        sizes = {"i": 3, "j": 4, "k": 5}
        terms = spec.split("->")[0].split(",")
        a, b = (R.standard_normal([sizes[label] for label in t]) for t in terms)
        np.testing.assert_allclose(eval(written), np.einsum(spec, a, b), rtol=1e-12)


def test_a_picked_expression_moves_only_to_one_plain_pick():
    for text in ("_g = (np.einsum('i,j->ij', d, b), d)\nx = _g[0]\ny = _g[0]",   # twice
                 "_g = (np.einsum('i,j->ij', d, b), d)\nfor i in r:\n    x = _g[0]",  # a loop
                 "_g = (np.einsum('i,j->ij', d, b), d)\nb = b * 2.0\nx = _g[0]"):  # b changes
        statements = _annotated(text)
        fold_tuple_picks(statements)
        assert unparse(statements[0]).startswith("_g = (np.einsum"), text


def test_specialised_tangent_is_a_sum_of_einsums_without_zero_terms():
    body = _annotated("t = rt.einsum_jvp((rt.zeros_of(X), db), y, 'ij,j->i', (X, b))\n"
                      "u = rt.einsum_jvp((dX, db), y, 'ij,j->i', (X, b))\n"
                      "v = rt.einsum_jvp((None, rt.zeros_of(b)), y, 'ij,j->i', (X, b))")
    statements = specialise_tangents(body, {"X": (4, 3), "b": (3,), "y": (4,)})
    assert [unparse(s) for s in statements] == [
        "t = X @ db",
        "u = dX @ b + X @ db",
        "v = rt.einsum_jvp((None, rt.zeros_of(b)), y, 'ij,j->i', (X, b))"]   # all zero


def test_a_tangent_with_a_broadcast_label_stays_an_einsum():
    """``'ij,j->i'`` of a vector of length 1 broadcasts it along ``j``: ``@`` would not."""
    body = _annotated("u = rt.einsum_jvp((dX, db), y, 'ij,j->i', (X, b))\n"
                      "w = rt.einsum_jvp((dX, db), y, 'ij,j->i', (X, c))")
    statements = specialise_tangents(body, {"X": (4, 3), "b": (1,), "y": (4,)})
    assert [unparse(s) for s in statements] == [
        "u = np.einsum('ij,j->i', dX, b) + np.einsum('ij,j->i', X, db)",
        "w = np.einsum('ij,j->i', dX, c) + np.einsum('ij,j->i', X, db)"]       # c: not known


def broadcast_einsum(W, v):
    return np.sum(np.tanh(np.einsum("ij,j->i", W, np.tanh(v))) ** 2)


def test_an_einsum_broadcasting_a_label_holds_in_both_modes():
    args = (R.standard_normal((3, 3)), R.standard_normal(1))
    st.check_grads(broadcast_einsum, args, order=2)
    for _ in range(3):
        _, tangent = st.jvp(broadcast_einsum, args, (R.standard_normal((3, 3)), np.ones(1)))
    assert np.isfinite(tangent)


def weighted_least_squares(beta, X, y, weights):
    pred = np.einsum("ij,j->i", X, beta)
    return np.einsum("i,i->", weights, (y - pred) ** 2)


def gram_energy(X, A):
    G = np.einsum("ij,ik->jk", X, X)
    batch = np.einsum("...j,jk->...k", A, G)
    return np.einsum("abk,abk", batch, batch) + np.einsum("ii", G)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_einsum_gradients_specialised_hold_to_second_order(dtype):
    args = (R.standard_normal(3).astype(dtype), R.standard_normal((6, 3)).astype(dtype),
            R.standard_normal(6).astype(dtype), R.random(6).astype(dtype))
    gradient = st.grad(weighted_least_squares, wrt=(0, 1))
    for _ in range(3):
        got = gradient(*args)
    want = st.grad(weighted_least_squares, wrt=(0, 1), optimize=False)(*args)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=1e-5 if dtype == np.float32 else 1e-12)
    fused = st.source(weighted_least_squares, args=args, wrt=(0, 1))
    fused = fused.split("def weighted_least_squares_grad")[1]
    assert "einsum_grads" not in fused and "dpred @ X" in fused
    if dtype == np.float64:
        st.check_grads(weighted_least_squares, args, order=2, wrt=(0, 1))


def test_einsums_with_an_ellipsis_a_diagonal_and_broadcasting_hold():
    args = (R.standard_normal((5, 3)), R.standard_normal((2, 4, 3)))
    gradient = st.grad(gram_energy, wrt=(0, 1))
    for _ in range(3):
        got = gradient(*args)
    for g, w in zip(got, st.grad(gram_energy, wrt=(0, 1), optimize=False)(*args)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    st.check_grads(gram_energy, args, order=2)
    broadcast = (R.standard_normal((5, 3)), R.standard_normal((1, 4, 3)))
    st.check_grads(gram_energy, broadcast, order=2)


def test_a_specialised_einsum_jvp_is_the_helpers():
    args = (R.standard_normal(3), R.standard_normal((6, 3)), R.standard_normal(6), R.random(6))
    tangents = (R.standard_normal(3), R.standard_normal((6, 3)), None, None)
    outs = [st.jvp(weighted_least_squares, args, tangents) for _ in range(3)]
    want = st.jvp(weighted_least_squares, args, tangents, optimize=False)
    np.testing.assert_allclose(outs[-1][1], want[1], rtol=1e-12)
    assert "einsum_jvp" not in st.source(weighted_least_squares, mode="forward", args=args)

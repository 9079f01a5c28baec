"""A fresh cotangent's parts written once each (optimise/placed_writes.py): which indices
pick parts apart (analyse/index_regions.py), the rewrite, and the gradients it gives."""

import re

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.analyse.index_regions import Regions, cover, disjoint
from srctrans.optimise.placed_writes import assign_placed_parts
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse

SIZES = "N, D = a.shape\nH = D // 4\nn = len(xs)\n"      # sizes, never negative


def _regions(indices, shape=(3, 8), sizes=SIZES, parameters=("a", "xs", "k")):
    body = gast.parse(sizes).body
    regions = Regions(body, {"a": shape}, parameters)
    return [regions.region(gast.parse(f"a[{i}]").body[0].value.slice, shape) for i in indices]


@pytest.mark.parametrize("first, second, apart", [
    (":, :H", ":, H:2 * H", True),              # an LSTM's gates
    (":, H:2 * H", ":, 3 * H:", True),
    (":, :H", ":, 3 * H:", True),               # H at least 0: H <= 3 * H
    (":, :H + 1", ":, H:2 * H", False),         # one column in common
    (":, 2 * H:3 * H", ":, H:3 * H", False),
    ("0", "1", True),                           # a parameter vector's entries
    ("-1", ":-1", True),                        # counted from the end of the axis (3)
    ("-1", "2", False),
    ("1:", ":-1", False),
    ("0, 1:", "0, :1", True),                   # apart along one axis
    ("0, 1:", "1:, :", True),
    (":, 0", ":, :1", False),
    (":, -1", ":, :-1", True),
])
def test_regions_apart(first, second, apart):
    a, b = _regions([first, second])
    assert a is not None and b is not None
    assert disjoint(a, b) is apart and disjoint(b, a) is apart


@pytest.mark.parametrize("index", [
    ":, :k",                  # a parameter: could be negative (a[:, :-2] and a[:, -2:-4] meet)
    ":, :H - 1",              # H - 1 could be -1
    ":, D - 1",               # D - 1 too (D 0)
    ":, ::2",                 # a step
    "..., 0", "None, 0",      # an ellipsis, a new axis
    ":, :, 0",                # more indices than axes
    "xs",                     # an index read from a value
    ":, m",                   # a name assigned twice
])
def test_indices_that_give_no_region(index):
    sizes = SIZES + "m = 1\nm = 2\n"
    assert _regions([index], sizes=sizes)[0] is None


def test_a_parameter_assigned_in_the_body_counts_as_assigned_twice():
    """``a`` held the argument before ``D = a.shape[1]`` ... here ``k`` held another value."""
    assert _regions([":, :k"], sizes=SIZES + "k = a.shape[0]\n")[0] is None
    assert _regions([":, :k"], sizes=SIZES + "k = a.shape[0]\n", parameters=("a", "xs"))[0] \
        is not None


@pytest.mark.parametrize("indices, covered", [
    ([":, :H", ":, H:2 * H", ":, 2 * H:3 * H", ":, 3 * H:"], True),
    ([":, :H", ":, H:2 * H", ":, 3 * H:"], False),            # a gate missing
    ([":, :H", ":, H:2 * H", ":, 2 * H:4 * H"], False),       # 4 * H need not be D
    ([":, :-1", ":, -1"], True),
    (["0", "1", "2"], True),                                  # every row
    (["0", "2"], False),
    (["0, :", "1:, :"], True),
    (["0, :4", "1:, :"], False),
    ([":"], True),
])
def test_regions_that_cover_the_array(indices, covered):
    regions = _regions(indices)
    assert None not in regions
    assert cover(regions, (3, 8)) is covered


def _rewritten(text, known):
    body = gast.parse(text).body
    return "\n".join(unparse(stmt) for stmt in assign_placed_parts(body, known, (), "np", "rt"))


def test_gates_written_apart_are_assigned_into_an_empty_array():
    text = ("N, D = a.shape\nH = D // 4\n"
            "da = rt.getitem_grad(dg, a, np.s_[:, 3 * H:])\n"
            "u = 2.0 * x\n"
            "da[:, 2 * H:3 * H] += do\nda[:, H:2 * H] -= df\nda[:, :H] += di\n"
            "out = da @ W")
    assert _rewritten(text, {"a": (2, 8)}).splitlines()[2:] == [
        "da = np.empty(a.shape, np.result_type(a, dg))",
        "da[:, 3 * H:] = dg",
        "u = 2.0 * x",
        "da[:, 2 * H:3 * H] = do",
        "np.multiply(df, -1, out=da[:, H:2 * H])",
        "da[:, :H] = di",
        "out = da @ W"]


def test_parts_that_do_not_cover_keep_the_zeros_and_a_read_stops_the_assignments():
    text = ("dp = rt.getitem_grad(g0, p, 0)\ndp[1] += g1\ns = dp.sum()\ndp[2] += g2\n"
            "dp[3] += g3")
    assert _rewritten(text, {"p": (4,)}).splitlines() == [
        "dp = np.zeros(p.shape, np.result_type(p, g0))", "dp[0] = g0", "dp[1] = g1",
        "s = dp.sum()", "dp[2] += g2", "dp[3] += g3"]


@pytest.mark.parametrize("text", [
    "dp = rt.getitem_grad(g0, p, 0)\ndp[0] += g1",                 # the same entry
    "dp = rt.getitem_grad(g0, p, 0)\ndp[1] += g1 * dp[0]",         # the term reads dp
    "dp = rt.getitem_grad(g0, p, 0)\nq = dp\ndp[1] += g1",         # an alias
    "dp = rt.getitem_grad(g0, p, i)\ndp[1] += g1",                 # an index of a value
])
def test_what_stays_added(text):
    lines = _rewritten(text, {"p": (4,)}).splitlines()
    assert lines[-1].startswith("dp[") and "+=" in lines[-1]


def test_a_cotangent_of_zeros_gets_its_parts_assigned_and_keeps_its_zeros():
    """... also after a part added into one written before (which reads only that part);
    an entry subtracted is assigned its negation."""
    text = "dx = rt.zeros_of(x)\ndx[0] += a\ndx[1:3] += b\ndx[2] += c\ndx[3] -= e\ny = dx"
    assert _rewritten(text, {"x": (5,)}).splitlines() == [
        "dx = rt.zeros_of(x)", "dx[0] = a", "dx[1:3] = b", "dx[2] += c", "dx[3] = -e", "y = dx"]


LOOP = ("_range = range(T)\ndx = rt.zeros_of(x)\n"
        "for _iteration in {steps}:\n    t = _range[_iteration]\n    u = 2.0 * e\n"
        "    {write}\n")


@pytest.mark.parametrize("steps, write, assigned", [
    ("range(trips - 1, -1, -1)", "dx[:, t, :] += u", True),     # a step's own slot
    ("range(trips)", "dx[t] -= u", True),
    ("range(trips - 1, -1, -1)", "dx[:, t, 1:] += u", True),
    ("range(-2, 3)", "dx[t] += u", False),                       # R[-1] is R[2]: twice
    ("range(trips - 1, -1, -1)", "dx[:, t, t] += u", False),    # the counter twice
    ("range(trips - 1, -1, -1)", "dx[:, 0, :] += u", False),    # the same slot each step
    ("range(trips - 1, -1, -1)", "dx[:, t, :] += u\n    dx[:, t, :] += u", False),
    ("range(trips - 1, -1, -1)", "dx[:, t, :] += u * dx[0, 0, 0]", False),
    ("range(trips - 1, -1, -1)", "if u[0] > 0:\n        dx[:, t, :] += u", False),
    ("range(trips - 1, -1, -1)", "for k in range(2):\n        dx[:, t, :] += u", False),
])
def test_a_loop_writing_a_slot_of_its_own_each_step_assigns_it(steps, write, assigned):
    text = LOOP.format(steps=steps, write=write)
    lines = _rewritten(text, {"x": (2, 3, 4)}).splitlines()
    assert any("+=" in line or "-=" in line for line in lines) is not assigned, lines


def test_a_loop_after_parts_written_keeps_its_sums():
    """Parts written before the loop: its slots are not known apart from them."""
    text = LOOP.format(steps="range(trips)", write="dx[:, t, :] += u").replace(
        "dx = rt.zeros_of(x)\n", "dx = rt.zeros_of(x)\ndx[0] += w\n")
    assert "dx[:, t, :] += u" in _rewritten(text, {"x": (2, 3, 4)})


def _with_aranges(text):
    body = gast.parse(text).body
    for node in (n for stmt in body for n in gast.walk(stmt)):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr == "arange":
            anno.set_(node, Anno.CALLEE, np.arange)
    return body


@pytest.mark.parametrize("index, known, placed", [
    ("(np.arange(n), y)", {"y": (4,)}, True),           # a label per row: distinct entries
    ("(_rows, y)", {"y": (4,)}, True),                  # the range by its name
    ("(np.arange(n), 2)", {}, True),
    ("(np.arange(n), y)", {"y": (4, 1)}, False),        # broadcast to (4, 4): rows repeat
    ("(np.arange(n), y)", {}, False),                   # y's shape unknown
    ("(i, y)", {"y": (4,), "i": (4,)}, False),          # no range: indices may repeat
    ("(np.arange(n, 2 * n), y)", {"y": (4,)}, False),   # (read as one argument only)
    ("(np.arange(n), slice(None))", {}, False),
])
def test_a_range_with_a_label_per_row_picks_distinct_entries(index, known, placed):
    text = f"_rows = np.arange(n)\ndp = rt.getitem_grad(g, p, {index})\nq = dp * 2.0\ndel _rows"
    body = assign_placed_parts(_with_aranges(text), {"p": (4, 3), **known}, (), "np", "rt")
    lines = [unparse(stmt) for stmt in body]
    if placed:
        assert lines[1:3] == ["dp = np.zeros(p.shape, np.result_type(p, g))",
                              f"dp[{index[1:-1]}] = g"], lines
    else:
        assert lines[1] == f"dp = rt.getitem_grad(g, p, {index})", lines


def test_an_unknown_shape_is_left_alone():
    text = "dp = rt.getitem_grad(g0, p, 0)\ndp[1] += g1"
    assert _rewritten(text, {}) == text


# -- the gradients ----------------------------------------------------------------------

def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def gates(x, W, c):
    """An LSTM cell's step: the pre-activation read in four gates."""
    H = c.shape[1]
    a = x @ W
    i, f, o = _sigmoid(a[:, :H]), _sigmoid(a[:, H:2 * H]), _sigmoid(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    c = f * c + i * g
    return np.sum(o * np.tanh(c))


def three_parameters(p, x):
    """A vector of parameters read entry by entry (the last one twice)."""
    loc, log_scale, shape = p[0], p[1], p[-1]
    z = (x - loc) / np.exp(log_scale)
    return np.sum(np.log1p(z * z) * shape) + 0.5 * p[2] ** 2


def overlapping(x):
    """Parts that overlap: the first difference and a tail."""
    return np.sum((x[1:] - x[:-1] ** 2) ** 2) + np.sum(np.sin(x[2:]))


def filled(x, W):
    """A layer filling a preallocated (N, T, H) array a step at a time."""
    N, T, _ = x.shape
    h = np.zeros((N, T, W.shape[1]))
    for t in range(T):
        h[:, t, :] = np.tanh(x[:, t, :] @ W)
    return np.sum(h ** 2)


def _fused(fn, args, wrt=0):
    gradient = st.grad(fn, wrt=wrt)
    for _ in range(3):
        gradient(*args)
    source = st.source(fn, args=args, wrt=wrt)
    return gradient, source.split(f"def {fn.__name__}_grad")[1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_lstm_cells_gates_are_assigned_and_its_derivatives_hold(dtype):
    rng = np.random.default_rng(11)
    x, W, c = (rng.standard_normal((3, 4)), 0.5 * rng.standard_normal((4, 8)),
               rng.standard_normal((3, 2)))
    x, W = x.astype(dtype), W.astype(dtype)
    gradient, fused = _fused(gates, (x, W, c), wrt=(0, 1, 2))
    assert "np.empty(" in fused and "] += " not in fused
    want = st.grad(gates, wrt=(0, 1, 2), optimize=False)(x, W, c)
    for got, expected in zip(gradient(x, W, c), want):
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12 if dtype == np.float64 else 1e-5)
    if dtype == np.float64:
        st.check_grads(gates, (x, W, c), order=2)


def test_a_float32_parameter_vectors_cotangent_has_the_generic_codes_dtype():
    """``p`` float32 and ``x`` float64: the cotangent is made as ``rt.getitem_grad`` makes
    it, of ``np.result_type(p, term)``; an entry read twice (``p[2]``, ``p[-1]``) keeps its
    sum, and the zeros (the others are assigned after it)."""
    rng = np.random.default_rng(12)
    p, x = np.array([0.3, -0.2, 1.5], np.float32), rng.standard_normal(6)
    gradient, fused = _fused(three_parameters, (p, x))
    assert "dp = np.zeros(p.shape, np.result_type(p, p[2]))" in fused
    assert "dp[-1] += " in fused and "dp[1] = " in fused and "dp[0] = " in fused
    want = st.grad(three_parameters, optimize=False)(p, x)
    got = gradient(p, x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    st.check_grads(three_parameters, (p.astype(np.float64), x), order=2)


def test_overlapping_parts_keep_their_sums():
    x = np.random.default_rng(13).standard_normal(6)
    gradient, fused = _fused(overlapping, (x,))
    assert "np.zeros(" in fused and "] += " in fused
    np.testing.assert_allclose(gradient(x), st.grad(overlapping, optimize=False)(x),
                               rtol=1e-12)
    st.check_grads(overlapping, (x,), order=2)


def test_a_layer_filling_its_steps_assigns_its_inputs_cotangent_a_step_at_a_time():
    rng = np.random.default_rng(14)
    x, W = rng.standard_normal((2, 4, 3)), rng.standard_normal((3, 5))
    gradient, fused = _fused(filled, (x, W), wrt=(0, 1))
    assert re.search(r"dx\[:, t\w*, :\] = ", fused) and "+= d_item" not in fused, fused
    for got, want in zip(gradient(x, W), st.grad(filled, wrt=(0, 1), optimize=False)(x, W)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    st.check_grads(filled, (x, W), order=2)


def cross_entropy(W, X, y):
    """Softmax cross-entropy with integer labels, picked by a range of rows."""
    s = X @ W
    s = s - s.max(axis=1, keepdims=True)
    log_p = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(X.shape[0]), y])


def test_a_label_per_rows_cotangent_is_placed_not_added_at():
    rng = np.random.default_rng(15)
    W, X, y = rng.standard_normal((3, 4)), rng.standard_normal((6, 3)), rng.integers(0, 4, 6)
    gradient, fused = _fused(cross_entropy, (W, X, y))
    assert "getitem_grad" not in fused and "[np.arange(X.shape[0]), y] = " in fused, fused
    np.testing.assert_allclose(gradient(W, X, y), st.grad(cross_entropy, optimize=False)(W, X, y),
                               rtol=1e-12)
    st.check_grads(cross_entropy, (W, X, y), order=2, wrt=0)


@pytest.mark.parametrize("dtype, columns", [(np.float64, 8), (np.float32, 4)])
def test_a_subtracted_strided_part_gets_the_negated_values(dtype, columns):
    """``d[...] -= e`` with ``e`` a column of a wider array, written into a strided part: the
    layout NumPy 2.4's ``np.negative(e, out=part)`` reads wrongly (it read e's neighbours)."""
    from srctrans import runtime
    text = "dp = rt.zeros_of(p)\ndp[:-1, :1] -= e\nout = dp * 1.0"
    rewritten = _rewritten(text, {"p": (4, 3)})
    assert "np.multiply(e, -1, out=dp[:-1, :1])" in rewritten
    wide = np.arange(1, 3 * columns + 1, dtype=dtype).reshape(3, columns)
    scope = {"np": np, "rt": runtime, "p": np.zeros((4, 3), dtype), "e": wide[:, :1]}
    exec(rewritten, scope)
    want = np.zeros((4, 3), dtype)
    want[:-1, :1] -= wide[:, :1]
    np.testing.assert_array_equal(scope["out"], want)

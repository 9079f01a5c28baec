"""A loop of arithmetic on the entries of vectors runs on lists of their floats
(optimise/float_lists.py, runtime/float_lists.py): the same numbers as the loop on the arrays,
exactly, in both passes of a fused gradient; float64 results stay float64; other dtypes, short
loops, vectors that share memory and loops of other operations keep the arrays."""

import warnings

import numpy as np
import pytest

import srctrans as st
from srctrans import runtime as rt

R = np.random.default_rng(71)


def smoothing(alpha, y):
    """Simple exponential smoothing's one-step-ahead squared errors, filling its levels."""
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def running_product(r, w):
    """A cumulative product and sum read back entry by entry."""
    wealth = np.ones(len(r) + 1)
    total = 0.0
    for t in range(len(r)):
        wealth[t + 1] = wealth[t] * (1.0 + r[t])
        total = total + w[t] * wealth[t + 1]
    return total


def with_a_call(alpha, y):
    level = np.zeros(len(y))
    for t in range(1, len(y)):
        level[t] = np.tanh(alpha * y[t] + level[t - 1])
    return np.sum(level ** 2)


def with_a_division(alpha, y):
    level = np.ones(len(y))
    for t in range(1, len(y)):
        level[t] = y[t] / (alpha + level[t - 1] * level[t - 1])
    return np.sum(level)


# (the function, its arguments of n entries, how many of its fused gradient's loops run on lists)
CASES = [
    (smoothing, lambda n: (0.4, np.cumsum(R.standard_normal(n))), 2),
    (running_product, lambda n: (0.05 * R.standard_normal(n), R.standard_normal(n)), 1),
]
IDS = [f.__name__ for f, _, _ in CASES]


def _fused(f, args):
    wrt = tuple(range(len(args)))
    return st.source(f, args=args, wrt=wrt).split(f"def {f.__name__}_grad(")[1].split("\ndef ")[0]


def _on_arrays(f, args, monkeypatch):
    """The gradient with every loop on its arrays (``rt.runs_on_float_lists`` says no)."""
    with monkeypatch.context() as patched:
        patched.setattr(rt, "runs_on_float_lists", lambda *args: False)
        return st.grad(f, wrt=tuple(range(len(args))))(*args)


@pytest.mark.parametrize("f, build, loops", CASES, ids=IDS)
def test_the_lists_give_the_arrays_numbers_exactly(f, build, loops, monkeypatch):
    args = build(40)
    assert _fused(f, args).count("rt.runs_on_float_lists(") == loops
    gradient = st.grad(f, wrt=tuple(range(len(args))))
    for _ in range(3):                                     # generic, specialised, short path
        got = gradient(*args)
    want = _on_arrays(f, args, monkeypatch)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        np.testing.assert_array_equal(g, w)
    st.check_grads(f, args, order=2)


def test_a_float64_the_loop_leaves_stays_a_float64():
    alpha, y = CASES[0][1](30)
    gradient = st.grad(smoothing)
    for _ in range(3):
        assert type(gradient(alpha, y)) is np.float64


@pytest.mark.parametrize("n", [2, 8, 16])
def test_short_loops_and_other_dtypes_keep_the_arrays(n, monkeypatch):
    """Fewer than 16 steps, float32 values and a float32 number run the arrays' loop: the
    same numbers as with the lists switched off."""
    for alpha, y in [(0.4, np.cumsum(R.standard_normal(n))),
                     (0.4, np.cumsum(R.standard_normal(40)).astype(np.float32)),
                     (np.float32(0.4), np.cumsum(R.standard_normal(40)))]:
        got = st.grad(smoothing, wrt=(0, 1))(alpha, y)
        want = _on_arrays(smoothing, (alpha, y), monkeypatch)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(g, w)


def test_the_test_of_the_values():
    a, b = np.zeros(24), np.ones(24)
    steps = range(20)
    assert rt.runs_on_float_lists((a, b), 1, steps, (0.5, np.float64(2.0)))
    assert not rt.runs_on_float_lists((a, b), 1, range(15), ())                     # too short
    assert not rt.runs_on_float_lists((a, np.ones(90)), 1, steps, ())              # too long a vector
    assert not rt.runs_on_float_lists((a, b.astype(np.float32)), 1, steps, ())
    assert not rt.runs_on_float_lists((a, b), 1, steps, (np.float32(0.5),))
    assert not rt.runs_on_float_lists((a, b), 1, steps, (1,))                      # an int
    assert not rt.runs_on_float_lists((a, a[1:]), 1, steps, ())                    # a view of it
    assert not rt.runs_on_float_lists((a[1:], a), 1, steps, ())                    # a view, written
    assert not rt.runs_on_float_lists((a, a), 1, steps, ())
    assert rt.runs_on_float_lists((a[:12], a[12:]), 1, steps, ())                  # views apart
    assert not rt.runs_on_float_lists((a[:13], a[12:]), 1, steps, ())              # views overlapping
    assert rt.runs_on_float_lists((b, a[1:]), 1, steps, ())                        # (b is another)
    assert not rt.runs_on_float_lists((np.zeros((3, 4)), b), 1, steps, ())


@pytest.mark.parametrize("f", [with_a_call, with_a_division])
def test_other_operations_keep_the_arrays(f):
    args = (0.4, R.standard_normal(30))
    assert "rt.runs_on_float_lists(" not in _fused(f, args)
    st.check_grads(f, args, order=1)


def test_differentiated_again_and_batched_the_loop_is_on_arrays():
    """A Hessian differentiates the fused gradient: its loops' array form."""
    alpha, y = CASES[0][1](30)
    gradient = st.grad(smoothing)
    step = 1e-5
    by_differences = (gradient(alpha + step, y) - gradient(alpha - step, y)) / (2 * step)
    np.testing.assert_allclose(st.hessian(smoothing)(alpha, y), by_differences, rtol=1e-6)
    np.testing.assert_allclose(st.hvp(smoothing, (alpha, y), (1.0, None))[0], by_differences,
                               rtol=1e-6)
    alphas, ys = np.array([0.3, 0.5]), np.stack([y, y[::-1]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", st.BatchingWarning)
        batched = st.vmap(st.grad(smoothing))(alphas, ys)
    np.testing.assert_allclose(batched, [gradient(a, v) for a, v in zip(alphas, ys)],
                               rtol=1e-12)


def _listed_loops(text, vectors):
    """How many loops of ``text`` (a fused body) get a list form, ``vectors`` of 40 entries."""
    import gast
    from srctrans.optimise.float_lists import float_list_loops
    body = gast.parse(text).body
    names = iter(range(100))
    out = float_list_loops(body, dict.fromkeys(vectors, 40), {"g"}, (), "rt", "np",
                           lambda base: f"{base}_{next(names)}")
    return sum(isinstance(stmt, gast.If) for stmt in out)


SAVES = """
s = [None] * 39
x = None
for t in range(1, 40):
    s[t - 1] = x
    x = v[t - 1]
    w[t] = a * x
g = 0.0
for i in range(38, -1, -1):
    g = g + w[i + 1] * x
    x = s[i]
"""


@pytest.mark.parametrize("extra, listed", [
    ("", 2), ("\nrt.keep(s)", 1), ("\ns.append(1)", 1), ("\ns[0] = np.float32(1.0)", 1),
    ("\ns = s * 2", 1)], ids=["saves", "passed-on", "appended", "written", "bound-again"])
def test_a_list_read_by_arithmetic_holds_only_entries_saved_from_vectors(extra, listed):
    """The backward loop reads the list of saves by arithmetic: it gets a list form only when
    nothing but those saves of vector entries fills, mutates or reads the list otherwise."""
    text = SAVES.replace("g = 0.0", extra.strip() + "\ng = 0.0") if extra else SAVES
    assert _listed_loops(text, ("v", "w")) == listed


def test_a_vector_viewed_before_its_loop_is_written_back():
    """A name for a slice of a written vector, made before the loop and read after it, sees
    the loop's writes: the vector is written back though nothing after reads it by name."""
    import ast
    import gast
    from srctrans.optimise.float_lists import float_list_loops
    loop = "for t in range(1, 40):\n    w[t] = a * v[t] + w[t - 1]\ng = view[0]\n"
    for before, written_back in [("view = w[1:]\n", True), ("view = v[1:]\n", False)]:
        out = float_list_loops(gast.parse(before + loop).body, {"v": 40, "w": 40}, {"g"}, (),
                               "rt", "np", lambda base: base + "_1")
        text = ast.unparse(gast.gast_to_ast(gast.Module(out, [])))
        assert "rt.runs_on_float_lists(" in text
        assert ("w[:] = _w_entries_1" in text) is written_back


@pytest.mark.parametrize("text, listed", [
    ("for t in range(1, 40):\n    k = t - 1\n    w[t] = a * v[t] + w[k]", 1),     # an int name
    ("for t in range(1, 40):\n    k = t - 1\n    k = k * a\n    w[t] = a * v[t]", 0),
    ("for t in range(1, 40):\n    k = t - 1\n    w[t] = a * v[t] + k", 0),       # read as a number
])
def test_a_name_the_body_assigns_an_index_indexes_as_the_counter_does(text, listed):
    """A JVP's loop names ``t - 1`` once and indexes by it: the name is an int as the
    counter is; bound again, or read by arithmetic, it keeps the arrays."""
    assert _listed_loops(text, ("v", "w")) == listed

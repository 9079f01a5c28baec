"""st.hvp takes a short path for calls shaped like the last one: a guard generated for their
shapes calls the JVP of the fused gradient specialised on them (repeat.make_hvp_repeat).
Each call must give what the full path gives; anything the guard does not check must send
the call down the full path."""

import numpy as np
import pytest

import srctrans as st
from srctrans import second_order as composed
from programs import specialised_jvps as p

R = np.random.default_rng(29)


def mlp_args(batch=8, n_in=5, hidden=6, n_out=3):
    return (R.standard_normal((n_in, hidden)), R.standard_normal(hidden),
            R.standard_normal((hidden, n_out)), R.standard_normal(n_out),
            R.standard_normal((batch, n_in)), R.standard_normal((batch, n_out)))


def along(args, positions, dtype=np.float64):
    return tuple(R.standard_normal(np.shape(a)).astype(dtype) if i in positions else None
                 for i, a in enumerate(args))


def full_path_hvp(fn, args, tangents):
    """The HVP of the full path: srctrans's HVP with the cache (and every guard) forgotten."""
    st.clear_cache()
    return st.hvp(fn, args, tangents)


def numeric_hvp(fn, args, tangents, eps=1e-6):
    """The directional derivative of the gradient along the tangents, by central differences."""
    wrt = tuple(i for i, t in enumerate(tangents) if t is not None)
    gradient = st.grad(fn, wrt=wrt)
    plus = tuple(a + eps * t if t is not None else a for a, t in zip(args, tangents))
    minus = tuple(a - eps * t if t is not None else a for a, t in zip(args, tangents))
    return [(g1 - g0) / (2 * eps) for g1, g0 in zip(gradient(*plus), gradient(*minus))]


def guard_of(fn):
    return composed._hvp_guards.get(fn, {}).get(composed._LAST)


def same(got, expected, rel=1e-13):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if g is not None:
            np.testing.assert_allclose(g, e, rtol=rel, atol=1e-14)


@pytest.mark.parametrize("positions", [(0, 1, 2, 3), (2,), (0, 4), (4,)])
def test_every_call_gives_the_full_paths_hvp(positions):
    args = mlp_args()
    tangents = along(args, positions)
    expected = full_path_hvp(p.mlp, args, tangents)
    same(expected, [None if t is None else h for t, h in
                    zip(tangents, _spread(numeric_hvp(p.mlp, args, tangents), tangents))], 1e-5)
    for _ in range(4):                       # generic, specialising, then the guard
        same(st.hvp(p.mlp, args, tangents), expected)
    assert guard_of(p.mlp) is not None


def _spread(products, tangents):
    given = iter(products)
    return [next(given) if t is not None else None for t in tangents]


def test_the_guard_reads_its_checks_and_calls_the_specialised_jvp():
    args = mlp_args()
    tangents = along(args, (0, 1, 2, 3))
    for _ in range(3):
        st.hvp(p.mlp, args, tangents)
    guard = guard_of(p.mlp)
    assert guard(p.mlp, args, tangents) is not None
    other = tangents[:2] + (None,) + tangents[3:]              # None where an array was
    assert guard(p.mlp, args, other) is None
    smaller = mlp_args(batch=3)
    assert guard(p.mlp, smaller, along(smaller, (0, 1, 2, 3))) is None
    single = tuple(a.astype(np.float32) for a in args)
    assert guard(p.mlp, single, tangents) is None
    assert guard(p.mlp, args, along(args, (0, 1, 2, 3), np.float32)) is None


def test_other_shapes_dtypes_and_tangents_after_the_guard_take_the_full_path():
    for batch, positions, dtype in [(8, (0, 1), np.float64), (3, (0, 1), np.float64),
                                    (8, (0, 1), np.float32), (8, (2, 4), np.float64),
                                    (8, (0, 1), np.float64)]:
        args = mlp_args(batch=batch)
        tangents = along(args, positions, dtype)
        expected = full_path_hvp(p.mlp, args, tangents)
        for _ in range(3):
            same(st.hvp(p.mlp, args, tangents), expected)


def test_a_rebound_global_is_read_again():
    """(A function that reads a global's value gets no guard: the full path reads it.)"""
    x = R.standard_normal(3)
    v = R.standard_normal(3)
    for _ in range(3):                                       # SCALE * sum(x**2): H = 2 SCALE I
        np.testing.assert_allclose(st.hvp(p.reads_a_global, (x,), (v,))[0], 4.0 * v)
    p.SCALE = 3.0
    try:
        np.testing.assert_allclose(st.hvp(p.reads_a_global, (x,), (v,))[0], 6.0 * v)
    finally:
        p.SCALE = 2.0


def test_a_rebound_helper_after_the_guard_is_built_again():
    x, w = R.standard_normal((2, 3)), R.standard_normal((3, 3))
    tangents = (R.standard_normal((2, 3)), None)
    for _ in range(3):
        st.hvp(p.calls_a_helper, (x, w), tangents)
    assert guard_of(p.calls_a_helper) is not None
    original = p.helper
    p.helper = p.other_helper
    try:
        got = st.hvp(p.calls_a_helper, (x, w), tangents)
        expected = numeric_hvp(p.calls_a_helper, (x, w), tangents)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-7)
    finally:
        p.helper = original


def test_a_tangent_to_conform_never_makes_a_guard():
    """A list tangent is conformed by the full path; the guard, which passes tangents on
    unchecked, is not made for it."""
    st.clear_cache()
    args = mlp_args()
    tangents = along(args, (0, 2))
    listed = (tangents[0].tolist(),) + tangents[1:]
    expected = full_path_hvp(p.mlp, args, tangents)
    for _ in range(3):
        same(st.hvp(p.mlp, args, listed), expected)
    assert guard_of(p.mlp) is None
    st.hvp(p.mlp, args, tangents)
    assert guard_of(p.mlp) is not None                       # arrays make one


def test_a_guard_for_code_since_rebuilt_is_made_again():
    x, w = R.standard_normal((2, 3)), R.standard_normal((3, 3))
    tangents = (R.standard_normal((2, 3)), None)
    for _ in range(3):
        st.hvp(p.calls_a_helper, (x, w), tangents)
    first = guard_of(p.calls_a_helper)
    original = p.helper
    p.helper = p.other_helper
    try:
        for _ in range(3):
            st.hvp(p.calls_a_helper, (x, w), tangents)
        assert guard_of(p.calls_a_helper) not in (None, first)
        assert guard_of(p.calls_a_helper)(p.calls_a_helper, (x, w), tangents) is not None
    finally:
        p.helper = original


def test_errors_on_the_short_path_read_as_on_the_full_path():
    args = mlp_args()
    tangents = along(args, (0,))
    for _ in range(3):
        st.hvp(p.mlp, args, tangents)
    with pytest.raises(st.ShapeError):
        st.hvp(p.mlp, args, (np.ones((2, 2)),) + tangents[1:])
    with pytest.raises(st.UsageError, match="tuples"):
        st.hvp(p.mlp, list(args), list(tangents))

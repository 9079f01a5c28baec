"""Forward mode specialised on the shapes of a call (as reverse mode is): the second call of
``st.jvp`` with the same shapes builds a JVP without the generic broadcasting helpers, which
later calls with those shapes run, through a guard made for their shapes."""

import numpy as np
import pytest

import srctrans as st
from programs import specialised_jvps as p

R = np.random.default_rng(13)


def mlp_args(batch=8, n_in=5, hidden=6, n_out=3):
    return (R.standard_normal((n_in, hidden)), R.standard_normal(hidden),
            R.standard_normal((hidden, n_out)), R.standard_normal(n_out),
            R.standard_normal((batch, n_in)), R.standard_normal((batch, n_out)))


def along(args, positions):
    return tuple(R.standard_normal(np.shape(a)) if i in positions else None
                 for i, a in enumerate(args))


def generic_jvp(fn, args, tangents):
    """The JVP of the generic code: srctrans's JVP with the cache forgotten runs it first."""
    st.clear_cache()
    return st.jvp(fn, args, tangents)


@pytest.mark.parametrize("positions", [(4,), (0, 1, 2, 3), (2,), (0, 4)])
def test_every_call_gives_the_generic_jvp(positions):
    args = mlp_args()
    tangents = along(args, positions)
    expected = generic_jvp(p.mlp, args, tangents)
    for _ in range(4):                       # generic, specialising, then the guard
        out, tangent = st.jvp(p.mlp, args, tangents)
        assert out == expected[0]
        assert tangent == pytest.approx(expected[1], rel=1e-13)


def test_the_specialised_jvp_reads_like_a_hand_written_one():
    args = mlp_args()
    source = st.source(p.mlp, mode="forward", wrt="x", args=args)
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    assert "broadcast_like" not in code
    assert "np.sum" not in code and "d_out = 2 * np.vdot(dh @ W2, _sub)" in code
    generic = st.source(p.mlp, mode="forward", wrt="x")
    assert "rt.broadcast_like" in generic


def test_other_shapes_after_the_guard_take_their_own_code():
    for batch in (8, 3, 8, 1, 3):
        args = mlp_args(batch=batch)
        tangents = along(args, (4,))
        expected = generic_jvp(p.mlp, args, tangents)
        st.jvp(p.mlp, args, tangents)
        for _ in range(3):
            assert st.jvp(p.mlp, args, tangents)[1] == pytest.approx(expected[1], rel=1e-13)


def test_a_tangent_given_to_another_argument_or_of_another_dtype():
    args = mlp_args()
    for positions in [(4,), (2,), (4,), (0, 4)]:
        tangents = along(args, positions)
        expected = generic_jvp(p.mlp, args, tangents)
        st.jvp(p.mlp, args, tangents)
        st.jvp(p.mlp, args, tangents)
        assert st.jvp(p.mlp, args, tangents)[1] == pytest.approx(expected[1], rel=1e-13)
    single = tuple(t.astype(np.float32) if t is not None else None for t in along(args, (4,)))
    wide = tuple(t.astype(np.float64) if t is not None else None for t in single)
    expected = generic_jvp(p.mlp, args, wide)[1]
    for _ in range(3):
        assert st.jvp(p.mlp, args, single)[1] == pytest.approx(expected, rel=1e-6)


def test_a_tangent_smaller_than_the_output_is_still_broadcast():
    x, b = R.standard_normal((4, 3)), R.standard_normal(3)
    for _ in range(3):
        out, tangent = st.jvp(p.broadcast_sum, (x, b), (None, np.ones(3)))
        np.testing.assert_allclose(tangent, np.mean(2 * (x + b), axis=0))
        assert tangent.shape == out.shape == (3,)


@pytest.mark.parametrize("fn, args", [
    (p.grows_in_a_loop, (R.standard_normal(3), 4)),
    (p.list_then_array_over_lines, (R.standard_normal(3),)),
    (p.branch_shapes, (R.standard_normal(3), 0.5)),
    (p.branch_shapes, (R.standard_normal(3), -0.5)),
    (p.calls_a_helper, (R.standard_normal((2, 3)), R.standard_normal((3, 3)))),
    (p.loop_of_scalars, (2.5, 0.3)),
    (p.mlp, mlp_args()),
])
def test_derivatives_match_finite_differences(fn, args):
    st.check_grads(fn, args, order=2)       # the forward mode's generic and specialised code


def test_the_other_path_of_a_branch_after_specialising():
    x = R.standard_normal(3)
    for s in (0.5, 0.5, 0.5, -0.5, -0.5, 0.5):
        tangent = st.jvp(p.branch_shapes, (x, s), (np.ones(3), None))[1]
        expected = generic_jvp(p.branch_shapes, (x, s), (np.ones(3), None))[1]
        assert tangent == pytest.approx(expected, rel=1e-13)


def test_a_rebound_global_after_the_guard_is_read_again():
    x = R.standard_normal(3)
    for _ in range(3):
        assert st.jvp(p.reads_a_global, (x,), (x,))[1] == pytest.approx(4.0 * np.sum(x * x))
    p.SCALE = 3.0
    try:
        assert st.jvp(p.reads_a_global, (x,), (x,))[1] == pytest.approx(6.0 * np.sum(x * x))
    finally:
        p.SCALE = 2.0


def test_a_rebound_helper_after_the_guard_is_built_again():
    x, w = R.standard_normal((2, 3)), R.standard_normal((3, 3))
    tangents = (np.ones((2, 3)), None)
    for _ in range(3):
        st.jvp(p.calls_a_helper, (x, w), tangents)
    original = p.helper
    p.helper = p.other_helper
    try:
        tangent = st.jvp(p.calls_a_helper, (x, w), tangents)[1]
        y = np.sin(x @ w)
        assert tangent == pytest.approx(np.sum(2 * y * np.cos(x @ w) * (np.ones((2, 3)) @ w)))
    finally:
        p.helper = original


def test_errors_on_the_short_path_read_as_on_the_full_path():
    args = mlp_args()
    tangents = along(args, (4,))
    for _ in range(3):
        st.jvp(p.mlp, args, tangents)
    wrong = tangents[:4] + (np.ones((2, 2)),) + tangents[5:]
    with pytest.raises(st.ShapeError, match="the tangent of 'x' has shape"):
        st.jvp(p.mlp, args, wrong)


def test_lists_for_tuples_are_refused_after_the_guard_too():
    args = mlp_args()
    tangents = along(args, (4,))
    for _ in range(3):
        st.jvp(p.mlp, args, tangents)
    with pytest.raises(st.UsageError, match="as tuples"):
        st.jvp(p.mlp, list(args), list(tangents))


def test_a_guard_for_code_since_rebuilt_is_made_again():
    """After a rebound helper, the guard made for the old code is replaced, not kept failing."""
    from srctrans import forward_api
    x, w = R.standard_normal((2, 3)), R.standard_normal((3, 3))
    tangents = (np.ones((2, 3)), None)
    for _ in range(3):
        st.jvp(p.calls_a_helper, (x, w), tangents)
    first = forward_api._plans[p.calls_a_helper][forward_api._REPEAT]
    original = p.helper
    p.helper = p.other_helper
    try:
        for _ in range(3):
            st.jvp(p.calls_a_helper, (x, w), tangents)
        guard = forward_api._plans[p.calls_a_helper][forward_api._REPEAT]
        assert guard is not first and guard(p.calls_a_helper, (x, w), tangents) is not None
    finally:
        p.helper = original

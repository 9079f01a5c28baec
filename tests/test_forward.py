"""Forward mode: st.jvp over the language, its source, its errors."""

import numpy as np
import pytest

import srctrans as st
from programs import callees_elsewhere as elsewhere
from programs import composed as programs


def _rng(seed=0):
    return np.random.default_rng(seed)


def _mlp_args(rng):
    return (rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal(5),
            rng.standard_normal((5, 2)), rng.standard_normal((4, 2)))


def test_jvp_equals_gradient_dotted_with_the_direction():
    rng = _rng()
    args = _mlp_args(rng)
    v = rng.standard_normal(args[1].shape)
    out, tangent = st.jvp(programs.mlp_loss, args, (None, v, None, None, None))
    assert out == programs.mlp_loss(*args)
    expected = np.sum(st.grad(programs.mlp_loss, wrt=1)(*args) * v)
    np.testing.assert_allclose(tangent, expected, rtol=1e-12)


@pytest.mark.parametrize("name, args", [
    ("mlp_loss", _mlp_args(_rng(1))),
    ("loop_with_branch", (_rng(2).standard_normal(3), 4)),
    ("while_loop", (_rng(3).standard_normal((2, 2)),)),
    ("returns_tuple", (_rng(4).standard_normal(3), _rng(5).standard_normal(3))),
    ("calls_helper", (_rng(6).standard_normal((4, 3)), _rng(7).standard_normal((3, 2)))),
    ("smooth", (0.3, 1.7)),
    ("broadcast_add", (_rng(8).standard_normal(3), _rng(9).standard_normal((2, 3)))),
])
def test_forward_and_reverse_agree_with_finite_differences(name, args):
    st.check_grads(getattr(programs, name), args, modes=("forward", "reverse"))


def test_container_arguments_take_container_tangents():
    rng = _rng(10)
    params = {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal((4, 3))
    tangent = {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    out, dout = st.jvp(programs.takes_dict, (params, x), (tangent, None))
    eps = 1e-6
    plus = {k: params[k] + eps * tangent[k] for k in params}
    minus = {k: params[k] - eps * tangent[k] for k in params}
    numeric = (programs.takes_dict(plus, x) - programs.takes_dict(minus, x)) / (2 * eps)
    np.testing.assert_allclose(dout, numeric, rtol=1e-6, atol=1e-8)
    assert dout.shape == out.shape


def test_tuple_output_gets_tuple_tangent():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    (a, b), (da, db) = st.jvp(programs.returns_tuple, (x, y), (np.ones(2), np.zeros(2)))
    np.testing.assert_allclose(da, y)
    np.testing.assert_allclose(db, np.cos(x))


def test_a_tangent_smaller_than_the_output_is_broadcast_to_it():
    x, y = np.ones(3), np.ones((2, 3))
    out, dout = st.jvp(programs.broadcast_add, (x, y), (np.arange(3.0), None))
    assert dout.shape == out.shape == (2, 3)
    np.testing.assert_array_equal(dout, np.broadcast_to(np.arange(3.0), (2, 3)))


def test_output_independent_of_the_inputs_has_zero_tangent():
    out, dout = st.jvp(programs.constant_output, (np.ones(2),), (np.ones(2),))
    np.testing.assert_array_equal(dout, np.zeros(3))


def test_int_arguments_take_none_tangents():
    x = _rng(11).standard_normal(3)
    out, dout = st.jvp(programs.loop_with_branch, (x, 3), (np.ones(3), None))
    assert np.ndim(dout) == 0
    with pytest.raises(st.NonDifferentiableError, match="integer"):
        st.jvp(programs.loop_with_branch, (x, 3), (np.ones(3), 1))


def test_tangent_of_the_wrong_shape_is_an_error():
    with pytest.raises(st.ShapeError, match=r"shape \(2,\)"):
        st.jvp(programs.cube, (np.ones(3),), (np.ones(2),))


def test_primals_and_tangents_must_be_tuples_of_one_length():
    with pytest.raises(st.UsageError, match="tuples"):
        st.jvp(programs.cube, np.ones(3), np.ones(3))
    with pytest.raises(st.UsageError, match="1 primals but 2 tangents"):
        st.jvp(programs.cube, (np.ones(3),), (np.ones(3), None))


def test_float32_stays_float32():
    x = np.linspace(0.1, 1.0, 4).astype(np.float32)
    out, dout = st.jvp(programs.smooth, (x, x), (np.ones(4, np.float32), None))
    assert dout.dtype == np.float32


def test_forward_source_reads_like_the_function():
    text = st.source(programs.mlp_loss, mode="forward", wrt=(1, 2))
    assert "def mlp_loss_jvp(x, W1, b1, W2, t, *, dW1, db1):" in text
    assert "# line" in text and "dh = " in text
    assert "rt.broadcast_like" in text or "dy" in text


def test_forward_source_shows_called_functions():
    """A helper of another module has a JVP of its own; one of the caller's module is
    inlined into the caller's (normalize/callees.py)."""
    text = st.source(elsewhere.calls_helper, mode="forward", wrt=(0, 1))
    assert "def calls_helper_jvp" in text and "def dense_relu_jvp" in text
    text = st.source(programs.calls_helper, mode="forward", wrt=(0, 1))
    assert "def calls_helper_jvp" in text and "dense_relu_jvp" not in text
    assert "np.maximum(" in text


def test_jvp_is_cached():
    from srctrans import cache
    first = cache.forward_instance(programs.smooth, ("x",))
    assert cache.forward_instance(programs.smooth, ("x",)) is first


def test_docs_show_the_generated_tangent_code_as_it_is():
    from pathlib import Path
    page = (Path(__file__).parent.parent / "docs" / "forward.md").read_text()
    text = st.source(programs.mlp_loss, mode="forward", wrt=(1, 2))
    assert text.strip() in page
    loop = st.source(programs.loop_with_branch, mode="forward")
    body = loop[loop.index("    for i in range(n):"):loop.index("    # line 94")]
    assert body.strip() in page
    R = np.random.default_rng(0)
    example = (R.standard_normal((8, 3)), R.standard_normal((3, 4)), R.standard_normal(4),
               R.standard_normal((4, 2)), R.standard_normal((8, 2)))
    specialised = st.source(programs.mlp_loss, mode="forward", wrt=(1, 2), args=example)
    assert specialised.strip() in page and specialised != text


def test_a_constant_appended_after_active_values_keeps_the_list_cotangent_aligned():
    st.check_grads(programs.appends_a_constant_last, (np.array([0.5, -1.0, 2.0]), 3))
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(st.grad(programs.appends_a_constant_last)(x, 3),
                               np.full(3, 1.0 * 1 + 2.0 * 2 + 3.0 * 3))


@pytest.mark.parametrize("optimize", [True, False])
def test_a_zero_tangent_of_a_renamed_output(optimize):
    """The tangent of an output the selected argument does not reach is zeros shaped like
    the output, which the optimiser renames (a NameError before)."""
    from programs import control
    alpha, x = np.array([1.0, 2.0, 3.0]), np.ones((3, 2))
    out, tangent = st.jvp(control.shaped_like, (alpha, x), (None, np.ones((3, 2))),
                          optimize=optimize)
    np.testing.assert_array_equal(out, alpha[:, None])
    np.testing.assert_array_equal(tangent, np.zeros((3, 1)))

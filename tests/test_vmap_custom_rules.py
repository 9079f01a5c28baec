"""``st.vmap`` of derivatives that use rules written by the user.

A rule registered with ``st.register_vjp`` or ``st.register_jvp`` and written with ``def``
is batched as any function is (vmap of the rule): the batched derivative runs no call per
member. A ``lambda`` rule, whose source srctrans does not read, and a function of
``st.custom_gradient``, whose backward function is a closure made at run time, run once
per member, with a warning that names them and says how to have them batched. Every
result equals the loop over the batch.
"""

import warnings

import numpy as np
import pytest

import srctrans as st
from srctrans.rules import REGISTRY

R = np.random.default_rng(41)


def cube(x):
    return x ** 3


def cube_vjp(g, ans, x):
    return (g * 3.0 * x ** 2,)


def scaled_product(a, b):
    return a * b * 2.0


def scaled_product_vjp(g, ans, a, b):
    # no cotangent for b (zeros of its shape), and one for a that is the same for every
    # member when g is (a constant of the rule's)
    return (2.0 * g * b, None)


def wrong_shape(x):
    return np.sum(x)


def wrong_shape_vjp(g, ans, x):
    return (np.ones(x.size + 1) * g,)


def tripled_tanh(x):
    return np.tanh(x) * 3.0


def tripled_tanh_jvp(tangents, ans, x):
    return tangents[0] * 3.0 * (1.0 - np.tanh(x) ** 2)


def squared(x):
    return x ** 2


@st.custom_gradient
def clipped(y):
    def backward(dy):
        return dy * np.minimum(1.0, 0.5 / (np.abs(dy) + 1e-3))
    return y, backward


@pytest.fixture(autouse=True)
def registered_rules():
    """The rules, registered for each test and taken back after it (the registry is the
    process's: other tests' rule tables and cache entries must not see them)."""
    saved = REGISTRY.user_rules()
    st.register_vjp(cube, cube_vjp)
    st.register_vjp(scaled_product, scaled_product_vjp)
    st.register_vjp(wrong_shape, wrong_shape_vjp)
    st.register_jvp(tripled_tanh, tripled_tanh_jvp)
    st.register_vjp(squared, lambda g, ans, x: (g * 2.0 * x,))
    yield
    REGISTRY.restore_user_rules(saved)
    st.clear_cache()


def with_cube(w, x):
    return np.sum(np.sin(cube(x * w)))


def with_scaled_product(w, x):
    return np.sum(scaled_product(w, x) ** 2) + np.sum(scaled_product(x, w))


def with_wrong_shape(w, x):
    return wrong_shape(x * w)


def with_tripled_tanh(w, x):
    return np.sum(tripled_tanh(x * w) ** 2)


def jvp_of_tripled_tanh(w, x, v):
    return st.jvp(with_tripled_tanh, (w, x), (v, None))[1]


def with_lambda_rule(w, x):
    return np.sum(squared(x * w) * x)


def with_custom_gradient(w, x):
    return np.sum(clipped(x * w) ** 2)


def batch(size=5, d=3):
    return R.standard_normal(d), R.standard_normal((size, d)), R.standard_normal((size, d))


def run(f, in_axes, args):
    """``st.vmap(f, in_axes)(*args)`` and the BatchingWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", st.BatchingWarning)
        st.batch_api._warned.clear()
        out = st.vmap(f, in_axes=in_axes)(*args)
    return out, [str(w.message) for w in caught if issubclass(w.category, st.BatchingWarning)]


def looped(f, w, X, *rest):
    return np.stack([f(w, x, *[r[i] for r in rest]) for i, x in enumerate(X)])


@pytest.mark.parametrize("loss", [with_cube, with_scaled_product])
def test_a_def_vjp_rule_is_batched_under_vmap_of_grad(loss):
    w, X, _ = batch()
    per_example = st.grad(loss)
    out, warned = run(per_example, (None, 0), (w, X))
    assert warned == []
    np.testing.assert_allclose(out, looped(per_example, w, X), rtol=1e-12, atol=1e-14)
    source = st.source(st.vmap(per_example, in_axes=(None, 0)), args=(w, X))
    assert "rt.batch.loop" not in source and "_vjp_vmap(" in source, source


def test_a_def_vjp_rule_is_batched_with_respect_to_a_batched_argument():
    w, X, _ = batch()
    gradient = st.grad(with_scaled_product, wrt=(0, 1))
    out, warned = run(gradient, (None, 0), (w, X))
    assert warned == []
    for position in (0, 1):
        expected = np.stack([gradient(w, x)[position] for x in X])
        np.testing.assert_allclose(out[position], expected, rtol=1e-12, atol=1e-14)


def test_a_rule_returning_the_wrong_shape_is_refused_for_a_member():
    w, X, _ = batch()
    with pytest.raises(st.ShapeError, match=r"wrong_shape.*\(4,\).*\(3,\)"):
        st.vmap(st.grad(with_wrong_shape), in_axes=(None, 0))(w, X)


def test_a_def_jvp_rule_is_batched_under_vmap_of_jvp():
    w, X, V = batch()
    out, warned = run(jvp_of_tripled_tanh, (None, 0, 0), (w, X, V))
    assert warned == []
    np.testing.assert_allclose(out, looped(jvp_of_tripled_tanh, w, X, V), rtol=1e-12)
    source = st.source(st.vmap(jvp_of_tripled_tanh, in_axes=(None, 0, 0)), args=(w, X, V))
    assert "rt.batch.loop" not in source and "tripled_tanh_jvp_vmap(" in source, source


def test_a_lambda_rule_runs_per_member_and_says_so():
    w, X, _ = batch()
    per_example = st.grad(with_lambda_rule)
    out, warned = run(per_example, (None, 0), (w, X))
    np.testing.assert_allclose(out, looped(per_example, w, X), rtol=1e-12)
    assert len(warned) == 1 and "<lambda>" in warned[0] and "`def`" in warned[0], warned


def test_a_custom_gradient_runs_per_member_and_says_how_to_batch_it():
    w, X, _ = batch()
    per_example = st.grad(with_custom_gradient)
    out, warned = run(per_example, (None, 0), (w, X))
    np.testing.assert_allclose(out, looped(per_example, w, X), rtol=1e-12)
    assert len(warned) == 1 and "custom_gradient (clipped)" in warned[0] \
        and "st.register_vjp" in warned[0], warned

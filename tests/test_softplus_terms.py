"""A softplus written the stable way, ``np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))``,
sends its derivative, the sigmoid, through one term (normalize/softplus_terms.py,
runtime/softplus_terms.py): the value is the program's own; the derivatives match finite
differences in both modes, to second order, and the chain's in the tails; the forms it does not
cover keep the chain."""

import warnings

import numpy as np
import pytest

import srctrans as st

R = np.random.default_rng(44)


def cross_entropy_of_logits(z, y):
    """A binary cross-entropy of logits, as TensorFlow writes it."""
    return np.sum(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def softplus_by_log(z, w):
    return np.sum(w * (np.log(1 + np.exp(-np.abs(z))) + np.maximum(0.0, z)))


def subtracted_together(x, y):
    z = np.tanh(x) * 3.0
    loss = y * z - (np.maximum(z, 0) + np.log(np.exp(-np.abs(z)) + 1.0))
    return np.sum(loss ** 2)


def exponential_read_again(z, y):
    e = np.exp(-np.abs(z))
    return np.sum(y * (np.maximum(z, 0) + np.log1p(e))) + np.sum(e * y)


CASES = [
    (cross_entropy_of_logits, lambda: (3 * R.standard_normal((5, 4)), R.random((5, 4)))),
    (cross_entropy_of_logits, lambda: (3 * R.standard_normal(4), R.random((3, 4)))),  # y wider
    (softplus_by_log, lambda: (3 * R.standard_normal((3, 4)), R.standard_normal(4))),
    (subtracted_together, lambda: (R.standard_normal((4, 3)), R.standard_normal((4, 3)))),
    (exponential_read_again, lambda: (3 * R.standard_normal((2, 3)), R.standard_normal((2, 3)))),
]
IDS = [f.__name__ for f, _ in CASES[:1]] + ["labels_broadcast"] + [f.__name__ for f, _ in CASES[2:]]


def _fused(f, args):
    return st.source(f, args=args).split(f"def {f.__name__}_grad(")[1].split("\ndef ")[0]


def _chain_gradient(f, args):
    """The gradient with the pattern switched off: the two terms' own rules."""
    from srctrans.normalize import softplus_terms
    saved = softplus_terms._PRIMALS
    softplus_terms._PRIMALS = saved + (None,)             # (no rule: the pass declines)
    try:
        st.clear_cache()
        return st.grad(f, optimize=False)(*args)
    finally:
        softplus_terms._PRIMALS = saved
        st.clear_cache()


@pytest.mark.parametrize("f, build", CASES, ids=IDS)
def test_the_derivative_is_one_sigmoid_and_matches_finite_differences(f, build):
    args = build()
    fused = _fused(f, args)
    assert "rt.sigmoid_from_tail(" in fused
    assert "tie_weight" not in fused
    if f is not exponential_read_again:                 # (e * y's term goes through |z|)
        assert "np.sign(" not in fused
    st.check_grads(f, args, order=2)
    value, _ = st.value_and_grad(f)(*args)
    assert value == f(*args)                              # the program's own value, exactly
    want = _chain_gradient(f, args)
    for _ in range(3):                                    # generic, specialised, short path
        np.testing.assert_allclose(st.grad(f)(*args), want, rtol=1e-12, atol=1e-14)


def test_the_tails_and_the_tie_are_the_chains():
    """Far out in both tails the sigmoid is exact (no overflow, no 1 - 1), and at 0 it is the
    half the maximum's tie gave."""
    z = np.array([-800.0, -40.0, -1e-300, 0.0, 1e-300, 40.0, 800.0])
    y = np.zeros_like(z)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = st.grad(cross_entropy_of_logits)(z, y)
    want = _chain_gradient(cross_entropy_of_logits, (z, y))
    np.testing.assert_array_equal(got, want)
    assert got[3] == 0.5 and got[0] == 0.0 and got[-1] == 1.0
    np.testing.assert_allclose(got[1], np.exp(-40.0) / (1 + np.exp(-40.0)), rtol=1e-15)


def test_forward_mode_and_a_hessian():
    z, y = CASES[0][1]()
    t = R.standard_normal(z.shape)
    _, tangent = st.jvp(cross_entropy_of_logits, (z, y), (t, np.zeros_like(y)))
    s = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(tangent, np.sum((s - y) * t), rtol=1e-12)
    hessian = st.hessian(cross_entropy_of_logits)(z[0], y[0])
    np.testing.assert_allclose(hessian, np.diag(s[0] * (1 - s[0])), rtol=1e-10, atol=1e-14)


def test_float32_stays_float32():
    z, y = (a.astype(np.float32) for a in CASES[0][1]())
    want = st.grad(cross_entropy_of_logits, optimize=False)(z, y)
    for _ in range(3):
        got = st.grad(cross_entropy_of_logits)(z, y)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", [cross_entropy_of_logits, softplus_by_log])
def test_it_is_batched_without_a_loop_over_the_members(f):
    z, w = 3 * R.standard_normal((4, 3, 4)), R.standard_normal((4, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no BatchingWarning: no member loop
        values = st.vmap(f)(z, w)
        gradients = st.vmap(st.grad(f))(z, w)
    np.testing.assert_allclose(values, [f(z[k], w[k]) for k in range(4)], rtol=1e-12)
    np.testing.assert_allclose(gradients, [st.grad(f)(z[k], w[k]) for k in range(4)],
                               rtol=1e-12)


def opposite_signs(z):
    return np.sum(np.maximum(z, 0) - np.log1p(np.exp(-np.abs(z))))


def maximum_read_twice(z):
    m = np.maximum(z, 0)
    return np.sum(m + np.log1p(np.exp(-np.abs(z)))) + np.sum(m * m)


def another_argument(z, x):
    return np.sum(np.maximum(x, 0) + np.log1p(np.exp(-np.abs(z))))


def other_floor(z):
    return np.sum(np.maximum(z, 1.0) + np.log1p(np.exp(-np.abs(z))))


def not_recorded(z):
    with st.stop_recording():
        t = np.log1p(np.exp(-np.abs(z)))
    return np.sum(np.maximum(z, 0) + t)


def hooked(z):
    t = np.log1p(np.exp(-np.abs(z)))
    with st.grad_of(t) as dt:
        dt = dt * 0.5
    return np.sum(np.maximum(z, 0) + t)


def summed_apart(z):
    return np.sum(np.maximum(z, 0)) + np.sum(np.log1p(np.exp(-np.abs(z))))


@pytest.mark.parametrize("f", [opposite_signs, maximum_read_twice, other_floor, not_recorded,
                               hooked, summed_apart])
def test_other_forms_keep_the_chain(f):
    """Terms whose cotangents may differ (a sign, another read, a stopped or hooked term, two
    sums), or that are not a softplus of one ``z``: each rule as before."""
    z = 3 * R.standard_normal((3, 4))
    assert "log1p_tail" not in st.source(f, args=(z,))
    np.testing.assert_allclose(st.grad(f)(z), _chain_gradient(f, (z,)), rtol=1e-12)
    if f not in (not_recorded, hooked):                  # (their gradients are changed)
        st.check_grads(f, (z,), order=2)


def test_a_term_of_another_value_keeps_the_chain():
    z, x = 3 * R.standard_normal((3, 4)), 3 * R.standard_normal((3, 4))
    assert "log1p_tail" not in st.source(another_argument, args=(z, x))
    st.check_grads(another_argument, (z, x), order=2)


def test_a_users_rule_of_the_maximum_keeps_the_chain():
    from srctrans.rules import REGISTRY
    z, y = CASES[0][1]()
    saved = REGISTRY.user_rules()
    try:
        st.register_vjp(np.maximum, lambda g, ans, x, y: (2.0 * g * (x > y), None))
        assert "log1p_tail" not in st.source(cross_entropy_of_logits, args=(z, y))
        s = 1 / (1 + np.exp(-np.abs(z)))
        want = 2.0 * (z > 0) - y - np.sign(z) * (1 - s)
        np.testing.assert_allclose(st.grad(cross_entropy_of_logits)(z, y), want, rtol=1e-10)
    finally:
        REGISTRY.restore_user_rules(saved)
        st.clear_cache()

"""The log of a softmax computed as probabilities is one call of the runtime whose derivatives
are the log-softmax's closed forms (normalize/softmax_logs.py, runtime/softmax_logs.py): the
value is the program's np.log(p); the derivatives match finite differences in both modes, to
second order, and the generic code's; other spellings stay as they were."""

import warnings

import numpy as np
import pytest

import srctrans as st

R = np.random.default_rng(43)


def cross_entropy(z, T):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return -np.sum(T * np.log(p))


def unshifted_by_function(z, w):
    e = np.exp(z)
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(w * np.log(p))


def along_the_first_axis(z, w):
    e = np.exp(np.tanh(z))
    s = np.sum(e, axis=0, keepdims=True)
    logp = np.log(e / s)
    return np.sum(np.sin(logp) * w)


def three_axes_and_p_read_again(x, w):
    e = np.exp(x * 2.0 - np.max(x * 2.0, axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return np.sum(w * np.log(p)) + np.sum(p ** 2)


CASES = [
    (cross_entropy, lambda: (R.standard_normal((5, 4)), np.eye(4)[R.integers(0, 4, 5)])),
    (unshifted_by_function, lambda: (R.standard_normal((3, 4)), R.standard_normal((3, 4)))),
    (along_the_first_axis, lambda: (R.standard_normal((3, 2)), R.standard_normal((3, 2)))),
    (three_axes_and_p_read_again, lambda: (R.standard_normal((2, 3, 4)),
                                           R.standard_normal((2, 3, 4)))),
]
IDS = [f.__name__ for f, _ in CASES]


def _fused(f, args):
    return st.source(f, args=args).split(f"def {f.__name__}_grad(")[1].split("\ndef ")[0]


@pytest.mark.parametrize("f, build", CASES, ids=IDS)
def test_the_log_is_one_call_and_its_derivatives_match_finite_differences(f, build):
    args = build()
    fused = _fused(f, args)
    # the generic code calls the helper; the fused gradient writes it out (the shapes known)
    assert "rt.log_of_softmax_grad(" in st.source(f)
    assert "rt.log_of_softmax_grad(" not in fused and ".sum(axis=" in fused
    if f is not three_axes_and_p_read_again:          # (p ** 2's chain guards its ratio)
        assert "zero_guard" not in fused
    st.check_grads(f, args, order=2)
    value, _ = st.value_and_grad(f)(*args)
    assert value == f(*args)                              # the program's own value, exactly
    want = st.grad(f, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        np.testing.assert_allclose(st.grad(f)(*args), want, rtol=1e-12, atol=1e-14)


def test_a_cross_entropys_fused_gradient_is_an_experts():
    """The helper written out, and the cross-entropy's cotangent -T taken into it
    (optimise/negated_names.py): p times the labels' row sums, less the labels."""
    args = CASES[0][1]()
    assert "d_sub = p * T.sum(axis=-1, keepdims=True) - T\n" in _fused(cross_entropy, args)


def test_the_max_subtracted_carries_no_derivative_still():
    """The shift's invariance (analyse/invariance.py) reads the call as the log it is: the
    maximum's cotangent is not computed."""
    z, T = CASES[0][1]()
    generic = st.source(cross_entropy)
    assert "extremum_grad" not in generic and "rt.log_of_softmax(" in generic


def test_float32_stays_float32():
    z = R.standard_normal((5, 4)).astype(np.float32)
    T = np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0]]
    want = st.grad(cross_entropy, optimize=False)(z, T)
    for _ in range(3):
        got = st.grad(cross_entropy)(z, T)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_broadcast_weights_and_a_vjp_of_the_log_itself():
    """A cotangent of the log's own shape from st.vjp, and weights broadcast against it."""
    z, w = R.standard_normal((3, 4)), R.standard_normal(4)

    out, pullback = st.vjp(log_probabilities, z)
    g = R.standard_normal((3, 4))
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(pullback(g)[0], g - p * g.sum(axis=1, keepdims=True), rtol=1e-12)
    st.check_grads(unshifted_by_function, (z, w), order=2)


def log_probabilities(z):
    e = np.exp(z)
    return np.log(e / e.sum(axis=1, keepdims=True))


def test_a_softmax_logs_gradient_keeps_a_duck_array_one():
    from duck_arrays import Duck, wrap
    z, T = CASES[0][1]()
    got = st.grad(cross_entropy)(wrap(z), wrap(T))
    assert isinstance(got, Duck)
    np.testing.assert_allclose(got.data, st.grad(cross_entropy)(z, T), rtol=1e-12)


@pytest.mark.parametrize("f", [cross_entropy, unshifted_by_function, along_the_first_axis])
def test_it_is_batched_without_a_loop_over_the_members(f):
    """st.vmap of the function and of its gradient: the helpers' axis moves past the batch's."""
    z, w = R.standard_normal((4, 3, 2)), R.standard_normal((4, 3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no BatchingWarning: no member loop
        values = st.vmap(f)(z, w)
        gradients = st.vmap(st.grad(f))(z, w)
    np.testing.assert_allclose(values, [f(z[k], w[k]) for k in range(4)], rtol=1e-12)
    np.testing.assert_allclose(gradients, [st.grad(f)(z[k], w[k]) for k in range(4)],
                               rtol=1e-12)


def probabilities_not_recorded(z, T):
    with st.stop_recording():
        e = np.exp(z - z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
    return -np.sum(T * np.log(p)) + np.sum(z * z)


def probabilities_hooked(z, T):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    with st.grad_of(p) as dp:
        dp = dp * 0.5
    return -np.sum(T * np.log(p))


def test_a_stopped_or_hooked_softmax_keeps_the_chain():
    """The log's term would reach the logits past what a stop_recording block stops or a
    grad_of hook changes: such probabilities are no link of the pattern."""
    z, T = CASES[0][1]()
    assert "log_of_softmax" not in st.source(probabilities_not_recorded)
    np.testing.assert_allclose(st.grad(probabilities_not_recorded)(z, T), 2 * z, rtol=1e-12)
    assert "log_of_softmax" not in st.source(probabilities_hooked)
    half = 0.5 * st.grad(cross_entropy)(z, T)
    for _ in range(3):
        np.testing.assert_allclose(st.grad(probabilities_hooked)(z, T), half, rtol=1e-10)


def test_a_users_rule_of_the_exponential_keeps_the_chain():
    """A rule the user registers for np.exp (here: twice its derivative) is the one the
    gradient uses, as it would without the pattern; registering it builds again."""
    from srctrans.rules import REGISTRY
    z, T = CASES[0][1]()
    before = st.grad(cross_entropy)(z, T)
    saved = REGISTRY.user_rules()
    try:
        st.register_vjp(np.exp, lambda g, ans, x: (2.0 * g * ans,))
        st.register_jvp(np.exp, lambda tangents, ans, x: 2.0 * tangents[0] * ans)
        assert "log_of_softmax" not in st.source(cross_entropy)
        np.testing.assert_allclose(st.grad(cross_entropy)(z, T), 2.0 * before, rtol=1e-10)
    finally:
        REGISTRY.restore_user_rules(saved)
        st.clear_cache()


def kept_dims_missing(z):
    e = np.exp(z)
    p = e / e.sum(axis=1)[:, None]
    return np.sum(np.log(p))


def over_the_whole_array(z):
    e = np.exp(z)
    return np.sum(z * np.log(e / np.sum(e)))


def another_numerator(z):
    e = np.exp(z)
    p = np.exp(z * 0.5) / e.sum(axis=1, keepdims=True)
    return np.sum(np.log(p))


def exponent_reassigned(z):
    a = z * 2.0
    e = np.exp(a)
    for _ in range(2):
        a = a + 1.0
    p = e / e.sum(axis=1, keepdims=True)
    return np.sum(np.log(p) * a)


@pytest.mark.parametrize("f", [kept_dims_missing, over_the_whole_array, another_numerator,
                               exponent_reassigned])
def test_other_spellings_keep_the_chain(f):
    z = R.standard_normal((3, 4))
    assert "log_of_softmax" not in st.source(f, args=(z,))
    st.check_grads(f, (z,), order=1)


# --- the softmax itself: p = e / e.sum(...) is rt.softmax_ratio (its closed derivatives) ---

def attention(Q, K, V, G):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    A = e / e.sum(axis=-1, keepdims=True)
    return np.sum((A @ V) * G)


def weighted_with_e_read_again(z, w):
    e = np.exp(z)
    p = e / np.sum(e, axis=0, keepdims=True)
    return np.sum(w * p) + np.sum(np.sqrt(e))          # e's own read keeps its chain


RATIO_CASES = [
    (attention, lambda: (R.standard_normal((3, 4)), R.standard_normal((5, 4)),
                         R.standard_normal((5, 2)), R.standard_normal((3, 2)))),
    (weighted_with_e_read_again, lambda: (R.standard_normal((3, 4)), R.standard_normal(4))),
    (three_axes_and_p_read_again, CASES[3][1]),
]


@pytest.mark.parametrize("f, build", RATIO_CASES, ids=[f.__name__ for f, _ in RATIO_CASES])
def test_a_softmax_is_one_call_and_its_derivatives_match_finite_differences(f, build):
    args = build()
    assert "rt.softmax_ratio(" in st.source(f) and "rt.softmax_ratio_grad(" in st.source(f)
    fused = _fused(f, args)
    assert "rt.softmax" not in fused and "zero_guard" not in fused
    st.check_grads(f, args, order=2)
    value, _ = st.value_and_grad(f)(*args)
    assert value == f(*args)                              # the program's own value, exactly
    wrt = tuple(range(len(args)))
    for _ in range(3):
        got = st.grad(f, wrt=wrt)(*args)
        want = st.grad(f, wrt=wrt, optimize=False)(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_an_attentions_fused_gradient_is_an_experts():
    args = RATIO_CASES[0][1]()
    fused = _fused(attention, args)
    assert "A = e / e.sum(axis=-1, keepdims=True)" in fused
    assert "A * (dA - (dA * A).sum(axis=-1, keepdims=True))" in fused
    assert "extremum_grad" not in st.source(attention)   # the maximum: no derivative still


def test_a_softmax_in_float32_stays_float32_and_is_batched():
    args = [a.astype(np.float32) for a in RATIO_CASES[0][1]()]
    want = st.grad(attention, optimize=False)(*args)
    for _ in range(3):
        got = st.grad(attention)(*args)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    z, w = R.standard_normal((4, 3, 2)), R.standard_normal((4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no BatchingWarning: no member loop
        gradients = st.vmap(st.grad(weighted_with_e_read_again))(z, w)
    np.testing.assert_allclose(gradients, [st.grad(weighted_with_e_read_again)(z[k], w[k])
                                           for k in range(4)], rtol=1e-12)


def test_a_stopped_or_hooked_softmax_is_no_ratio_call():
    assert "softmax_ratio" not in st.source(probabilities_not_recorded)
    assert "softmax_ratio" not in st.source(probabilities_hooked)
    for f in (kept_dims_missing, over_the_whole_array, another_numerator, exponent_reassigned):
        assert "softmax_ratio" not in st.source(f), f.__name__

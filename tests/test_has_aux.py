"""Auxiliary outputs: `has_aux=True` in every transform, JAX's conventions, aux of every kind
read from the forward pass and never differentiated (docs/outputs.md)."""

import inspect

import numpy as np
import pytest

import srctrans as st
from programs import outputs

RNG = np.random.default_rng(7)
W = RNG.standard_normal(3)
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal(5)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _same_metrics(aux, expected):
    assert aux.keys() == expected.keys()
    for key in aux:
        if key == "name":
            assert aux[key] == expected[key]
        else:
            np.testing.assert_allclose(aux[key], expected[key])


def test_grad_and_value_and_grad_return_jax_pairs():
    expected_loss, expected_aux = outputs.loss_with_metrics(W, X, Y)
    want = st.grad(outputs.loss_alone)(W, X, Y)
    for _ in range(3):                 # generic, then specialised code
        g, aux = st.grad(outputs.loss_with_metrics, has_aux=True)(W, X, Y)
        np.testing.assert_allclose(g, want, rtol=1e-12)
        _same_metrics(aux, expected_aux)
        (value, aux), g = st.value_and_grad(outputs.loss_with_metrics, has_aux=True)(W, X, Y)
        assert value == pytest.approx(expected_loss)
        np.testing.assert_allclose(g, want, rtol=1e-12)
        assert aux["name"] == "tanh" and aux["hits"] == expected_aux["hits"]


def test_several_arguments_and_output_gradients():
    g, aux = st.grad(outputs.loss_with_metrics, wrt=(0, 1), has_aux=True)(
        W, X, Y, output_gradients=2.0)
    want = st.grad(outputs.loss_alone, wrt=(0, 1))(W, X, Y, output_gradients=2.0)
    for a, b in zip(g, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_vjp_and_jvp_return_jax_triples():
    out, pullback, aux = st.vjp(outputs.loss_with_metrics, W, X, Y, has_aux=True)
    assert out == pytest.approx(outputs.loss_alone(W, X, Y)) and aux["name"] == "tanh"
    want = st.vjp(outputs.loss_alone, W, X, Y)[1](3.0)
    for a, b in zip(pullback(3.0), want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    v = RNG.standard_normal(3)
    for _ in range(3):
        out, tangent, aux = st.jvp(outputs.loss_with_metrics, (W, X, Y), (v, None, None),
                                   has_aux=True)
        assert tangent == pytest.approx(st.jvp(outputs.loss_alone, (W, X, Y), (v, None, None))[1])
        np.testing.assert_allclose(aux["prediction"], np.tanh(X @ W))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_vector_output_with_aux(mode):
    jacobian, (index, doubled) = st.jacobian(outputs.vector_with_aux, has_aux=True, mode=mode)(W)
    expected = np.diag(np.tanh(W) + W * (1 - np.tanh(W) ** 2))
    np.testing.assert_allclose(jacobian, expected, rtol=1e-12)
    assert index == np.argmax(W)
    np.testing.assert_allclose(doubled, 2 * W)


def test_hessian_with_aux():
    x = np.array([0.5, 1.2, -0.3, 0.8])
    hessian, aux = st.hessian(outputs.rosen_with_aux, has_aux=True)(x)
    np.testing.assert_allclose(hessian, st.hessian(outputs.rosen)(x), rtol=1e-12)
    assert aux["x_max"] == 1.2


@pytest.mark.parametrize("fn", [outputs.pair_in_a_name, outputs.aux_of_branches,
                                outputs.aux_dataclass])
def test_aux_of_any_kind_and_returns_of_any_form(fn):
    expected = fn(W, X, Y)
    for _ in range(3):
        g, aux = st.grad(fn, has_aux=True)(W, X, Y)
        out, tangent, aux2 = st.jvp(fn, (W, X, Y), (np.ones(3), None, None), has_aux=True)
        assert type(aux) is type(expected[1]) and type(aux2) is type(expected[1])
    np.testing.assert_allclose(g, _numeric_gradient(lambda w: fn(w, X, Y)[0], W), rtol=1e-6)
    assert tangent == pytest.approx(np.sum(g), rel=1e-9)


def _numeric_gradient(f, w, eps=1e-6):
    return np.array([(f(w + eps * e) - f(w - eps * e)) / (2 * eps) for e in np.eye(len(w))])


def test_a_method_returning_metrics():
    model = outputs.Model(2.0)
    g, aux = st.grad(model.loss, has_aux=True)(W, X)
    np.testing.assert_allclose(g, 2 * 4.0 * X.T @ (X @ W), rtol=1e-12)
    np.testing.assert_allclose(aux["z"], 2.0 * X @ W)


def test_the_aux_has_no_derivative_code():
    """The backward pass reads only the output's cotangent: the line that only computes aux
    (the metrics dict) has no derivative code."""
    st.grad(outputs.loss_with_metrics, has_aux=True)(W, X, Y)
    text = st.source(outputs.loss_with_metrics)       # the plain function's own build
    assert "stop_gradient" not in text                # the has_aux variant is a separate build
    g = st.grad(outputs.loss_with_metrics, has_aux=True)
    g(W, X, Y)
    from srctrans import cache
    from srctrans.normalize.auxiliary import variant_with_aux
    variant = variant_with_aux(outputs.loss_with_metrics)
    built = cache.instance(variant, ("w",)).build.source
    backward = built[built.index("_bwd("):]
    metrics_line = _line_of(outputs.loss_with_metrics, "metrics = {")
    assert f"# line {metrics_line}:" in built and f"# line {metrics_line}:" not in backward
    assert "d_out[1]" not in backward and "dmetrics" not in backward


def test_a_gradient_returned_beside_aux_does_not_share_memory_with_it():
    g, aux = st.grad(outputs.aux_is_the_argument, has_aux=True)(W)
    assert aux is W                                    # aux as the function returned it
    assert not np.shares_memory(g, W)


def test_not_a_pair_is_an_error_at_the_return():
    with pytest.raises(st.UsageError, match="this return gives 3 values") as raised:
        st.grad(outputs.three_values, has_aux=True)(W)
    assert raised.value.location.lineno == _line_of(outputs.three_values, "return np.sum")
    for call in [lambda: st.grad(outputs.not_a_pair, has_aux=True)(W),
                 lambda: st.vjp(outputs.not_a_pair, W, has_aux=True),
                 lambda: st.jvp(outputs.not_a_pair, (W,), (W,), has_aux=True),
                 lambda: st.jacobian(outputs.not_a_pair, has_aux=True, mode="forward")(W),
                 lambda: st.hessian(outputs.not_a_pair, has_aux=True)(W)]:
        with pytest.raises(st.UsageError, match="must return a pair .* returned a float64") as raised:
            call()
        assert raised.value.location.lineno == _line_of(outputs.not_a_pair, "return total")


def test_an_output_without_a_derivative_is_still_refused_beside_aux():
    with pytest.raises(st.NonDifferentiableError, match="returns an int here") as raised:
        st.grad(outputs.int_output_with_aux, has_aux=True)(W)
    assert raised.value.location.lineno == _line_of(outputs.int_output_with_aux, "return int")


def test_derivatives_of_a_has_aux_gradient_are_refused():
    with pytest.raises(st.UsageError, match="has_aux=True"):
        st.grad(st.grad(outputs.loss_with_metrics, has_aux=True))(W, X, Y)


def test_the_plain_function_keeps_its_own_derivative():
    """Differentiating f with and without has_aux are two builds of one code object."""
    g, aux = st.grad(outputs.vector_with_aux, has_aux=True)(W)
    jacobian = st.jacobian(outputs.vector_with_aux)(W)      # the whole tuple: two blocks
    assert isinstance(jacobian, tuple) and len(jacobian) == 2
    np.testing.assert_allclose(g, np.sum(st.jacobian(outputs.vector_with_aux, has_aux=True)(W)[0],
                                         axis=0))


def test_the_hessian_reads_aux_from_the_gradient_function_s_run():
    """The generated gradient function of a has-aux function returns (gradients, aux): the
    Hessian's aux is read from the run that computed its first column, not from another."""
    from srctrans import cache
    from srctrans.normalize.auxiliary import variant_with_aux
    x = np.array([0.5, 1.2, -0.3, 0.8])
    st.hessian(outputs.rosen_with_aux, has_aux=True)(x)
    built = cache.gradient_instance(variant_with_aux(outputs.rosen_with_aux), ("x",)).build.source
    assert built.rstrip().splitlines()[-1].strip() == "return ((dx,), _out[1])"
    hessian, aux = st.hessian(outputs.loss_with_metrics, has_aux=True, wrt=(0, 1))(W, X, Y)
    assert aux["name"] == "tanh" and aux["hits"] == outputs.loss_with_metrics(W, X, Y)[1]["hits"]

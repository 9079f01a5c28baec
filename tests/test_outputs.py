"""An output without a derivative is one NonDifferentiableError at the user's `return`, in
every transform (docs/outputs.md)."""

import inspect

import numpy as np
import pytest

import srctrans as st
from programs import outputs

X = np.array([-1.0, 2.0, 3.0])


def _line_of(fn, text):
    """The file line of ``fn`` holding ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


TRANSFORMS = {
    "grad": lambda f, x: st.grad(f)(x),
    "value_and_grad": lambda f, x: st.value_and_grad(f)(x),
    "vjp": lambda f, x: st.vjp(f, x),
    "jvp": lambda f, x: st.jvp(f, (x,), (np.ones_like(x),)),
    "jacobian": lambda f, x: st.jacobian(f)(x),
    "jacobian-forward": lambda f, x: st.jacobian(f, mode="forward")(x),
    "hessian": lambda f, x: st.hessian(f)(x),
    "hvp": lambda f, x: st.hvp(f, (x,), (np.ones_like(x),)),
    "check_grads": lambda f, x: st.check_grads(f, (x,)),
}

# (function, the text of the line the error names, what the message says)
NO_DERIVATIVE = [
    (outputs.forgotten_return, "def forgotten_return", "has no return statement with a value"),
    (outputs.only_an_effect, "def only_an_effect", "has no return statement with a value"),
    (outputs.returns_none, "return None", "returns None here"),
    (outputs.returns_int, "return int(", "returns an int here"),
    (outputs.returns_bool, "return bool(", "returns a bool here"),
    (outputs.returns_int_array, "return np.argsort", "returns an array of int64 here"),
    (outputs.returns_string, 'return "done"', "returns a str here"),
    (outputs.returns_with_label, 'return np.sum(x), "label"', "a container holding a str"),
]


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("fn, text, words", NO_DERIVATIVE, ids=[c[0].__name__ for c in NO_DERIVATIVE])
def test_an_output_without_a_derivative_is_an_error_at_its_return(fn, text, words, transform):
    with pytest.raises(st.NonDifferentiableError) as raised:
        TRANSFORMS[transform](fn, X)
    error = raised.value
    assert words in error.message
    assert error.location.filename == outputs.__file__
    assert error.location.lineno == _line_of(fn, text)
    assert f"{outputs.__file__}:{_line_of(fn, text)}" in str(error)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp-default"])
def test_an_int_beside_the_output_is_an_error_where_ones_are_seeded(transform):
    call = (lambda f, x: st.vjp(f, x)[1](None)) if transform == "vjp-default" \
        else TRANSFORMS[transform]
    with pytest.raises(st.NonDifferentiableError, match="a container holding an int") as raised:
        call(outputs.returns_with_count, X)
    assert raised.value.location.lineno == _line_of(outputs.returns_with_count, "return np.sum")


def test_elsewhere_an_int_beside_the_output_is_a_constant():
    """As an int entry of a container argument: no derivative, None blocks, zero tangents."""
    jacobian = st.jacobian(outputs.returns_with_count)(X)
    np.testing.assert_allclose(jacobian[0], 2 * X)
    assert jacobian[1] is None
    np.testing.assert_allclose(st.hessian(outputs.returns_with_count)(X), 2 * np.eye(3))
    np.testing.assert_allclose(st.hvp(outputs.returns_with_count, (X,), (X,))[0], 2 * X)
    st.check_grads(outputs.returns_with_count, (X,), order=2)


def test_of_several_returns_the_one_taken_is_named():
    g = st.grad(outputs.two_returns)
    np.testing.assert_allclose(g(-X), -2 * X)            # x[0] > 0: the float return
    with pytest.raises(st.NonDifferentiableError) as raised:
        g(X)
    assert raised.value.location.lineno == _line_of(outputs.two_returns, "return 3")
    for _ in range(2):                                    # again, on the specialised path
        np.testing.assert_allclose(g(-X), -2 * X)
        with pytest.raises(st.NonDifferentiableError, match="returns an int here"):
            g(X)


def test_a_method_with_a_docstring_and_validation_is_located_too():
    with pytest.raises(st.NonDifferentiableError) as raised:
        st.grad(outputs.Counter().count)(X)
    assert raised.value.location.lineno == _line_of(outputs.Counter.count, "return np.count_nonzero")


def test_check_grads_fails_on_an_int_output_instead_of_passing():
    with pytest.raises(st.NonDifferentiableError):
        st.check_grads(outputs.returns_int, (X,))


def test_given_cotangents_ask_nothing_of_entries_without_a_derivative():
    a = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, -1.0]])
    b = np.array([1.0, -1.0, 2.0])
    out, pullback = st.vjp(outputs.lstsq_all, a, b)
    assert out[2] == 2
    dx = np.array([1.0, -2.0])
    zeros = [np.zeros_like(out[1]), np.zeros_like(out[3])]     # (None for a float: ones)
    da, db = pullback((dx, zeros[0], None, zeros[1]))
    np.testing.assert_allclose(db, np.linalg.pinv(a).T @ dx, atol=1e-12)   # x = pinv(a) b
    da2, db2 = pullback((dx, zeros[0], 0, zeros[1]))
    np.testing.assert_allclose(db2, db)
    with pytest.raises(st.NonDifferentiableError, match=r"output_gradients\[2\] gives a nonzero"):
        pullback((dx, zeros[0], 1, zeros[1]))
    with pytest.raises(st.NonDifferentiableError, match="a container holding an int"):
        st.grad(outputs.lstsq_all)(a, b)                  # ones asked of the rank


def test_forward_mode_gives_an_int_entry_a_zero_tangent():
    out, tangent = st.jvp(outputs.returns_with_count, (X,), (np.ones(3),))
    assert out[1] == 3 and tangent[1] == 0
    assert tangent[0] == pytest.approx(2 * np.sum(X))

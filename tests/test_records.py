"""Dataclasses and named tuples made inside the differentiated function are containers of
their fields: both modes, second order, returned, passed on (docs/syntax.md)."""

import numpy as np
import pytest

import srctrans as st
from programs import records

X = np.array([0.3, -0.2, 0.5])

FUNCTIONS = [records.keywords_and_defaults, records.recurrent_state,
             records.named_tuple_default, records.passed_to_a_helper, records.plain_class]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_to_second_order_in_both_modes(fn):
    st.check_grads(fn, (X,), order=2)


def test_the_gradient_is_the_fields_gradient():
    # sum(2x * sum(x)) + 3 + sum(x * 0.5): 4 * sum(x) + 0.5
    np.testing.assert_allclose(st.grad(records.keywords_and_defaults)(X), 4 * np.sum(X) + 0.5)
    np.testing.assert_allclose(st.grad(records.named_tuple_default)(X), 2 * np.cos(X))


def test_a_returned_record_has_a_tangent_and_a_vjp_of_its_kind():
    out, tangent = st.jvp(records.returns_a_record, (X,), (np.ones(3),))
    assert type(out) is records.Params and type(tangent) is records.Params
    np.testing.assert_allclose(tangent.w, np.exp(X))
    assert tangent.b == pytest.approx(3.0)
    out, pullback = st.vjp(records.returns_a_record, X)
    (g,) = pullback(records.Params(np.ones(3), 2.0, 0))
    np.testing.assert_allclose(g, np.exp(X) + 2.0)
    st.check_grads(records.returns_a_record, (X,), order=2)


def test_classes_that_are_not_plain_records_are_still_refused():
    np.testing.assert_allclose(st.grad(records.plain_class)(X), 8 * X)
    for fn in (records.post_init, records.computing_class):
        with pytest.raises(st.UnsupportedSyntaxError, match="making an object of your class"):
            st.grad(fn)(X)

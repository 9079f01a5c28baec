"""Dataclasses and named tuples made inside the differentiated function are containers of
their fields: both modes, second order, returned, passed on (docs/syntax.md)."""

from typing import NamedTuple

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


class State(NamedTuple):
    h: np.ndarray
    steps: int


class Rescaled(State):
    def __new__(cls, h, steps):            # a __new__ of its own: called for its cotangents too
        return super().__new__(cls, h * 1.0, steps)


class Computed(State):
    @property
    def h(self):
        return self[0] * 2.0


@pytest.mark.parametrize("kind", [State, Rescaled], ids=["plain", "own_new"])
def test_a_named_tuple_states_cotangents_are_the_same_on_every_call(kind):
    from srctrans import runtime as rt
    state, g = kind(np.ones(2), 3), np.array([0.5, -1.0])
    for _ in range(3):              # the first call checks the fields; later ones know them
        picked = rt.getattr_grad(g, state, "h")
        made = rt.attributes_cotangent({"h": g, "steps": 0.0}, state)
        only_steps = rt.getattr_grad(1.0, state, "steps")
        for cotangent in (picked, made):      # (Rescaled's __new__ copies: it was called)
            assert type(cotangent) is kind and cotangent.steps == 0.0
            assert (cotangent.h is g) == (kind is State)
            np.testing.assert_array_equal(cotangent.h, g)
        assert type(only_steps) is kind and only_steps.steps == 0.0
        np.testing.assert_array_equal(only_steps.h, np.zeros(2))
        assert rt.record_fields(made, state)[0] is made.h
        broadcast = rt.attributes_cotangent({"h": 2.0}, state)        # conformed to h's shape
        np.testing.assert_array_equal(broadcast.h, [2.0, 2.0])
        assert broadcast.steps == 0.0


def test_a_field_a_subclass_computes_is_refused_on_every_call():
    from srctrans import runtime as rt
    rt.attributes_cotangent({"h": np.ones(2)}, State(np.ones(2), 1))     # its base's is plain
    for _ in range(2):
        with pytest.raises(st.SrcTransError, match="property"):
            rt.attributes_cotangent({"h": np.ones(2)}, Computed(np.ones(2), 1))
        with pytest.raises(st.SrcTransError, match="property"):
            rt.getattr_grad(np.ones(2), Computed(np.ones(2), 1), "h")

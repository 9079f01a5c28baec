"""Containers as arguments, locals and results: gradients come back in the same structure."""

import collections

import numpy as np
import pytest

import srctrans as st
from programs import containers as c


def _rng(seed):
    return np.random.default_rng(seed)


CASES = [
    (c.dict_params, lambda r: ({"W1": r.standard_normal((3, 4)), "b1": r.standard_normal(4),
                                "W2": r.standard_normal((4, 2))}, r.standard_normal((5, 3))), (0, 1)),
    (c.list_of_layers, lambda r: ([r.standard_normal((3, 3)), r.standard_normal((3, 2))],
                                  r.standard_normal((2, 3))), (0, 1)),
    (c.tuple_argument, lambda r: ((r.standard_normal(3), r.standard_normal(3)), r.standard_normal(3)), (0, 1)),
    (c.nested_containers, lambda r: ({"layers": [r.standard_normal((3, 4)), r.standard_normal((4, 2))],
                                      "scale": 0.5}, r.standard_normal((2, 3))), (0, 1)),
    (c.collect_and_stack, lambda r: (r.standard_normal((2, 3)), 0.5 * r.standard_normal((3, 3))), (0, 1)),
    (c.collect_and_concatenate, lambda r: (r.standard_normal(3),), (0,)),
    (c.returns_dict, lambda r: (r.standard_normal(3), r.standard_normal(3)), (0, 1)),
    (c.returns_list, lambda r: (r.standard_normal(3),), (0,)),
    (c.namedtuple_argument, lambda r: (c.Layer(r.standard_normal((3, 2)), r.standard_normal(2)),
                                       r.standard_normal((4, 3))), (0, 1)),
    (c.dataclass_argument, lambda r: (c.Params(0.5 * r.standard_normal((3, 3)), r.standard_normal(3)),
                                      r.standard_normal((2, 3))), (0, 1)),
    (c.builds_a_tuple, lambda r: (r.standard_normal(3),), (0,)),
    (c.indexes_a_list, lambda r: (r.standard_normal(3), r.standard_normal(3)), (0, 1)),
    (c.list_comprehension, lambda r: (r.standard_normal((3, 2)), r.standard_normal((2, 2))), (0, 1)),
    (c.comprehension_over_rows, lambda r: (r.standard_normal((4, 3)), r.standard_normal(3)), (0, 1)),
    (c.generator_in_builtin_sum, lambda r: ([r.standard_normal(2), r.standard_normal(3)],), (0,)),
    (c.builtin_min_max_abs_float, lambda r: (0.3, 0.8), (0, 1)),
    (c.builtin_min_max_abs_float, lambda r: (1.5, -0.4), (0, 1)),
    (c.calls_varargs, lambda r: (r.standard_normal(3), r.standard_normal(3)), (0, 1)),
    (c.local_def_and_closure, lambda r: (r.standard_normal((2, 3)), 0.5 * r.standard_normal((3, 3))), (0, 1)),
    (c.local_lambda, lambda r: (r.standard_normal(3), r.standard_normal(3)), (0, 1)),
    (c.local_function_in_loop, lambda r: (r.standard_normal(3),), (0,)),
    (c.dict_comprehension, lambda r: ({"a": r.standard_normal(3), "b": r.standard_normal((3, 2)),
                                        "skip": r.standard_normal(2)}, r.standard_normal((4, 3))), (0, 1)),
    (c.loops_over_dict_items, lambda r: ({"a": r.standard_normal((3, 2)), "b": r.standard_normal((3, 2))},
                                         r.standard_normal((4, 3))), (0, 1)),
    (c.dict_builtin_forms, lambda r: ({"a": r.standard_normal(3), "b": r.standard_normal(3)},
                                      r.standard_normal(3), r.standard_normal(3)), (0, 1, 2)),
    (c.dict_methods, lambda r: ({"scale": r.standard_normal(3), "w": r.standard_normal((2, 3))},
                                r.standard_normal(3)), (0, 1)),
    (c.nested_loop_targets, lambda r: ([r.standard_normal(3) for _ in range(3)],
                                       [r.standard_normal(3) for _ in range(2)],
                                       {"ab": (r.standard_normal(3), r.standard_normal(3)),
                                        "c": (r.standard_normal(3), r.standard_normal(3))}),
     (0, 1, 2)),
    (c.sorted_and_keyed, lambda r: (r.standard_normal(3), r.standard_normal(3) + 0.5,
                                    r.standard_normal(3) - 0.5), (0, 1, 2)),
    (c.written_after_building, lambda r: ({"a": r.standard_normal(3), "b": r.standard_normal(3)},
                                          [r.standard_normal(3), r.standard_normal(3)],
                                          r.standard_normal(3)), (0, 1, 2)),
    (c.iterates_a_dict, lambda r: ({"a": r.standard_normal(3), "bc": r.standard_normal(3)},
                                   r.standard_normal(3)), (0, 1)),
    (c.sorted_keys_of_dicts, lambda r: ({"b": r.standard_normal(3), "a": r.standard_normal(3)},
                                        r.standard_normal(3), r.standard_normal(3)), (0, 1, 2)),
    (c.pops_a_stack, lambda r: (r.standard_normal(3), r.standard_normal(3)), (0, 1)),
]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case[0].__name__ for case in CASES])
def test_matches_finite_differences(index):
    fn, build, wrt = CASES[index]
    st.check_grads(fn, build(_rng(index)), wrt=wrt, seed=index, order=2)


def test_dict_of_parameters_in_dict_of_gradients_out():
    rng = _rng(1)
    params = {"W1": rng.standard_normal((3, 4)), "b1": rng.standard_normal(4),
              "W2": rng.standard_normal((4, 2))}
    grads = st.grad(c.dict_params)(params, rng.standard_normal((5, 3)))
    assert isinstance(grads, dict) and set(grads) == set(params)
    for key in params:
        assert grads[key].shape == params[key].shape


def test_list_in_list_out_and_named_tuple_in_named_tuple_out():
    rng = _rng(2)
    layers = [rng.standard_normal((3, 3)), rng.standard_normal((3, 2))]
    grads = st.grad(c.list_of_layers)(layers, rng.standard_normal((2, 3)))
    assert isinstance(grads, list) and [g.shape for g in grads] == [(3, 3), (3, 2)]
    layer = c.Layer(rng.standard_normal((3, 2)), rng.standard_normal(2))
    grad = st.grad(c.namedtuple_argument)(layer, rng.standard_normal((4, 3)))
    assert isinstance(grad, c.Layer) and grad.W.shape == (3, 2) and grad.b.shape == (2,)


def test_dataclass_gradient_is_the_same_class_and_int_fields_get_none():
    rng = _rng(3)
    p = c.Params(0.5 * rng.standard_normal((3, 3)), rng.standard_normal(3), steps=3)
    grad = st.grad(c.dataclass_argument)(p, rng.standard_normal((2, 3)))
    assert isinstance(grad, c.Params) and grad.W.shape == (3, 3) and grad.steps is None


def test_output_gradients_for_a_dict_output():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    v = {"sum": 2.0, "diff": np.array([1.0, -1.0])}
    dx, dy = st.grad(c.returns_dict, wrt=(0, 1))(x, y, output_gradients=v)
    np.testing.assert_allclose(dx, 2.0 * y + np.array([1.0, -1.0]))
    np.testing.assert_allclose(dy, 2.0 * x - np.array([1.0, -1.0]))


def test_bound_method_reads_attributes_as_constants():
    rng = _rng(4)
    model = c.Model(rng.standard_normal((3, 2)), rng.standard_normal(2))
    x = rng.standard_normal((4, 3))
    st.check_grads(model.loss, (x,))
    assert st.grad(model.loss)(x).shape == x.shape


def test_gradient_with_respect_to_self_is_a_dict_of_attribute_gradients():
    rng = _rng(5)
    model = c.Model(rng.standard_normal((3, 2)), rng.standard_normal(2))
    x = rng.standard_normal((4, 3))
    grads = st.grad(model.loss, wrt="self")(x)
    assert isinstance(grads, dict) and set(grads) == {"W", "b"}
    # compare with the same function written over explicit arguments
    def explicit(W, b):
        return np.sum(np.tanh(x @ W + b) ** 2)
    eps = 1e-6
    for name in ("W", "b"):
        value = getattr(model, name)
        direction = rng.standard_normal(value.shape)
        args = {"W": model.W, "b": model.b}
        plus = dict(args, **{name: value + eps * direction})
        minus = dict(args, **{name: value - eps * direction})
        numeric = (explicit(**plus) - explicit(**minus)) / (2 * eps)
        assert np.sum(grads[name] * direction) == pytest.approx(numeric, rel=1e-6)


def test_gradient_with_respect_to_self_through_a_loop():
    rng = _rng(6)
    model = c.Recurrent(0.5 * rng.standard_normal((3, 3)))
    xs = rng.standard_normal((4, 2, 3))
    grads = st.grad(model.loss, wrt="self")(xs)
    direction = rng.standard_normal((3, 3))
    eps = 1e-6
    plus, minus = c.Recurrent(model.W + eps * direction), c.Recurrent(model.W - eps * direction)
    numeric = (plus.loss(xs) - minus.loss(xs)) / (2 * eps)
    assert np.sum(grads["W"] * direction) == pytest.approx(numeric, rel=1e-6)


def test_appending_to_a_list_the_caller_passed_is_an_error():
    with pytest.raises(st.UnsupportedSyntaxError, match="may be a list the caller passed"):
        st.grad(c.appends_to_argument, wrt=1)([np.ones(2)], np.ones(2))


def test_dict_unpacking_in_a_display_is_a_clear_error():
    with pytest.raises(st.UnsupportedSyntaxError, match=r"`\*\*` inside a dict display"):
        st.grad(c.unpacks_into_dict, wrt=1)({"a": 1.0}, 2.0)


def test_a_dict_method_of_something_else_is_refused_when_it_runs():
    """srctrans rewrites d.get and d.keys() for a dict; another object's get is refused."""
    class Lookup:
        def get(self, key, default):
            return default
    with pytest.raises(st.SrcTransError, match="dict method or dict"):
        st.grad(c.dict_methods)(Lookup(), np.ones(3))


def test_max_with_default_is_refused_at_the_user_s_line():
    with pytest.raises(st.SrcTransError, match="default=") as raised:
        st.grad(c.max_with_default)(np.ones(3))
    assert "containers.py" in str(raised.value)


def test_iterating_a_dict_argument_the_loop_does_not_index_says_what_to_write():
    with pytest.raises(st.UnsupportedSyntaxError, match=r"d\.keys\(\)") as caught:
        st.grad(c.iterates_a_dict_without_reading_it, wrt=1)({"a": 1.0}, np.ones(3))
    assert "containers.py" in str(caught.value)


def test_an_object_s_int_and_string_attributes_get_no_gradient():
    class Tagged:
        def __init__(self, W, name, count):
            self.W, self.name, self.count = W, name, count

    def tagged_loss(obj, x):
        return np.sum(x @ obj.W) * obj.count * len(obj.name)

    g = st.grad(tagged_loss)(Tagged(np.ones((3, 2)), "abc", 2), np.ones(3))
    assert set(g) == {"W"}
    np.testing.assert_allclose(g["W"], np.full((3, 2), 6.0))


def copied_with_a_derived_entry(p, X, y):
    p = dict(p, w_eff=p["w"] * p["scale"])
    r = X @ p["w_eff"] + p["b"] - y
    return r @ r + 0.1 * p["w"] @ p["w"]


def test_a_dict_copied_with_a_derived_entry_is_specialised():
    """dict(p, k=v) copies p through rt.dict_copy (its cotangent passes), not a loop over
    its keys: the call is specialised, and the gradient is right to second order."""
    rng = np.random.default_rng(4)
    p = {"w": rng.standard_normal(3), "scale": 1.3, "b": 0.2, "name": "ridge"}
    X, y = rng.standard_normal((7, 3)), rng.standard_normal(7)
    source = st.source(copied_with_a_derived_entry, args=(p, X, y))
    assert "specialised on their shapes" in source.splitlines()[0]
    assert "keys_of" not in source
    fused = source.split("def copied_with_a_derived_entry_grad")[1]
    assert "tape" not in fused                   # the entry's save and restore are dropped
    assert "rt.container_cotangent(" in fused    # the copy's cotangent is made once
    g = st.grad(copied_with_a_derived_entry)
    r = X @ (p["w"] * p["scale"]) + p["b"] - y
    for _ in range(3):
        got = g(p, X, y)
        np.testing.assert_allclose(got["w"], 2 * p["scale"] * X.T @ r + 0.2 * p["w"])
        np.testing.assert_allclose(got["scale"], 2 * p["w"] @ (X.T @ r))
        np.testing.assert_allclose(got["b"], 2 * np.sum(r))
        assert got["name"] is None


def weighted(p, x):
    return np.sum(p["w"] * x) + p["b"] ** 2


@pytest.mark.parametrize("kind", [
    lambda d: collections.defaultdict(float, d), collections.OrderedDict, collections.Counter,
], ids=["defaultdict", "OrderedDict", "Counter"])
def test_a_dict_subclass_gets_a_cotangent_of_its_own_kind(kind):
    """The cotangent of a dict subclass is one of its kind, made as its constructor takes it
    (a defaultdict's factory first; a Counter from a dict, not counting pairs)."""
    x = np.array([1.0, -2.0, 0.5])
    p = kind({"w": np.array([0.3, 0.1, 2.0]), "b": 1.5})
    gradient = st.grad(weighted)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(p, x)
        assert type(got) is type(p) and list(got) == ["w", "b"]
        np.testing.assert_allclose(got["w"], x)
        np.testing.assert_allclose(got["b"], 3.0)

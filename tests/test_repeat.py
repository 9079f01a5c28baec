"""The short path a gradient function takes for a call shaped like the previous one.

Each test establishes the short path (calls with the same shapes: the first runs
the generic code, the second builds the specialised code and the path), then
changes one thing the path depends on and checks the gradient still follows.
"""

import inspect
import traceback

import numpy as np
import pytest

import srctrans as st
import srctrans.cache
import srctrans.repeat
import srctrans.repeat_stale
from programs import repeated_calls as rc


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.fixture
def no_full_path(monkeypatch):
    """Make the full path fail: what still works took the short path."""
    def refuse(*args, **kwargs):
        raise AssertionError("the full path was taken")
    return lambda: monkeypatch.setattr(srctrans.cache.Instance, "for_call", refuse)


def test_repeated_array_calls_take_the_short_path(rng, no_full_path):
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    g = st.grad(rc.scaled_square_sum, wrt=(0, 1))
    g(x, w), g(x, w)
    no_full_path()
    dx, dw = g(x, w)
    np.testing.assert_allclose(dx, 4.0 * x * w)
    np.testing.assert_allclose(dw, 2.0 * x * x)


def test_repeated_float_calls_take_the_short_path_and_give_float64(no_full_path):
    g, g0 = st.grad(rc.scalar_product, wrt=(0, 1)), st.grad(rc.scalar_product)
    for _ in range(2):
        g(2.0, 3.0), g0(1.0, 3.0)
    no_full_path()
    da, db = g(2.0, 3.0)
    assert type(da) is np.float64 and type(db) is np.float64
    assert (da, db) == (9.0, 12.0)
    da = g0(1.0, 3.0)                                       # one selected: not a tuple
    assert type(da) is np.float64 and da == 9.0


def test_a_rebound_global_helper_is_seen(rng, monkeypatch):
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    g = st.grad(rc.scaled_square_sum)
    for _ in range(2):
        np.testing.assert_allclose(g(x, w), 4.0 * x * w)
    monkeypatch.setattr(rc, "helper", rc.other_helper)
    for _ in range(2):
        np.testing.assert_allclose(g(x, w), 3.0 * x * x * w)


def another_modules_helper_scaled(x, w):
    return np.sum(rc.helper(x) * w)


def test_a_kind_of_callee_met_elsewhere_is_checked_once_then_a_rebound_helper_still_seen(
        rng, monkeypatch):
    from srctrans.runtime import objects
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    g = st.grad(another_modules_helper_scaled)     # (its helper is a callee: not inlined)
    for _ in range(3):                             # the short path, its guard made
        g(x, w)
    checks = []
    walk = srctrans.repeat_stale.callees_current
    monkeypatch.setattr(srctrans.repeat_stale, "callees_current",
                        lambda build: checks.append(build) or walk(build))
    objects.VERSION[0] += 1                        # another function's build met a kind of
    for _ in range(3):                             # callee through a value
        np.testing.assert_allclose(g(x, w), 4.0 * x * w)
    assert len(checks) == 1                        # (every call walked the callees before)
    assert "callees_current" in inspect.getsource(srctrans.repeat_stale._sites_current)
    monkeypatch.setattr(rc, "helper", rc.other_helper)
    for _ in range(2):
        np.testing.assert_allclose(g(x, w), 3.0 * x * x * w)


def test_a_rebound_closure_helper_is_seen(rng):
    calls, set_f = rc.make_with_helper(rc.helper)
    x = rng.standard_normal(3)
    g = st.grad(calls)
    for _ in range(2):
        np.testing.assert_allclose(g(x), 4.0 * x)
    set_f(rc.other_helper)
    for _ in range(2):
        np.testing.assert_allclose(g(x), 3.0 * x * x)


def test_new_defaults_are_seen(rng, monkeypatch):
    x = rng.standard_normal(3)
    g = st.grad(rc.with_default)
    for _ in range(2):
        np.testing.assert_allclose(g(x), 4.0 * x)
    monkeypatch.setattr(rc.with_default, "__defaults__", (3.0,))
    for _ in range(2):
        np.testing.assert_allclose(g(x), 6.0 * x)


def test_new_keyword_only_defaults_are_seen(rng, monkeypatch):
    x = rng.standard_normal(3)
    g = st.grad(rc.with_keyword_default)
    for _ in range(2):
        np.testing.assert_allclose(g(x), 4.0 * x)
        np.testing.assert_allclose(st.jvp(rc.with_keyword_default, (x,), (x,))[1], 4.0 * x @ x)
    monkeypatch.setattr(rc.with_keyword_default, "__kwdefaults__", {"c": 3.0})
    for _ in range(2):
        np.testing.assert_allclose(g(x), 6.0 * x)
        np.testing.assert_allclose(st.jvp(rc.with_keyword_default, (x,), (x,))[1], 6.0 * x @ x)


def test_defaults_a_call_does_not_use_are_not_tested(rng, monkeypatch, no_full_path):
    """A call passing every argument uses no default: the short path stays (its guard
    tests no defaults); one passing fewer tests them (above)."""
    x = rng.standard_normal(3)
    g = st.grad(rc.with_default)
    for _ in range(2):
        np.testing.assert_allclose(g(x, 3.0), 6.0 * x)
    monkeypatch.setattr(rc.with_default, "__defaults__", (5.0,))
    no_full_path()
    np.testing.assert_allclose(g(x, 3.0), 6.0 * x)
    assert "__defaults__" not in inspect.getsource(type(g).__call__)


def test_new_shapes_int_values_and_dtypes_leave_the_short_path(rng):
    x = rng.standard_normal(3)
    g = st.grad(rc.power_sum)
    for _ in range(2):
        np.testing.assert_allclose(g(x, 2), 2.0 * x)
    np.testing.assert_allclose(g(x, 3), 3.0 * x * x)                  # another int
    x4 = rng.standard_normal(4)
    np.testing.assert_allclose(g(x4, 2), 2.0 * x4)                    # another shape
    assert g(x.astype(np.float32), 2).dtype == np.float32              # another dtype
    with pytest.raises(st.NonDifferentiableError):                     # same shape, ints
        g(np.arange(3), 2)
    np.testing.assert_allclose(g(x, 2), 2.0 * x)                      # and back


def test_gradients_are_conformed_on_the_short_path(rng):
    """A gradient that is a view of an argument goes through the general conforming."""
    x, w = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    g = st.grad(rc.transposed)
    first = g(x, w)
    for _ in range(2):                                   # conformed as the full path does
        dx = g(x, w)
        np.testing.assert_array_equal(dx, w.T)
        assert dx.flags.writeable == first.flags.writeable and dx.shape == first.shape


def test_a_guard_is_made_once_per_shape_key(rng, monkeypatch):
    made = []
    real = srctrans.repeat.make_repeat
    monkeypatch.setattr(srctrans.repeat, "make_repeat", lambda *a: made.append(1) or real(*a))
    st.clear_cache()                     # guards belong to the cached instance, not to g
    g = st.grad(rc.power_sum)
    x3, x4 = rng.standard_normal(3), rng.standard_normal(4)
    for _ in range(3):                                                # shapes alternate
        np.testing.assert_allclose(g(x3, 2), 2.0 * x3)
        np.testing.assert_allclose(g(x4, 2), 2.0 * x4)
    assert len(made) == 2
    for _ in range(3):                   # st.grad(f)(x) written inline reuses them
        np.testing.assert_allclose(st.grad(rc.power_sum)(x3, 2), 2.0 * x3)
    assert len(made) == 2


def test_the_guard_reads_like_python(rng):
    g = st.grad(rc.scaled_square_sum, wrt=(0, 1))
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    g(x, w), g(x, w)
    text = inspect.getsource(g._repeat)
    assert "a0.shape == (3,)" in text and "fused(a0, a1)" in text
    assert "namespace['helper'] is not" in text                   # a rebound helper is seen


def test_float_gradients_of_floats_are_trusted_without_a_check():
    """The gradients of the call the guard was made for were floats: those of later calls of
    the same types are too (specialised code has no branches), so the guard checks nothing
    after the fused gradient."""
    g = st.grad(rc.scalar_product, wrt=(0, 1))
    g(2.0, 3.0), g(2.0, 3.0)
    text = inspect.getsource(g._repeat)
    assert "g0, g1 = fused(a0, a1)\n    return (float64(g0), float64(g1))" in text, text


def test_the_dtype_of_an_unselected_array_counts(rng):
    x, w = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    g = st.grad(rc.weighted_sum)
    for _ in range(2):
        assert g(x, w).dtype == np.float32
    wide = w.astype(np.float64)                  # the gradient w is float64 now: conformed
    for _ in range(2):
        dx = g(x, wide)
        assert dx.dtype == np.float32
        np.testing.assert_allclose(dx, w)


def test_an_error_on_the_short_path_reads_as_on_the_full_path():
    """A call shaped like the last one runs the guard straight from the gradient's call;
    the user's own error then reaches the caller as the full path reports it."""
    negative = -np.ones(3)
    with pytest.raises(Exception) as first:
        st.grad(rc.positive_log)(negative)             # a new gradient: the full path
    gradient = st.grad(rc.positive_log)
    for _ in range(3):
        gradient(np.ones(3))                          # now the short path is ready
    assert gradient._repeat is not None
    with pytest.raises(Exception) as short:
        gradient(negative)
    assert type(short.value) is type(first.value)
    assert str(short.value) == str(first.value)
    assert short.value.__suppress_context__ == first.value.__suppress_context__
    # srctrans's own frames go: the call's one frame stays (the full path's __call__, the
    # short path's entry), then the generated line that raised, as on the full path
    frames = traceback.extract_tb(short.value.__traceback__)
    assert len(frames) == len(traceback.extract_tb(first.value.__traceback__)) == 3
    assert "repeat guard" in frames[1].filename and "positive_log" in frames[2].filename



def test_the_probe_sees_what_every_line_of_a_statement_assigns():
    """The measuring run looks, at each line, at what the line before it assigned: a name
    that holds a list and then arrays, assigned by statements spread over lines, is left
    generic (else the specialised gradient adds lists)."""
    from programs import specialised_jvps as programs
    x = np.random.default_rng(5).standard_normal(3)
    gradient = st.grad(programs.list_then_array_over_lines)
    first = gradient(x)
    for _ in range(3):                                   # specialised from the second call
        np.testing.assert_allclose(gradient(x), first, rtol=1e-13)
    np.testing.assert_allclose(first, 2 * x + 3 * x * x)


# -- containers and objects (issue 32: a method's or a dict's gradient costs what a plain one does)

def test_an_unpacked_lists_gradient_takes_the_short_path_as_a_list(rng, no_full_path):
    """``W, b = params``: the fused gradient makes ``dparams`` a tuple, the full path a list
    of the same arrays; the short path hands back that list."""
    layer, x = _layer(rng), rng.standard_normal((4, 3))
    params = [layer.W, layer.b]
    gradient = st.grad(rc.unpacked_loss)
    for _ in range(2):
        first = gradient(params, x)
    no_full_path()
    got = gradient(params, x)
    assert type(got) is list and type(first) is list and len(got) == 2
    for g, want in zip(got, _expected_layer_gradients(layer.W, layer.b, x)[1:]):
        np.testing.assert_allclose(g, want, rtol=1e-12)


def _layer(rng, n=3, m=2):
    return rc.Layer(rng.standard_normal((n, m)), rng.standard_normal(m))


def _expected_layer_gradients(W, b, x):
    z = np.tanh(x @ W + b)
    dpre = 2.0 * z * (1.0 - z * z)
    return dpre @ W.T, np.outer(x, dpre) if x.ndim == 1 else x.T @ dpre, dpre.sum(axis=0)


@pytest.mark.parametrize("kind", ["method wrt x", "method wrt self", "dict", "nested"])
def test_containers_and_objects_take_the_short_path(rng, no_full_path, kind):
    layer, x = _layer(rng), rng.standard_normal((4, 3))
    params = {"W": layer.W, "b": layer.b}
    gradient, args = {
        "method wrt x": (st.grad(layer.loss), (x,)),
        "method wrt self": (st.grad(layer.loss, wrt="self"), (x,)),
        "dict": (st.grad(rc.dict_loss), (params, x)),
        "nested": (st.grad(rc.nested_loss), ([params, {"W": np.eye(2), "b": np.zeros(2)}], x)),
    }[kind]
    first = gradient(*args)
    gradient(*args)
    no_full_path()
    again = gradient(*args)
    for got, want in zip(_leaves(again), _leaves(first)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert got is not want and got.flags.writeable         # a new array, the caller's own
        assert not any(np.shares_memory(got, a) for a in _leaves(args) + [layer.W, layer.b])
    dx, dW, db = _expected_layer_gradients(layer.W, layer.b, x)
    if kind == "method wrt x":
        np.testing.assert_allclose(again, dx)
    elif kind in ("method wrt self", "dict"):
        np.testing.assert_allclose(again["W"], dW)
        np.testing.assert_allclose(again["b"], db)


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value] if isinstance(value, np.ndarray) else []


def test_an_object_or_dict_that_changed_takes_the_full_path(rng):
    """Each change the guard must see: an attribute's shape, a new attribute, a dict's keys
    (or their order), an entry's dtype, another class."""
    layer, x = _layer(rng), rng.standard_normal((4, 3))
    gradient = st.grad(layer.loss, wrt="self")
    for _ in range(3):
        gradient(x)
    layer.W = rng.standard_normal((3, 5))                      # another shape
    layer.b = rng.standard_normal(5)
    got = gradient(x)
    _, dW, db = _expected_layer_gradients(layer.W, layer.b, x)
    np.testing.assert_allclose(got["W"], dW)
    layer.scale = 2.0                                           # another attribute
    for _ in range(3):
        np.testing.assert_allclose(gradient(x)["b"], db)
    layer.W = layer.W.astype(np.float32)                        # another dtype
    assert gradient(x)["W"].dtype == np.float32

    params = {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    dict_gradient = st.grad(rc.dict_loss)
    for _ in range(3):
        dict_gradient(params, x)
    reordered = {"b": params["b"], "W": params["W"]}
    assert list(dict_gradient(reordered, x)) == ["b", "W"]     # the full path keeps its order
    extra = dict(params, c=np.ones(1))
    got = dict_gradient(extra, x)
    np.testing.assert_allclose(got["c"], 0.0)
    _, dW, _ = _expected_layer_gradients(params["W"], params["b"], x)
    np.testing.assert_allclose(dict_gradient(params, x)["W"], dW)


def test_an_attribute_or_global_gone_takes_the_full_path_which_says_so(
        rng, monkeypatch):
    """The guard reads an object's attributes and the function's globals by subscript: one
    gone (another attribute in its place, a deleted global) fails the guard, and the full
    path says what is wrong (the user's AttributeError; srctrans's error naming the global),
    not the guard's KeyError."""
    layer, x = _layer(rng), rng.standard_normal((4, 3))
    gradient = st.grad(layer.loss, wrt="self")
    for _ in range(3):
        gradient(x)
    b = layer.b
    del layer.b
    layer.c = b                                    # as many attributes, one of another name
    with pytest.raises(AttributeError, match="'b'"):
        gradient(x)
    del layer.c
    layer.b = b
    _, dW, _ = _expected_layer_gradients(layer.W, layer.b, x)
    np.testing.assert_allclose(gradient(x)["W"], dW)

    w = rng.standard_normal(3)
    scaled = st.grad(rc.scaled_square_sum)
    for _ in range(3):
        scaled(x[0], w)
    monkeypatch.delattr(rc, "helper")
    with pytest.raises(st.MissingRuleError, match="cannot resolve `helper`"):
        scaled(x[0], w)


def test_objects_with_slots_still_differentiate_without_a_guard(rng):
    W, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    gradient = st.grad(rc.Slotted(W).loss, wrt="self")
    for _ in range(3):
        got = gradient(x)
        np.testing.assert_allclose(got["W"], 2.0 * x.T @ (x @ W))
    assert gradient._repeat is None


def test_the_structure_tests_hold_exactly_for_the_same_key_part():
    """repeat_structures: the tests written for a value hold for another value exactly when
    their key parts are equal (and, with dtypes, their arrays' dtypes)."""
    from srctrans.repeat_structures import StructureTests
    from srctrans.shape_keys import guard_key

    def holds(example, other):
        namespace = {}
        tests = StructureTests(namespace).tests("a0", example, guard_key([example])[0], True)
        try:
            return eval(f"lambda a0: {' and '.join(tests)}", namespace)(other)
        except KeyError:                 # an attribute gone: the guard takes it as failing
            return False

    layer = rc.Layer(np.ones((3, 2)), np.zeros(2))
    value = {"W": np.ones((3, 2)), "layers": [layer, (1.5, 2)], "name": "x"}
    same = {"W": np.zeros((3, 2)), "layers": [rc.Layer(np.ones((3, 2)), np.ones(2)), (0.5, 2)],
            "name": "x"}
    assert holds(value, value) and holds(value, same)
    others = [
        {"layers": same["layers"], "W": same["W"], "name": "x"},              # key order
        {"W": same["W"], "layers": same["layers"]},                            # a key fewer
        dict(same, extra=1),                                                   # a key more
        dict(same, W=np.ones((2, 3))),                                         # a shape
        dict(same, W=np.ones((3, 2), np.float32)),                             # a dtype
        dict(same, name="y"),                                                  # a string's value
        dict(same, layers=[layer, (1.5, 3)]),                                  # an int's value
        dict(same, layers=[layer, [1.5, 2]]),                                  # a list for a tuple
        dict(same, layers=[layer]),                                            # a length
        dict(same, layers=[rc.Slotted(np.ones((3, 2))), (1.5, 2)]),            # a class
        [same["W"], same["layers"], "x"],                                      # a list for a dict
    ]
    extra = rc.Layer(np.ones((3, 2)), np.zeros(2))
    extra.scale = 1.0
    others.append(dict(same, layers=[extra, (1.5, 2)]))                         # an attribute more
    missing = rc.Layer(np.ones((3, 2)), np.zeros(2))
    del missing.b
    missing.c = np.zeros(2)
    others.append(dict(same, layers=[missing, (1.5, 2)]))                       # another attribute
    for other in others:
        assert not holds(value, other), other


def test_a_module_imported_by_the_function_itself_keeps_the_short_path(rng, no_full_path):
    x = rng.standard_normal(3)
    g = st.grad(rc.imports_its_own_module)
    g(x), g(x), g(x)
    no_full_path()
    np.testing.assert_allclose(g(x), 2 * np.pi * x)


def test_global_data_read_as_a_value_takes_the_full_path(rng, monkeypatch):
    """The guard tests the arguments alone: a global rebound to another shape must be seen."""
    x = rng.standard_normal(3)
    g = st.grad(rc.reads_global_data)
    for _ in range(3):
        np.testing.assert_allclose(g(x), 2 * (x + 1.0))
    monkeypatch.setattr(rc, "OFFSET", np.full((2, 3), 2.0))
    np.testing.assert_allclose(g(x), 4 * (x + 2.0))


def test_an_unconnected_float_stays_none_on_the_short_path(rng, no_full_path):
    """The guard converted a float's gradient to float64 even when the fused gradient gave
    None (unconnected): float64(None) is NaN."""
    x = rng.standard_normal((3, 2))
    g = st.grad(rc.unconnected_float_beside_a_list, wrt=(0, 1))
    for _ in range(3):
        gx, gs = g(x, 0.5, [1])
    no_full_path()
    gx, gs = g(x, 0.5, [1])
    assert gs is None
    np.testing.assert_allclose(gx, np.eye(3)[1][:, None] * 2 * x)


def test_a_dict_with_float_and_text_entries_takes_the_short_path(rng, no_full_path):
    """A float entry's gradient is a NumPy scalar, which conforming keeps as it is (the same
    object), so such a dict's gradient needs no conforming on the short path."""
    from test_container_cotangents import ridge_of_a_copied_dict
    p = {"w": rng.standard_normal(3), "scale": 1.3, "b": 0.2, "name": "ridge"}
    X, y = rng.standard_normal((7, 3)), rng.standard_normal(7)
    gradient = st.grad(ridge_of_a_copied_dict)
    first = gradient(p, X, y)
    gradient(p, X, y)
    no_full_path()
    again = gradient(p, X, y)
    assert set(again) == set(p) and again["name"] is None
    for key in ("w", "scale", "b"):
        np.testing.assert_allclose(again[key], first[key], rtol=1e-12)
        assert type(again[key]) is type(first[key])
    r = X @ (p["w"] * p["scale"]) + p["b"] - y
    np.testing.assert_allclose(again["b"], 2 * np.sum(r))
    np.testing.assert_allclose(again["w"], 2 * p["scale"] * X.T @ r + 0.2 * p["w"])


def test_gradients_of_two_objects_share_an_entry_and_read_their_own_object():
    """The short path's entry is the gradient object's __call__, shared by the gradients of
    every object of a class with the same shapes: each reads its own object; a call with
    ``output_gradients``, or after the object's data changed shape, takes the full path."""
    rng = np.random.default_rng(8)
    layers = [rc.Layer(rng.standard_normal((4, 3)), rng.standard_normal(3)) for _ in range(2)]
    x = rng.standard_normal(4)
    gradients = [st.grad(layer.loss) for layer in layers]
    wants = [st.grad(layer.loss, optimize=False)(x) for layer in layers]
    for _ in range(4):
        for gradient, want in zip(gradients, wants):
            np.testing.assert_allclose(gradient(x), want, rtol=1e-12)
    assert type(gradients[0]) is type(gradients[1])
    assert type(gradients[0]).__call__ is not type(st.grad(rc.helper)).__call__
    np.testing.assert_allclose(gradients[0](x, output_gradients=2.0), 2.0 * wants[0], rtol=1e-12)
    layers[0].W, layers[0].b = layers[0].W[:, :2], layers[0].b[:2]
    np.testing.assert_allclose(gradients[0](x), st.grad(layers[0].loss, optimize=False)(x),
                               rtol=1e-12)
    np.testing.assert_allclose(gradients[1](x), wants[1], rtol=1e-12)

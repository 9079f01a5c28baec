"""Calls through values: objects and functions a differentiated function is passed and calls.

``model(x)``, ``model.apply(x)``, ``self.forward(x)``, ``self.layer(x)``, layers
held in lists and dicts, and functions passed in (``act(x)``): each is compiled
as a switch over the callees the call has met (``runtime.objects``), checked
here against finite differences in both modes and to second order.
"""

import collections
import copy
import functools
import re

import numpy as np
import pytest

import srctrans as st
from srctrans.errors import MissingRuleError, UnsupportedSyntaxError

RNG = np.random.default_rng(7)


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


class Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return x * self.s


class MLP:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def apply(self, x):
        return self(x)


class Net:
    """A model whose parts are attributes: a layer object and an activation function."""

    def __init__(self, first, act, width):
        self.first, self.act, self.width = first, act, width

    def forward(self, x):
        return self.act(self.first(x))

    def loss(self, x):
        return np.sum(self.forward(x) ** 2) / self.width


def loss(model, x, y):
    return np.mean((model(x) - y) ** 2)


def loss_by_method(model, x, y):
    return np.mean((model.apply(x) - y) ** 2)


def loss_of_dict(layers, x):
    for name in sorted(layers):
        x = layers[name](x)
    return np.sum(x ** 2)


def loss_of_first(layers, x):
    return np.sum(layers[0](x))


def weighted(act, x):
    return np.sum(act(x) * x)


def smooth(u):
    return u * np.exp(-u * u)


def summed_activations(x):
    total = 0.0
    for act in [np.tanh, np.sin, smooth]:
        total = total + np.sum(act(x))
    return total


def model_of(*layers):
    return MLP(list(layers))


def dense(n, m):
    return Dense(RNG.normal(size=(n, m)), RNG.normal(size=m) * 0.1)


def leaves_of(obj, path=()):
    """(path, array) of every float array reachable through attributes, lists and dicts."""
    if isinstance(obj, np.ndarray):
        return [(path, obj)]
    if isinstance(obj, (list, tuple)):
        return [leaf for i, v in enumerate(obj) for leaf in leaves_of(v, path + (i,))]
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in leaves_of(v, path + (k,))]
    if hasattr(obj, "__dict__"):
        return [leaf for k, v in vars(obj).items() for leaf in leaves_of(v, path + (k,))]
    return []


def entry(tree, path):
    for key in path:
        tree = getattr(tree, key) if not isinstance(tree, (list, tuple, dict)) else tree[key]
    return tree


def numeric_gradient(f, obj, rest, eps=1e-6):
    """Central differences of ``f(obj, *rest)`` at every leaf of ``obj``: path -> array."""
    result = {}
    for path, leaf in leaves_of(obj):
        grad = np.zeros_like(leaf)
        for index in np.ndindex(leaf.shape):
            values = []
            for sign in (1, -1):
                moved = copy.deepcopy(obj)
                entry(moved, path)[index] += sign * eps
                values.append(f(moved, *rest))
            grad[index] = (values[0] - values[1]) / (2 * eps)
        result[path] = grad
    return result


def assert_gradient_of_object(f, obj, rest):
    g = st.grad(f)(obj, *rest)
    expected = numeric_gradient(f, obj, rest)
    for path, value in expected.items():
        np.testing.assert_allclose(read_gradient(g, path), value, rtol=1e-5, atol=1e-7)


def read_gradient(g, path):
    """The gradient at ``path``: an object's gradient lists the attributes it read, so a
    missing entry is a zero."""
    for key in path:
        if isinstance(g, dict) and key not in g:
            return 0.0
        g = g[key]
    return g


@pytest.fixture
def model():
    return model_of(dense(3, 4), Scale(RNG.normal(size=4)), dense(4, 2))


@pytest.fixture
def data():
    return RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))


@pytest.mark.parametrize("f", [loss, loss_by_method])
def test_a_model_called_inside_the_loss_has_the_gradient_of_its_attributes(f, model, data):
    x, y = data
    for _ in range(2):                     # the generic code, then the specialised code
        assert_gradient_of_object(f, model, (x, y))
    g = st.grad(f)(model, x, y)
    assert set(g) == {"layers"}
    assert g["layers"][0]["W"].shape == (3, 4) and set(g["layers"][1]) == {"s"}


@pytest.mark.parametrize("f", [loss, loss_by_method])
def test_the_input_gradient_through_a_model_agrees_in_both_modes_to_second_order(f, model, data):
    x, y = data
    st.check_grads(lambda_free(f, model, y), (x,), order=2)


def lambda_free(f, model, y):
    """``x -> f(model, x, y)`` as a function with source (a closure over the model)."""
    def of_x(x):
        return f(model, x, y)
    return of_x


def test_layers_held_in_a_dict_and_a_list_are_called_by_key_and_by_position(model, data):
    x, _ = data
    layers = {"a": model.layers[0], "b": model.layers[1]}
    assert_gradient_of_object(loss_of_dict, layers, (x,))
    assert_gradient_of_object(loss_of_first, model.layers, (x,))


def test_methods_and_attributes_called_through_self(data):
    x, _ = data
    net = Net(dense(3, 4), np.tanh, 4)
    g = st.grad(net.loss, wrt="self")(x)
    assert set(g) == {"first"}                # the activation and the int are constants
    expected = numeric_gradient(lambda n, x: n.loss(x), net, (x,))
    for path, value in expected.items():
        np.testing.assert_allclose(read_gradient(g, path), value, rtol=1e-5, atol=1e-7)
    st.check_grads(net.loss, (x,), order=2)

    def of_x(x):
        return net.loss(x)
    st.check_grads(of_x, (x,), order=2)


def test_a_function_passed_in_is_called_by_identity(data):
    x, _ = data
    for act, slope in [(np.tanh, lambda u: 1 - np.tanh(u) ** 2), (np.sin, np.cos),
                       (smooth, lambda u: (1 - 2 * u * u) * np.exp(-u * u))]:
        g = st.grad(weighted, wrt=1)(act, x)
        np.testing.assert_allclose(g, slope(x) * x + act(x), rtol=1e-10)
    st.check_grads(summed_activations, (x,), order=2)


def through_numpy_functions(x):
    total = x * 0.0
    for fn in [np.sinc, np.fft.fft, np.sin]:
        total = total + np.real(fn(x))
    return np.sum(total * total)


def test_numpy_functions_that_are_not_ufuncs_are_called_by_identity(data):
    """np.sinc and np.fft.fft are objects of NumPy's dispatcher class, not
    functions: called through a value, each is the function with its rule."""
    x, _ = data
    st.check_grads(through_numpy_functions, (x,), order=2)


def scaled_sine(k):
    def scaled(u):
        return np.sin(k * u)
    return scaled


def sweep_weighted(act, x):
    return np.sum(act(x) * x)


def all_of(acts, x):
    total = 0.0
    for act in acts:
        total = total + np.sum(act(x))
    return total


def test_a_site_meeting_function_after_function_keeps_a_bounded_switch(data):
    """A sweep passing one function after another to one caller: each gradient is right, and
    the site's switch keeps the last SITE_KINDS functions. It kept every one: each new function
    rebuilt a longer switch, and past about 95 its nested branches were more than Python's parser
    takes (an InternalError)."""
    from srctrans.runtime.objects import SITE_KINDS
    x, _ = data
    g = st.grad(sweep_weighted, wrt=1)
    scales = 0.5 + np.arange(SITE_KINDS + 8) / 10
    acts = [scaled_sine(k) for k in scales]
    for k, act in list(zip(scales, acts)) + [(scales[0], acts[0])]:   # the first again, dropped
        np.testing.assert_allclose(g(act, x), k * np.cos(k * x) * x + act(x), rtol=1e-10)
    shown = st.source(sweep_weighted, args=(acts[0], x))
    assert 1 <= shown.count("rt.is_same(") <= SITE_KINDS, shown


def test_one_call_meeting_more_functions_than_a_switch_keeps_gets_them_all(data):
    """The kinds one call meets all stay, however many: dropping one it needs would rebuild
    without it, meet it again, and never finish."""
    from srctrans.runtime.objects import SITE_KINDS
    x, _ = data
    scales = 0.5 + np.arange(SITE_KINDS + 4) / 10
    acts = [scaled_sine(k) for k in scales]
    expected = sum(k * np.cos(k * x) for k in scales)
    np.testing.assert_allclose(st.grad(all_of, wrt=1)(acts, x), expected, rtol=1e-10)


def test_a_class_met_after_the_first_call_is_compiled_in(data):
    x, y = data
    first = model_of(dense(3, 2))
    assert_gradient_of_object(loss, first, (x, y))
    later = model_of(Scale(RNG.normal(size=3)), dense(3, 2))     # Scale is new at this site
    assert_gradient_of_object(loss, later, (x, y))
    assert_gradient_of_object(loss, first, (x, y))               # and the first still works


def test_forward_mode_takes_an_objects_tangent_as_a_dict_or_an_object(model, data):
    x, y = data
    tangent = {"layers": [{"W": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4)},
                          {"s": RNG.normal(size=4)}, {"W": RNG.normal(size=(4, 2))}]}
    out, derivative = st.jvp(loss, (model, x, y), (tangent, None, None))
    assert out == pytest.approx(loss(model, x, y))
    eps = 1e-6

    def moved(sign):
        shifted = copy.deepcopy(model)
        for layer, change in zip(shifted.layers, tangent["layers"]):
            for name, value in change.items():
                setattr(layer, name, getattr(layer, name) + sign * eps * value)
        return loss(shifted, x, y)
    assert derivative == pytest.approx((moved(1) - moved(-1)) / (2 * eps), rel=1e-6)
    g = st.grad(loss)(model, x, y)
    dot = sum(np.sum(g["layers"][i][name] * value)
              for i, change in enumerate(tangent["layers"]) for name, value in change.items())
    assert derivative == pytest.approx(dot, rel=1e-9)
    as_object = model_of(Dense(tangent["layers"][0]["W"], tangent["layers"][0]["b"]),
                         Scale(tangent["layers"][1]["s"]),
                         Dense(tangent["layers"][2]["W"], np.zeros(2)))
    _, again = st.jvp(loss, (model, x, y), (as_object, None, None))
    assert again == pytest.approx(derivative, rel=1e-12)


def test_hessian_and_hvp_through_a_model(model, data):
    x, y = data
    of_x = lambda_free(loss, model, y)
    H = st.hessian(of_x)(x)
    v = RNG.normal(size=x.shape)
    hv, = st.hvp(of_x, (x,), (v,))
    np.testing.assert_allclose(hv, np.tensordot(H, v, axes=2), rtol=1e-8, atol=1e-12)
    eps = 1e-6
    numeric = (st.grad(of_x)(x + eps * v) - st.grad(of_x)(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, numeric, rtol=1e-5, atol=1e-7)


def test_the_generated_code_shows_the_switch(model, data):
    """The generic code tests the class; code specialised on a call, whose shape key holds
    the class, runs the method alone (optimise/keyed_branches.py). The methods, of this
    module, are inlined (normalize/callees.py): the loop over the MLP's layers, and each
    layer's own switch, are the loss's code."""
    x, y = data
    text = st.source(loss, args=(model, x, y), optimize=False)
    assert "rt.has_class(model, MLP)" in text and "rt.unseen_callee" in text
    assert re.search(r"rt\.has_class\(layer\w*, Dense\)", text)
    assert re.search(r"rt\.has_class\(layer\w*, Scale\)", text)
    assert "MLP_call_fwd" not in text and "Dense_call_fwd" not in text
    specialised = st.source(loss, args=(model, x, y))
    assert "rt.has_class(model, MLP)" not in specialised and "if _is_MLP" not in specialised
    assert "np.tanh(" in specialised and "MLP_call_fwd" not in specialised


def test_a_callable_without_python_source_is_a_clear_error(data):
    x, _ = data
    with pytest.raises(MissingRuleError) as caught:
        st.grad(weighted, wrt=1)(functools.partial(np.multiply, 2.0), x)
    message = str(caught.value)
    assert "partial" in message and "test_calls_through_values.py" in message
    assert "act" in message


class Chain:
    """A model holding models of its own kind: recursion, which srctrans refuses."""

    def __init__(self, inner, s):
        self.inner, self.s = inner, s

    def __call__(self, x):
        if self.inner is None:
            return x * self.s
        return self.inner(x) * self.s


def test_a_model_calling_its_own_class_is_refused_as_recursion(data):
    x, _ = data
    chain = Chain(Chain(None, 2.0), 3.0)
    with pytest.raises(UnsupportedSyntaxError, match="recursi"):
        st.grad(lambda_free_chain(chain))(x)


def lambda_free_chain(chain):
    def total(x):
        return np.sum(chain(x))
    return total


GLOBAL_MODEL = MLP([Dense(RNG.normal(size=(3, 4)), np.zeros(4)), Scale(RNG.normal(size=4))])


def through_the_global_model(x):
    return np.sum(GLOBAL_MODEL(x) ** 2)


def through_a_global_layer(x):
    return np.sum(GLOBAL_MODEL.layers[0](x) * GLOBAL_MODEL.layers[1].__call__(x @ np.ones((3, 4))))


@pytest.mark.parametrize("f", [through_the_global_model, through_a_global_layer])
def test_a_model_of_the_enclosing_scope_is_a_constant_called_through(f, data):
    x, _ = data
    st.check_grads(f, (x,), order=2)


def counted(d, x):
    t = len(d) * x
    if "a" in d:
        t = t * d["a"]
    return np.sum(t)


def test_len_and_membership_of_a_dict_argument(data):
    x, _ = data
    g = st.grad(counted)({"a": 2.0, "b": 1.0}, x)
    assert g["a"] == pytest.approx(2 * np.sum(x)) and g["b"] == 0.0


class WithProperty:
    def __init__(self, W, s):
        self.W, self.s = W, s

    @property
    def weight(self):
        return self.W * self.s

    def __call__(self, x):
        return np.tanh(x @ self.weight)


class Base:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return x @ self.W


class CallsSuper(Base):
    def __call__(self, x):
        return np.tanh(super().__call__(x))


class CallsBaseByName(Base):
    def __call__(self, x):
        return np.tanh(Base.__call__(self, x))


def squared(model, x):
    return np.sum(model(x) ** 2)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_property_read_is_refused_rather_than_differentiated_wrongly(mode, data):
    """A property's derivative belongs to the attributes its getter reads, which srctrans
    does not see: it once came back as a gradient for `weight` (reverse) or zero (forward)."""
    x, _ = data
    model = WithProperty(RNG.normal(size=(3, 2)), 2.0)
    with pytest.raises(UnsupportedSyntaxError, match="property of WithProperty"):
        if mode == "reverse":
            st.grad(squared)(model, x)
        else:
            st.jvp(squared, (model, x), ({"W": np.ones((3, 2))}, None))


def test_super_is_refused_and_the_base_method_by_name_works(data):
    """super() inside a differentiated method once gave a zero gradient."""
    x, _ = data
    W = RNG.normal(size=(3, 2))
    with pytest.raises(UnsupportedSyntaxError, match="super"):
        st.grad(squared)(CallsSuper(W), x)
    assert_gradient_of_object(squared, CallsBaseByName(W), (x,))


Holder = collections.namedtuple("Holder", "layer scale")


class ClassActivation:
    act = np.tanh                       # a class attribute holding a function

    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return self.act(x @ self.W)


def held_layer(holder, x):
    return np.sum(holder.layer(x) * holder.scale)


def named_attribute(model, x):
    return np.sum(x @ getattr(model, "W"))


def noisy(rng, x):
    return np.sum(x * x + rng.normal(size=x.shape))


def test_values_held_by_fields_and_class_attributes_are_called(data):
    """A named tuple's field holding a layer, and a class attribute holding a function,
    are called as the values they hold (they once met 'no derivative rule for the
    method')."""
    x, _ = data
    st.check_grads(held_layer, (Holder(dense(3, 2), 2.0), x), wrt=0, order=2)
    assert_gradient_of_object(squared, ClassActivation(RNG.normal(size=(3, 2))), (x,))


def test_getattr_with_a_constant_name_is_the_attribute(data):
    x, _ = data
    model = Dense(RNG.normal(size=(3, 2)), np.zeros(2))
    np.testing.assert_allclose(st.grad(named_attribute)(model, x)["W"],
                               np.repeat(x.sum(axis=0)[:, None], 2, axis=1), rtol=1e-12)


def test_draws_of_a_generator_passed_in_are_constants(data):
    x, _ = data
    np.testing.assert_allclose(st.grad(noisy, wrt=1)(np.random.default_rng(0), x), 2 * x)

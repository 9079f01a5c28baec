"""Models as objects and pytrees through every transform: vjp, jvp, jacobian,
batch_jacobian, hessian, hvp and check_grads take objects, registered classes and
containers, and give derivatives nested like them (docs/models.md)."""

import numpy as np
import pytest

import srctrans as st
from srctrans.errors import UsageError

RNG = np.random.default_rng(12)


class Affine:
    """A plain object: its gradient is a dict of the attributes the function read."""

    def __init__(self, W, b, width):
        self.W, self.b, self.width = W, b, width

    def __call__(self, x):
        return x @ self.W + self.b


class Gated:
    """A registered class: its gradient is a Gated; ``gate`` and ``act`` are constants."""

    def __init__(self, W, gate, act):
        self.W, self.gate, self.act = W, gate, act

    def __call__(self, x):
        return self.act(x @ self.W) * self.gate


st.register_pytree(Gated, ["W"])


def predict(model, x):
    return np.tanh(model(x))


def loss(model, x):
    return np.sum(predict(model, x) ** 2) / model.width if isinstance(model, Affine) \
        else np.sum(predict(model, x) ** 2)


def affine():
    return Affine(RNG.normal(size=(3, 2)), RNG.normal(size=2), 4)


def gated():
    return Gated(RNG.normal(size=(3, 2)), np.array([2.0, -1.0]), np.sin)


def moved(model, name, index, step):
    copy = type(model).__new__(type(model))
    copy.__dict__.update(vars(model))
    value = getattr(model, name).copy()
    value[index] += step
    setattr(copy, name, value)
    return copy


def numeric_derivative(f, model, name, x, eps=1e-6):
    """d f(model, x) / d model.name by central differences, shaped out.shape + field shape."""
    field = getattr(model, name)
    columns = [(f(moved(model, name, i, eps), x) - f(moved(model, name, i, -eps), x)) / (2 * eps)
               for i in np.ndindex(field.shape)]
    out = np.asarray(columns[0])
    return np.moveaxis(np.reshape(columns, field.shape + out.shape), range(field.ndim),
                       range(out.ndim, out.ndim + field.ndim))


@pytest.mark.parametrize("make", [affine, gated])
def test_grad_vjp_and_jvp_of_an_object(make):
    model, x = make(), RNG.normal(size=(4, 3))
    g = st.grad(loss)(model, x)
    dW = g["W"] if isinstance(g, dict) else g.W
    np.testing.assert_allclose(dW, numeric_derivative(loss, model, "W", x), rtol=1e-6, atol=1e-8)
    if isinstance(model, Gated):
        assert type(g) is Gated and g.act is np.sin       # constants carried over
    else:
        assert set(g) == {"W", "b"}                        # the int width is a constant
    v = RNG.normal(size=(4, 2))
    _, pullback = st.vjp(predict, model, x)
    gv, _ = pullback(v)
    assert (gv["W"] if isinstance(gv, dict) else gv.W).shape == (3, 2)
    tangent_W = RNG.normal(size=(3, 2))
    tangent = {"W": tangent_W} if isinstance(model, Affine) else Gated(tangent_W, None, None)
    _, t = st.jvp(predict, (model, x), (tangent, None))
    expected = np.tensordot(numeric_derivative(predict, model, "W", x), tangent_W, axes=2)
    np.testing.assert_allclose(t, expected, rtol=1e-6, atol=1e-8)
    st.check_grads(loss, (model, x), wrt=0, order=2)


@pytest.mark.parametrize("make", [affine, gated])
def test_jacobian_hessian_and_hvp_of_an_object_nest_by_attribute(make):
    model, x = make(), RNG.normal(size=(4, 3))
    J = st.jacobian(predict)(model, x)
    JW = J["W"] if isinstance(J, dict) else J.W
    np.testing.assert_allclose(JW, numeric_derivative(predict, model, "W", x), rtol=1e-6,
                               atol=1e-8)
    H = st.hessian(loss)(model, x)
    HWW = H["W"]["W"] if isinstance(H, dict) else H.W.W
    assert HWW.shape == (3, 2, 3, 2)

    def dloss_dW(m, x):
        g = st.grad(loss)(m, x)
        return g["W"] if isinstance(g, dict) else g.W
    np.testing.assert_allclose(HWW, numeric_derivative(dloss_dW, model, "W", x), rtol=1e-5,
                               atol=1e-7)
    v = RNG.normal(size=(3, 2))
    tangent = {"W": v} if isinstance(model, Affine) else Gated(v, None, None)
    product, _ = st.hvp(loss, (model, x), (tangent, None))
    np.testing.assert_allclose(product["W"] if isinstance(product, dict) else product.W,
                               np.tensordot(HWW, v, axes=2), rtol=1e-8, atol=1e-10)


def positions(state, field):
    return np.tanh(state["pos"] * field) + state["vel"] ** 2 * state["pos"][:, :1]


def test_batch_jacobian_of_a_dict_of_batched_arrays():
    state = {"pos": RNG.normal(size=(5, 3)), "vel": RNG.normal(size=(5, 3)), "steps": 3}
    field = RNG.normal(size=3)
    for mode in ("reverse", "forward"):
        B = st.batch_jacobian(positions, mode=mode)(state, field)
        full = st.jacobian(positions)(state, field)
        assert B["steps"] is None
        for name in ("pos", "vel"):
            rows = np.stack([full[name][b, :, b, :] for b in range(5)])
            np.testing.assert_allclose(B[name], rows, rtol=1e-12, atol=1e-14)


@pytest.fixture
def own_registry():
    """Undo the rules a test registers, so no other test sees them."""
    from srctrans.rules import REGISTRY
    saved = REGISTRY.user_rules()
    yield
    REGISTRY.restore_user_rules(saved)
    st.clear_cache()


def test_check_grads_finds_a_wrong_rule_inside_a_method(own_registry):
    def bad_square(u):
        return u * u

    st.register_vjp(bad_square, lambda g, ans, u: (g * u,))       # the factor 2 is missing
    st.register_jvp(bad_square, lambda tangents, ans, u: 2 * u * tangents[0])

    class Squarer:
        def __init__(self, W):
            self.W = W

        def __call__(self, x):
            return bad_square(x @ self.W)

    def total(model, x):
        return np.sum(model(x))

    with pytest.raises(AssertionError, match="reverse-mode"):
        st.check_grads(total, (Squarer(RNG.normal(size=(3, 2))), RNG.normal(size=(4, 3))),
                       wrt=0)


def test_register_pytree_checks_its_arguments():
    with pytest.raises(UsageError, match="class"):
        st.register_pytree(Gated(None, None, None), ["W"])
    with pytest.raises(UsageError, match="list of attribute names"):
        st.register_pytree(Gated, "W")


class Pair:
    """A registered class built through its constructor, which takes the fields only."""

    def __init__(self, left, right):
        self.left, self.right = left, right
        self.norm = None                  # a cache, not a parameter


st.register_pytree(Pair, ["left", "right"], rebuild=lambda obj, values: Pair(**values))


def pair_loss(pair, x):
    return np.sum(np.sin(pair.left * x) * pair.right)


def test_a_registered_class_with_its_own_rebuild():
    pair, x = Pair(RNG.normal(size=3), RNG.normal(size=3)), RNG.normal(size=3)
    g = st.grad(pair_loss)(pair, x)
    assert type(g) is Pair
    np.testing.assert_allclose(g.left, np.cos(pair.left * x) * x * pair.right, rtol=1e-12)
    np.testing.assert_allclose(g.right, np.sin(pair.left * x), rtol=1e-12)
    st.check_grads(pair_loss, (pair, x), wrt=0, order=2)


class Slotted:
    """An object with __slots__ and no __dict__: its slots are its attributes."""

    __slots__ = ("W", "bias")

    def __init__(self, W, bias):
        self.W, self.bias = W, bias

    def __call__(self, x):
        return x @ self.W + self.bias


def test_an_object_with_slots_is_taken_apart_by_its_slots():
    model, x = Slotted(RNG.normal(size=(3, 2)), 0.5), RNG.normal(size=(4, 3))
    J = st.jacobian(predict)(model, x)
    h = x @ model.W + model.bias
    expected = np.einsum("ij,ik,jl->ijkl", 1 - np.tanh(h) ** 2, x, np.eye(2))
    np.testing.assert_allclose(J["W"], expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(J["bias"], 1 - np.tanh(h) ** 2, rtol=1e-12)
    st.check_grads(loss, (model, x), wrt=0, order=2)
    _, t = st.jvp(predict, (model, x), ({"W": np.ones((3, 2))}, None))
    np.testing.assert_allclose(t, np.tensordot(J["W"], np.ones((3, 2)), axes=2), rtol=1e-12)

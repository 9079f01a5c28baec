"""``st.vmap`` of what srctrans's other transforms return, and of functions that call them.

* the pullback of ``st.vjp``: one batched backward pass for a batch of cotangents;
* ``st.hvp(f)``, and a function calling ``st.hvp(f, (x,), (v,))``: one batched JVP of
  the gradient for a batch of tangents (and primals);
* ``st.hessian(f)`` and other Python loops of srctrans's: once per member, with a warning.

Each result equals the loop over the batch.
"""

import warnings

import numpy as np
import pytest

import srctrans as st
from srctrans import batch_api

R = np.random.default_rng(43)


def net(x, W):
    return np.tanh(W @ np.sin(x)) * 2.0


def unconnected(x, y):
    return np.sin(x) * 3.0


def energy(x):
    return np.sum(np.sin(x) * x ** 2) + np.sum(x[1:] * x[:-1])


def energy_of_two(x, s):
    return np.sum(np.cos(x * s) ** 2) + np.sum(s ** 3)


def hv(x, v):
    return st.hvp(energy, (x,), (v,))[0]


def hv_with_a_none(x, s, v):
    return st.hvp(energy_of_two, (x, s), (v, None))


def energy_of_a_dict(p):
    return np.sum(np.sin(p["a"]) * p["b"] ** 2)


def run(f, *args, in_axes=0):
    """``st.vmap(f, in_axes)(*args)`` and the BatchingWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", st.BatchingWarning)
        batch_api._warned.clear()
        out = st.vmap(f, in_axes=in_axes)(*args)
    return out, [str(w.message) for w in caught if issubclass(w.category, st.BatchingWarning)]


def same(got, expected, rtol=1e-12):
    assert type(got) is type(expected) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if g is not None:
            assert g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-13)


def stacked(results):
    return tuple(None if r[0] is None else np.stack(r) for r in zip(*results))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vmap_of_a_pullback_is_one_batched_backward_pass(dtype):
    x, W = R.standard_normal(4).astype(dtype), R.standard_normal((3, 4)).astype(dtype)
    _, pullback = st.vjp(net, x, W)
    G = R.standard_normal((6, 3)).astype(dtype)
    out, warned = run(pullback, G)
    assert warned == []
    same(out, stacked([pullback(g) for g in G]), rtol=1e-5 if dtype == np.float32 else 1e-12)
    plan = st.vmap(pullback).plan((G,), {})[0]
    assert type(plan).__name__ == "_PullbackPlan"


@pytest.mark.parametrize("unconnected_gradients", ["none", "zero"])
def test_vmap_of_a_pullback_keeps_unconnected_gradients(unconnected_gradients):
    x, y = R.standard_normal(3), R.standard_normal(2)
    _, pullback = st.vjp(unconnected, x, y, unconnected_gradients=unconnected_gradients)
    G = R.standard_normal((4, 3))
    out, warned = run(pullback, G)
    assert warned == []
    same(out, stacked([pullback(g) for g in G]))


def test_vmap_of_a_pullback_refuses_cotangents_of_another_shape_as_the_pullback_does():
    _, pullback = st.vjp(net, R.standard_normal(4), R.standard_normal((3, 4)))
    with pytest.raises(st.ShapeError):
        pullback(np.ones(5))
    with pytest.raises(st.ShapeError):
        st.vmap(pullback)(np.ones((2, 5)))


@pytest.mark.parametrize("in_axes", [((None,), (0,)), ((0,), (0,)), ((0,), (None,))])
def test_vmap_of_hvp_is_one_batched_jvp_of_the_gradient(in_axes):
    X, V = R.standard_normal((5, 4)), R.standard_normal((5, 4))
    primal = X if in_axes[0][0] == 0 else X[0]
    tangent = V if in_axes[1][0] == 0 else V[0]
    out, warned = run(st.hvp(energy), (primal,), (tangent,), in_axes=in_axes)
    assert warned == []
    expected = stacked([st.hvp(energy, (primal[i] if in_axes[0][0] == 0 else primal,),
                               (tangent[i] if in_axes[1][0] == 0 else tangent,))
                        for i in range(5)])
    same(out, expected)


def test_vmap_of_a_function_calling_hvp_is_batched_code():
    x, V = R.standard_normal(4), R.standard_normal((5, 4))
    out, warned = run(hv, x, V, in_axes=(None, 0))
    assert warned == []
    np.testing.assert_allclose(out, np.stack([hv(x, v) for v in V]), rtol=1e-12)
    source = st.source(st.vmap(hv, in_axes=(None, 0)), args=(x, V))
    assert "_batched_hvp(" in source and "rt.batch.loop" not in source, source


def test_vmap_of_hvp_with_a_tangent_none():
    X, S, V = R.standard_normal((5, 3)), R.standard_normal((5, 3)), R.standard_normal((5, 3))
    out, warned = run(hv_with_a_none, X, S, V)
    assert warned == []
    same(out, stacked([hv_with_a_none(x, s, v) for x, s, v in zip(X, S, V)]))


def test_vmap_of_hvp_of_a_container_runs_per_member_and_says_so():
    p = {"a": R.standard_normal((5, 3)), "b": R.standard_normal((5, 3))}
    v = {"a": R.standard_normal((5, 3)), "b": R.standard_normal((5, 3))}
    out, warned = run(st.hvp(energy_of_a_dict), (p,), (v,))
    assert len(warned) == 1 and "st.hvp" in warned[0], warned
    for i in range(5):
        member = st.hvp(energy_of_a_dict, ({k: a[i] for k, a in p.items()},),
                        ({k: a[i] for k, a in v.items()},))[0]
        for key in p:
            np.testing.assert_allclose(out[0][key][i], member[key], rtol=1e-12)


def test_vmap_of_a_hessian_runs_per_member_and_says_so():
    X = R.standard_normal((3, 4))
    hessian = st.hessian(energy)
    out, warned = run(hessian, X)
    assert len(warned) == 1 and "made by srctrans" in warned[0], warned
    np.testing.assert_allclose(out, np.stack([hessian(x) for x in X]), rtol=1e-12)


# -- derivatives of a vmap with container axes --------------------------------------------

def member_of_dict(p, x):
    return np.tanh(p["w"] @ x + p["b"]) * p["scale"], np.sin(x) * p["scale"]


by_dict = st.vmap(member_of_dict, in_axes=({"w": None, "b": 0, "scale": None}, 0),
                  out_axes=(0, 1))


def total_of_dict(p, X):
    first, second = by_dict(p, X)
    return np.sum(first ** 2) + np.sum(second * np.arange(1.0, X.shape[0] + 1.0))


def total_of_dict_by_loop(p, X):
    total = 0.0
    for i in range(X.shape[0]):
        q = {"w": p["w"], "b": p["b"][i], "scale": p["scale"]}
        first, second = member_of_dict(q, X[i])
        total = total + np.sum(first ** 2) + np.sum(second) * (i + 1.0)
    return total


def test_grad_and_jvp_of_a_vmap_with_container_axes_equal_the_loops():
    p = {"w": R.standard_normal((2, 3)), "b": R.standard_normal((4, 2)), "scale": 1.5}
    X = R.standard_normal((4, 3))
    got = st.grad(total_of_dict, wrt=(0, 1))(p, X)
    want = st.grad(total_of_dict_by_loop, wrt=(0, 1))(p, X)
    for key in ("w", "b", "scale"):
        np.testing.assert_allclose(got[0][key], want[0][key], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-14)
    t = {"w": R.standard_normal((2, 3)), "b": R.standard_normal((4, 2)), "scale": 0.5}
    T = R.standard_normal((4, 3))
    for tangents in ((t, T), (t, None), (None, T)):
        _, got_t = st.jvp(total_of_dict, (p, X), tangents)
        _, want_t = st.jvp(total_of_dict_by_loop, (p, X), tangents)
        np.testing.assert_allclose(got_t, want_t, rtol=1e-12, atol=1e-14)


# -- objects ---------------------------------------------------------------------------

class Layer:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)


def layer_loss(layer, x):
    return np.sum(layer(x) ** 2)


def test_vmap_over_objects_with_batched_attributes_equals_the_loop():
    """A model object batched along its attributes (an ensemble): each member's model has
    its own attributes. (The loop once passed the whole batched object to every member.)"""
    W, b, X = R.standard_normal((5, 2, 3)), R.standard_normal((5, 2)), R.standard_normal((5, 3))
    members = [Layer(W[i], b[i]) for i in range(5)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", st.BatchingWarning)
        out = st.vmap(layer_loss)(Layer(W, b), X)
        gradients = st.vmap(st.grad(layer_loss))(Layer(W, b), X)
        shared = st.vmap(st.grad(layer_loss), in_axes=(None, 0))(members[0], X)
    np.testing.assert_allclose(out, [layer_loss(m, x) for m, x in zip(members, X)], rtol=1e-12)
    for i, (m, x) in enumerate(zip(members, X)):
        expected = st.grad(layer_loss)(m, x)
        for name in ("W", "b"):
            np.testing.assert_allclose(gradients[name][i], expected[name], rtol=1e-12)
            np.testing.assert_allclose(shared[name][i], st.grad(layer_loss)(members[0], x)[name],
                                       rtol=1e-12)


def identity(x):
    return x


def test_vmap_of_a_pullback_never_returns_the_callers_cotangents():
    _, pullback = st.vjp(identity, R.standard_normal(3))
    G = R.standard_normal((4, 3))
    (out,) = st.vmap(pullback)(G)
    np.testing.assert_allclose(out, G)
    out[:] = 0.0
    assert np.all(G != 0.0)

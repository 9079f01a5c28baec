"""The short path hands a dict's or object's cotangent back as the fused gradient made it
(srctrans/lean_cotangents.py): the same gradients, without conforming them each call."""

import numpy as np
import pytest

import srctrans as st
from srctrans import runtime


@pytest.fixture
def conformed(monkeypatch):
    """Counts of the calls of rt.container_cotangent and rt.attributes_cotangent."""
    counts = {"container_cotangent": 0, "attributes_cotangent": 0}
    for name in counts:
        real = getattr(runtime, name)

        def counting(found, container, real=real, name=name):
            counts[name] += 1
            return real(found, container)
        monkeypatch.setattr(runtime, name, counting)
    return counts


def kl(q, p):
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    return np.sum(p["log_sigma"] - q["log_sigma"]
                  + (var_q + (q["mu"] - p["mu"]) ** 2) / (2 * var_p) - 0.5)


def penalised(params, x):
    """Reads its dict's entries in the order opposite to the dict's; ``params["name"]`` is text."""
    return np.sum((x @ params["w"] + params["b"]) ** 2) + 0.1 * np.sum(params["w"] ** 2)


def reads_two(params, x):
    return np.sum(np.tanh(x @ params["w"]) * params["v"])


class Layer:
    def __init__(self, W, b):
        self.W, self.b = W, b


def layer_loss(layer, X):
    return np.sum(np.tanh(X @ layer.W + layer.b) ** 2)


def _dicts(rng, dtype=np.float64):
    q = {"mu": rng.standard_normal(3).astype(dtype), "log_sigma": 0.3 * rng.standard_normal(3)}
    return q, {"mu": rng.standard_normal(3), "log_sigma": 0.3 * rng.standard_normal(3)}


def _calls(g, args, count=4):
    return [g(*args) for _ in range(count)]


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif a is None:
        assert b is None
    else:
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_a_dict_of_parameters_gets_its_cotangent_as_made(conformed):
    q, p = _dicts(np.random.default_rng(0))
    g = st.grad(kl)
    first, *later = _calls(g, (q, p))
    for got in later:
        _same(got, first)
    counted = conformed["container_cotangent"]
    g(q, p)
    assert conformed["container_cotangent"] == counted
    assert isinstance(first, dict) and list(first) == ["mu", "log_sigma"]
    st.check_grads(kl, (q, p), order=2)


def test_keys_come_in_the_dicts_order_and_text_gets_none(conformed):
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal(3), "name": "layer", "b": 0.3}
    x = rng.standard_normal((5, 3))
    g = st.grad(penalised)
    first, *later = _calls(g, (params, x), 5)
    assert list(first) == ["w", "name", "b"] and first["name"] is None
    assert type(first["b"]) is np.float64
    for got in later:
        _same(got, first)
    counted = conformed["container_cotangent"]
    g(params, x)
    assert conformed["container_cotangent"] == counted


def test_an_entry_the_function_does_not_read_still_gets_zeros(conformed):
    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal(3), "unused": rng.standard_normal(2),
              "v": rng.standard_normal(4)}
    x = rng.standard_normal((4, 3))
    g = st.grad(reads_two)
    first, *later = _calls(g, (params, x))
    for got in later:
        _same(got, first)
        assert not got["unused"].any() and got["unused"].shape == (2,)
    counted = conformed["container_cotangent"]
    g(params, x)
    assert conformed["container_cotangent"] == counted + 1      # conformed: zeros added


def test_other_dtypes_get_their_own_path():
    """A float32 entry beside float64 ones: its cotangent's dtype is what the full path
    gives, on every call, before and after calls of float64 entries."""
    rng = np.random.default_rng(3)
    wide, p = _dicts(rng)
    narrow = {"mu": wide["mu"].astype(np.float32), "log_sigma": wide["log_sigma"]}
    g = st.grad(kl)
    expected = {id(wide): st.grad(kl)(wide, p), id(narrow): st.grad(kl)(narrow, p)}
    for q in (wide, wide, wide, narrow, narrow, narrow, wide, narrow):
        _same(g(q, p), expected[id(q)])


def test_an_objects_attributes_cotangent_as_made(conformed):
    rng = np.random.default_rng(4)
    layer, X = Layer(rng.standard_normal((3, 2)), rng.standard_normal(2)), rng.standard_normal((5, 3))
    g = st.grad(layer_loss)
    first, *later = _calls(g, (layer, X))
    for got in later:
        _same(got, first)
    counted = conformed["attributes_cotangent"]
    g(layer, X)
    assert conformed["attributes_cotangent"] == counted
    st.check_grads(layer_loss, (layer, X), order=2)

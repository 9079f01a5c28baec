"""Every array srctrans returns is the caller's own (issue 36): no gradient, tangent or
pullback result shares memory with an argument or with another result, on the first call
(generic code), the second (specialised, fused) and later ones (the short path)."""

import numpy as np
import pytest

import srctrans as st
from programs import stores


def transposed_product(x, a):
    return np.sum(x * a.T)


def product(x, y):
    return np.sum(x * y)


def passthrough(x):
    return x


def scaled_view(x, y):
    return np.sum(x[::-1] * y)


def _arrays(value):
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in _arrays(v)]
    return []


def _assert_owned(results, arguments):
    seen = list(_arrays(arguments))
    for g in _arrays(results):
        assert g.flags.writeable
        for other in seen:
            assert not np.shares_memory(g, other)
        seen.append(g)


CASES = [
    (transposed_product, lambda: (np.ones((2, 3)), np.arange(6.0).reshape(3, 2))),
    (product, lambda: (np.arange(3.0), np.ones(3))),
    (scaled_view, lambda: (np.arange(3.0), np.ones(3))),
    (stores.chained_into_a_dict_of_arrays, lambda: (np.array([0.5, -1.0, 2.0]),)),
]


@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_are_the_caller_s_own_on_every_call(fn, make):
    wrt = tuple(range(len(make())))
    gradient = st.grad(fn, wrt=wrt)
    for _ in range(4):                      # generic, specialised, then the short path
        args = make()
        _assert_owned(gradient(*args), args)
        args = make()
        _assert_owned(st.value_and_grad(fn, wrt=wrt)(*args)[1], args)
        args = make()
        _, pullback = st.vjp(fn, *args, wrt=wrt)
        v = np.float64(1.0)
        _assert_owned(pullback(v), args + (v,))


def test_an_in_place_update_of_a_gradient_changes_no_argument():
    """The issue's reproducer: from the second call dx was a.T, a view of a."""
    x, a = np.ones((2, 3)), np.arange(6.0).reshape(3, 2)
    g = st.grad(transposed_product, wrt=(0, 1))
    for _ in range(3):
        dx, da = g(x, a)
        dx *= 0
        da *= 0
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(x, np.ones((2, 3)))


def test_a_tangent_is_the_caller_s_own_on_every_call():
    for _ in range(4):
        y, t = np.arange(3.0), np.ones(3)
        out, tangent = st.jvp(passthrough, (y,), (t,))
        assert not np.shares_memory(tangent, t) and tangent.flags.writeable
        out, tangent = st.jvp(product, (y, t), (t, None))
        _assert_owned([tangent], (y, t))

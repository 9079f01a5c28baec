"""Tests for runtime.joins: each input's share of a joined array's gradient."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.joins
from srctrans import runtime
from srctrans.runtime.joins import (
    array_grads, concatenate_grads, hstack_grads, stack_grads, vstack_grads)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _check_every_input(join, split, shapes, check_vjp, seed):
    """Finite-difference check of ``split`` for each input of ``join``."""
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(shape) for shape in shapes]
    forward = lambda *arrays: join(list(arrays))  # noqa: E731
    for k in range(len(inputs)):
        check_vjp(forward, lambda g, *arrays: split(g, list(arrays))[k],
                  inputs, k, rng)


CONCATENATE_CASES = [
    ([(2,), (3,)], 0),
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 1), (2, 2)], 1),
    ([(2, 3), (2, 1), (2, 2)], -1),
    ([(2, 3, 4), (2, 3, 1)], 2),
    ([(2, 3, 4), (2, 5, 4)], -2),
    ([(2, 3), (4,)], None),
    ([(2, 3), (), (1, 1, 2)], None),
    ([(4,)], 0),
]


@pytest.mark.parametrize("shapes, axis", CONCATENATE_CASES)
def test_concatenate(shapes, axis, check_vjp):
    _check_every_input(lambda arrays: np.concatenate(arrays, axis=axis),
                       lambda g, arrays: concatenate_grads(g, arrays, axis),
                       shapes, check_vjp, seed=20)


STACK_CASES = [
    ([(3,), (3,)], 0),
    ([(3,), (3,)], 1),
    ([(3,), (3,)], -1),
    ([(2, 3)] * 3, 1),
    ([(2, 3)] * 3, -3),
    ([(2, 3)] * 2, 2),
    ([(), (), ()], 0),
]


@pytest.mark.parametrize("shapes, axis", STACK_CASES)
def test_stack(shapes, axis, check_vjp):
    _check_every_input(lambda arrays: np.stack(arrays, axis=axis),
                       lambda g, arrays: stack_grads(g, arrays, axis),
                       shapes, check_vjp, seed=21)


HSTACK_SHAPES = [
    [(2,), (3,)],
    [(), (2,)],
    [(), ()],
    [(2, 3), (2, 1)],
    [(2, 3, 4), (2, 1, 4)],
]


@pytest.mark.parametrize("shapes", HSTACK_SHAPES)
def test_hstack(shapes, check_vjp):
    _check_every_input(np.hstack, hstack_grads, shapes, check_vjp, seed=22)


VSTACK_SHAPES = [
    [(3,), (3,)],
    [(2, 3), (3,)],
    [(2, 3), (1, 3)],
    [(), ()],
    [(2, 3, 4), (1, 3, 4)],
]


@pytest.mark.parametrize("shapes", VSTACK_SHAPES)
def test_vstack(shapes, check_vjp):
    _check_every_input(np.vstack, vstack_grads, shapes, check_vjp, seed=23)


ARRAY_SHAPES = [
    [(3,), (3,)],
    [(), (), ()],
    [(2, 2), (2, 2)],
]


@pytest.mark.parametrize("shapes", ARRAY_SHAPES)
def test_array(shapes, check_vjp):
    _check_every_input(np.array, array_grads, shapes, check_vjp, seed=24)


def test_array_of_python_floats_gives_scalar_gradients():
    grads = array_grads(np.array([1.0, 2.0]), [3.0, 4.0])
    assert grads == (1.0, 2.0)
    assert all(np.ndim(grad) == 0 for grad in grads)


def test_vstack_of_vectors_gives_vectors():
    grads = vstack_grads(np.arange(6.0).reshape(2, 3), [np.zeros(3), np.zeros(3)])
    assert [grad.shape for grad in grads] == [(3,), (3,)]
    np.testing.assert_array_equal(grads[1], [3.0, 4.0, 5.0])


# name -> (join, split, input shapes), for the float32 dtype test
FLOAT32_CASES = {
    "concatenate": (lambda arrays: np.concatenate(arrays, axis=1),
                    lambda g, arrays: concatenate_grads(g, arrays, axis=1),
                    [(2, 1), (2, 2)]),
    "stack": (np.stack, stack_grads, [(3,), (3,)]),
    "hstack": (np.hstack, hstack_grads, [(2,), (1,)]),
    "vstack": (np.vstack, vstack_grads, [(3,), (2, 3)]),
    "array": (np.array, array_grads, [(2,), (2,)]),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_float32_stays_float32(name):
    join, split, shapes = FLOAT32_CASES[name]
    arrays = [np.ones(shape, dtype=np.float32) for shape in shapes]
    g = np.ones_like(join(arrays))
    grads = split(g, arrays)
    assert [grad.dtype for grad in grads] == [np.float32] * len(arrays)
    assert [grad.shape for grad in grads] == shapes


def test_docstring_examples():
    assert doctest.testmod(runtime.joins).failed == 0

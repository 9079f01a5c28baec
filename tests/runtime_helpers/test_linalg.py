"""Tests for runtime.linalg: every product's gradients against finite differences."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.linalg
from srctrans import runtime
from srctrans.runtime.linalg import (
    dot_lhs, dot_rhs, einsum_grads, einsum_jvp, inner_lhs, inner_rhs, matmul_lhs,
    matmul_rhs, outer_lhs, outer_rhs, tensordot_lhs, tensordot_rhs)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _check_both_operands(forward, lhs, rhs, a_shape, b_shape, check_vjp, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    check_vjp(forward, lhs, [a, b], 0, rng)
    check_vjp(forward, rhs, [a, b], 1, rng)


MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (5, 4, 2)),
    ((5, 3, 4), (1, 4, 2)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 1, 3, 4), (1, 6, 4, 2)),
]


@pytest.mark.parametrize("a_shape, b_shape", MATMUL_SHAPES)
def test_matmul(a_shape, b_shape, check_vjp):
    _check_both_operands(np.matmul, matmul_lhs, matmul_rhs,
                         a_shape, b_shape, check_vjp, seed=10)


DOT_SHAPES = [
    ((), ()),
    ((), (3,)),
    ((3, 4), ()),
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (5, 4, 6)),
]


@pytest.mark.parametrize("a_shape, b_shape", DOT_SHAPES)
def test_dot(a_shape, b_shape, check_vjp):
    _check_both_operands(np.dot, dot_lhs, dot_rhs,
                         a_shape, b_shape, check_vjp, seed=11)


def test_dot_with_python_scalar():
    a = np.arange(3.0)
    np.testing.assert_allclose(dot_lhs(np.ones(3), a, 2.0), [2.0, 2.0, 2.0])
    assert dot_rhs(np.ones(3), a, 2.0) == 3.0


INNER_SHAPES = [
    ((), (3,)),
    ((2, 3), ()),
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (3, 4)),
    ((3, 4), (5, 4)),
    ((2, 3, 4), (5, 4)),
    ((2, 3, 4), (5, 6, 4)),
]


@pytest.mark.parametrize("a_shape, b_shape", INNER_SHAPES)
def test_inner(a_shape, b_shape, check_vjp):
    _check_both_operands(np.inner, inner_lhs, inner_rhs,
                         a_shape, b_shape, check_vjp, seed=12)


OUTER_SHAPES = [
    ((3,), (4,)),
    ((2, 3), (4,)),
    ((), (3,)),
    ((2, 2), (3, 1)),
]


@pytest.mark.parametrize("a_shape, b_shape", OUTER_SHAPES)
def test_outer(a_shape, b_shape, check_vjp):
    _check_both_operands(np.outer, outer_lhs, outer_rhs,
                         a_shape, b_shape, check_vjp, seed=13)


TENSORDOT_CASES = [
    ((3, 4, 5), (4, 5, 6), 2),
    ((3, 4), (4, 5), 1),
    ((3, 4), (5, 6), 0),
    ((3, 4, 5), (3, 4, 5), 3),
    ((3, 4, 5), (5, 3, 6), ([0, 2], [1, 0])),
    ((3, 4, 5), (6, 5), ([2], [1])),
    ((3, 4, 5), (4, 3), ([1, 0], [0, 1])),
    ((2, 3), (3, 2), (-1, 0)),
    ((3, 4, 5), (5, 4, 3), ([-1, 1, 0], [0, 1, 2])),
    ((2, 3, 4), (4, 2, 5), ((0, -1), (1, 0))),
]


@pytest.mark.parametrize("a_shape, b_shape, axes", TENSORDOT_CASES)
def test_tensordot(a_shape, b_shape, axes, check_vjp):
    _check_both_operands(
        lambda a, b: np.tensordot(a, b, axes),
        lambda g, a, b: tensordot_lhs(g, a, b, axes),
        lambda g, a, b: tensordot_rhs(g, a, b, axes),
        a_shape, b_shape, check_vjp, seed=14)


def test_tensordot_default_axes(check_vjp):
    _check_both_operands(np.tensordot, tensordot_lhs, tensordot_rhs,
                         (2, 3, 4), (3, 4, 5), check_vjp, seed=15)


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij, jk -> ik", [(3, 4), (4, 5)]),
    ("i,i", [(4,), (4,)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ab,cd->", [(2, 3), (4, 5)]),
    ("ab,cd->ad", [(2, 3), (4, 5)]),
    ("ijk,j->ik", [(2, 3, 4), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("Ba,Ac", [(2, 3), (4, 5)]),
    (",i->i", [(), (3,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(1, 3, 4), (5, 4, 2)]),
    ("...ij,...jk->...ik", [(3, 4), (2, 6, 4, 5)]),
    ("i...,i...->...", [(2, 3), (2, 1)]),
    ("...i,...i->...", [(2, 1, 4), (3, 4)]),
    ("...,...->...", [(), (3,)]),
    ("i...->...", [(2, 3, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("i,i->i", [(1,), (3,)]),
    ("ij,ij->i", [(3, 1), (3, 4)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES)
def test_einsum(subscripts, shapes, check_vjp):
    rng = np.random.default_rng(16)
    operands = [rng.standard_normal(shape) for shape in shapes]
    forward = lambda *ops: np.einsum(subscripts, *ops)  # noqa: E731
    for k in range(len(operands)):
        check_vjp(forward,
                  lambda g, *ops: einsum_grads(g, subscripts, ops)[k],
                  operands, k, rng)


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES)
def test_einsum_jvp_is_the_transpose_of_the_gradients(subscripts, shapes):
    """<jvp(v), g> == sum over operands of <v_k, grad_k(g)>, with some operands inactive."""
    rng = np.random.default_rng(17)
    operands = [rng.standard_normal(shape) for shape in shapes]
    ans = np.einsum(subscripts, *operands)
    g = rng.standard_normal(np.shape(ans))
    grads = einsum_grads(g, subscripts, operands)
    for active in ([True] * len(operands), [k % 2 == 0 for k in range(len(operands))]):
        tangents = [rng.standard_normal(shape) if on else None for shape, on in zip(shapes, active)]
        t = einsum_jvp(tangents, ans, subscripts, operands)
        assert np.shape(t) == np.shape(ans)
        expected = sum(np.sum(v * grad) for v, grad in zip(tangents, grads) if v is not None)
        np.testing.assert_allclose(np.sum(t * g), expected, rtol=1e-12, atol=1e-12)


def test_einsum_jvp_without_tangents_is_zero():
    a, b = np.ones((2, 3), dtype=np.float32), np.ones(3, dtype=np.float32)
    t = einsum_jvp((None, None), np.einsum("ij,j->i", a, b), "ij,j->i", (a, b))
    np.testing.assert_array_equal(t, [0.0, 0.0])
    assert t.dtype == np.float32


def test_einsum_jvp_interleaved_form_is_not_supported():
    with pytest.raises(NotImplementedError, match="interleaved"):
        einsum_jvp((np.ones(3),), 3.0, np.ones(3), ([0],))


def test_einsum_diagonal_gradient_is_zero_off_the_diagonal():
    (grad,) = einsum_grads(np.array([1.0, 2.0, 3.0]), "ii->i", [np.ones((3, 3))])
    np.testing.assert_array_equal(grad, np.diag([1.0, 2.0, 3.0]))


def test_einsum_interleaved_form_is_not_supported():
    with pytest.raises(NotImplementedError, match="interleaved"):
        einsum_grads(np.ones(3), [0], [np.ones(3)])


@pytest.mark.parametrize("subscripts, shapes, g_shape", [
    ("ij,jk->ik", [(3, 4)], (3,)),
    ("ij->i", [(3, 4, 5)], (3,)),
    ("i->i", [(3,)], (4,)),
    ("i$->i", [(3, 2)], (3,)),
    ("i->ij", [(3,)], (3, 2)),
    ("i,i", [(3,)], ()),
])
def test_einsum_mismatch_raises_value_error(subscripts, shapes, g_shape):
    with pytest.raises(ValueError):
        einsum_grads(np.ones(g_shape), subscripts, [np.ones(s) for s in shapes])


# name -> (forward, lhs, rhs, a shape, b shape), for the float32 dtype test
FLOAT32_CASES = {
    "matmul-2d": (np.matmul, matmul_lhs, matmul_rhs, (3, 4), (4, 5)),
    "matmul-batched": (np.matmul, matmul_lhs, matmul_rhs, (2, 3, 4), (4,)),
    "dot": (np.dot, dot_lhs, dot_rhs, (2, 3, 4), (4, 5)),
    "dot-scalar": (np.dot, dot_lhs, dot_rhs, (), (3,)),
    "inner": (np.inner, inner_lhs, inner_rhs, (3, 4), (5, 4)),
    "outer": (np.outer, outer_lhs, outer_rhs, (3,), (2, 2)),
    "tensordot": (np.tensordot, tensordot_lhs, tensordot_rhs, (2, 3, 4), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_float32_stays_float32(name):
    forward, lhs, rhs, a_shape, b_shape = FLOAT32_CASES[name]
    a = np.ones(a_shape, dtype=np.float32)
    b = np.ones(b_shape, dtype=np.float32)
    g = np.ones(np.shape(forward(a, b)), dtype=np.float32)
    assert lhs(g, a, b).dtype == np.float32
    assert rhs(g, a, b).dtype == np.float32


def test_einsum_float32_stays_float32():
    a = np.ones((2, 3), dtype=np.float32)
    b = np.ones((3, 3), dtype=np.float32)
    grads = einsum_grads(np.ones(2, dtype=np.float32), "ij,jj->i", [a, b])
    assert [grad.dtype for grad in grads] == [np.float32, np.float32]


def test_matmul_2d_fast_path_values():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    g = np.ones((2, 4))
    np.testing.assert_array_equal(matmul_lhs(g, a, b), g @ b.T)
    np.testing.assert_array_equal(matmul_rhs(g, a, b), a.T @ g)


def test_docstring_examples():
    assert doctest.testmod(runtime.linalg).failed == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("b_shape", [(4,), (4, 3)])
def test_solve_grads_of_one_matrix_is_the_general_formula(dtype, b_shape):
    """One matrix, no broadcasting: the short path (a solve and an outer product) gives
    what the general one (columns, swapaxes, sums over broadcast axes) gives."""
    rng = np.random.default_rng(12)
    a = (rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(dtype)
    b, g = rng.standard_normal(b_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    x = np.linalg.solve(a, b)
    got = runtime.solve_grads(g, x, a, b)
    B = np.linalg.solve(a.T, g.reshape(4, -1))
    want = (-B @ x.reshape(4, -1).T, B.reshape(b_shape))
    for part, expected in zip(got, want):
        assert part.dtype == expected.dtype
        np.testing.assert_allclose(part, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex64])
def test_tril_halved_of_one_matrix_and_of_a_stack(shape, dtype):
    x = (np.random.default_rng(13).standard_normal(shape) * 4).astype(dtype)
    got = srctrans.runtime.linalg.tril_halved(x)
    want = np.tril(x) * (1 - 0.5 * np.eye(shape[-1]))
    assert got.dtype == (np.float64 if dtype == np.int64 else dtype) and got.shape == x.shape
    np.testing.assert_array_equal(got, want.astype(got.dtype))
    assert not np.shares_memory(got, x) and got.flags.writeable
    got[...] = 0                                          # its masks are shared between calls
    np.testing.assert_array_equal(srctrans.runtime.linalg.tril_halved(x), want.astype(got.dtype))


def test_tril_halved_keeps_what_is_not_finite_below_the_diagonal_and_drops_it_above():
    x = np.array([[np.inf, np.nan, -np.inf], [np.nan, 2.0, np.inf], [-np.inf, 1.0, np.inf]])
    got = srctrans.runtime.linalg.tril_halved(x)
    np.testing.assert_array_equal(got, [[np.inf, 0, 0], [np.nan, 1.0, 0], [-np.inf, 1.0, np.inf]])


@pytest.mark.parametrize("shape, offset, axes", [
    ((3, 3), 0, (0, 1)), ((3, 5), 0, (0, 1)), ((5, 3), 0, (1, 0)), ((4, 4), 1, (0, 1)),
    ((2, 3, 3), 0, (1, 2)),
])
def test_diagonal_grad_puts_the_cotangent_on_the_diagonal(shape, offset, axes):
    a = np.zeros(shape)
    g = np.arange(1.0, 1.0 + np.diagonal(a, offset, *axes).size).reshape(
        np.diagonal(a, offset, *axes).shape)
    got = runtime.diagonal_grad(g, a, offset, *axes)
    probe = np.random.default_rng(14).standard_normal(shape)     # <got, p> = <g, diag(p)>
    np.testing.assert_allclose(np.sum(got * probe), np.sum(g * np.diagonal(probe, offset, *axes)))
    assert got.shape == shape


@pytest.mark.parametrize("shape, ord, axis, keepdims", [
    ((4, 3), None, 1, True), ((4, 3), None, 0, False), ((4, 3), 2, -1, False),
    ((5,), None, None, False), ((4, 3), None, None, False), ((4, 3), None, None, True),
    ((2, 3, 4), 2, 1, True),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_euclidean_norms_cotangent_is_g_x_over_the_norm_and_zero_at_a_zero_norm(
        shape, ord, axis, keepdims, dtype):
    """``rt.norm_grad`` of a real array's 2-norm: ``g * x / norm`` (its short path, when no
    norm is 0) and 0 in a slice whose norm is 0 (the general path), in ``x``'s dtype, with
    ``<g, d norm> = <norm_grad, dx>`` against finite differences."""
    rng = np.random.default_rng(21)
    x = rng.standard_normal(shape).astype(dtype)
    ans = np.linalg.norm(x, ord, axis, keepdims)
    g = rng.standard_normal(np.shape(ans)).astype(dtype)
    got = runtime.norm_grad(g, ans, x, ord, axis, keepdims)
    assert got.dtype == dtype and got.shape == x.shape
    wide = x.astype(np.float64)
    direction = rng.standard_normal(shape)
    step = 1e-6
    slope = (np.linalg.norm(wide + step * direction, ord, axis, keepdims)
             - np.linalg.norm(wide - step * direction, ord, axis, keepdims)) / (2 * step)
    np.testing.assert_allclose(np.sum(got * direction), np.sum(g * slope),
                               rtol=1e-4 if dtype == np.float32 else 1e-7)
    slice_ = [0] * len(shape)                  # one slice the norm reduces, all zeros
    slice_[axis if axis is not None else 0] = slice(None)
    zeroed = np.zeros_like(x) if axis is None else x.copy()
    zeroed[tuple(slice_)] = 0.0
    got = runtime.norm_grad(g, np.linalg.norm(zeroed, ord, axis, keepdims), zeroed, ord, axis,
                            keepdims)
    assert np.all(np.isfinite(got)) and np.all(got[tuple(slice_)] == 0)

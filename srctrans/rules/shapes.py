"""Derivative rules of functions that move, join or re-view elements without
changing their values: the cotangent is moved back the inverse way, and the
tangent moves the same way as the values (every one of them is linear in its
first argument, so its JVP is the same call on the tangent)."""

import numpy as np

from srctrans import runtime as rt
from srctrans.rules import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


@vjp(np.reshape)
def reshape(g, ans, a, shape=None, order="C"):
    return np.reshape(g, np.shape(a), order=order)

linear(np.reshape)

@vjp(np.ravel)
def ravel(g, ans, a, order="C"):
    return np.reshape(g, np.shape(a), order=order)

linear(np.ravel)

@vjp(np.squeeze, np.expand_dims)
def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))

linear(np.squeeze, np.expand_dims)

@vjp(np.transpose)
def transpose(g, ans, a, axes=None):
    return rt.transpose_grad(g, axes)

linear(np.transpose)

# On the real arrays srctrans differentiates (complex ones are refused), the real
# part and the conjugate are the array itself (x.real, np.conj(x)).
@vjp(np.real, np.conjugate)        # np.conj is np.conjugate
def real(g, ans, val):
    return g

linear(np.real, np.conjugate)

if hasattr(np, "matrix_transpose"):          # NumPy 2: x.mT
    @vjp(np.matrix_transpose)
    def matrix_transpose(g, ans, x):
        return np.matrix_transpose(g)

    linear(np.matrix_transpose)

# splits return lists of views: their cotangent (a list, zeros where a piece was not
# used) joins back the way the pieces came apart
@vjp(np.split, np.array_split)
def split(g, ans, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis=axis)

@vjp(np.hsplit)
def hsplit(g, ans, ary, indices_or_sections):
    return np.hstack(g)

@vjp(np.vsplit)
def vsplit(g, ans, ary, indices_or_sections):
    return np.vstack(g)

linear(np.split, np.array_split, np.hsplit, np.vsplit)
REGISTRY.returns_tuple(np.split, np.array_split, np.hsplit, np.vsplit)

# the modes that copy entries (constant zeros, edge, reflect, symmetric, wrap); other
# modes are an error when the gradient runs, and keyword options are refused
@vjp(np.pad)
def pad(g, ans, array, pad_width, mode="constant"):
    return rt.pad_grad(g, array, pad_width, mode)

@jvp(np.pad)
def pad_jvp(darray, ans, array, pad_width, mode="constant"):
    return rt.pad_tangent(darray, pad_width, mode)

@vjp(np.take)
def take(g, ans, a, indices, axis=None, out=None, mode="raise"):
    return rt.take_grad(g, a, indices, axis)

@vjp(np.take_along_axis)
def take_along_axis(g, ans, arr, indices, axis):
    return rt.take_along_axis_grad(g, arr, indices, axis)

@vjp(np.tile)
def tile(g, ans, A, reps):
    return rt.tile_grad(g, A, reps)

@vjp(np.repeat)
def repeat(g, ans, a, repeats, axis=None):
    return rt.repeat_grad(g, a, repeats, axis)

linear(np.take, np.take_along_axis, np.tile, np.repeat)

@vjp(np.real_if_close)
def real_if_close(g, ans, a, tol=100):
    return g

linear(np.real_if_close)

@vjp(np.diagonal)
def diagonal(g, ans, a, offset=0, axis1=0, axis2=1):
    return rt.diagonal_grad(g, a, offset, axis1, axis2)

linear(np.diagonal)

# masks and reorderings that are their own transposes (up to the inverse order)
@vjp(np.tril)
def tril(g, ans, m, k=0):
    return np.tril(g, k)

@vjp(np.triu)
def triu(g, ans, m, k=0):
    return np.triu(g, k)

@vjp(np.flip)
def flip(g, ans, m, axis=None):
    return np.flip(g, axis)

@vjp(np.fliplr)
def fliplr(g, ans, m):
    return np.fliplr(g)

@vjp(np.flipud)
def flipud(g, ans, m):
    return np.flipud(g)

@vjp(np.roll)
def roll(g, ans, a, shift, axis=None):
    return np.roll(g, np.negative(shift), axis)

@vjp(np.rot90)
def rot90(g, ans, m, k=1, axes=(0, 1)):
    return np.rot90(g, -k, axes)

linear(np.tril, np.triu, np.flip, np.fliplr, np.flipud, np.roll, np.rot90)

@vjp(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast(g, ans, ary):
    return np.reshape(g, np.shape(ary))

linear(np.atleast_1d, np.atleast_2d, np.atleast_3d)

@vjp(np.swapaxes)
def swapaxes(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)

linear(np.swapaxes)

@vjp(np.moveaxis)
def moveaxis(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)

linear(np.moveaxis)

@vjp(np.broadcast_to)
def broadcast_to(g, ans, array, shape):
    return rt.unbroadcast(g, array)

linear(np.broadcast_to)

# The first argument of a join is a list: its tangent is the list of the elements' tangents.
@vjp(np.concatenate)
def concatenate(g, ans, arrays, axis=0):
    return rt.concatenate_grads(g, arrays, axis)

linear(np.concatenate)

@vjp(np.stack)
def stack(g, ans, arrays, axis=0):
    return rt.stack_grads(g, arrays, axis)

linear(np.stack)

@vjp(np.hstack)
def hstack(g, ans, tup):
    return rt.hstack_grads(g, tup)

linear(np.hstack)

@vjp(np.vstack)
def vstack(g, ans, tup):
    return rt.vstack_grads(g, tup)

linear(np.vstack)

@vjp(np.array, np.asarray, np.asanyarray, np.ascontiguousarray)
def array(g, ans, object, dtype=None):
    return rt.asarray_grad(g, object)

linear(np.array, np.asarray, np.asanyarray, np.ascontiguousarray)

# ``x.copy()`` and ``x.astype(dtype)``: the derivative passes through. A
# template rather than ``linear``, since astype's arguments are not rt.identity's.
# The tangent is a copy too: a later write into the array being copied (or its
# tangent) must not reach it.
@vjp(rt.identity)
def identity(g, ans, x, *args, **kwargs):
    return g

@jvp(rt.identity)
def identity_jvp(dx, ans, x, *args, **kwargs):
    return np.copy(dx)


# Samples between two endpoints: linear in the pair (start, stop).
@vjp(np.linspace)
def linspace(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    return (*rt.linspace_grads(g, start, stop, num, endpoint, axis), None, None, None, None, None)

@jvp(np.linspace)
def linspace_jvp(dstart, dstop, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                 axis=0):
    return np.linspace(np.asarray(dstart, ans.dtype), np.asarray(dstop, ans.dtype), num, endpoint,
                       retstep, ans.dtype, axis)

# Arrays filled from a value: the value's cotangent sums over the copies.
@vjp(np.full)
def full(g, ans, shape, fill_value, dtype=None, order="C"):
    return None, rt.unbroadcast(g, fill_value)

@jvp(np.full)
def full_jvp(dfill_value, ans, shape, fill_value, dtype=None, order="C"):
    return np.full(np.shape(ans), dfill_value, ans.dtype)

@vjp(np.full_like)
def full_like(g, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return None, rt.unbroadcast(g, fill_value)

@jvp(np.full_like)
def full_like_jvp(dfill_value, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return np.full(np.shape(ans), dfill_value, ans.dtype)

# Entry k of np.arange(start, stop, step) is start + k * step.
@vjp(np.arange)
def arange(g, ans, start, stop=None, step=None, dtype=None):
    return (*rt.arange_grads(g, start, stop, step), None)

@jvp(np.arange)
def arange_jvp(dstart, dstop, dstep, ans, start, stop=None, step=None, dtype=None):
    return rt.arange_tangent(dstart, dstop, dstep, ans, start, stop, step)

@vjp(np.copy)
def copy(g, ans, a, order="K", subok=False):
    return g

linear(np.copy)

# A sort moves entries: the cotangent goes back where each came from, the
# tangent moves with them (the order is piecewise constant in ``a``).
@vjp(np.sort)
def sort(g, ans, a, axis=-1, kind=None, order=None, stable=None):
    return rt.sort_grad(g, a, axis)

@jvp(np.sort)
def sort_jvp(da, ans, a, axis=-1, kind=None, order=None, stable=None):
    return rt.sort_tangent(da, a, axis)

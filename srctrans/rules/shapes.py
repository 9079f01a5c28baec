"""Derivative rules of functions that move, join or re-view elements without
changing their values: the cotangent is moved back the inverse way, and the
tangent moves the same way as the values (every one of them is linear in its
first argument, so its JVP is the same call on the tangent)."""

import numpy as np

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


@vjp(np.reshape)
def reshape(g, ans, a, shape=None, order="C"):
    return rt.reshape_like(g, a, order)

linear(np.reshape)

@vjp(np.ravel)
def ravel(g, ans, a, order="C"):
    return rt.reshape_like(g, a, order)

linear(np.ravel)

@vjp(np.squeeze, np.expand_dims)
def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))

linear(np.squeeze, np.expand_dims)

@vjp(np.transpose)
def transpose(g, ans, a, axes=None):
    return rt.transpose_grad(g, axes)

linear(np.transpose)


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

@vjp(np.dsplit)
def dsplit(g, ans, ary, indices_or_sections):
    return np.dstack(g)

linear(np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit)
REGISTRY.returns_tuple(np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.meshgrid)

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

# the real part when every imaginary part is within tol machine epsilons of zero
@vjp(np.real_if_close)
def real_if_close(g, ans, a, tol=100):
    return g, None

@jvp(np.real_if_close)
def real_if_close_jvp(da, ans, a, tol=100):
    return rt.real_for(da, ans)

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

# nested lists of blocks: the cotangent is cut back into them (nested tuples)
@vjp(np.block)
def block(g, ans, arrays):
    return rt.block_grads(g, arrays)

linear(np.block)

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

if hasattr(np, "row_stack") and np.row_stack is not np.vstack:   # deprecated in NumPy 2
    @vjp(np.row_stack)
    def row_stack(g, ans, tup):
        return rt.vstack_grads(g, tup)

    linear(np.row_stack)

@vjp(np.column_stack)
def column_stack(g, ans, tup):
    return rt.column_stack_grads(g, tup)

@vjp(np.dstack)
def dstack(g, ans, tup):
    return rt.dstack_grads(g, tup)

linear(np.column_stack, np.dstack)

@vjp(np.append)
def append(g, ans, arr, values, axis=None):
    return (*rt.append_grads(g, arr, values, axis), None)

@jvp(np.append)
def append_jvp(darr, dvalues, ans, arr, values, axis=None):
    return np.append(darr, dvalues, axis)

# np.diag builds a matrix from a vector, or takes a matrix's diagonal
@vjp(np.diag)
def diag(g, ans, v, k=0):
    return rt.diag_grad(g, v, k), None

@vjp(np.diagflat)
def diagflat(g, ans, v, k=0):
    return rt.diagflat_grad(g, v, k), None

linear(np.diag, np.diagflat)

@vjp(np.rollaxis)
def rollaxis(g, ans, a, axis, start=0):
    return rt.rollaxis_grad(g, a, axis, start)

linear(np.rollaxis)

# grids of coordinate vectors (tuples of arrays): each vector's cotangent sums its grid's
@vjp(np.meshgrid)
def meshgrid(g, ans, *xi, copy=True, sparse=False, indexing="xy"):
    return (*rt.meshgrid_grads(g, xi, indexing), None, None, None)

@jvp(np.meshgrid)
def meshgrid_jvp(dxi, ans, *xi, copy=True, sparse=False, indexing="xy"):
    return rt.meshgrid_jvp(dxi, xi, indexing, sparse)

# selections: the selected entries' cotangents go back where they were taken from
@vjp(np.select)
def select(g, ans, condlist, choicelist, default=0):
    return (None, *rt.select_grads(g, condlist, choicelist, default))

@jvp(np.select)
def select_jvp(dchoicelist, ddefault, ans, condlist, choicelist, default=0):
    return np.select(condlist, dchoicelist, ddefault)

@vjp(np.compress)
def compress(g, ans, condition, a, axis=None):
    return None, rt.compress_grad(g, condition, a, axis), None

@jvp(np.compress)
def compress_jvp(da, ans, condition, a, axis=None):
    return np.compress(condition, da, axis)

@vjp(np.extract)
def extract(g, ans, condition, arr):
    return None, rt.extract_grad(g, condition, arr)

@jvp(np.extract)
def extract_jvp(darr, ans, condition, arr):
    return np.extract(condition, darr)

@vjp(np.choose)
def choose(g, ans, a, choices, mode="raise"):
    return None, rt.choose_grads(g, a, choices), None

@jvp(np.choose)
def choose_jvp(dchoices, ans, a, choices, mode="raise"):
    return np.choose(a, dchoices, mode=mode)

@vjp(np.partition)
def partition(g, ans, a, kth, axis=-1):
    return rt.partition_grad(g, a, kth, axis), None, None

@jvp(np.partition)
def partition_jvp(da, ans, a, kth, axis=-1):
    return rt.partition_jvp(da, a, kth, axis)

@vjp(np.ediff1d)
def ediff1d(g, ans, ary, to_end=None, to_begin=None):
    return (*rt.ediff1d_grads(g, ary, to_end, to_begin),)

@jvp(np.ediff1d)
def ediff1d_jvp(dary, dto_end, dto_begin, ans, ary, to_end=None, to_begin=None):
    return rt.ediff1d_jvp(dary, dto_end, dto_begin, ary, to_end, to_begin)

# unwrap adds multiples of the period that change only where a jump crosses discont:
# elsewhere its derivative is the identity
@vjp(np.unwrap)
def unwrap(g, ans, p, discont=None, axis=-1, *, period=2 * np.pi):
    return g

@jvp(np.unwrap)
def unwrap_jvp(dp, ans, p, discont=None, axis=-1, *, period=2 * np.pi):
    return dp

@vjp(np.interp)
def interp(g, ans, x, xp, fp, left=None, right=None, period=None):
    return (*rt.interp_grads(g, x, xp, fp, left, right, period), None)

@jvp(np.interp)
def interp_jvp(dx, dxp, dfp, dleft, dright, ans, x, xp, fp, left=None, right=None, period=None):
    return rt.interp_jvp(dx, dxp, dfp, dleft, dright, x, xp, fp, left, right, period)

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
    return rt.real_for(g, x)

@jvp(rt.identity)
def identity_jvp(dx, ans, x, *args, **kwargs):
    return rt.copied(dx)


# Samples between two endpoints: linear in the pair (start, stop).
@vjp(np.linspace)
def linspace(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    return (*rt.linspace_grads(g, start, stop, num, endpoint, axis), None, None, None, None, None)

@jvp(np.linspace)
def linspace_jvp(dstart, dstop, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                 axis=0):
    return np.linspace(rt.as_array(dstart, ans.dtype), rt.as_array(dstop, ans.dtype), num, endpoint,
                       retstep, ans.dtype, axis)

# Samples evenly spaced in log scale: exp of a linspace of the logs.
@vjp(np.logspace)
def logspace(g, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return (*rt.linspace_grads(g * ans * np.log(rt.as_array(base, ans.dtype)), start, stop, num,
                               endpoint, axis), None, None,
            rt.unbroadcast(g * ans * np.log(ans) / (base * np.log(rt.as_array(base, ans.dtype))),
                           base), None, None)

@jvp(np.logspace)
def logspace_jvp(dstart, dstop, dbase, ans, start, stop, num=50, endpoint=True, base=10.0,
                 dtype=None, axis=0):
    return ans * (np.log(rt.as_array(base, ans.dtype))
                  * np.linspace(rt.as_array(dstart, ans.dtype), rt.as_array(dstop, ans.dtype), num,
                                endpoint, axis=axis)
                  + np.log(ans) / np.log(rt.as_array(base, ans.dtype)) * dbase / base)

@vjp(np.geomspace)
def geomspace(g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return (*rt.geomspace_grads(g, ans, start, stop, num, endpoint, axis), None, None, None, None)

@jvp(np.geomspace)
def geomspace_jvp(dstart, dstop, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return ans * np.linspace(rt.as_array(dstart / start, ans.dtype),
                             rt.as_array(dstop / stop, ans.dtype), num, endpoint, axis=axis)

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
    return np.full_like(ans, dfill_value)

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

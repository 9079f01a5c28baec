"""Derivatives of NumPy's selections and joins written in plain NumPy that srctrans
differentiates again: ``np.select``, ``np.compress``, ``np.extract``, ``np.choose``,
``np.partition``, ``np.rollaxis``, ``np.column_stack``, ``np.dstack``, ``np.append`` and
``np.ediff1d``.

Like ``composites`` (whose section these were), every function here is registered with
``differentiate_through`` (``srctrans/rules/linalg.py``): second derivatives come from
srctrans reading this source.
"""

import numpy as np

from .broadcast import unbroadcast
from .foreign import as_array, numpy_only


def select_grads(g, condlist, choicelist, default=0):
    """The cotangents of ``choicelist`` (a list) and ``default`` for ``np.select``: each
    choice gets ``g`` where its condition is the first true one, ``default`` where none is."""
    numpy_only("np.select", g)
    taken = np.zeros(np.shape(g), dtype=bool)
    grads = []
    for k in range(len(choicelist)):
        first = np.logical_and(condlist[k], np.logical_not(taken))
        grads.append(unbroadcast(np.where(first, g, 0.0), choicelist[k]))
        taken = np.logical_or(taken, condlist[k])
    return grads, unbroadcast(np.where(taken, 0.0, g), default)


def compress_grad(g, condition, a, axis=None):
    """The cotangent of ``a`` for ``np.compress(condition, a, axis)``: ``g`` put back at the
    positions it was taken from (entry ``k`` of the kept ones is ``g``'s ``k``-th)."""
    numpy_only("np.compress", g, a)
    length = np.size(a) if axis is None else np.shape(a)[axis]
    kept = np.zeros(length, dtype=bool)
    kept = np.logical_or(kept, np.concatenate(
        [as_array(condition, dtype=bool), np.zeros(max(length - np.size(condition), 0), bool)])[:length])
    source = np.clip(np.cumsum(kept) - 1, 0, None)
    if axis is None:
        spread = np.where(kept, np.take(np.ravel(g), source) if np.size(g) else 0.0, 0.0)
        return np.reshape(spread, np.shape(a))
    shape = [1] * np.ndim(a)
    shape[axis] = length
    taken = np.take(g, source, axis=axis) if np.size(g) else np.zeros(np.shape(a))
    return np.where(np.reshape(kept, tuple(shape)), taken, 0.0)


def extract_grad(g, condition, arr):
    """The cotangent of ``arr`` for ``np.extract(condition, arr)``."""
    numpy_only("np.extract", g, arr)
    return compress_grad(g, np.ravel(condition), arr, None)


def choose_grads(g, a, choices):
    """The cotangents of ``choices`` for ``np.choose(a, choices)``: ``g`` where ``a`` picks it."""
    numpy_only("np.choose", g)
    return [unbroadcast(np.where(a == k, g, 0.0), choices[k]) for k in range(len(choices))]


def partition_grad(g, a, kth, axis=-1):
    """The cotangent of ``a`` for ``np.partition(a, kth, axis)``: ``g`` moved back through the
    inverse of the permutation ``np.argpartition`` gives."""
    numpy_only("np.partition", g, a)
    order = np.argpartition(a, kth, axis=axis)
    return np.take_along_axis(g, np.argsort(order, axis=axis), axis=axis)


def partition_jvp(da, a, kth, axis=-1):
    numpy_only("np.partition", da, a)
    return np.take_along_axis(da, np.argpartition(a, kth, axis=axis), axis=axis)


def rollaxis_grad(g, a, axis, start=0):
    """The cotangent of ``a`` for ``np.rollaxis(a, axis, start)``: the inverse permutation
    (the permutation is NumPy's: ``axis`` removed, then inserted before ``start``)."""
    n = np.ndim(a)
    axis = axis % n
    start = start + n if start < 0 else start
    if axis < start:
        start = start - 1
    return np.moveaxis(g, start, axis)          # the rolled axis went to ``start``: back


def column_stack_grads(g, tup):
    """The cotangents of the inputs of ``np.column_stack(tup)``: columns of ``g``."""
    grads = []
    start = 0
    for x in tup:
        width = 1 if np.ndim(x) < 2 else np.shape(x)[1]
        part = g[:, start:start + width]
        grads.append(np.reshape(part, np.shape(x)))
        start += width
    return grads


def dstack_grads(g, tup):
    """The cotangents of the inputs of ``np.dstack(tup)`` (inputs made at least 3-D)."""
    grads = []
    start = 0
    for x in tup:
        depth = np.shape(np.atleast_3d(x))[2]
        grads.append(np.reshape(g[:, :, start:start + depth], np.shape(x)))
        start += depth
    return grads


def append_grads(g, arr, values, axis=None):
    """The cotangents of ``arr`` and ``values`` for ``np.append(arr, values, axis)``."""
    if axis is None:
        flat = np.ravel(g)
        size = int(np.prod(np.shape(arr)))
        return (np.reshape(flat[:size], np.shape(arr)), np.reshape(flat[size:], np.shape(values)))
    length = np.shape(arr)[axis]
    head = np.take(g, np.arange(length), axis=axis)
    tail = np.take(g, np.arange(length, np.shape(g)[axis]), axis=axis)
    return head, np.reshape(tail, np.shape(values))


def ediff1d_grads(g, ary, to_end=None, to_begin=None):
    """The cotangents of ``ary``, ``to_end`` and ``to_begin`` for ``np.ediff1d``."""
    numpy_only("np.ediff1d", g, ary)
    begin = 0 if to_begin is None else np.size(to_begin)
    n = np.size(ary)
    inner = g[begin:begin + max(n - 1, 0)]
    flat = np.zeros(n, np.result_type(ary, g))
    if n > 1:
        flat = np.concatenate([-inner[:1], inner[:-1] - inner[1:], inner[-1:]])
    g_begin = None if to_begin is None else np.reshape(g[:begin], np.shape(to_begin))
    g_end = None if to_end is None else np.reshape(g[begin + max(n - 1, 0):], np.shape(to_end))
    return np.reshape(flat, np.shape(ary)), g_end, g_begin


def ediff1d_jvp(dary, dto_end, dto_begin, ary, to_end=None, to_begin=None):
    parts = []
    if to_begin is not None:
        parts.append(np.ravel(dto_begin) * np.ones(np.size(to_begin), np.result_type(dary, 1.0)))
    parts.append(np.diff(np.ravel(dary)))
    if to_end is not None:
        parts.append(np.ravel(dto_end) * np.ones(np.size(to_end), np.result_type(dary, 1.0)))
    return np.concatenate(parts)

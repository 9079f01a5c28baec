"""Functional forms of NumPy's in-place writes, and the cotangents of writes.

srctrans rewrites ``np.add.at(y, i, v)``, ``np.put(y, i, v)`` and
``np.put_along_axis(y, i, v, axis)`` into ``y[...] = rt.add_at(y, i, v)``,
``y[...] = rt.put(y, i, v)`` and ``y[...] = rt.put_along(y, i, v, axis)``: the
functions here compute the same values without changing their arguments.

A write ``y[index] = v`` whose integer-array index repeats a position keeps,
as NumPy does, only one of the values written there; :func:`written_part`
gives the cotangent of ``v`` accordingly.
"""

import numpy as np

from .accumulate import zeros_like
from .broadcast import unbroadcast
from .reshaping import is_basic_index
from .foreign import as_array, numpy_only


def add_at(a, indices, b):
    """A copy of ``a`` after ``np.add.at(a, indices, b)`` (repeated indices add up)."""
    numpy_only("np.add.at", a, b)
    out = np.array(a, copy=True)
    np.add.at(out, indices, b)
    return out


def put(a, ind, v, mode="raise"):
    """A copy of ``a`` after ``np.put(a, ind, v, mode)``."""
    numpy_only("np.put", a, v)
    out = np.array(a, copy=True)
    np.put(out, ind, v, mode=mode)
    return out


def put_along(a, indices, values, axis):
    """A copy of ``a`` after ``np.put_along_axis(a, indices, values, axis)``."""
    numpy_only("np.put_along_axis", a, values)
    out = np.array(a, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


def _kept_along(a, indices, axis):
    """Where ``np.put_along_axis(a, indices, ...)`` keeps the value written (a position
    named twice keeps the last), as a boolean array shaped like ``indices``."""
    ids = np.arange(np.size(indices)).reshape(np.shape(indices))
    owner = np.full(np.shape(a), -1, dtype=np.intp)
    np.put_along_axis(owner, indices, ids, axis)
    return np.take_along_axis(owner, indices, axis) == ids


def put_along_values_grad(c, a, indices, values, axis):
    """The cotangent of ``values`` in ``put_along(a, indices, values, axis)`` given the
    result's cotangent ``c``: ``c`` where each kept value landed, summed to ``values``'s shape
    (it was broadcast against ``indices``)."""
    picked = np.take_along_axis(c, indices, axis)
    kept = _kept_along(a, indices, axis)
    return unbroadcast(np.where(kept, picked, np.zeros_like(picked)), values)


def put_along_values_grad_transpose(c, a, indices, values, axis):
    """The transpose of ``c -> put_along_values_grad(c, a, indices, values, axis)``."""
    spread = np.broadcast_to(c, np.shape(indices))
    kept = _kept_along(a, indices, axis)
    zeros = np.zeros(np.shape(a), dtype=_float_type(c, a))
    return put_along(zeros, indices, np.where(kept, spread, np.zeros_like(spread)), axis)


def put_values_grad(c, a, ind, v, mode="raise"):
    """The cotangent of ``v`` in ``put(a, ind, v, mode)`` given the result's cotangent ``c``.

    Each position of the flattened ``a`` that the put writes receives the
    value of one entry of ``ind`` (the last that names it, as NumPy does), and
    that entry takes ``v``'s value at its index modulo ``v.size`` (``v`` is
    repeated when it is shorter): that entry of ``v`` gets ``c`` there.
    """
    owner = np.full(np.size(a), -1, dtype=np.intp)
    np.put(owner, ind, np.arange(np.size(ind)), mode=mode)
    written = np.flatnonzero(owner >= 0)
    out = np.zeros(np.size(v), dtype=_float_type(c, v))
    np.add.at(out, owner[written] % max(np.size(v), 1), np.ravel(c)[written])
    return out.reshape(np.shape(v)) if np.ndim(v) else out.reshape(())[()]


def put_values_grad_transpose(c, a, ind, v, mode="raise"):
    """The transpose of ``c -> put_values_grad(c, a, ind, v, mode)`` (``c`` shaped like ``v``)."""
    zeros = np.zeros(np.shape(a), dtype=_float_type(c, a))
    return put(zeros, ind, c, mode)


def written_part(g, index):
    """``g[index]``, with zeros at the entries of ``index`` whose write NumPy does not keep.

    ``y[index] = v`` with an integer-array index that repeats a position
    leaves the value of one entry there (the last); the others reach nothing.
    """
    part = g[index]
    if is_basic_index(index) or getattr(index, "dtype", None) == np.bool_:
        return part                      # each position written once (a mask too): all kept
    numpy_only("writing at an array of integer positions", g, index)
    ids = np.arange(np.size(part)).reshape(np.shape(part))
    owner = np.full(np.shape(g), -1, dtype=np.intp)
    owner[index] = ids
    kept = owner[index] == ids
    return part if kept.all() else np.where(kept, part, np.zeros_like(part))


def written_part_transpose(c, g, index):
    """The transpose of ``g -> written_part(g, index)``: zeros shaped like ``g``, ``c`` written
    at ``index`` (where ``index`` repeats a position, the kept entry's value). For a list
    ``g`` (a list's cotangent), a list of zeros with ``c`` at ``index``."""
    if isinstance(g, list):
        out_list = [zeros_like(entry) for entry in g]
        out_list[index] = c
        return out_list
    out = np.zeros(np.shape(g), dtype=np.result_type(c, g))
    out[index] = c
    return out


def sort_grad(g, a, axis=-1):
    """The cotangent of ``a`` for ``ans = np.sort(a, axis)``: ``g`` put back where each
    sorted entry came from (``axis=None`` sorts the flattened array)."""
    numpy_only("np.sort", g, a)
    if axis is None:
        out = np.zeros(np.size(a), dtype=np.result_type(g, a))
        out[np.argsort(a, axis=None, kind="stable")] = np.ravel(g)
        return out.reshape(np.shape(a))
    order = np.argsort(a, axis=axis, kind="stable")
    out = np.zeros(np.shape(a), dtype=np.result_type(g, a))
    if np.ndim(a) == 1:                          # (a vector: placed by its order, without
        out[order] = g                           # np.put_along_axis's Python-level steps)
    else:
        np.put_along_axis(out, order, g, axis=axis)
    return out


def sort_tangent(t, a, axis=-1):
    """The tangent of ``np.sort(a, axis)`` along ``t``: ``t`` in the order the sort puts ``a``;
    also the transpose of ``g -> sort_grad(g, a, axis)``."""
    numpy_only("np.sort", t, a)
    if axis is None:
        return np.ravel(t)[np.argsort(a, axis=None, kind="stable")]
    return np.take_along_axis(as_array(t), np.argsort(a, axis=axis, kind="stable"), axis=axis)


def _float_type(*values):
    kind = np.result_type(*values)
    return kind if kind.kind in "fc" else np.dtype(np.float64)

"""Derivative rules of the runtime helpers of subscripts, attributes and containers.

The helpers generated code calls to read or write part of a value (``rt.getitem_grad``,
``rt.getattr_grad``, the entry helpers of dicts and lists, the writes of
``runtime/writes.py``) and to build a value (``rt.record``: a dataclass or named tuple
made inside the differentiated function). Each reads or writes part of its first
argument, so its transpose writes or reads the same part. The conventions of
``runtime_helpers.py`` (the module these rules were split from) hold here too.
"""

import numpy as np

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


# -- subscripts, attributes and containers -----------------------------------------
# Each reads or writes part of its first argument, so its transpose writes or
# reads the same part: getitem_grad puts v at index, its transpose reads c[index].

@vjp(rt.getitem_grad)
def getitem_grad(g, ans, v, x, index):
    return rt.unbroadcast(g[index], v)

@vjp(rt.getattr_grad)
def getattr_grad(g, ans, v, obj, name):
    return rt.getattr_grad_transpose(g, obj, name)

@vjp(rt.getattr_grad_transpose)
def getattr_grad_transpose(g, ans, c, obj, name):
    return rt.getattr_grad(g, obj, name)

# list(iterable) and its transpose: entry by entry, nothing for a dict's keys
@vjp(rt.sequence_grad)
def sequence_grad(g, ans, v, iterable):
    return rt.sequence_grad_transpose(g, iterable)

@vjp(rt.sequence_grad_transpose)
def sequence_grad_transpose(g, ans, c, iterable):
    return rt.sequence_grad(g, iterable)

# the tangent of an attribute read (forward mode): the transpose of getattr_grad too
@vjp(rt.attribute_tangent)
def attribute_tangent(g, ans, t, obj, name):
    return rt.getattr_grad(g, obj, name)

# NumPy's named tuple of a decomposition's tangent or cotangent (runtime/decompositions.py)
@vjp(rt.tuple_like)
def tuple_like(g, ans, like, parts):
    return None, tuple(g)

@jvp(rt.tuple_like)
def tuple_like_jvp(dparts, ans, like, parts):
    return rt.tuple_like(like, dparts)

# Concatenation and repetition of lists and tuples (normalize/sequences.py): linear in
# the sequences, entry by entry; each helper's transpose is the other one.
REGISTRY.returns_tuple(rt.concat_grads)

@vjp(rt.concat)
def concat(g, ans, x, y):
    return (*rt.concat_grads(g, x, y),)

@jvp(rt.concat)
def concat_jvp(dx, dy, ans, x, y):
    return rt.concat(dx, dy)

@vjp(rt.concat_grads)
def concat_grads(g, ans, v, x, y):
    return rt.concat(g[0], g[1]), None, None

linear(rt.concat_grads)

@vjp(rt.repeated)
def repeated(g, ans, x, n):
    return rt.repeated_grads(g, x, n), None

@vjp(rt.repeated_grads)
def repeated_grads(g, ans, v, x, n):
    return rt.repeated(g, n), None, None

linear(rt.repeated, rt.repeated_grads)

# a list as a call read it, a tangent's own copy, an argument's copy, an entry copied for a
# chained write, a checkpointed loop's kept state: the cotangent passes
@vjp(rt.snapshot, rt.writable_copy, rt.argument_copy, rt.entry_copy, rt.dict_copy,
     rt.state_copy)
def snapshot(g, ans, xs):
    return g

linear(rt.snapshot, rt.writable_copy, rt.argument_copy, rt.entry_copy, rt.dict_copy,
       rt.state_copy)

@vjp(rt.copied)
def copied(g, ans, value):
    return g

@vjp(rt.zero_at)
def zero_at(g, ans, v, index):
    return rt.zero_at(g, index)

@vjp(rt.entry_zero_like)
def entry_zero_like(g, ans, v, index, x):
    # the output's entry is a constant zero: v's entry gets none, shaped like v's own entry
    # (x's may have another shape: the entry before a write, which the output's zero copies)
    return rt.entry_zero_like(g, index, v), None, None

linear(rt.entry_zero_like)

@vjp(rt.transpose_grad)
def transpose_grad(g, ans, v, axes=None):
    return np.transpose(g, axes)

# rt.polygamma(n, x) (SciPy's polygamma from its ufuncs, for n >= 1): the next order
@vjp(rt.polygamma, elementwise=True)
def polygamma(g, ans, n, x):
    """The order ``n`` is an integer: no derivative."""
    return None, g * rt.polygamma(n + 1, x)

@jvp(rt.polygamma)
def polygamma_jvp(dx, ans, n, x):
    return dx * rt.polygamma(n + 1, x)

@vjp(rt.as_array)
def as_array(g, ans, v, dtype=None):
    return rt.asarray_grad(g, v)

@vjp(rt.reshape_like)
def reshape_like(g, ans, v, x, order="C"):
    return rt.reshape_like(g, v, order)

@vjp(rt.asarray_grad)
def asarray_grad(g, ans, v, obj):
    """A list ``obj``'s cotangents (one per element) are stacked back; an array's is ``g``."""
    return np.asarray(g)

# A pop's adjoint pushes the cotangent back on the list's cotangent: the
# transpose takes it off again.
@vjp(rt.pushed)
def pushed(g, ans, v, value):
    return rt.last_and_rest(g)[1], rt.last_and_rest(g)[0]

@jvp(rt.pushed)
def pushed_jvp(dv, dvalue, ans, v, value):
    return rt.pushed(dv, dvalue)

@vjp(rt.pushed_many)
def pushed_many(g, ans, v, values):
    return rt.pushed_many_transpose(g, values)[0], rt.pushed_many_transpose(g, values)[1]

@jvp(rt.pushed_many)
def pushed_many_jvp(dv, dvalues, ans, v, values):
    return rt.pushed_many(dv, dvalues)

@vjp(rt.pushed_many_transpose)
def pushed_many_transpose(g, ans, c, values):
    return rt.pushed_many(g[0], g[1]), None

linear(rt.pushed_many_transpose)

@vjp(rt.last_and_rest)
def last_and_rest(g, ans, v):
    return rt.last_and_rest_transpose(g)

@vjp(rt.last_and_rest_transpose)
def last_and_rest_transpose(g, ans, c):
    return rt.last_and_rest(g)

# a list's cotangent made from its entries' (optimise/entry_cotangents.py), and back
@vjp(rt.sequence_cotangent)
def sequence_cotangent(g, ans, found, sequence):
    return rt.sequence_cotangent_transpose(g, found, sequence)

@vjp(rt.sequence_cotangent_transpose)
def sequence_cotangent_transpose(g, ans, c, found, sequence):
    return rt.sequence_cotangent(g, sequence)

# a container's cotangent made from some of its entries' (optimise/container_cotangents.py),
# by key or by any index a list takes
@vjp(rt.container_cotangent)
def container_cotangent(g, ans, found, container):
    return rt.container_cotangent_transpose(g, found, container)

@vjp(rt.container_cotangent_transpose)
def container_cotangent_transpose(g, ans, c, found, container):
    return rt.container_cotangent(g, container)

@vjp(rt.picks_cotangent)
def picks_cotangent(g, ans, terms, indices, container):
    return rt.picks_cotangent_transpose(g, terms, indices, container)

@vjp(rt.picks_cotangent_transpose)
def picks_cotangent_transpose(g, ans, c, terms, indices, container):
    return rt.picks_cotangent(g, indices, container)

@vjp(rt.attributes_cotangent)
def attributes_cotangent(g, ans, found, obj):
    return rt.attributes_cotangent_transpose(g, found, obj)

@vjp(rt.attributes_cotangent_transpose)
def attributes_cotangent_transpose(g, ans, c, found, obj):
    return rt.attributes_cotangent(g, obj)

linear(rt.copied, rt.getitem_grad, rt.getattr_grad, rt.getattr_grad_transpose,
       rt.attribute_tangent, rt.sequence_grad, rt.sequence_grad_transpose, rt.zero_at,
       rt.transpose_grad, rt.reshape_like, rt.as_array, rt.asarray_grad, rt.last_and_rest,
       rt.last_and_rest_transpose, rt.sequence_cotangent, rt.sequence_cotangent_transpose,
       rt.container_cotangent, rt.container_cotangent_transpose, rt.picks_cotangent,
       rt.picks_cotangent_transpose, rt.attributes_cotangent, rt.attributes_cotangent_transpose)


# The tape of a subscript write: saved_at copies what the write overwrites,
# restored_at writes it back (where an integer-array index repeats a position,
# the value NumPy keeps there is the one whose cotangent written_part gives).
@vjp(rt.saved_at)
def saved_at(g, ans, x, index):
    return rt.getitem_grad(g, x, index)

@vjp(rt.restored_at)
def restored_at(g, ans, x, index, old):
    return rt.zero_at(g, index), None, rt.unbroadcast(rt.written_part(g, index), old)

@vjp(rt.written_part)
def written_part(g, ans, v, index):
    return rt.written_part_transpose(g, v, index)

@vjp(rt.written_part_transpose)
def written_part_transpose(g, ans, c, like, index):
    return rt.written_part(g, index)

linear(rt.written_part, rt.written_part_transpose)


# The functional forms of np.add.at and np.put (srctrans rewrites the in-place
# calls into writes of their results).
@vjp(rt.add_at)
def add_at(g, ans, a, indices, b):
    return g, None, rt.unbroadcast(g[indices], b)

@jvp(rt.add_at)
def add_at_jvp(da, db, ans, a, indices, b):
    return rt.add_at(da, indices, db)

@vjp(rt.put)
def put(g, ans, a, ind, v, mode="raise"):
    return rt.put(g, ind, 0.0, mode), None, rt.put_values_grad(g, a, ind, v, mode), None

@jvp(rt.put)
def put_jvp(da, dv, ans, a, ind, v, mode="raise"):
    return rt.put(da, ind, dv, mode)

@vjp(rt.put_values_grad)
def put_values_grad(g, ans, c, a, ind, v, mode="raise"):
    return rt.put_values_grad_transpose(g, a, ind, v, mode)

@vjp(rt.put_values_grad_transpose)
def put_values_grad_transpose(g, ans, c, a, ind, v, mode="raise"):
    return rt.put_values_grad(g, a, ind, v, mode)

linear(rt.put_values_grad, rt.put_values_grad_transpose)

# np.put_along_axis, as srctrans rewrites it: the written positions of a get nothing
@vjp(rt.put_along)
def put_along(g, ans, a, indices, values, axis):
    return (rt.put_along(g, indices, 0.0, axis), None,
            rt.put_along_values_grad(g, a, indices, values, axis), None)

@jvp(rt.put_along)
def put_along_jvp(da, dvalues, ans, a, indices, values, axis):
    return rt.put_along(da, indices, dvalues, axis)

@vjp(rt.put_along_values_grad)
def put_along_values_grad(g, ans, c, a, indices, values, axis):
    return rt.put_along_values_grad_transpose(g, a, indices, values, axis)

@vjp(rt.put_along_values_grad_transpose)
def put_along_values_grad_transpose(g, ans, c, a, indices, values, axis):
    return rt.put_along_values_grad(g, a, indices, values, axis)

linear(rt.put_along_values_grad, rt.put_along_values_grad_transpose)

# sort_grad and sort_tangent are each other's transpose; the order they apply
# is piecewise constant in ``a``.
@vjp(rt.sort_grad)
def sort_grad(g, ans, v, a, axis=-1):
    return rt.sort_tangent(g, a, axis), None

@vjp(rt.sort_tangent)
def sort_tangent(g, ans, t, a, axis=-1):
    return rt.sort_grad(g, a, axis), None

linear(rt.sort_grad, rt.sort_tangent)

@jvp(rt.restored_at)
def restored_at_jvp(dx, dold, ans, x, index, old):
    return rt.restored_at(dx, index, dold)

linear(rt.saved_at)


# Dict entries: a read of mapping.get(key) and its transpose, a write of an
# entry; without_entry drops an entry and its transpose puts a zero back.
@vjp(rt.entry_cotangent)
def entry_cotangent(g, ans, cotangent, key, like):
    return rt.entry_cotangent_transpose(g, cotangent, key)

@vjp(rt.entry_cotangent_transpose)
def entry_cotangent_transpose(g, ans, c, mapping, key):
    return rt.entry_cotangent(g, key, c)

@vjp(rt.without_entry)
def without_entry(g, ans, cotangent, key):
    return rt.without_entry_transpose(g, cotangent, key)

@vjp(rt.without_entry_transpose)
def without_entry_transpose(g, ans, c, mapping, key):
    return rt.without_entry(g, key)

@vjp(rt.saved_entry)
def saved_entry(g, ans, mapping, key):
    return rt.entry_cotangent_transpose(g, mapping, key)

@vjp(rt.restored_entry)
def restored_entry(g, ans, mapping, key, old):
    return (rt.without_entry_transpose(rt.without_entry(g, key), mapping, key), None,
            rt.entry_cotangent(g, key, old))

@jvp(rt.restored_entry)
def restored_entry_jvp(dmapping, dold, ans, mapping, key, old):
    return rt.restored_entry_tangent(dmapping, dold, key, old)

linear(rt.entry_cotangent, rt.entry_cotangent_transpose, rt.without_entry,
       rt.without_entry_transpose, rt.saved_entry)


# A dataclass or named tuple made inside the function: its cotangent's fields are the
# values' cotangents; its tangent is one of its kind made of the values' tangents.
@vjp(rt.record)
def record(g, ans, kind, values, attributes=None):
    return None, rt.record_fields(g, ans, attributes), None

@jvp(rt.record)
def record_jvp(dvalues, ans, kind, values, attributes=None):
    return rt.record(kind, dvalues, attributes)

@vjp(rt.record_fields)
def record_fields(g, ans, v, like, attributes=None):
    return rt.record_fields_transpose(g, like, attributes)

@vjp(rt.record_fields_transpose)
def record_fields_transpose(g, ans, c, like, attributes=None):
    return rt.record_fields(g, like, attributes)

linear(rt.record_fields, rt.record_fields_transpose)


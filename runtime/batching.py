"""What batched code calls (``st.vmap``): a batched value has its batch axis first.

Generated batched code keeps every value that depends on a batched argument
with the batch axis at position 0 and every other value as the unbatched
function computes it. Where the transform knows the ranks it writes the
NumPy expression itself (``x[:, None] * y``); these helpers do the same work
when a rank or a type is known only when the code runs, and run a call that
has no batching rule once per member of the batch (:func:`loop`).

"Per-example rank" below is the rank a value has in the unbatched function:
a batched value's ``ndim`` less one.
"""

import copy

import numpy as np

from .containers import entries, is_container, rebuild
from .objects import attributes, is_plain_object
from .refusals import error


def _each_entry(fn, value):
    """A container like ``value`` holding ``fn(entry)`` for each of its entries; for a plain
    object (a model's ``self``), a copy holding ``fn(attribute)`` for each attribute."""
    if is_plain_object(value):
        return _each_entry_named(value, {name: fn(entry)
                                         for name, entry in attributes(value).items()})
    return rebuild(value, [(key, fn(entry)) for key, entry in entries(value)])


def _each_entry_named(obj, values):
    """A copy of the plain object ``obj`` with its attributes set to ``values``."""
    moved = copy.copy(obj)
    for name, value in values.items():
        object.__setattr__(moved, name, value)
    return moved


def _has_entries(value):
    return is_container(value) or is_plain_object(value)


def rank(x, batched):
    """The per-example rank of ``x`` (``np.ndim``, less one for a batched value)."""
    return np.ndim(x) - 1 if batched else np.ndim(x)


def lifted(x, target):
    """The batched ``x`` with axes of length 1 inserted after the batch axis, so that its
    per-example rank is at least ``target``: it then broadcasts against values of that rank
    as the unbatched value did (``x[:, None]`` for a batch of numbers against vectors)."""
    missing = target - (np.ndim(x) - 1)
    if missing <= 0:
        return x
    x = np.asarray(x)
    return x.reshape(x.shape[:1] + (1,) * missing + x.shape[1:])


def aligned(values, batched):
    """``values`` for an elementwise operation: each batched one lifted to the highest
    per-example rank among all of them (unbatched ones broadcast from the right already)."""
    target = max(rank(v, b) for v, b in zip(values, batched))
    return tuple(lifted(v, target) if b else v for v, b in zip(values, batched))


def spread(value, size):
    """An unbatched value as a batch of ``size`` copies (a writable array; a container entry
    by entry), for a name that holds batched values elsewhere."""
    if _has_entries(value):
        return _each_entry(lambda entry: spread(entry, size), value)
    value = np.asarray(value)
    out = np.empty((size,) + value.shape, dtype=value.dtype)
    out[...] = value
    return out


def array_of(make, value, batched, size, keywords=None):
    """``make(value, **keywords)`` (``np.array``, ``np.asarray``) of each member: a list or
    tuple's entries (batched as ``batched`` says: a flag, or one per entry) stacked after
    the batch axis, unbatched ones spread; an array as it is."""
    keywords = keywords or {}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        flags = batched if isinstance(batched, tuple) else (batched,) * len(value)
        if not any(_any_batched(f) for f in flags):
            return spread(make(value, **keywords), size)
        parts = [array_of(np.asarray, v, f, size) for v, f in zip(value, flags)]
        return make(np.stack(parts, axis=1), **keywords)
    out = make(value, **keywords)
    return out if _any_batched(batched) else spread(out, size)


def entry(items, key, flags, key_batched, size):
    """``items[key]`` of each member, for a list or tuple whose entries are batched as the
    tuple ``flags`` says and a position ``key`` (batched when ``key_batched``): the entry made
    batched (spread, if it is not), or, for a batched position, each member's own entry."""
    def batched(position):
        return _any_batched(flags[position] if isinstance(flags, tuple) else flags)
    if not key_batched:
        found = items[key]
        return found if batched(key) else spread(found, size)
    positions = np.asarray(key)
    return stacked([member(items[int(p)], i, batched(int(p))) for i, p in enumerate(positions)])


def select(taken, chosen, other):
    """Each member's ``chosen`` where its ``taken`` holds, else its ``other`` (the value of a
    name after an ``if`` on a batched test, or after a step of a ``while`` on one): both
    batched or not, arrays, numbers or containers of them; None (a name one side did not
    assign) takes the other side's value. ``taken`` is a batch of booleans."""
    if other is None or chosen is other:
        return chosen
    if chosen is None:
        return other
    if is_container(chosen) and is_container(other):
        theirs = dict(entries(other))
        return rebuild(chosen, [(k, select(taken, v, theirs[k])) for k, v in entries(chosen)])
    taken = np.asarray(taken)
    rank = max(np.ndim(chosen), np.ndim(other))
    if rank < taken.ndim:             # unbatched numbers on both sides
        return np.where(taken, chosen, other)
    return np.where(taken.reshape(taken.shape + (1,) * (rank - taken.ndim)), chosen, other)


def unbatched_parts(value, flag):
    """A batched value (one call per member, stacked) with the parts ``flag`` says are the same
    for every member (False, or False entries of a tuple of flags) taken from member 0."""
    if flag is True:
        return value
    if flag is False or not is_container(value):
        return member(value, 0, True)
    flags = flag if isinstance(flag, tuple) else (flag,) * len(entries(value))
    return rebuild(value, [(key, unbatched_parts(v, f))
                           for (key, v), f in zip(entries(value), flags)])


def pad(x, pad_width, keywords):
    """``np.pad(x, pad_width, **keywords)`` of each member of the batched ``x``: the widths
    (and any per-axis values) made one pair per axis of a member, the batch axis unpadded."""
    def per_axis(value):
        pairs = np.broadcast_to(np.asarray(value), (np.ndim(x) - 1, 2))
        return ((0, 0),) + tuple(tuple(pair) for pair in pairs.tolist())
    keywords = {k: per_axis(v) if k != "mode" and np.ndim(v) > 0 else v
                for k, v in keywords.items()}
    return np.pad(x, per_axis(pad_width), **keywords)


def _any_batched(flag):
    return flag is True or isinstance(flag, tuple) and any(map(_any_batched, flag))


def axis(ax, x):
    """The batched array ``x``'s axis for the per-example axis argument ``ax`` (None: every
    axis but the batch axis; a tuple axis by axis)."""
    if ax is None:
        return tuple(range(1, np.ndim(x)))
    if isinstance(ax, (tuple, list)):
        return tuple(axis(a, x) for a in ax)
    return ax + 1 if ax >= 0 else ax


def index(key):
    """The subscript of a batched array for the per-example subscript ``key``."""
    return (slice(None),) + (key if isinstance(key, tuple) else (key,))


def _is_array(part):
    return not isinstance(part, (slice, int, np.integer, type(None), type(Ellipsis)))


def getitem(x, key):
    """``x[key]`` of each member of the batched ``x`` (a batched array or a container of
    batched values) for an unbatched ``key``."""
    if isinstance(x, (tuple, list, dict)):
        return x[key]
    parts = key if isinstance(key, tuple) else (key,)
    if any(_is_array(p) for p in parts):          # then ints index as arrays too
        arrays = [i for i, p in enumerate(parts) if _is_array(p) or isinstance(p, (int, np.integer))]
    else:
        arrays = []
    if len(arrays) > 1 and arrays[-1] - arrays[0] + 1 != len(arrays):
        # separated advanced indices put their axes first: per example, and again here
        out = x[index(key)]
        return np.moveaxis(out, np.ndim(np.broadcast(*[parts[i] for i in arrays])), 0)
    return x[index(key)]


def take(x, key, x_batched):
    """``x[key]`` per member for a batched ``key`` (one array of indices or a number).

    Members of a batched ``x`` are gathered along their own first axis; an unbatched ``x``
    is gathered by the batch of indices at once."""
    key = np.asarray(key)
    if not x_batched:
        return np.asarray(x)[key]
    rows = np.arange(key.shape[0]).reshape((-1,) + (1,) * (key.ndim - 1))
    return np.asarray(x)[rows, key]


def setitem(x, key, value, value_batched):
    """``x[key] = value`` in each member of the batched array ``x`` (in place)."""
    if isinstance(x, (list, dict)):
        x[key] = value
        return
    if value_batched:
        target = np.ndim(x[index(key)]) - 1
        value = lifted(value, target)
    x[index(key)] = value


def reshape(x, shape):
    """Each member of the batched ``x`` reshaped to ``shape``."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    x = np.asarray(x)
    return x.reshape(x.shape[:1] + shape)


def transpose(x, axes=None):
    """Each member of the batched ``x`` transposed (``axes`` per example)."""
    x = np.asarray(x)
    if axes is None:
        return x.transpose((0,) + tuple(range(x.ndim - 1, 0, -1)))
    return x.transpose((0,) + tuple(a + 1 if a >= 0 else a + x.ndim for a in axes))


def matmul(a, b, a_batched, b_batched):
    """``a @ b`` of each member (NumPy's rules for vectors and stacks)."""
    ra, rb = rank(a, a_batched), rank(b, b_batched)
    if a_batched and not b_batched:
        if ra == 1 and rb > 2:
            return np.matmul(a[:, None, :], b)[..., 0, :]
        return np.matmul(a, b)
    if b_batched and not a_batched:
        if rb == 1:
            return np.matmul(b, np.swapaxes(a, -1, -2)) if ra >= 2 else np.matmul(b, a)
        return np.matmul(a, b)
    if ra == 1 and rb == 1:
        return np.einsum("bi,bi->b", a, b)
    if rb == 1:
        return np.matmul(a, b[..., None])[..., 0]
    if ra == 1:
        return np.matmul(a[:, None, :], b)[:, 0]
    return np.matmul(lifted(a, rb), lifted(b, ra))


def dot(a, b, a_batched, b_batched):
    """``np.dot(a, b)`` of each member."""
    ra, rb = rank(a, a_batched), rank(b, b_batched)
    if ra == 0 or rb == 0:
        return np.multiply(*aligned((a, b), (a_batched, b_batched)))
    if ra <= 2 and rb <= 2:
        return matmul(a, b, a_batched, b_batched)
    flags = (a_batched, b_batched)
    return loop(np.dot, (a, b), flags, size_of((a, b), flags))


def concatenate(values, batched, ax=0):
    """``np.concatenate(values, ax)`` of each member; unbatched members are spread first."""
    size = next(np.shape(v)[0] for v, b in zip(values, batched) if b)
    parts = [v if b else spread(v, size) for v, b in zip(values, batched)]
    return np.concatenate(parts, axis=ax + 1 if ax >= 0 else ax)


def stack(values, batched, ax=0):
    """``np.stack(values, ax)`` of each member; unbatched members are spread first."""
    size = next(np.shape(v)[0] for v, b in zip(values, batched) if b)
    parts = [v if b else spread(v, size) for v, b in zip(values, batched)]
    return np.stack(parts, axis=ax + 1 if ax >= 0 else ax)


def member(value, i, batched):
    """Member ``i`` of a batched value (an array or a container of them)."""
    if not batched:
        return value
    if _has_entries(value):
        return _each_entry(lambda entry: member(entry, i, True), value)
    if value is None or np.ndim(value) == 0:
        return value            # a number in a batched container (a zero cotangent): everyone's
    return value[i]


def stacked(results):
    """The results of one call per member, stacked into one batched value (containers of
    arrays entry by entry; Nones stay None)."""
    first = results[0]
    if first is None:
        return None
    if is_container(first):
        taken = [dict(entries(r)) for r in results]
        return rebuild(first, [(key, stacked([t[key] for t in taken])) for key, _ in entries(first)])
    if is_plain_object(first):
        taken = [attributes(r) for r in results]
        return _each_entry_named(first, {name: stacked([t[name] for t in taken])
                                         for name in attributes(first)})
    arrays = [np.asarray(r) for r in results]
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise Ragged(sorted(shapes))
    return np.stack(arrays)


class Ragged(Exception):
    """The members' results of a call run once per member differ in shape: no one array
    holds them (``st.vmap`` then runs the whole function per member, or reports it)."""

    def __init__(self, shapes):
        super().__init__(shapes)
        self.shapes = shapes

    def for_user(self):
        return error("ShapeError", f"under st.vmap the members' results have different shapes "
                     f"({', '.join(map(str, self.shapes))})",
                     "st.vmap stacks every member's result: make each member's shape the "
                     "same (a length that depends on an argument's value, as np.arange's, "
                     "varies)")


def loop(f, args, batched, size, keywords=None, keywords_batched=None):
    """``f(*args, **keywords)`` of each member, one call per member, stacked: the batching of
    a call without a batching rule (slower than a rule, never wrong)."""
    keywords = keywords or {}
    keywords_batched = keywords_batched or {}
    return stacked([
        f(*[member(a, i, b) for a, b in zip(args, batched)],
          **{k: member(v, i, keywords_batched.get(k, False)) for k, v in keywords.items()})
        for i in range(size)])


def size_of(values, batched):
    """The batch size: the length of the first batched value's batch axis (a container's
    first array)."""
    for value, b in zip(values, batched):
        if isinstance(b, tuple):             # a tuple whose entries are batched or not
            parts = [v for _, v in entries(value)]
            found = [size_of(parts, b)] if any(map(_any_batched, b)) else []
            if found:
                return found[0]
        elif b:
            return _first_length(value)
    raise ValueError("no batched value")


def _first_length(value):
    if is_container(value):
        return _first_length(entries(value)[0][1])
    if is_plain_object(value):
        return _first_length(next(iter(attributes(value).values())))
    return np.shape(value)[0]


def length(x):
    """``len`` of each member of ``x``: a container's own length, an array's second axis."""
    if isinstance(x, (tuple, list, dict)):
        return len(x)
    return np.shape(x)[1]


def member_size(x, axis):
    """``np.size(member, axis)`` of each member of ``x`` (an array batched on its first
    axis): the length of a member's ``axis``, or the product of a tuple of them."""
    shape = np.shape(x)[1:]
    if isinstance(axis, tuple):
        return int(np.prod([shape[a] for a in axis]))
    return shape[axis]


def conformed(value, have, want, size):
    """``value``, whose parts are batched as the flags ``have`` say (True, False, or a tuple
    of flags for a tuple's or list's entries), with the parts ``want`` batches spread."""
    if have == want or have is True or not want or value is None:
        return value
    if have is False and want is True:
        return spread(value, size)
    parts = entries(value)
    haves = have if isinstance(have, tuple) else (have,) * len(parts)
    wants = want if isinstance(want, tuple) else (want,) * len(parts)
    return rebuild(value, [(key, conformed(v, h, w, size))
                           for (key, v), h, w in zip(parts, haves, wants)])


# -- derivative helpers of generated code, on batches -------------------------------
# (in runtime/batched_derivatives.py; generated code reads them here, as rt.batch.NAME)

from .batched_derivatives import (  # noqa: E402,F401  (after what they import from here)
    add, attributes_cotangent, axiswise, broadcast_like, broadcast_to, container_cotangent,
    custom_cotangents, getitem_grad, logaddexp_fold, logaddexp_fold_from,
    transpose_grad, unbroadcast, zero_guard_sum)

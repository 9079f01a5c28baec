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
from .seeding import is_integer
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

def broadcast_to(x, shape, x_batched=True):
    """``np.broadcast_to(x, shape)`` of each member (``shape`` per example)."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not x_batched:
        return np.broadcast_to(x, shape)
    x = lifted(x, len(shape))
    return np.broadcast_to(x, np.shape(x)[:1] + shape)


def unbroadcast(g, x, g_batched, x_batched):
    """``rt.unbroadcast(g, x)`` of each member: ``g`` summed down to a member of ``x``'s
    shape (the result is batched)."""
    target = np.shape(x)[1:] if x_batched else np.shape(x)
    if not g_batched:
        g = np.broadcast_to(g, (np.shape(x)[0],) + np.shape(g)) if x_batched else g
    g = np.asarray(g)
    extra = g.ndim - 1 - len(target)
    if extra > 0:
        g = g.sum(axis=tuple(range(1, 1 + extra)))
    stretched = tuple(i + 1 for i, n in enumerate(target) if n == 1 and g.shape[i + 1] != 1)
    if stretched:
        g = g.sum(axis=stretched, keepdims=True)
    if g.shape[1:] != target:
        g = np.broadcast_to(g, g.shape[:1] + target)
    if g.dtype.kind == "c" and np.asarray(x).dtype.kind != "c":
        g = np.real(g)               # a real operand's part of a complex cotangent, as rt's
    return g


def axiswise(helper, args, batched, axis_at, size, keywords=None):
    """A helper that works along an ``axis`` argument (``rt.unreduce(g, x, axis,
    keepdims)``, ``rt.extremum_grad``...) of each member: every array argument made batched
    (unbatched ones as broadcast views) and the axis moved past the batch axis. The arrays
    come before the axis in every such helper; the arguments after it (``ddof``,
    ``keepdims``) are the same for every member, and so are the integers before it (``n``
    of ``diff_grad``)."""
    keywords = dict(keywords or {})
    args = list(args)
    for i, (a, b) in enumerate(zip(args[:axis_at], batched)):
        if not b and isinstance(a, (np.ndarray, np.generic, float, complex)):
            a = np.asarray(a)
            args[i] = np.broadcast_to(a, (size,) + a.shape)
    if axis_at < len(args):
        args[axis_at] = axis(args[axis_at], _first_array(args, axis_at))
    elif "axis" in keywords:
        keywords["axis"] = axis(keywords["axis"], _first_array(args, axis_at))
    else:
        keywords["axis"] = axis(None, _first_array(args, axis_at))
    return helper(*args, **keywords)


def _first_array(args, skip):
    """The argument the axis refers to: the last array before the axis (``x`` of
    ``unreduce(g, x, axis)``)."""
    arrays = [a for a in args[:skip] if np.ndim(a) > 0]
    return arrays[-1]


def getitem_grad(g, x, key, g_batched, x_batched):
    """``rt.getitem_grad(g, x, key)`` of each member for an unbatched ``key``: zeros of a
    member's shape with ``g`` placed (added, for repeated indices) at ``key``."""
    if isinstance(x, (tuple, list, dict)) or not g_batched and not x_batched:
        from .reshaping import getitem_grad as one
        size = _first_length(g) if g_batched else _first_length(x)
        return loop(one, (g, x, key), (g_batched, x_batched, False), size)
    shape = np.shape(x)[1:] if x_batched else np.shape(x)
    g = np.asarray(g)
    size = g.shape[0] if g_batched else np.shape(x)[0]
    out = np.zeros((size,) + shape, dtype=np.result_type(g.dtype, np.float64)
                   if g.dtype.kind not in "fc" else g.dtype)
    parts = key if isinstance(key, tuple) else (key,)
    if any(_is_array(p) for p in parts):
        np.add.at(out, index(key), g if g_batched else np.broadcast_to(g, out[index(key)].shape))
    else:
        out[index(key)] = lifted(g, np.ndim(out[index(key)]) - 1) if g_batched else g
    return out


def container_cotangent(found, container, found_batched, container_batched, size):
    """``rt.container_cotangent(found, container)`` of each member, every entry batched:
    ``found`` (a dict, batched as ``found_batched`` says) holds a member's entries'
    cotangents by key; the container's entries are batched as ``container_batched`` says."""
    from .reshaping import _by_entry_key
    found = _by_entry_key(found, container)
    return rebuild(container, [
        (key, _entry_cotangent(found.get(key), entry, found_batched, container_batched, size))
        for key, entry in entries(container)])


def _entry_cotangent(g, entry, found_batched, container_batched, size):
    """``add(zeros_like(entry), g)`` of each member, batched (zeros for None and for an int
    entry); a container entry (``xs[0][1]`` of a list of lists) entry by entry."""
    from .accumulate import zeros_like
    from .containers import entries_like
    member_entry = member(entry, 0, container_batched)
    if g is not None and is_container(member_entry):
        theirs = entries_like(g, member_entry)
        return rebuild(entry, [(key, _entry_cotangent(theirs.get(key), part, found_batched,
                                                      container_batched, size))
                               for key, part in entries(entry)])
    zero = zeros_like(entry)
    if g is None or is_integer(member_entry):
        return zero if container_batched else spread(zero, size)
    if found_batched:
        g = lifted(g, np.ndim(member_entry))
    if not container_batched:
        zero = zero[None] if isinstance(zero, np.ndarray) else np.full((1,), zero)
    total = zero + g
    return total if np.shape(total)[:1] == (size,) else \
        np.broadcast_to(total, (size,) + np.shape(total)[1:]).copy()


def attributes_cotangent(found, obj, found_batched, obj_batched, size):
    """``rt.attributes_cotangent(found, obj)`` of each member, every entry batched."""
    if is_container(obj):
        return container_cotangent(found, obj, found_batched, obj_batched, size)
    out = {}
    for name, g in found.items():
        if is_integer(member(getattr(obj, name), 0, obj_batched)):
            continue                          # an int attribute: a constant, no cotangent
        out[name] = g if g is None or found_batched else spread(g, size)
    return out


def custom_cotangents(cotangents, args, rule, single, cotangents_batched, args_batched, size):
    """``rt.custom_cotangents(cotangents, args, rule, single)`` of each member, every entry
    batched: a user-written gradient's cotangents (batched as ``cotangents_batched`` says,
    a tuple of flags for a tuple's entries) checked against each member's arguments, one
    returned for all members spread over the batch, zeros of a member's shape where the
    rule returned None."""
    from .accumulate import zeros_like
    from .custom import check_cotangent_shape, rule_entries
    count = len(args)
    entries_ = rule_entries(cotangents, count, rule, single)
    if single or len(entries_) == 1 and not isinstance(cotangents, (tuple, list)):
        have = (cotangents_batched,)
    else:
        have = _entry_flags(cotangents_batched, count)
    finished = []
    for index, (cotangent, arg, c_batched, a_batched) in enumerate(
            zip(entries_, args, have, _entry_flags(args_batched, count))):
        if arg is not None and cotangent is None:
            zero = zeros_like(arg)
            finished.append(conformed(zero, a_batched, True, size))
            continue
        if arg is not None and not is_container(arg):
            shape, arg_shape = np.shape(cotangent), np.shape(arg)
            check_cotangent_shape(shape[1:] if c_batched else shape,
                                  arg_shape[1:] if a_batched else arg_shape, index, rule)
        finished.append(conformed(cotangent, c_batched, True, size))
    return tuple(finished)


def _entry_flags(flag, count):
    return flag if isinstance(flag, tuple) else (flag,) * count


def transpose_grad(g, axes=None):
    """``rt.transpose_grad(g, axes)`` of each member of the batched ``g``."""
    if axes is None:
        return transpose(g)
    ndim = np.ndim(g) - 1
    return transpose(g, tuple(np.argsort([a % ndim for a in axes]).tolist()))


def add(a, b, a_batched, b_batched):
    """``rt.add(a, b)`` of cotangents of each member (None is zero)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (tuple, list, dict)) or isinstance(b, (tuple, list, dict)):
        from .accumulate import add as one
        return one(a, b)
    a, b = aligned((a, b), (a_batched, b_batched))
    return a + b


def broadcast_like(t, ans, t_batched, ans_batched):
    """``rt.broadcast_like(t, ans)`` of each member: ``t`` with a member of ``ans``'s shape."""
    shape = np.shape(ans)[1:] if ans_batched else np.shape(ans)
    if not t_batched:
        return spread(np.broadcast_to(t, shape), np.shape(ans)[0])
    t = lifted(t, len(shape))
    if np.shape(t)[1:] == shape:
        return t
    return np.broadcast_to(t, np.shape(t)[:1] + shape).copy()

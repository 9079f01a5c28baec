"""The derivative helpers of generated code (``rt.unbroadcast``, ``rt.getitem_grad``,
``rt.container_cotangent``...) on batches: what batched derivatives call as
``rt.batch.NAME`` (:mod:`.batching` holds them under that name). A batched value has its
batch axis first; ``*_batched`` flags say which arguments are batched.
"""

import numpy as np

from .accumulate import add as _add, zeros_like
from .batching import (_first_length, _is_array, aligned, axis, conformed, index, lifted, loop,
                       member, spread, transpose)
from .containers import entries, entries_like, is_container, rebuild
from .folds import logaddexp_fold as _logaddexp_fold, logaddexp_fold_from as _fold_from
from .container_cotangents import _by_entry_key
from .reshaping import getitem_grad as _getitem_grad
from .seeding import is_integer
from .singular import zero_guard as _zero_guard


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
        size = _first_length(g) if g_batched else _first_length(x)
        return loop(_getitem_grad, (g, x, key), (g_batched, x_batched, False), size)
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
    found = _by_entry_key(found, container)
    return rebuild(container, [
        (key, _entry_cotangent(found.get(key), entry, found_batched, container_batched, size))
        for key, entry in entries(container)])


def _entry_cotangent(g, entry, found_batched, container_batched, size):
    """``add(zeros_like(entry), g)`` of each member, batched (zeros for None and for an int
    entry); a container entry (``xs[0][1]`` of a list of lists) entry by entry."""
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
    from .custom import check_cotangent_shape, rule_entries
    count = len(args)
    entries_ = rule_entries(cotangents, count, rule, single)
    if single or len(entries_) == 1 and not isinstance(cotangents, (tuple, list)):
        have = (cotangents_batched,)
    else:
        have = _entry_flags(cotangents_batched, count)
    finished = []
    for position, (cotangent, arg, c_batched, a_batched) in enumerate(
            zip(entries_, args, have, _entry_flags(args_batched, count))):
        if arg is not None and cotangent is None:
            zero = zeros_like(arg)
            finished.append(conformed(zero, a_batched, True, size))
            continue
        if arg is not None and not is_container(arg):
            shape, arg_shape = np.shape(cotangent), np.shape(arg)
            check_cotangent_shape(shape[1:] if c_batched else shape,
                                  arg_shape[1:] if a_batched else arg_shape, position, rule)
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
        return _add(a, b)
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


def logaddexp_fold(acc, x, axis, start, stop, acc_batched, x_batched):
    """``rt.logaddexp_fold(acc, x, axis, start, stop)`` of each member: the slices of a batched
    ``x`` lie along ``axis + 1``, and a batched ``acc`` of lower rank than a member's slice
    gets axes of length 1 after the batch axis, so that it broadcasts against the slices as
    each member's does."""
    if acc_batched:
        member, reads = np.ndim(acc) - 1, np.ndim(x) - 1 - bool(x_batched)
        if member < reads:
            shape = np.shape(acc)
            acc = np.reshape(acc, shape[:1] + (1,) * (reads - member) + shape[1:])
    return _logaddexp_fold(acc, x, axis + bool(x_batched), start, stop)


def logaddexp_fold_from(x, axis, start, stop, x_batched):
    """``rt.logaddexp_fold_from(x, axis, start, stop)`` of each member: the slices of a
    batched ``x`` lie along ``axis + 1``."""
    return _fold_from(x, axis + bool(x_batched), start, stop)


def zero_guard_sum(g, value, g_batched, value_batched):
    """``rt.zero_guard_sum(g, value)`` of each member (one of them batched): the guard's
    product summed over each member's axes."""
    guarded = _zero_guard(*aligned((g, value), (g_batched, value_batched)))
    return guarded.sum(axis=tuple(range(1, np.ndim(guarded))))


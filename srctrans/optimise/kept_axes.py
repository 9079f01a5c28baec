"""A sum that keeps an axis only for the next statement to index it away sums it away.

Requires: straight-line statements (a fused gradient's top level).
Guarantees: the values computed are unchanged, bit for bit (the same sum, without the
axis of length 1). ``t = e.sum(axis=k, keepdims=True)`` (``np.sum(e, axis=k,
keepdims=True)``; ``k`` a non-negative int or a tuple of them) read only by the next
statement, ``g = t[i]``, where ``i`` takes entry 0 of each summed axis and all of every
axis before or between them, becomes ``g = e.sum(axis=k)``, and ``t`` is not made. The
cotangent of ``means`` read as ``means[None, :, :]`` is such a sum over the rows
followed by ``[0, :, :]``: a view of the kept sum, which the gradient a user gets may not
be (it is copied, on every call), where the sum without the axis is an array of its own::

    d_item = d_sub.sum(axis=0, keepdims=True)      ->      dmeans = d_sub.sum(axis=0)
    dmeans = d_item[0, :, :]
"""

import gast

from srctrans.nodes import int_literal, whole_slice
from srctrans.optimise.dce import name_counts


def sum_kept_axes_away(body, live_out):
    """``body`` (changed in place, and returned) with each kept axis indexed away by the
    next statement summed away (see the module); ``live_out``: the names read after it."""
    _, reads = name_counts(body)
    dropped = set()
    for index in range(len(body) - 1):
        kept = _kept_sum(body[index])
        if kept is None:
            continue
        name, call, axes = kept
        reader = body[index + 1]
        if (name in live_out or reads.get(name) != 1 or not isinstance(reader, gast.Assign)
                or not _drops(reader.value, name, axes)):
            continue
        call.keywords = [k for k in call.keywords if k.arg != "keepdims"]
        reader.value = body[index].value
        dropped.add(index)
    body[:] = [stmt for index, stmt in enumerate(body) if index not in dropped]
    return body


def _kept_sum(stmt):
    """``(t, the sum's call, its axes)`` for ``t = e.sum(axis=k, keepdims=True)`` (or
    ``np.sum``, a negation of either), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    call = stmt.value.operand if isinstance(stmt.value, gast.UnaryOp) \
        and isinstance(stmt.value.op, gast.USub) else stmt.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "sum"):
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    keep = keywords.get("keepdims")
    if set(keywords) != {"axis", "keepdims"} or not (
            isinstance(keep, gast.Constant) and keep.value is True):
        return None
    axis = keywords["axis"]
    axes = [int_literal(a) for a in (axis.elts if isinstance(axis, gast.Tuple) else [axis])]
    if not axes or any(a is None or a < 0 for a in axes):
        return None
    return stmt.targets[0].id, call, set(axes)


def _drops(value, name, axes):
    """Whether ``value`` is ``name[i]``, ``i`` entry 0 of each of ``axes`` and ``:`` of
    every other axis up to the last of them."""
    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
            and value.value.id == name):
        return False
    parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
    if len(parts) <= max(axes):
        return False
    return all(int_literal(part) == 0 if position in axes else whole_slice(part)
               for position, part in enumerate(parts))

"""A cotangent made of a masked pick's entries and put back through the mask is selected.

Requires: the top-level statements of a fused gradient specialised on shapes, the measured
shapes, the names that may not hold floats, and the aliases of NumPy and of the runtime.
Guarantees: the values computed are unchanged, bit for bit, dtype included.
``d = rt.getitem_grad(g, x, m)`` puts ``g`` back where the mask ``m`` picked ``x``'s
entries, zeros elsewhere. Where ``m`` is a comparison (or ``&``, ``|``, ``~`` of
comparisons) of ``x``'s shape assigned once, and ``g`` (or the name of it, assigned once and
read only there) is arithmetic (``+ - *``, whole positive powers, quotients by nonzero number
literals, signs) of numbers and of picks ``a[m]`` of float arrays ``a`` of ``x``'s shape,
``x[m]`` among them, written after ``m`` and those arrays took their one value (and nothing
between ``g``'s statement and the helper's may write into them)::

    _cmp = z > 0                       _cmp = z > 0
    g = 2 * z[_cmp]              ->    dz = np.where(_cmp, 2 * z, 0)
    dz = rt.getitem_grad(g, z, _cmp)

Each entry the mask keeps is the same arithmetic of the same numbers; the others are 0,
as the helper's zeros were; the dtype is ``g``'s, which has ``x``'s (it reads ``x[m]``),
the helper's ``result_type(x, g)``. The arithmetic runs on every entry rather than on the
picked ones, in one pass with the selection, where the pick, the arithmetic and the helper's
zeros and placing made three (a loss over ``z[z > 0]``). On the entries the mask leaves out
it may overflow, which NumPy then reports (a warning; an error under
``np.seterr(over='raise')``), as the hand-written ``2 * z * (z > 0)`` does.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import clone, dotted, load, may_change, number_literal
from srctrans.optimise.dce import name_counts, stores_of
from srctrans.optimise.entry_cotangents import is_runtime_call

_MASK_OPS = (gast.BitAnd, gast.BitOr)
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult)


def select_masked_picks(body, known, not_float, numpy_alias, runtime_alias):
    """``body`` (a list, changed in place and returned) with each cotangent of a masked pick
    that qualifies selected (see the module); ``known``: name -> measured shape."""
    stores, reads = name_counts(body)
    stored_at = {name: index for index, stmt in enumerate(body) for name in stores_of(stmt)}
    once = {stmt.targets[0].id: (index, stmt.value) for index, stmt in enumerate(body)
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stores.get(stmt.targets[0].id) == 1}
    dropped = set()
    for index, stmt in enumerate(body):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and is_runtime_call(stmt.value, runtime_alias, "getitem_grad", 3)):
            continue
        g, x, m = stmt.value.args
        if not (isinstance(x, gast.Name) and isinstance(m, gast.Name)):
            continue
        shape = known.get(x.id)
        if not shape or known.get(m.id) != shape or x.id in not_float \
                or m.id not in once or not _is_mask(once[m.id][1]):
            continue
        if isinstance(g, gast.Name):          # the cotangent's own statement, dropped after
            if g.id not in once or reads.get(g.id) != 1 or once[g.id][0] > index:
                continue
            made, expression = once[g.id]
        else:                                 # the cotangent written in place
            made, expression = index, g
        picked = set()
        value = _unpicked(expression, m.id, picked, known)
        if (value is None or x.id not in picked
                or not _settled(m.id, made, stores, stored_at) or any(
                    known.get(a) != shape or a in not_float
                    or not _settled(a, made, stores, stored_at) for a in picked)
                or any(may_change(between, picked | {m.id})       # (read later now)
                       for between in body[made + 1:index])):
            continue
        where = gast.Call(dotted(numpy_alias, "where"),
                          [load(m.id), value, gast.Constant(0, None)], [])
        anno.set_(where, Anno.CALLEE, np.where)
        stmt.value = where
        if made != index:
            dropped.add(made)
    body[:] = [stmt for index, stmt in enumerate(body) if index not in dropped]
    return body


def _settled(name, made, stores, stored_at):
    """Whether ``name`` holds one value from before statement ``made`` on: a parameter the
    body does not assign, or a name it assigns once, before that statement."""
    return not stores.get(name) or stores[name] == 1 and stored_at[name] < made


def _is_mask(value):
    """Whether ``value`` is a comparison, or ``&``, ``|``, ``~`` of masks: a boolean array."""
    if isinstance(value, gast.Compare):
        return len(value.ops) == 1
    if isinstance(value, gast.BinOp) and isinstance(value.op, _MASK_OPS):
        return _is_mask(value.left) and _is_mask(value.right)
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Invert):
        return _is_mask(value.operand)
    return False


def _unpicked(node, mask, picked, known):
    """``node``, arithmetic of numbers and picks ``a[mask]``, with each pick written ``a``
    (the names picked added to ``picked``); None for anything else. A worklist over a copy,
    not recursion: an expression may be long."""
    root = clone(node)
    holder = gast.Expr(root)
    pending = [(holder, "value")]
    while pending:
        owner, field = pending.pop()
        part = getattr(owner, field)
        if isinstance(part, gast.Subscript) and isinstance(part.value, gast.Name) \
                and isinstance(part.slice, gast.Name) and part.slice.id == mask:
            picked.add(part.value.id)
            setattr(owner, field, gast.Name(part.value.id, gast.Load(), None, None))
        elif number_literal(part) or (isinstance(part, gast.Name) and known.get(part.id) == ()):
            continue
        elif isinstance(part, gast.UnaryOp) and isinstance(part.op, (gast.USub, gast.UAdd)):
            pending.append((part, "operand"))
        elif isinstance(part, gast.BinOp) and isinstance(part.op, _ARITHMETIC):
            pending += [(part, "left"), (part, "right")]
        elif isinstance(part, gast.BinOp) and number_literal(part.right) and (
                isinstance(part.op, gast.Div) and part.right.value != 0
                or isinstance(part.op, gast.Pow) and part.right.value >= 1
                and part.right.value == int(part.right.value)):
            pending.append((part, "left"))      # (no root, no negative power: those may warn)
        else:
            return None
    return holder.value

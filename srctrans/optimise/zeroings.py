"""A loop's zeroing of the slot it has just read is dropped when no later read can see it.

Requires: a backward pass (top-level statements), the names its forward pass assigns only
``range(...)`` with a start of at least 0 (``analyse.values.natural_ranges``: distinct
steps give distinct, non-negative indices, which pick distinct entries), and the
runtime's alias.
Guarantees: the values computed are unchanged. A write ``h[:, t, :] = prev`` in a loop
gives the backward pass, at each step, a read of the written slot's cotangent and then its
zeroing, ``dh = rt.zero_at(dh, np.s_[:, t, :])``, which copies the whole array every step
(``dh`` is the caller's). When ``t`` is the step's element of such a range, every read of
``dh`` in the loop is of that same slot before the zeroing, and nothing after the loop reads
``dh``, no read ever sees a zeroed entry: each step reads its own slot, which no earlier step
zeroed. A single loop may also add into a slot behind its step (``dlevel = dlevel +
rt.getitem_grad(v, level, t - 1)``, a recurrence's ``level[t - 1]``) when its range starts
at least that far from 0: an earlier step of the backward pass, of a greater ``t``, never
reads that slot, and no index wraps round to the end. The zeroing, and the copies
``dh = dh`` it leaves, are dropped::

    for _iteration in range(trips - 1, -1, -1):      for _iteration in range(trips - 1, -1, -1):
        t = _range[_iteration]                           t = _range[_iteration]
        dprev = dprev + dh[:, t, :]          ->          dprev = dprev + dh[:, t, :]
        dh = rt.zero_at(dh, np.s_[:, t, :])
"""

import gast

from srctrans.nodes import int_literal, whole_slice
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.optimise.expression_shapes import shape_of
from srctrans.treewalk import walk, walk_names


def drop_dead_zeroings(backward, ranges, returned, runtime_alias):
    """``backward`` without the zeroings no read can see (see the module); ``returned``: the
    expressions the pass returns. Loops nested in such a loop count too, a slot then picked
    by the counters of all of them (``dout[n, f, i]``: each step of the nest its own)."""
    for position, loop in enumerate(backward):
        if isinstance(loop, gast.For):
            after = backward[position + 1:] + list(returned)
            _drop_in(loop, loop, [], after, ranges, runtime_alias)
    return backward


def _drop_in(outer, loop, counters, after, ranges, runtime_alias):
    """Drop the dead zeroings of ``loop``'s body and of the loops nested in it; ``counters``:
    the enclosing loops' (from ``outer``, a loop of the pass's own block)."""
    counter = step_element(loop, ranges)
    if counter is None:
        return
    counters = counters + [counter]
    for stmt in loop.body:
        if isinstance(stmt, gast.For):
            _drop_in(outer, stmt, counters, after, ranges, runtime_alias)
    # a single loop over a range from `start` may also add into the slots behind its step
    behind = _Behind(loop.body, counter, ranges[loop.body[0].value.value.id]) \
        if len(counters) == 1 else None
    for index, stmt in enumerate(loop.body):
        name = _zeroed(stmt, counters, runtime_alias)
        if name is None or _reads(after, name):
            continue
        if _only_its_slot_read_before(outer, loop.body, index, name, stmt.value.args[1],
                                      runtime_alias, behind):
            loop.body = [s for s in loop.body if s is not stmt and not _copies_itself(s, name)]
            return                                  # (one per loop: the body changed)


class _Behind:
    """The slots behind a loop's step: ``counter - c``, ``c`` a literal from 1 to the start of
    the loop's range (never a negative index), written out or a name the body assigns it.
    An earlier step of the backward pass (a later one of the forward pass, of a greater
    counter) never reads one."""

    def __init__(self, body, counter, start):
        self.counter, self.start = counter, start
        self.names = {stmt.targets[0].id for stmt in body
                      if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                      and isinstance(stmt.targets[0], gast.Name) and self.written_out(stmt.value)}

    def written_out(self, value):
        if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Sub)
                and isinstance(value.left, gast.Name) and value.left.id == self.counter):
            return False
        by = int_literal(value.right)
        return by is not None and 1 <= by <= self.start

    def adds(self, stmt, name, runtime_alias):
        """Whether ``stmt`` is ``name = name + rt.getitem_grad(v, x, k)``, ``k`` a slot behind
        the step, ``v`` not reading ``name``: it changes that slot only."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name
                and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add)
                and isinstance(stmt.value.left, gast.Name) and stmt.value.left.id == name
                and is_runtime_call(stmt.value.right, runtime_alias, "getitem_grad", 3)):
            return False
        v, _, key = stmt.value.right.args
        if any(isinstance(n, gast.Name) and n.id == name for n in walk(v)):
            return False
        return isinstance(key, gast.Name) and key.id in self.names or self.written_out(key)


def step_element(loop, ranges):
    """``t`` when ``loop`` counts over a range and its body starts by assigning ``t =
    R[_iteration]``, ``R`` one of ``ranges``, ``t`` assigned nowhere else in the body."""
    if not (isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Call)
            and isinstance(loop.iter.func, gast.Name) and loop.iter.func.id == "range"):
        return None
    first = loop.body[0] if loop.body else None
    if not (isinstance(first, gast.Assign) and len(first.targets) == 1
            and isinstance(first.targets[0], gast.Name) and isinstance(first.value, gast.Subscript)
            and isinstance(first.value.value, gast.Name) and first.value.value.id in ranges
            and isinstance(first.value.slice, gast.Name)
            and first.value.slice.id == loop.target.id):
        return None
    counter = first.targets[0].id
    stores = [n for stmt in loop.body for n in walk(stmt)
              if isinstance(n, gast.Name) and n.id == counter and isinstance(n.ctx, gast.Store)]
    return counter if len(stores) == 1 else None


def _zeroed(stmt, counters, runtime_alias):
    """``X`` when ``stmt`` is ``X = rt.zero_at(X, i)``, ``i`` the ``counters``, each once, among
    full slices (``t``, ``np.s_[:, t, :]``, ``(n, f, i)``)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and is_runtime_call(stmt.value, runtime_alias, "zero_at", 2)
            and isinstance(stmt.value.args[0], gast.Name)
            and stmt.value.args[0].id == stmt.targets[0].id):
        return None
    parts = _parts(stmt.value.args[1])
    if parts is None:
        return None
    named = sorted(p.id for p in parts if isinstance(p, gast.Name))
    full = [p for p in parts if whole_slice(p)]
    if named == sorted(counters) and len(named) + len(full) == len(parts):
        return stmt.targets[0].id
    return None


def _parts(index):
    """The parts of an index, ``np.s_[...]``'s too; None for another expression."""
    if (isinstance(index, gast.Subscript) and isinstance(index.value, gast.Attribute)
            and index.value.attr == "s_"):
        index = index.slice
    if isinstance(index, gast.Tuple):
        return index.elts
    return [index] if isinstance(index, (gast.Name, gast.Slice)) else None


def _only_its_slot_read_before(outer, body, zeroing, name, index, runtime_alias, behind=None):
    """Whether every use of ``name`` in the loop ``outer`` but the zeroing ``body[zeroing]``
    (and copies ``name = name``) reads the slot ``index`` (``name[...]`` or
    ``rt.written_part(name, ...)``) in a statement of ``body`` before it, or adds into a
    slot behind the step (``behind``, a :class:`_Behind`: a smoothing's ``dlevel[t - 1]``)."""
    slot = gast.dump(gast.Tuple(_parts(index), gast.Load()))
    allowed = set()
    for position, stmt in enumerate(body):
        if position == zeroing or _copies_itself(stmt, name) or \
                behind is not None and behind.adds(stmt, name, runtime_alias):
            allowed.update(id(n) for n in walk(stmt))
            continue
        if position > zeroing:
            continue
        for node in walk(stmt):
            read = None
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
                read = node.value, node.slice
            elif is_runtime_call(node, runtime_alias, "written_part", 2):
                read = tuple(node.args)
            if read is not None and isinstance(read[0], gast.Name) and read[0].id == name \
                    and _parts(read[1]) is not None \
                    and gast.dump(gast.Tuple(_parts(read[1]), gast.Load())) == slot:
                allowed.add(id(read[0]))
    return all(id(n) in allowed for n in walk_names(outer) if n.id == name)


def _copies_itself(stmt, name):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name
            and isinstance(stmt.value, gast.Name) and stmt.value.id == name)


def _reads(statements, name):
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               for stmt in statements for n in walk(stmt))


_ZEROS = ("zeros_of", "zeros_like")        # (the runtime's calls that make zeros)


def drop_zero_stores(body, known, runtime_alias):
    """``body`` (top-level statements of specialised code) without the writes of a zero
    number into an entry of an array that holds zeros since it was made, which change
    nothing: ``dlevel = rt.zeros_of(level)`` then ``dlevel[0] = rt.zeros_of(_item)``, the
    tangent of ``level[0] = y[0]`` in forward mode. An entry is picked by int literals
    within the array's ``known`` shape (so the write could not have raised), and nothing
    between the making and the write mentions the array."""
    zeroed, out = set(), []
    for stmt in body:
        stored = _zero_store(stmt, zeroed, known, runtime_alias)
        if stored is not None:
            continue                                      # (it stays all zeros)
        zeroed -= {node.id for node in walk_names(stmt)}
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) \
                and _makes_zeros(stmt.value, stmt.targets[0].id, runtime_alias):
            zeroed.add(stmt.targets[0].id)
        out.append(stmt)
    return out


def _makes_zeros(value, name, runtime_alias):
    """Whether ``value`` is ``rt.zeros_of(x)`` or ``rt.zeros_like(x)`` of another name ``x``."""
    return any(is_runtime_call(value, runtime_alias, helper, 1) for helper in _ZEROS) \
        and not any(isinstance(node, gast.Name) and node.id == name for node in walk(value))


def _zero_store(stmt, zeroed, known, runtime_alias):
    """The array ``stmt`` writes a zero number into an in-bounds entry of, when it is one
    of ``zeroed``; else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Subscript)
            and isinstance(stmt.targets[0].value, gast.Name)
            and stmt.targets[0].value.id in zeroed):
        return None
    name, index = stmt.targets[0].value.id, stmt.targets[0].slice
    indices = index.elts if isinstance(index, gast.Tuple) else [index]
    shape = known.get(name)
    if shape is None or len(indices) > len(shape):
        return None
    for position, size in zip(indices, shape):
        value = int_literal(position)
        if value is None or type(size) is not int or not -size <= value < size:
            return None
    zero = stmt.value
    if isinstance(zero, gast.Constant):
        return name if type(zero.value) in (int, float) and repr(zero.value) in ("0", "0.0") \
            else None                                     # (not -0.0: its sign is written)
    if any(is_runtime_call(zero, runtime_alias, helper, 1) for helper in _ZEROS) \
            and shape_of(zero.args[0], known) == ():
        return name
    return None

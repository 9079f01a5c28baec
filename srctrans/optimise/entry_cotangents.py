"""A loop over a list writes its cotangent entry by entry, as an expert does.

Requires: the body of a specialised fused gradient (forward statements, then the
backward pass), after :func:`srctrans.optimise.step_lists.save_steps_in_lists`.
Guarantees: the values computed are unchanged. A loop over a list or a tuple ``xs``
reads its entry ``xs[_index]`` each step, so its reversed loop adds that entry's
cotangent into the list's: a whole list of zeros made first, and each step a new list
(``rt.getitem_grad``) added to it (``rt.add``), entry by entry, so ``n`` steps cost
``n * n`` entries. When the reversed loop counts its steps down (``for _iteration in
range(...)``), reads the index from a range (``_index = _range[_iteration]``, a new
index each step) and changes ``dxs`` in that one statement, each entry's cotangent is
stored at its index instead, and the list is made once after the loop::

    dxs = rt.zeros_like(xs)                          dxs = [None] * len(xs)
    for _iteration in range(trips - 1, -1, -1):      for _iteration in range(trips - 1, -1, -1):
        _index = _range[_iteration]          ->          _index = _range[_iteration]
        ...                                              ...
        dxs = rt.add(dxs, rt.getitem_grad(            dxs[_index] = dx
            dx, xs, _index))                     dxs = rt.sequence_cotangent(dxs, xs)

``rt.sequence_cotangent`` gives each entry what ``rt.add`` of its zeros and its
cotangent gives (zeros where no step wrote one, and for an integer entry).

A loop inside the loop (a network's layers, for each example) visits each index once
per outer step, so there each entry's cotangent is added at its index
(``dxs[_index] = rt.add(dxs[_index], dx)``: None, the list's start, is zero) when the
index is read from a range (``_index = _range[_iteration]`` in the inner loop, counting
down, whose ``_range`` is only ever a range, a placeholder None or a value the tape
gives back) and nothing else in the outer loop touches ``dxs``: no list of zeros each
step, for any number of steps.
"""

import collections

import gast

from srctrans.differentiate.control import assigned_names, is_pop
from srctrans.nodes import assign, load
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import walk


def write_entry_cotangents(body, runtime_alias):
    """``body`` with each qualifying loop's sequence cotangent written entry by entry."""
    assigned = collections.Counter(n.id for stmt in body for n in walk(stmt)
                                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    ranges = {stmt.targets[0].id for stmt in body if _assigns_call(stmt, "range")
              and assigned.get(stmt.targets[0].id) == 1}
    result = list(body)
    only_ranges = None                       # (found once: a walk of the whole body)
    for position in range(len(result) - 1, 0, -1):
        loop = result[position]
        if not (isinstance(loop, gast.For) and _counts_down(loop)):
            continue
        if only_ranges is None:
            only_ranges = _only_ranges(body)
        _add_nested_entries(result, position, only_ranges, assigned, runtime_alias)
        for name, sequence, update in _entry_updates(loop, ranges, runtime_alias):
            start = _zeros_before(result, position, name, sequence, runtime_alias)
            if start is None or sequence in assigned_names(result[start:position + 1]) \
                    or assigned.get(sequence, 0) > 1:
                continue
            result[start] = gast.copy_location(assign(name, gast.BinOp(
                gast.List([gast.Constant(None, None)], gast.Load()), gast.Mult(),
                gast.Call(load("len"), [load(sequence)], []))), result[start])
            value, _, index = update.value.args[1].args
            loop.body[loop.body.index(update)] = gast.copy_location(gast.Assign(
                [gast.Subscript(load(name), index, gast.Store())], value, None), update)
            result.insert(position + 1, assign(name, runtime_call(
                runtime_alias, "sequence_cotangent", [load(name), load(sequence)])))
    return result


def _add_nested_entries(result, position, ranges, assigned, runtime_alias):
    """Rewrite the updates of a sequence's cotangent in loops inside ``result[position]``
    (see the module) to additions at their index, with the list made before the loop and
    finished after it."""
    loop = result[position]
    found = collections.defaultdict(list)           # (dxs, xs) -> its updates
    pending = [loop]
    while pending:                                  # the loops inside, counting down
        inner = pending.pop()
        if inner is not loop:
            for name, sequence, update in _entry_updates(inner, ranges, runtime_alias,
                                                          alone=False):
                found[name, sequence].append(update)
        pending.extend(s for s in inner.body if isinstance(s, gast.For) and _counts_down(s))
    for (name, sequence), updates in found.items():
        touching = [s for s in walk(loop) if isinstance(s, gast.stmt) and not isinstance(
            s, (gast.For, gast.If, gast.While)) and any(
                isinstance(n, gast.Name) and n.id == name for n in walk(s))]
        if len(touching) != len(updates) or any(t not in updates for t in touching):
            continue
        start = _zeros_before(result, position, name, sequence, runtime_alias)
        if start is None or sequence in assigned_names(result[start:position + 1]) \
                or assigned.get(sequence, 0) > 1:
            continue
        result[start] = gast.copy_location(assign(name, gast.BinOp(
            gast.List([gast.Constant(None, None)], gast.Load()), gast.Mult(),
            gast.Call(load("len"), [load(sequence)], []))), result[start])
        for update in updates:
            value, _, index = update.value.args[1].args
            update.targets = [gast.Subscript(load(name), index, gast.Store())]
            update.value = runtime_call(runtime_alias, "add", [
                gast.Subscript(load(name), gast.Name(index.id, gast.Load(), None, None),
                               gast.Load()), value])
        result.insert(position + 1, assign(name, runtime_call(
            runtime_alias, "sequence_cotangent", [load(name), load(sequence)])))


def _only_ranges(body):
    """The names every assignment of which in ``body`` gives a range, a placeholder None, or
    a value the tape gives back (one it took from the name: a range, or None)."""
    stores, _ = name_counts(body)
    assigns = collections.defaultdict(list)
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], gast.Name):
                assigns[node.targets[0].id].append(node)
    return {name for name, found in assigns.items() if len(found) == stores.get(name) and all(
        _assigns_call(s, "range") or is_pop(s)
        or isinstance(s.value, gast.Constant) and s.value.value is None for s in found)}


def _counts_down(loop):
    """``for _iteration in range(...)``: each step a new value of the loop's name, which no
    statement of the body assigns."""
    return (isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Call)
            and isinstance(loop.iter.func, gast.Name) and loop.iter.func.id == "range"
            and loop.target.id not in assigned_names(loop.body))


def _entry_updates(loop, ranges, runtime_alias, alone=True):
    """``(dxs, xs, statement)`` for each top-level ``dxs = rt.add(dxs, rt.getitem_grad(e, xs,
    i))`` of the loop's body where ``i = r[step]`` (``r`` a name of ``ranges``) is assigned
    in the body before it, and (``alone``) no other statement of the body reads or assigns
    ``dxs``."""
    step = loop.target.id
    indices = {}
    for stmt in loop.body:
        if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Subscript)
                and isinstance(stmt.value.value, gast.Name) and stmt.value.value.id in ranges
                and isinstance(stmt.value.slice, gast.Name) and stmt.value.slice.id == step):
            indices[stmt.targets[0].id] = stmt
    found = []
    for position, stmt in enumerate(loop.body):
        update = _update(stmt, runtime_alias)
        if update is None:
            continue
        name, sequence, index = update
        defined = indices.get(index)
        if defined is None or loop.body.index(defined) > position:
            continue
        touching = [s for s in loop.body if any(isinstance(n, gast.Name) and n.id == name
                                                for n in walk(s))]
        reassigned = [s for s in loop.body if s is not defined
                      and {index, sequence} & assigned_names([s])]
        if (touching == [stmt] or not alone) and not reassigned:
            found.append((name, sequence, stmt))
    return found


def _update(stmt, runtime_alias):
    """``(dxs, xs, i)`` for ``dxs = rt.add(dxs, rt.getitem_grad(e, xs, i))`` (names), else None."""
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
            and is_runtime_call(stmt.value, runtime_alias, "add", 2)):
        return None
    total, added = stmt.value.args
    if not (isinstance(total, gast.Name) and total.id == stmt.targets[0].id
            and is_runtime_call(added, runtime_alias, "getitem_grad", 3)):
        return None
    _, sequence, index = added.args
    if not (isinstance(sequence, gast.Name) and isinstance(index, gast.Name)):
        return None
    if any(isinstance(n, gast.Name) and n.id == total.id for n in walk(added)):
        return None
    return total.id, sequence.id, index.id


def _zeros_before(body, position, name, sequence, runtime_alias):
    """The index of ``name = rt.zeros_like(sequence)`` before ``body[position]`` with no
    statement between them touching ``name``, else None."""
    for k in range(position - 1, -1, -1):
        stmt = body[k]
        if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and stmt.targets[0].id == name):
            value = stmt.value
            if is_runtime_call(value, runtime_alias, "zeros_like", 1) \
                    and isinstance(value.args[0], gast.Name) and value.args[0].id == sequence:
                return k
            return None
        if any(isinstance(n, gast.Name) and n.id == name for n in walk(stmt)):
            return None
    return None


def _assigns_call(stmt, function):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Name) and stmt.value.func.id == function)


def is_runtime_call(node, runtime_alias, name, count):
    """Whether ``node`` is ``rt.name(...)`` with ``count`` positional arguments only."""
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == name and isinstance(node.func.value, gast.Name)
            and node.func.value.id == runtime_alias and len(node.args) == count
            and not node.keywords)


def runtime_call(runtime_alias, name, args):
    """``rt.name(*args)``."""
    return gast.Call(gast.Attribute(load(runtime_alias), name, gast.Load()), args, [])

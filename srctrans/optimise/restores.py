"""Drop the saves and restores of an array whose values the backward pass never reads.

Requires: the forward and backward statements of a build specialised on shapes (after
``specialise``), the name of the tape, and the names measured as arrays or numbers.
A dict's entry writes (``rt.saved_entry``, ``rt.restored_entry``) go alike when the
backward pass reads the dict nowhere else at all.
Guarantees: the values computed are unchanged. A write ``y[i] = v`` into an array saves
what it overwrites (``tape.append(rt.saved_at(y, i))``), and the backward pass puts it back
(``y = rt.restored_at(y, i, tape.pop())``, a copy of ``y`` each time), so that a backward
statement reading ``y`` sees it as it was. When no backward statement reads ``y``'s values,
only its shape (``rt.getitem_grad(g, y, i)``, ``rt.unbroadcast(g, y)``, ``rt.zeros_of(y)``:
every value ``y`` takes has one shape, its measured one), both go, pairwise, so the tape
keeps its order::

    for t in _range:                              for t in _range:
        tape.append(rt.saved_at(level, t))   ->       level[t] = ...
        level[t] = ...                            ...
    ...                                           for _iteration in ...:
    for _iteration in ...:                            dlevel = rt.add(dlevel, rt.getitem_grad(
        level = rt.restored_at(level, t, tape.pop())       d, level, t - 1))
        dlevel = rt.add(dlevel, rt.getitem_grad(d, level, t - 1))

A layer filling a preallocated array (``h[:, t, :] = prev``) copied the whole array once
per step for the restores; now it copies nothing. Both go too when the restores are
statements of the backward pass's own block and every read of the array comes before the
first of them: what they put back is never read (a one-hot matrix written once and read
once, ``Y[np.arange(n), labels] = 1.0``), and when each restore is followed in its own block
by a statement assigning the name anew before any other use of it (a loop's one-hot vector
made at each step, popped back right after its restore).
"""

import gast

from srctrans.normalize.desugar import statement_lists
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.treewalk import walk

_SAVES, _RESTORES = ("saved_at", "saved_entry"), ("restored_at", "restored_entry")
# the runtime helpers that read only the shape (and dtype) of the argument at this position
_SHAPE_ONLY = {"getitem_grad": 1, "unbroadcast": 1, "zeros_of": 0, "zeros_like": 0,
               "entry_zero_like": 2}


def drop_unread_restores(forward, backward, tape, shaped, runtime_alias):
    """``(forward, backward)`` without the saves and restores of the arrays among ``shaped``
    whose values ``backward`` never reads (see the module); blocks are changed in place."""
    if tape is None:
        return forward, backward
    saves = _matching(forward, lambda s: _saved_at(s, tape, runtime_alias))
    restores = _matching(backward, lambda s: _restored_at(s, tape, runtime_alias))
    candidates = {name for name in set(saves) & set(restores)
                  if len(saves[name]) == len(restores[name])}
    if not candidates:
        return forward, backward
    shape_only, uses = _shape_only_arguments(backward, runtime_alias), {}
    at = {}                               # id(use) -> the top-level statement holding it
    for index, stmt in enumerate(backward):
        for node in walk(stmt):
            if isinstance(node, gast.Name) and node.id in candidates:
                uses.setdefault(node.id, []).append(id(node))
                at[id(node)] = index
    blocks = {id(stmt): (block, index)      # every statement's block and its index there
              for block in statement_lists(gast.Module(backward, []))
              for index, stmt in enumerate(block)}
    dropped = set()
    for name in candidates:
        # every other use of the name (a store too) reads only its shape, when it has one
        allowed = {id(n) for restore in restores[name] for n in walk(restore)}
        if all(use in allowed or name in shaped and use in shape_only for use in uses[name]) \
                or _read_before_restores(blocks, backward, at, restores[name], uses[name],
                                         allowed) \
                or all(_rebound_after(blocks, restore, name) for restore in restores[name]):
            dropped.update(id(s) for s in saves[name] + restores[name])
    if dropped:
        _remove(forward, dropped)
        _remove(backward, dropped)
    return forward, backward


def _read_before_restores(blocks, backward, at, restores, uses, allowed):
    """Whether every restore of an array is a statement of the ``backward`` pass's own block
    (``blocks``: id of a statement -> its block and index there) and every other use of its
    name is in a statement before the first of them (``at``: id of a use -> its top-level
    statement's index): the values restored are never read (the last statements of a pass
    put back what the forward pass overwrote in a local array,
    ``Y[np.arange(n), labels] = 1.0``, after its one read)."""
    if not all(blocks[id(restore)][0] is backward for restore in restores):
        return False
    first = min(blocks[id(restore)][1] for restore in restores)
    return all(use in allowed or at[use] < first for use in uses)


def _rebound_after(blocks, restore, name):
    """Whether the first statement after ``restore`` in its block (``blocks``: id of a
    statement -> its block and index there) that uses ``name`` assigns it anew without
    reading it: what the restore put back is never read (a loop's array made afresh at
    each step, ``x = np.zeros(n); x[i] = 1.0``, popped back right after)."""
    block, index = blocks[id(restore)]
    for stmt in block[index + 1:]:
        used = sum(isinstance(n, gast.Name) and n.id == name for n in walk(stmt))
        if used:
            return (used == 1 and isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name)
    return False


def _matching(statements, test):
    """``{name: [statement, ...]}`` of the statements (nested ones too) ``test`` names."""
    found = {}
    for stmt in statements:
        for node in walk(stmt):
            name = test(node) if isinstance(node, gast.stmt) else None
            if name is not None:
                found.setdefault(name, []).append(node)
    return found


def _saved_at(stmt, tape, runtime_alias):
    """``y`` of ``tape.append(rt.saved_at(y, i))`` (``rt.saved_entry``: a dict's), else None."""
    if not (isinstance(stmt, gast.Expr) and _method_call(stmt.value, tape, "append")
            and len(stmt.value.args) == 1):
        return None
    saved = stmt.value.args[0]
    if any(is_runtime_call(saved, runtime_alias, helper, 2) for helper in _SAVES) \
            and isinstance(saved.args[0], gast.Name):
        return saved.args[0].id
    return None


def _restored_at(stmt, tape, runtime_alias):
    """``y`` of ``y = rt.restored_at(y, i, tape.pop())`` (``rt.restored_entry``), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    value, name = stmt.value, stmt.targets[0].id
    if (any(is_runtime_call(value, runtime_alias, helper, 3) for helper in _RESTORES)
            and isinstance(value.args[0], gast.Name) and value.args[0].id == name
            and _method_call(value.args[2], tape, "pop") and not value.args[2].args):
        return name
    return None


def _shape_only_arguments(backward, runtime_alias):
    """The ids of the arguments in ``backward`` that a runtime helper reads only the shape
    (and dtype) of (``_SHAPE_ONLY``)."""
    found = set()
    for stmt in backward:
        for node in walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
                position = _SHAPE_ONLY.get(node.func.attr)
                if (position is not None and len(node.args) > position
                        and is_runtime_call(node, runtime_alias, node.func.attr, len(node.args))):
                    found.add(id(node.args[position]))
    return found


def _remove(statements, dropped):
    statements[:] = [s for s in statements if id(s) not in dropped]
    for stmt in statements:
        for block in ("body", "orelse"):
            inner = getattr(stmt, block, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                _remove(inner, dropped)
                if not inner and block == "body":
                    inner.append(gast.Pass())


def _method_call(value, owner, method):
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == method and isinstance(value.func.value, gast.Name)
            and value.func.value.id == owner)

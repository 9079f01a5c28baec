"""A tuple made to be taken apart again is its entries.

Requires: a backward pass (statements that may assign a name several times).
Guarantees: ``t = (a, b); ...; x = t[0]`` reads ``a`` itself where ``t`` is assigned once,
read only by picks at constant indices in the same block, and ``a`` is not assigned between
the tuple and the last pick (a derivative of a helper returning ``out, cache`` makes the
tuple of the cotangents and picks them again); the tuple, then unread, is left to dead-code
elimination. An entry that is an expression of NumPy's functions with srctrans's rules
(``t = (np.einsum(...), np.einsum(...))``, an einsum's cotangents: no effects, no pop of a
tape), or of the runtime's kernels for picks, moves to its one pick, when no pick reads it
twice, none is in a loop or branch (which could run it again, or not at all), and nothing it
reads is assigned before the last pick.
The shapes of the entries then reach what reads them. And ``out, cache = (e, c)`` is
``out = e; cache = c`` where neither entry reads a target, so that dead-code elimination
sees each (a gradient needs ``cache`` only).
"""

import gast

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.nodes import clone, int_literal
from srctrans.optimise.accumulate import COMPOUND
from srctrans.optimise.common_values import has_own_rule
from srctrans.optimise.dce import name_counts, stores_of
from srctrans.treewalk import replace_children, walk, walk_names


def fold_tuple_picks(statements):
    """``statements`` (changed in place) with each such pick read as the entry it picks."""
    stores, reads = name_counts(statements)
    picks = constant_picks(statements)           # tuple name -> its pick nodes, all of them
    blocks = [statements]
    while blocks:
        block = blocks.pop()
        for position, stmt in enumerate(block):
            if isinstance(stmt, COMPOUND):
                blocks.extend([stmt.body, stmt.orelse])
                continue
            entries = _display(stmt, atoms_only=False)
            if entries is None:
                continue
            name = stmt.targets[0].id
            found = picks.get(name, ())
            if stores.get(name) != 1 or not found or len(found) != reads.get(name) \
                    or not all(-len(entries) <= int_literal(p.slice) < len(entries) for p in found):
                continue
            picked = [int_literal(p.slice) % len(entries) for p in found]
            computed = any(not _is_atom(entries[k]) for k in picked)
            if computed and (len(set(picked)) != len(picked) or not all(
                    _is_plain(entries[k]) for k in picked)):
                continue                          # computed twice, or a call that may act
            _fold(block, position, entries, {id(p) for p in found}, computed)


def constant_picks(statements):
    """``{name: [name[k] nodes]}``: each name's picks at a constant index ``k``, everywhere in
    ``statements``."""
    picks = {}
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                    and int_literal(node.slice) is not None:
                picks.setdefault(node.value.id, []).append(node)
    return picks


def _is_atom(node):
    return isinstance(node, (gast.Name, gast.Constant))


def _is_plain(expression):
    """Whether each call in ``expression`` is of a NumPy or SciPy function with a rule, or of
    a kernel of the runtime's for specialised code's picks (``runtime/picked_kernels.py``:
    pure, as NumPy's are)."""
    return all(has_own_rule(callee) or getattr(callee, "__module__", None) == _PICKED_KERNELS
               for callee in (anno.get(node, Anno.CALLEE) for node in walk(expression)
                              if isinstance(node, gast.Call)))


_PICKED_KERNELS = runtime.picked_kernels.__name__


def _display(stmt, atoms_only=True):
    """The entries of ``name = (atom, ...)`` (names and numbers; any expressions where not
    ``atoms_only``), or None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Tuple) \
            and (not atoms_only or all(_is_atom(e) for e in stmt.value.elts)):
        return stmt.value.elts
    return None


def _fold(block, position, entries, pick_ids, computed=False):
    """Replace the picks (``pick_ids``) in the statements after ``block[position]``, when
    they are all there and no name an entry reads is assigned before the last of them
    (``computed``: an entry is an expression, whose picks may not be in a compound
    statement)."""
    names = {n.id for e in entries for n in walk_names(e)}
    last, seen = None, 0
    for later in range(position + 1, len(block)):
        count = sum(id(n) in pick_ids for n in walk(block[later]))
        if count and computed and isinstance(block[later], COMPOUND):
            return                                # run again by a loop, or not by a branch
        if count:
            last, seen = later, seen + count
        if seen == len(pick_ids):
            break
        if stores_of(block[later]) & names:
            return                                # an entry changes before a pick reads it
    if last is None or seen != len(pick_ids) or \
            isinstance(block[last], COMPOUND) and stores_of(block[last]) & names:
        return                                    # (a statement's own store follows its reads)

    def picked(node):
        if id(node) in pick_ids:
            return clone(entries[int_literal(node.slice)])
        return node
    for later in range(position + 1, last + 1):
        replace_children(block[later], picked)


def split_tuple_assignments(statements):
    """``statements`` (changed in place, nested blocks too) with ``a, b = (x, y)`` made
    ``a = x; b = y`` where the targets are distinct names no entry reads."""
    _, reads = name_counts(statements)
    blocks = [statements]
    while blocks:
        block = blocks.pop()
        split, made = [], None            # made: (name, entries) of the tuple just made
        for stmt in block:
            if isinstance(stmt, COMPOUND):
                blocks.extend([stmt.body, stmt.orelse])
            entries = None                # _f = (e, c); _t = _f; out, cache = _t (ANF's)
            if made is not None and isinstance(stmt, gast.Assign) \
                    and isinstance(stmt.value, gast.Name) and stmt.value.id == made[0] \
                    and reads.get(made[0]) == 1:
                entries = made[1]
            parts = _parts(stmt, entries)
            split.extend(parts if parts is not None else [stmt])
            shown = _display(stmt) or entries if isinstance(stmt, gast.Assign) \
                and isinstance(stmt.targets[0], gast.Name) else None
            made = (stmt.targets[0].id, shown) if shown is not None else None
        block[:] = split
    return statements


def _parts(stmt, made=None):
    """The assignments ``a, b = (x, y)`` is (``made``: the entries of the tuple its value
    names, made just before it), or None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Tuple)):
        return None
    if isinstance(stmt.value, gast.Tuple):
        values = stmt.value.elts
    elif made is not None:
        values = [clone(v) for v in made]
    else:
        return None
    targets = stmt.targets[0].elts
    names = [t.id for t in targets if isinstance(t, gast.Name)]
    if len(targets) != len(values) or len(names) != len(targets) or len(set(names)) != len(names) \
            or any(isinstance(v, gast.Starred) for v in values) \
            or any(isinstance(n, gast.Name) and n.id in names for v in values for n in walk(v)):
        return None
    parts = []
    for target, value in zip(targets, values):
        part = gast.copy_location(gast.Assign([target], value, None), stmt)
        anno.copy(stmt, part)                       # (its origin: the user's line)
        parts.append(part)
    return parts

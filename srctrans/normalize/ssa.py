"""Give every reassignment of a name in straight-line code a new name.

Requires: a body in A-normal form.
Guarantees: among the function's top-level statements each name is assigned
at most once and parameters are never reassigned, so the forward pass keeps
every value the backward pass needs without saving anything:
``h = np.tanh(h)`` becomes ``h_2 = np.tanh(h)`` and later reads of ``h`` read
``h_2``. Inside ``if``/``for``/``while`` blocks names keep their current
version and may be reassigned; the reverse pass saves what they overwrite.
A block that assigns a bound name whose value on entering it is never read
(by the block, or after it when the block is skipped: ``u`` in a second
``for u, v in ...:``) gives it a new version there, so activity sees the two
values apart.
A ``with st.grad_of(...)`` block reads the current versions and assigns only
names of its own, which keep theirs.
"""

import gast

from srctrans.nodes import parameter_names, popped_from, rename_reads
from srctrans.treewalk import walk, walk_names

_COMPOUND = (gast.If, gast.For, gast.While)


def rename_reassignments(function, namer):
    """Rename, in place, every top-level assignment to an already-bound name in ``function``;
    ``{name: its last version}`` of every name bound at the top level or in a block."""
    current = {name: name for name in parameter_names(function)}
    fresh_in = _blocks_overwriting(function.body)
    for stmt in function.body:
        if isinstance(stmt, _COMPOUND):
            for name in sorted(fresh_in[id(stmt)] & current.keys()):
                current[name] = namer.fresh(name)
            _rename_nested(stmt, current)
            continue
        rename_reads(stmt, current)
        if isinstance(stmt, gast.With):
            # a with st.grad_of(h) as dh: block reads the current versions of the function's
            # names; the names it assigns are its own (the fence checked) and keep theirs
            continue
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                if node.id in current:
                    new = namer.fresh(node.id)
                    current[node.id] = new
                    node.id = new
                else:
                    current[node.id] = node.id
    return current


def _rename_nested(stmt, current):
    """Inside a block, reads and writes use each name's current version."""
    for node in walk(stmt):
        if isinstance(node, gast.Name):
            if node.id in current:
                node.id = current[node.id]
            elif isinstance(node.ctx, gast.Store):
                current[node.id] = node.id


def _blocks_overwriting(body):
    """``{id(block): names}`` for each top-level block of ``body``: the names it assigns whose
    value on entering it is dead (read neither by it before it assigns them nor after it)."""
    found, live = {}, set()
    for stmt in reversed(body):
        if isinstance(stmt, _COMPOUND):
            exposed = set()
            _exposed_reads([stmt], set(), exposed)
            found[id(stmt)] = _stores(stmt) - exposed - live - _restored(stmt)
            live |= exposed
        elif isinstance(stmt, gast.Return):
            live = _loads(stmt)
        else:
            live -= _bound_by(stmt)
            live |= _loads(stmt)
    return found


def _exposed_reads(statements, assigned, exposed):
    """Add to ``exposed`` the names ``statements`` may read before assigning them, given the
    names ``assigned`` on entry; grows ``assigned`` by what is assigned on every path. A
    loop's body starts each trip with only what was assigned before the loop."""
    for stmt in statements:
        if isinstance(stmt, gast.If):
            exposed |= _loads(stmt.test) - assigned
            for block in (stmt.body, stmt.orelse):
                _exposed_reads(block, set(assigned), exposed)
        elif isinstance(stmt, gast.For):
            exposed |= _loads(stmt.iter) - assigned
            _exposed_reads(stmt.body, assigned | _stores(stmt.target), exposed)
            _exposed_reads(stmt.orelse, set(assigned), exposed)
        elif isinstance(stmt, gast.While):
            exposed |= _loads(stmt.test) - assigned
            for block in (stmt.body, stmt.orelse):
                _exposed_reads(block, set(assigned), exposed)
        else:                          # a with block, a del, a nested def: all of it reads
            exposed |= _loads(stmt) - assigned
            assigned |= _bound_by(stmt)


def _restored(block):
    """The names ``block`` assigns from a list's pop: a generated backward pass restoring
    what its forward pass saved keeps the name it saved (``integer_names`` reads a restored
    name's kind from its other assignments)."""
    return {name for node in walk(block) if isinstance(node, gast.Assign)
            and popped_from(node.value) is not None for name in _stores(node.targets[0])}


def _bound_by(stmt):
    """The names a simple statement surely binds: an assignment's targets."""
    return _stores(stmt.targets[0]) if isinstance(stmt, gast.Assign) else set()


def _loads(tree):
    return {n.id for n in walk_names(tree) if not isinstance(n.ctx, gast.Store)}


def _stores(tree):
    return {n.id for n in walk_names(tree) if isinstance(n.ctx, gast.Store)}

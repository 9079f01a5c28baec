"""Give every reassignment of a name in straight-line code a new name.

Requires: a body in A-normal form.
Guarantees: among the function's top-level statements each name is assigned
at most once and parameters are never reassigned, so the forward pass keeps
every value the backward pass needs without saving anything:
``h = np.tanh(h)`` becomes ``h_2 = np.tanh(h)`` and later reads of ``h`` read
``h_2``. Inside ``if``/``for``/``while`` blocks names keep their current
version and may be reassigned; the reverse pass saves what they overwrite.
A ``with st.grad_of(...)`` block reads the current versions and assigns only
names of its own, which keep theirs.
"""

import gast

from srctrans.nodes import parameter_names, rename_reads
from srctrans.treewalk import walk

_COMPOUND = (gast.If, gast.For, gast.While)


def rename_reassignments(function, namer):
    """Rename, in place, every top-level assignment to an already-bound name in ``function``;
    ``{name: its last version}`` of every name bound at the top level or in a block."""
    current = {name: name for name in parameter_names(function)}
    for stmt in function.body:
        if isinstance(stmt, _COMPOUND):
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

"""Give every reassignment of a name a new name (static single assignment).

Requires: a body in A-normal form.
Guarantees: within straight-line code each name is assigned at most once, and
parameters are never reassigned, so the forward pass keeps every value the
backward pass needs without saving anything on a tape. ``h = np.tanh(h)``
becomes ``h_2 = np.tanh(h)`` and later reads of ``h`` read ``h_2``.
"""

import gast


def rename_reassignments(function, namer):
    """Rename, in place, every assignment to an already-bound name in ``function``."""
    args = function.args
    current = {p.id: p.id for p in args.posonlyargs + args.args + args.kwonlyargs}
    for stmt in function.body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                node.id = current.get(node.id, node.id)
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                if node.id in current:
                    new = namer.fresh(node.id)
                    current[node.id] = new
                    node.id = new
                else:
                    current[node.id] = node.id

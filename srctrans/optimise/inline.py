"""Fold single-use temporaries back into the expression that uses them.

Requires: straight-line statements and the set of temporaries (names the
normal form introduced, never the user's own names).
Guarantees: a temporary read exactly once, by a later statement of the same
block, with only side-effect-free statements between that assign none of the
names it reads, is replaced by its expression; tape pushes and pops never
move; the values computed are the same. The generated code then reads like the user's
(``h = np.tanh(x @ W1 + b1)`` rather than three statements), and NumPy can
reuse the memory of an unnamed intermediate array instead of allocating anew.

>>> import ast, gast
>>> body = gast.parse("_m = x @ W\\n_a = _m + b\\nh = np.tanh(_a)").body
>>> [ast.unparse(gast.gast_to_ast(s)) for s in inline_temporaries(body, {"_m", "_a"}, set(), lambda s: True)]
['h = np.tanh(x @ W + b)']
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.optimise.dce import reads_of


def inline_temporaries(statements, temporaries, keep, is_pure):
    """``statements`` with single-use temporaries folded into their use.

    ``keep`` holds names that must stay (returned, saved for another pass);
    ``is_pure(stmt)`` tells whether a statement may be moved past.
    """
    uses = {}
    for stmt in statements:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                uses[node.id] = uses.get(node.id, 0) + 1
    return _inline_block(statements, temporaries, keep, is_pure, uses)


def _inline_block(statements, temporaries, keep, is_pure, uses):
    """One block; blocks inside it are done on their own (a use must be in the same block)."""
    pending = {}                  # temporary -> its statement, waiting for its one use
    result = []
    for stmt in statements:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            # never move a computation into a block: it could run again, or not at all
            result.extend(pending.values())
            pending.clear()
            stmt.body = _inline_block(stmt.body, temporaries, keep, is_pure, uses)
            if isinstance(stmt, gast.If):
                stmt.orelse = _inline_block(stmt.orelse, temporaries, keep, is_pure, uses)
            result.append(stmt)
            continue
        if pending:
            stmt = _substitute(stmt, pending)
        saving = anno.get(stmt, Anno.SAVES) is not None
        name = _single_target(stmt)
        if (name in temporaries and name not in keep and uses.get(name) == 1
                and is_pure(stmt) and not saving):
            pending[name] = stmt
            continue
        # what is pending must not move past an effect, a tape pop, or a new value of
        # one of the names it reads (inside loops names are assigned again)
        assigned = {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
                    and isinstance(n.ctx, gast.Store)}
        pushes = saving and isinstance(stmt, gast.Expr)
        if pending and ((not is_pure(stmt) and not pushes) or (saving and not pushes) or any(
                assigned & reads_of(waiting.value) for waiting in pending.values())):
            result.extend(pending.values())
            pending.clear()
        result.append(stmt)
    result.extend(pending.values())
    return result


def _single_target(stmt):
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return stmt.targets[0].id
    return None


def _substitute(stmt, pending):
    """Replace reads of pending temporaries in ``stmt`` by their expressions (each used once)."""
    if not pending.keys() & reads_of(stmt):
        return stmt

    class Substitute(gast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id in pending:
                return pending.pop(node.id).value
            return node

    return Substitute().visit(stmt)

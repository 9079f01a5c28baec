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

import collections

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import single_target
from srctrans.optimise.dce import reads_of
from srctrans.treewalk import replace_names, walk, walk_names


def inline_temporaries(statements, temporaries, keep, is_pure):
    """``statements`` with single-use temporaries folded into their use.

    ``keep`` holds names that must stay (returned, saved for another pass);
    ``is_pure(stmt)`` tells whether a statement may be moved past.
    """
    uses = {}
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                uses[node.id] = uses.get(node.id, 0) + 1
    return _inline_block(statements, temporaries, keep, is_pure, uses)


def _inline_block(statements, temporaries, keep, is_pure, uses):
    """One block; blocks inside it are done on their own (a use must be in the same block).

    Each statement is walked a bounded number of times however long the expressions that
    inlining builds get: what a pending temporary reads and stores is recorded when it is
    put aside, and a statement's purity and stores are taken before substitution (what is
    substituted is pure, and assigns nothing).
    """
    pending = {}                  # temporary -> _Pending, waiting for its one use
    waiting_reads = collections.Counter()    # the names what is pending reads, with counts
    inlined = set()               # ids of the expressions substituted (their reads are known)
    result = []

    def flush():
        result.extend(entry.stmt for entry in pending.values())
        pending.clear()
        waiting_reads.clear()

    for stmt in statements:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            # never move a computation into a block: it could run again, or not at all
            flush()
            stmt.body = _inline_block(stmt.body, temporaries, keep, is_pure, uses)
            if isinstance(stmt, gast.If):
                stmt.orelse = _inline_block(stmt.orelse, temporaries, keep, is_pure, uses)
            result.append(stmt)
            continue
        pure = is_pure(stmt)
        assigned = {n.id for n in walk_names(stmt)
                    if isinstance(n.ctx, gast.Store)}
        reads = None
        if pending and pending.keys() & reads_of(stmt):
            stmt, used = _substitute(stmt, pending)
            inlined.update(id(entry.stmt.value) for entry in used)
            reads = set()
            for entry in used:
                waiting_reads.subtract(entry.reads)
                reads |= entry.reads
        saving = anno.get(stmt, Anno.SAVES) is not None
        name = single_target(stmt)
        if (name in temporaries and name not in keep and uses.get(name) == 1
                and pure and not saving):
            own = (reads_of(stmt.value) if reads is None
                   else reads | _unsubstituted_reads(stmt.value, inlined))
            pending[name] = _Pending(stmt, own)
            waiting_reads.update(own)
            continue
        # what is pending must not move past an effect, a tape pop, or a new value of
        # one of the names it reads (inside loops names are assigned again)
        pushes = saving and isinstance(stmt, gast.Expr)
        if pending and ((not pure and not pushes) or (saving and not pushes) or any(
                waiting_reads[n] > 0 for n in assigned)):
            flush()
        result.append(stmt)
    flush()
    return result


class _Pending:
    """A pure single-use temporary's statement and the names its value reads."""

    __slots__ = ("stmt", "reads")

    def __init__(self, stmt, reads):
        self.stmt = stmt
        self.reads = reads




def _substitute(stmt, pending):
    """``(stmt, used)``: ``stmt`` with its reads of pending temporaries replaced by their
    expressions (each used once, and taken out of ``pending``), and the entries used.

    """
    used = []

    def substitute(node):
        if isinstance(node.ctx, gast.Load) and node.id in pending:
            entry = pending.pop(node.id)
            used.append(entry)
            return entry.stmt.value
        return node

    return replace_names(stmt, substitute), used


def _unsubstituted_reads(expression, inlined):
    """The names ``expression`` reads outside the substituted expressions (ids in
    ``inlined``, whose reads are already known): a walk that does not enter them."""
    names, stack = set(), [expression]
    while stack:
        node = stack.pop()
        if id(node) in inlined:
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            names.add(node.id)
        stack.extend(gast.iter_child_nodes(node))
    return names

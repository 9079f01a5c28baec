"""Fold the first value of an adjoint into the contribution that is added to it next.

Requires: backward statements, after simplification.
Guarantees: the values computed are unchanged. The reverse pass assigns an
adjoint at its first contribution and adds the later ones, so a name that
two statements contribute to reads

    dx = -d_sub
    da = da + d_mul * x
    dx = dx + d_mul * a

When nothing between the two reads ``dx`` or changes what the first value
reads, and that value calls nothing (it may then move), the first
contribution moves into the second, and simplification turns an added
negation into a subtraction:

    da = da + d_mul * x
    dx = d_mul * a - d_sub

One statement fewer, and for arrays one pass over the data fewer (no
negated array is made). Chains fold further (``d = a; d = d + b; d = d + c``
becomes ``d = a + b + c``). Tape pushes and pops never move.

>>> import ast, gast
>>> body = gast.parse("dx = -d_sub\\nda = da + d_mul * x\\ndx = dx + d_mul * a").body
>>> [ast.unparse(gast.gast_to_ast(s)) for s in fold_accumulations(body)]
['da = da + d_mul * x', 'dx = d_mul * a - d_sub']
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.optimise.dce import reads_of
from srctrans.optimise.simplify import simplify_expression

COMPOUND = (gast.If, gast.For, gast.While)


def fold_accumulations(statements):
    """``statements`` with first contributions folded into the next one (blocks in place)."""
    kept = list(statements)
    for stmt in kept:
        if isinstance(stmt, COMPOUND):
            stmt.body = fold_accumulations(stmt.body)
            if stmt.orelse:
                stmt.orelse = fold_accumulations(stmt.orelse)
    folded = set()
    for i, stmt in enumerate(kept):
        name = _movable_assignment(stmt)
        if name is None:
            continue
        j = _next_accumulation(kept, i, name, reads_of(stmt.value))
        if j is not None:
            later = kept[j]
            later.value = simplify_expression(
                gast.BinOp(stmt.value, gast.Add(), later.value.right))
            folded.add(i)
    return [stmt for i, stmt in enumerate(kept) if i not in folded]


def _movable_assignment(stmt):
    """``n`` when ``stmt`` is ``n = e`` with ``e`` calling nothing (not a tape pop), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    if anno.get(stmt, Anno.SAVES) is not None:
        return None
    if any(isinstance(node, gast.Call) for node in gast.walk(stmt.value)):
        return None
    return stmt.targets[0].id


def _next_accumulation(statements, i, name, reads):
    """The index of ``name = name + e`` after ``statements[i]``, if its value may move there."""
    for j in range(i + 1, len(statements)):
        stmt = statements[j]
        if _is_accumulation(stmt, name):
            return j
        assigned = {n.id for n in gast.walk(stmt)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        if name in reads_of(stmt) or name in assigned or assigned & reads:
            return None
    return None


def _is_accumulation(stmt, name):
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name):
        return False
    value = stmt.value
    return (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)
            and isinstance(value.left, gast.Name) and value.left.id == name
            and name not in reads_of(value.right) and anno.get(stmt, Anno.SAVES) is None)

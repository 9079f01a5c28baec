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
negated array is made). A statement that received a first value keeps its
own (``d = a; d = d + b; d = d + c`` becomes ``d = a + b; d = d + c``), so
a long sum stays one statement per term. Tape pushes and pops never move.

>>> import ast, gast
>>> body = gast.parse("dx = -d_sub\\nda = da + d_mul * x\\ndx = dx + d_mul * a").body
>>> [ast.unparse(gast.gast_to_ast(s)) for s in fold_accumulations(body)]
['da = da + d_mul * x', 'dx = d_mul * a - d_sub']
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import clone
from srctrans.optimise.dce import reads_of
from srctrans.optimise.simplify import simplify_expression
from srctrans.treewalk import walk

COMPOUND = (gast.If, gast.For, gast.While)


def fold_accumulations(statements):
    """``statements`` with first contributions folded into the next one (blocks in place)."""
    kept = list(statements)
    for stmt in kept:
        if isinstance(stmt, COMPOUND):
            stmt.body = fold_accumulations(stmt.body)
            if stmt.orelse:
                stmt.orelse = fold_accumulations(stmt.orelse)
    accumulations = {}                      # name -> indices of `name = name + e`
    for j, stmt in enumerate(kept):
        name = _accumulated(stmt)
        if name is not None:
            accumulations.setdefault(name, []).append(j)
    if not accumulations:
        return kept
    names = {}                              # index -> (names read, names assigned), when needed

    def reads_writes(k):
        if k not in names:
            names[k] = _names(kept[k])
        return names[k]
    folded, grown = set(), set()
    for i, stmt in enumerate(kept):
        if i in grown:
            continue              # one fold per statement: long sums stay a statement per term
        name = _assigned_name(stmt)
        j = next((j for j in accumulations.get(name, ()) if j > i), None)
        if j is None or _movable_assignment(stmt) is None:
            continue
        moving = reads_of(stmt.value)
        # nothing in between reads the first value or changes what it reads
        if any(name in reads_writes(k)[0] or name in reads_writes(k)[1] or reads_writes(k)[1] & moving
               for k in range(i + 1, j)):
            continue
        later = kept[j]
        later.value = simplify_expression(gast.BinOp(stmt.value, gast.Add(), later.value.right))
        names.pop(j, None)
        folded.add(i)
        grown.add(j)
    return [stmt for i, stmt in enumerate(kept) if i not in folded]


def _movable_assignment(stmt):
    """``n`` when ``stmt`` is ``n = e`` with ``e`` calling nothing (not a tape pop), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    if anno.get(stmt, Anno.SAVES) is not None:
        return None
    if any(isinstance(node, gast.Call) for node in walk(stmt.value)):
        return None
    return stmt.targets[0].id


def _assigned_name(stmt):
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def _names(stmt):
    """(names read, names assigned) by ``stmt``, in one walk."""
    reads, writes = set(), set()
    for node in walk(stmt):
        if isinstance(node, gast.Name):
            (reads if isinstance(node.ctx, gast.Load) else writes).add(node.id)
    return reads, writes


def _accumulated(stmt):
    """``n`` when ``stmt`` is ``n = n + e`` (``e`` not reading ``n``), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)) or anno.get(stmt, Anno.SAVES) is not None:
        return None
    name, value = stmt.targets[0].id, stmt.value
    if (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)
            and isinstance(value.left, gast.Name) and value.left.id == name
            and name not in reads_of(value.right)):     # (walks only the few accumulations)
        return name
    return None


def sink_into_branches(statements):
    """``statements`` with ``n = rt.add(n, e)`` after an ``if`` moved into its branches when
    a branch sets ``n`` to zeros (``rt.zeros_like(x)``, as the reverse of an ``if``
    does where a branch leaves ``n`` alone); blocks in place.

    Each path still adds ``e`` once, and in that branch the sum starts from the
    zeros, which specialisation then drops (``e`` alone, when it has ``x``'s
    shape). The few plain assignments between the ``if`` and the sum (which
    compute ``e``) move with it, when none of them reads or assigns ``n``, and
    only when no branch ends early (``return``, ``break``, ``continue``).
    """
    blocks = [statements]
    while blocks:
        block = blocks.pop()
        index = 0
        while index < len(block):
            stmt = block[index]
            if isinstance(stmt, COMPOUND):
                blocks.extend((stmt.body, stmt.orelse))
            if isinstance(stmt, gast.If):
                moving = _sinkable(block, index)
                if moving:
                    stmt.body.extend(moving)
                    stmt.orelse.extend(clone(s) for s in moving)
                    del block[index + 1:index + 1 + len(moving)]
            index += 1
    return statements


_MOST_MOVED = 8


def _sinkable(block, index):
    """The statements after ``block[index]`` (an ``if``) up to ``n = rt.add(n, e)``, when the
    ``if`` sets ``n`` to zeros and the ones before the sum are plain assignments that
    leave ``n`` alone; else []."""
    following = block[index + 1:index + 1 + _MOST_MOVED]
    for end, stmt in enumerate(following):
        name = _added_to(stmt)
        if name is not None:
            if (_zeroes(block[index], name) and not _jumps(block[index])
                    and not any(name in reads or name in writes
                                for reads, writes in map(_names, following[:end]))):
                return following[:end + 1]
            return []
        if not (isinstance(stmt, gast.Assign) and anno.get(stmt, Anno.SAVES) is None):
            return []
    return []


def _added_to(stmt):
    """``n`` when ``stmt`` is ``n = rt.add(n, e)`` with ``e`` not reading ``n``, else None."""
    name = _assigned_name(stmt)
    if name is None or anno.get(stmt, Anno.SAVES) is not None:
        return None
    value = stmt.value
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "add" and len(value.args) == 2 and not value.keywords
            and isinstance(value.args[0], gast.Name) and value.args[0].id == name
            and name not in reads_of(value.args[1])):
        return name
    return None


def _jumps(stmt):
    """Whether ``stmt`` holds a ``return``, ``break`` or ``continue`` (after which what was
    moved to the end of a branch would not run)."""
    return any(isinstance(node, (gast.Return, gast.Break, gast.Continue)) for node in walk(stmt))


def _zeroes(stmt, name):
    """Whether ``stmt`` assigns ``rt.zeros_like(x)`` (or ``rt.zeros_of``) to ``name`` somewhere."""
    return any(_assigned_name(node) == name and isinstance(node.value, gast.Call)
               and isinstance(node.value.func, gast.Attribute)
               and node.value.func.attr in ("zeros_like", "zeros_of")
               for node in walk(stmt))

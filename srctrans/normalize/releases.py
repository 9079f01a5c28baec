"""``del name`` statements that only release a value, dropped before the passes that follow.

Requires: a parsed function (the fence accepts the ``del`` statements :func:`releases` finds
and refuses any other).
Guarantees: :func:`drop_releases` removes exactly those statements; the function computes
the same values and raises the same errors without them.
"""

import gast

from srctrans.nodes import parameter_names
from srctrans.treewalk import walk, walk_names


def releases(function):
    """The ``del`` statements of ``function`` that only release names: ``del a, b`` where
    each target is a name the function binds before it for sure (a parameter, or a
    plain assignment in the function's own body, not in a block), deletes nowhere
    else, and reads nowhere after it (nor anywhere in a loop around it, nor in a
    local function or lambda, which may run later). Dropping them changes no value the
    function computes, and no error it raises; :func:`drop_releases` does.
    """
    deleted = {}
    for node in walk(function):
        if isinstance(node, gast.Delete):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    deleted[target.id] = deleted.get(target.id, 0) + 1
    if not deleted:
        return []                                # (every build asks: one walk when none)
    bound, reads = {}, []
    for name in parameter_names(function):
        bound[name] = (-1, -1)
    for stmt in function.body:
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                if isinstance(target, gast.Name):
                    bound.setdefault(target.id, _position(stmt))
    for node in walk(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            reads.append((_position(node), node.id))
    enclosed = {n.id for node in walk(function)       # a local function may run after the del
                if node is not function and isinstance(node, (gast.FunctionDef, gast.Lambda))
                for n in walk_names(node)}
    found, pending = [], [(stmt, None) for stmt in function.body]
    while pending:
        stmt, loop = pending.pop()
        if isinstance(stmt, gast.FunctionDef):
            continue                             # a local function's `del` is its own
        if isinstance(stmt, gast.Delete):
            where = _position(stmt)
            looped = set() if loop is None else {n.id for n in walk(loop)
                                                 if isinstance(n, gast.Name)
                                                 and isinstance(n.ctx, gast.Load)}
            names = [t.id for t in stmt.targets if isinstance(t, gast.Name)]
            if (len(names) == len(stmt.targets)
                    and all(bound.get(n, where) < where and n not in looped
                            and n not in enclosed and deleted[n] == 1 for n in names)
                    and not any(at > where and n in names for at, n in reads)):
                found.append(stmt)
        inner = loop if loop is not None or not isinstance(stmt, (gast.For, gast.While)) else stmt
        for field in ("body", "orelse"):
            pending.extend((s, inner) for s in getattr(stmt, field, None) or ())
    return found


def drop_releases(function):
    """Remove, in place, the ``del`` statements :func:`releases` accepts (a block left
    empty holds ``pass``)."""
    dropped = set(map(id, releases(function)))
    if not dropped:
        return
    pending = [function]
    while pending:
        node = pending.pop()
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                kept = [s for s in block if id(s) not in dropped]
                if not kept:                      # `pass` where the first `del` was
                    kept = [gast.copy_location(gast.Pass(), block[0])]
                setattr(node, field, kept)
                pending.extend(s for s in kept if not isinstance(s, gast.FunctionDef))


def _position(node):
    return (getattr(node, "lineno", 0) or 0, getattr(node, "col_offset", 0) or 0)

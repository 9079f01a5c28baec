"""Pin the positions read from lists that grow, at the time they are read.

Requires: a desugared function (loops over ``range``), before ANF.
Guarantees: a subscript read ``xs[i]`` of a list ``xs`` that an ``append``
may still grow after the read (later in the function, in the same
statement, or anywhere in a loop around the read) reads
``xs[rt.position(xs, i)]`` (a slice: ``xs[rt.slice_position(xs, a, b, c)]``),
unless ``i`` is a non-negative integer literal, and a call that takes such a
list as an argument (``np.stack(xs)``, ``helper(xs)``) takes
``rt.snapshot(xs)``, a shallow copy (``len(xs)`` and ``ys.append(xs)``
excepted: they read no entry, or keep the list itself). The helper returns the
non-negative position (or the slice with non-negative bounds) the read
selects when it runs, so the backward pass, which sees the list only at its
final length, places the read's cotangent where the entry was: ``xs[-1]``
read before ``xs.append(...)`` is the entry that was last *then*.
"""

import gast

from srctrans.nodes import clone, resolved_runtime_call
from srctrans.treewalk import own_nodes, walk

_LOOPS = (gast.For, gast.While)
_COMPOUND = (gast.If, gast.For, gast.While, gast.With, gast.Try)


def pin_positions(function, aliases):
    """Rewrite the reads of ``function`` (a gast FunctionDef) in place."""
    if not _appended(function):
        return
    pending = [(function.body, frozenset())]
    while pending:
        block, after = pending.pop()
        running = set(after)
        for stmt in reversed(block):
            own = _appended(stmt)
            growing = running | own
            if isinstance(stmt, _LOOPS):
                pending.append((stmt.body, frozenset(growing)))
                pending.append((stmt.orelse, frozenset(running)))
            elif isinstance(stmt, _COMPOUND):
                for field in ("body", "orelse", "finalbody"):
                    pending.append((getattr(stmt, field, []) or [], frozenset(running)))
            for node in own_nodes(stmt):
                if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load) \
                        and isinstance(node.value, gast.Name) and node.value.id in growing \
                        and not _fixed(node.slice):
                    node.slice = _pinned(node.value.id, node.slice, aliases)
                elif isinstance(node, gast.Call) and not _keeps_reference(node):
                    _snapshot_arguments(node, growing, aliases)
            running |= own


def _keeps_reference(call):
    """``len(xs)`` reads no entry, and ``ys.append(xs)`` keeps the list itself (later
    appends to ``xs`` show through ``ys``)."""
    func = call.func
    return (isinstance(func, gast.Name) and func.id == "len") or (
        isinstance(func, gast.Attribute) and func.attr == "append")


def _snapshot_arguments(call, growing, aliases):
    """``f(xs)`` -> ``f(rt.snapshot(xs))``: the list as it is when ``f`` reads it."""
    for i, arg in enumerate(call.args):
        if isinstance(arg, gast.Name) and arg.id in growing:
            call.args[i] = resolved_runtime_call(aliases, "snapshot", [arg])
    for keyword in call.keywords:
        if isinstance(keyword.value, gast.Name) and keyword.value.id in growing:
            keyword.value = resolved_runtime_call(aliases, "snapshot", [keyword.value])


def _appended(node):
    """The names ``X`` of the ``X.append(...)`` calls anywhere in ``node``."""
    return {n.func.value.id for n in walk(node)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
            and n.func.attr == "append" and isinstance(n.func.value, gast.Name)}


def _fixed(index):
    return isinstance(index, gast.Constant) and type(index.value) is int and index.value >= 0


def _pinned(name, index, aliases):
    if isinstance(index, gast.Slice):
        parts = [clone(p) if p is not None else gast.Constant(None, None)
                 for p in (index.lower, index.upper, index.step)]
        return resolved_runtime_call(aliases, "slice_position",
                                     [gast.Name(name, gast.Load(), None, None)] + parts)
    return resolved_runtime_call(aliases, "position",
                                 [gast.Name(name, gast.Load(), None, None), index])

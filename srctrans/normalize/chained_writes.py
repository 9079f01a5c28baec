"""A write through a chain of subscripts becomes writes into one named value at a time.

Requires: a function after :mod:`~srctrans.normalize.effects` (which has refused a
chained write that another name sharing the memory would see, and copied an argument
written into), before A-normal form.
Guarantees: :func:`split_chained_writes` rewrites every ``root[i][j] = v`` (and
``root[i][j] += v``, and longer chains) into

    _entry = rt.entry_copy(root[i])
    _entry[j] = v
    root[i] = _entry

so each write names the value it changes, as the reverse and forward passes
require. ``rt.entry_copy`` copies an array (or a list) before the write: the effects
pass has made sure nothing else reads the old one, so the copy is what Python's
in-place write leaves behind. An index that is not a name, a constant or a slice is
evaluated once, before the reads, into a name of its own.

>>> import gast, ast
>>> from srctrans.naming import Namer
>>> f = gast.parse("def f(xs, t):\\n    xs[t][0] = 1.0").body[0]
>>> split_chained_writes(f, Namer(set()), "rt")
>>> print(ast.unparse(gast.gast_to_ast(f)))
def f(xs, t):
    _entry = rt.entry_copy(xs[t])
    _entry[0] = 1.0
    xs[t] = _entry
"""

import gast

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.nodes import assign, clone, load
from srctrans.normalize.desugar import located, statement_lists


def split_chained_writes(function, namer, runtime_name):
    """Rewrite the chained subscript writes of ``function`` in place (see the module)."""
    for block in statement_lists(function):
        if not any(_chained_target(stmt) is not None for stmt in block):
            continue
        rewritten = []
        for stmt in block:
            target = _chained_target(stmt)
            rewritten.extend([stmt] if target is None else
                             _split(stmt, target, namer, runtime_name))
        block[:] = rewritten


def _chained_target(stmt):
    """The target of ``stmt`` when it writes through two or more subscripts, else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, gast.AugAssign):
        target = stmt.target
    else:
        return None
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Subscript):
        return target
    return None


def _split(stmt, target, namer, runtime_name):
    indices, node = [], target
    while isinstance(node, gast.Subscript):
        indices.append(node.slice)
        node = node.value
    indices.reverse()
    root = gast.Name(node.id, gast.Load(), None, None)
    out = []
    for position, index in enumerate(indices[:-1]):      # read and written back: once only
        if not isinstance(index, (gast.Name, gast.Constant, gast.Slice)):
            name = namer.fresh("_index")
            out.append(assign(name, index))
            indices[position] = load(name)
    holders = [root]
    for index in indices[:-1]:
        entry = namer.fresh("_entry")
        copy = gast.Call(gast.Attribute(gast.Name(runtime_name, gast.Load(), None, None),
                                        "entry_copy", gast.Load()),
                         [gast.Subscript(clone(holders[-1]), clone(index), gast.Load())], [])
        anno.set_(copy, Anno.CALLEE, runtime.entry_copy)
        out.append(assign(entry, copy))
        holders.append(load(entry))
    last = gast.Subscript(clone(holders[-1]), indices[-1], gast.Store())
    if isinstance(stmt, gast.AugAssign):
        out.append(gast.AugAssign(last, stmt.op, stmt.value))
    else:
        out.append(gast.Assign([last], stmt.value, None))
    for holder, index, entry in reversed(list(zip(holders, indices, holders[1:]))):
        out.append(gast.Assign([gast.Subscript(clone(holder), clone(index), gast.Store())],
                               clone(entry), None))
    return [located(new, stmt) for new in out]

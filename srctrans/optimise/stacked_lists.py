"""Lists a loop over rows appends one value a step to, read after it only by stacks.

Requires: the statements of a loop (:mod:`srctrans.optimise.row_loops` reads them), the
statements before and after it at the top level, and the values names hold before it.
Guarantees: :func:`append_of` recognises ``xs.append(v)``; :func:`stacked_lists` finds, for
each list such a loop appends to, the statements after the loop that stack it
(``np.stack(xs, axis=k)``, ``np.array(xs)``), and only when the list starts empty, nothing
before the loop reads it and nothing after it reads it otherwise or assigns it: the stack is
then the batched values with their axis moved where it puts them.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import int_literal
from srctrans.optimise.dce import reads_of, stores_of
from srctrans.treewalk import walk_names


def append_of(stmt):
    """``(list, value)`` of a statement ``list.append(value)`` (two names), else None."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
            and call.func.attr == "append" and isinstance(call.func.value, gast.Name) \
            and len(call.args) == 1 and isinstance(call.args[0], gast.Name) and not call.keywords:
        return call.func.value.id, call.args[0].id
    return None


def stacked_lists(found, before, after, definitions):
    """``[(statement, list, axis)]``: each statement after the loop that stacks a list the
    loop appends to, ``x = np.stack(list, axis=k)`` (``np.array(list)``: axis 0), where
    the list starts empty (``list = []``), nothing before the loop reads it, and nothing
    after it reads it otherwise or assigns it; None when a list is read so."""
    stacks = []
    for name in found.appends:
        start = definitions.get(name)
        if not (isinstance(start, gast.List) and not start.elts) \
                or name in reads_of(gast.Module(before, [])) \
                or name in stores_of(gast.Module(after, [])):
            return None
        reads = 0
        for stmt in after:
            reads += sum(1 for n in walk_names(stmt) if n.id == name
                         and isinstance(n.ctx, gast.Load))
            axis = stacking_axis(stmt, name)
            if axis is not None:
                stacks.append((stmt, name, axis))
        if reads != sum(1 for s in stacks if s[1] == name):
            return None
    return stacks


def stacking_axis(stmt, name):
    """``k`` for ``x = np.stack(name, axis=k)`` (``np.stack(name, k)``, ``np.stack(name)``,
    ``np.array(name)``: 0) with ``k`` an int literal, else None."""
    call = stmt.value if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
    if not (isinstance(call, gast.Call) and call.args and isinstance(call.args[0], gast.Name)
            and call.args[0].id == name):
        return None
    callee = anno.get(call, Anno.CALLEE)
    if callee is np.array and len(call.args) == 1 and not call.keywords:
        return 0
    if callee is not np.stack or len(call.args) > 2 or any(k.arg != "axis" for k in call.keywords) \
            or len(call.args) + len(call.keywords) > 2:
        return None
    axis = call.args[1] if len(call.args) == 2 else \
        call.keywords[0].value if call.keywords else gast.Constant(0, None)
    return int_literal(axis)

"""Arithmetic on numbers that a loop does not change is computed once, before the loop.

Requires: the body of a fused gradient specialised on shapes, the names known to hold
numbers (shape ``()``), and a namer.
Guarantees: the values computed are unchanged. In each loop (nested ones too), a largest
subexpression made of ``+``, ``-``, ``*`` and unary minus of constants and of number-valued
names, with at least one name, none of which the loop changes (assigns, writes into, or
passes to a call) and each assigned before the loop (or a parameter), is computed once
before the loop under a new name, which the loop reads::

    for _iteration in range(trips - 1, -1, -1):           _sub = 1.0 - alpha
        d_item_3 = d_add * (1.0 - alpha)          ->      for _iteration in range(...):
                                                              d_item_3 = d_add * _sub

(an exponential smoothing's ``1.0 - alpha``, in its forward loop and its backward one).
Numbers only, and no division or power: such arithmetic of numbers raises nothing, so a
loop that never runs loses nothing by it.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.control import changed_in
from srctrans.nodes import assign, load
from srctrans.treewalk import walk

_OPERATORS = (gast.Add, gast.Sub, gast.Mult)


def hoist_loop_invariants(body, numbers, parameters, fresh):
    """``body`` (changed in place, and returned) with the loops' invariant arithmetic of
    numbers computed before them (see the module); ``numbers``: names known to hold numbers;
    ``parameters``: the function's; ``fresh(base)``: a new name."""
    pending = [(body, set(parameters))]
    while pending:
        block, bound = pending.pop()
        index = 0
        while index < len(block):
            stmt = block[index]
            if isinstance(stmt, (gast.For, gast.While)):
                hoisted = _hoisted(stmt, numbers, bound, fresh)
                block[index:index] = hoisted
                index += len(hoisted)
                bound |= {h.targets[0].id for h in hoisted}
                pending.append((stmt.body, set(bound)))
            elif isinstance(stmt, gast.If):
                pending += [(stmt.body, set(bound)), (stmt.orelse, set(bound))]
            bound |= {n.id for n in walk(stmt)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            index += 1
    return body


def _hoisted(loop, numbers, bound, fresh):
    """The assignments that compute ``loop``'s invariant arithmetic before it, its reads
    replaced by their names (in place)."""
    changed = changed_in(loop)
    steady = {name for name in numbers if name in bound and name not in changed}
    out, names = [], {}
    for stmt in loop.body:
        for parent, field, position, node in _largest(stmt, steady):
            text = gast.dump(node)
            if text not in names:
                names[text] = fresh("_invariant")
                hoisted = gast.copy_location(assign(names[text], node), loop)
                anno.set_(hoisted, Anno.ORIGIN, anno.get(loop, Anno.ORIGIN))   # the loop's line
                out.append(hoisted)
            replacement = load(names[text])
            if position is None:
                setattr(parent, field, replacement)
            else:
                getattr(parent, field)[position] = replacement
    return out


def _largest(stmt, steady):
    """``(parent, field, position, node)`` of each largest invariant arithmetic subexpression
    of ``stmt`` (outside nested loops, which hoist their own); iterative."""
    invariant = {}
    order, todo = [], [stmt]
    while todo:                                   # parents before children
        node = todo.pop()
        order.append(node)
        if not isinstance(node, (gast.For, gast.While)) or node is stmt:
            todo.extend(gast.iter_child_nodes(node))
    for node in reversed(order):                  # children before parents
        if isinstance(node, gast.Name):
            invariant[id(node)] = isinstance(node.ctx, gast.Load) and node.id in steady
        elif isinstance(node, gast.Constant):
            invariant[id(node)] = type(node.value) in (int, float)
        elif isinstance(node, gast.BinOp) and isinstance(node.op, _OPERATORS):
            invariant[id(node)] = invariant.get(id(node.left)) and invariant.get(id(node.right))
        elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            invariant[id(node)] = invariant.get(id(node.operand))
    found = []
    for node in order:
        for field, value in gast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for position, child in enumerate(items):
                if isinstance(child, (gast.BinOp, gast.UnaryOp)) and invariant.get(id(child)) \
                        and not invariant.get(id(node)) \
                        and any(isinstance(n, gast.Name) for n in walk(child)):
                    found.append((node, field, position if isinstance(value, list) else None,
                                  child))
    return found

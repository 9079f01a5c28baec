"""A ``for`` loop over a short display of names, written out step by step.

Requires: a loop of the function being desugared (:mod:`srctrans.normalize.desugar`), its
``else`` block already moved after it.
Guarantees: :func:`unrolled` gives the statements that run as the loop runs: for each item
a copy of the body that reads the item where it read the loop's target, and the target
bound to the last item after them (a body that binds a target name gets the target bound
to each item before its copy instead)::

    for W, b in ((W1, b1), (W2, b2)):         h = np.tanh(h @ W1 + b1)
        h = np.tanh(h @ W + b)          ->    h = np.tanh(h @ W2 + b2)
                                              W, b = (W2, b2)

The items are names, constants, or tuples of them matching a tuple target; neither the
body nor the target binds any of their names (so each item holds, when its step starts,
what the display held when the loop started), and the body has no ``break``,
``continue``, ``return`` or ``yield``, nor a local function or class. At most 8 items and a
body of at most 400 nodes are written out. A loop
written out is straight-line code: specialised code fixes each step's shapes (a layer's
weights of another shape at each step), where a loop keeps the values of every step in
lists and its steps' shapes may not be fixed.
"""

import gast

from srctrans.nodes import clone, substitute_names
from srctrans.treewalk import statement_lists, walk, walk_names

_MOST_ITEMS = 8
_MOST_NODES = 400
_JUMPS = (gast.Break, gast.Continue, gast.Return, gast.Yield, gast.YieldFrom, gast.Await,
          gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda, gast.Global,
          gast.Nonlocal)


def write_out_loops(function):
    """Write out each loop of ``function`` over a short display of names (see the module),
    in place, inner loops first (an outer loop's copies hold them written out)."""
    for block in reversed(statement_lists(function)):
        if any(isinstance(stmt, gast.For) for stmt in block):
            block[:] = [new for stmt in block
                        for new in ((isinstance(stmt, gast.For) and unrolled(stmt)) or [stmt])]


def unrolled(loop):
    """The statements ``loop`` runs, written out (see the module), or None."""
    items = loop.iter.elts if isinstance(loop.iter, (gast.Tuple, gast.List)) else None
    if (not isinstance(loop, gast.For) or loop.orelse or items is None
            or not 0 < len(items) <= _MOST_ITEMS
            or not all(_fits(loop.target, item) for item in items)):
        return None
    nodes = [node for stmt in loop.body for node in walk(stmt)]
    if len(nodes) > _MOST_NODES or any(isinstance(node, _JUMPS) for node in nodes):
        return None
    bound = {node.id for node in nodes + list(walk(loop.target))
             if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)}
    read = {node.id for item in items for node in walk_names(item)}
    if bound & read:
        return None          # (an item's name rebound by a step, or by the target: for V in
        #                       (W, V) would read V as the first step bound it)
    targets = {node.id for node in walk_names(loop.target)}
    read_in_place = not targets & {node.id for node in nodes if isinstance(node, gast.Name)
                                   and not isinstance(node.ctx, gast.Load)}
    out = []
    for item in items:
        if read_in_place:             # the body binds no target: it reads the item itself
            bindings = dict(_pairs(loop.target, item))
            out.extend(substitute_names(clone(stmt), bindings) for stmt in loop.body)
        else:
            out.append(_step(loop, item))
            out.extend(clone(stmt) for stmt in loop.body)
    if read_in_place:
        out.append(_step(loop, items[-1]))      # the target holds the last item after it
    return out


def _step(loop, item):
    """``target = item``, at the loop's line (errors, comments)."""
    step = gast.Assign([clone(loop.target)], clone(item), None)
    for node in walk(step):
        if "lineno" in node._attributes:
            gast.copy_location(node, loop)
    return step


def _pairs(target, item):
    """``(name, value)`` of each name of ``target`` (a name, or a tuple of them) and the
    element of ``item`` it takes."""
    if isinstance(target, gast.Name):
        yield target.id, item
    else:
        for part, element in zip(target.elts, item.elts):
            yield from _pairs(part, element)


def _fits(target, item):
    """Whether ``item`` is a name or constant for a name ``target``, or a tuple of such items
    as long as a tuple ``target``."""
    if isinstance(target, gast.Name):
        return isinstance(item, (gast.Name, gast.Constant))
    return (isinstance(target, (gast.Tuple, gast.List)) and isinstance(item, (gast.Tuple, gast.List))
            and len(target.elts) == len(item.elts)
            and all(_fits(t, i) for t, i in zip(target.elts, item.elts)))

"""A number spread over an expression that is computed only for its shape is filled instead.

Requires: the body of a fused gradient specialised on shapes (after dead code is
eliminated, before its temporaries are inlined), the measured shapes, and the aliases of
NumPy and of the runtime.
Guarantees: the values computed are unchanged. The cotangent of ``np.sum(E)`` (or of a
sum over every axis of ``E``: ``np.sum(v, axis=0)`` of a vector) is its
seed spread over ``E``'s shape, ``rt.unreduce(g, E, None, False)``. In a fused gradient
``E`` is often computed for nothing else (the value of the sum is not returned), so the
whole expression runs to give a shape and a dtype. When ``E`` is arithmetic (``+ - * /
**``, unary minus, NumPy's elementwise functions of floats) of names and numbers, its shape
``S`` is known, and ``g`` is a float (a float literal or a number), the spread is filled
(a mean's, ``rt.mean_grad``, with ``g`` divided by the count; ``np.full`` of ``S`` itself
where no name has that shape and the function has no loop; reductions of such
arithmetic, ``(a * b).sum(axis=1)``, count as their operand's names,
``np.where(c, a, b)`` of such arithmetic as ``a`` and ``b``'s, each reading a name, and
``np.take_along_axis(a, i, axis=k)``, a pick of an array's entries, as ``a``'s)::

    d_sub = rt.unreduce(1.0, 1 + v - m ** 2 - e, None, False)
        ->  d_sub = np.full((3,), 1.0, np.result_type(1.0, v, m, e))

A guard of a product by such a fill of a nonzero number, ``rt.zero_guard(d_sub, d_sub /
v)``, is its product: the guard changes only the entries where the fill is 0.

``rt.unreduce`` fills with ``g`` in the dtype arithmetic gives ``g`` and ``E``, which is
NumPy's ``result_type`` of ``g`` and the names ``E`` reads (a float ``g`` makes it a
float, as ``rt.unreduce`` does; the elementwise functions kept keep a float's dtype and
turn ints into float64, as that float does). A name ``E`` reads that is assigned such
arithmetic once and read nowhere else counts as its expression, so what only the spread
needed is not computed at all (dead code elimination then drops it)::

    _sub = _item - _item_2 + _div - 0.5          # _sub and _div read by the spread only
    d_sub = rt.unreduce(1.0, _sub, None, False)
        ->  d_sub = np.full_like(var_q, 1.0, np.result_type(1.0, _item, _item_2, var_q, _d))
"""

import math

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import dotted, int_literal, is_constant
from srctrans.optimise.dce import name_counts
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.optimise.expression_shapes import REDUCTION_METHODS, shape_of
from srctrans.treewalk import replace_children, walk

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
_ELEMENTWISE = frozenset({np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.sin, np.cos, np.tan,
                          np.tanh, np.sinh, np.cosh, np.arctan, np.abs, np.absolute,
                          np.negative, np.square, np.maximum, np.minimum})


def fill_spreads(body, shapes, numpy_alias, runtime_alias, shapes_hold=False):
    """``body`` with each qualifying ``rt.unreduce`` filled (see the module), in place.
    ``shapes_hold``: the function has no loop, so a shape ``shapes`` gives is the one every
    call with the key has (a loop's trip count, which values may decide, may change one):
    a spread no name has the shape of may be filled in that shape, written out."""
    stores, reads = name_counts(body)
    only_read_once = {                    # name -> the value it is assigned, once, in body's block
        stmt.targets[0].id: stmt.value for stmt in body
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name) and stores[stmt.targets[0].id] == 1
        and reads.get(stmt.targets[0].id) == 1}
    nonzero = set()                       # names holding a fill of a nonzero number
    for stmt in body:
        for node in walk(stmt):
            mean = is_runtime_call(node, runtime_alias, "mean_grad", 4)
            if not (mean or is_runtime_call(node, runtime_alias, "unreduce", 4)):
                continue
            g, spread, axis, keepdims = node.args
            shape = shape_of(spread, shapes)
            leaves = _leaves(spread, only_read_once)
            if (leaves is None or shape is None or leaves == [getattr(spread, "id", None)]
                    or not _over_all_axes(axis, shape) or not is_constant(keepdims, False)
                    or not isinstance(g, (gast.Name, gast.Constant))):
                continue
            dtype = gast.Call(dotted(numpy_alias, "result_type"),
                              [g] + [gast.Name(n, gast.Load(), None, None) for n in leaves], [])
            anno.set_(dtype, Anno.CALLEE, np.result_type)
            value = _copy(g)
            if mean:                              # each entry's share of the mean
                value = gast.BinOp(value, gast.Div(), gast.Constant(math.prod(shape), None))
            like = next((n for n in leaves if shapes.get(n) == shape), None)
            if like is None and not shapes_hold:
                continue
            if like is not None:
                node.func = dotted(numpy_alias, "full_like")
                node.args = [gast.Name(like, gast.Load(), None, None), value, dtype]
                anno.set_(node, Anno.CALLEE, np.full_like)
            else:                                 # no name of the whole shape: the shape itself
                node.func = dotted(numpy_alias, "full")
                node.args = [gast.Tuple([gast.Constant(n, None) for n in shape], gast.Load()),
                             value, dtype]
                anno.set_(node, Anno.CALLEE, np.full)
            if isinstance(g, gast.Constant) and g.value != 0 and isinstance(stmt, gast.Assign) \
                    and stmt.value is node and isinstance(stmt.targets[0], gast.Name) \
                    and stores[stmt.targets[0].id] == 1:
                nonzero.add(stmt.targets[0].id)
    return _unguarded(body, nonzero, runtime_alias)


def _unguarded(body, nonzero, runtime_alias):
    """``body`` with ``rt.zero_guard(g, v)`` read as ``v`` where ``g`` is a fill of a nonzero
    number: the guard changes only the entries where ``g`` is 0, and there are none."""
    def unguarded(node):
        if is_runtime_call(node, runtime_alias, "zero_guard", 2) \
                and isinstance(node.args[0], gast.Name) and node.args[0].id in nonzero:
            return node.args[1]
        return node

    if nonzero:
        for stmt in body:
            replace_children(stmt, unguarded)
    return body


def _leaves(expression, expanded):
    """The names ``expression`` reads when it is arithmetic of names and numbers (see the
    module), else None; a name in ``expanded`` whose value is such arithmetic counts as its
    own leaves (a worklist, not recursion: a chain of temporaries may be as long as the
    function). The name of a function it calls (``np.exp``) is no leaf; any other attribute
    (``self.w``: an object read) makes it None."""
    found = _own_leaves(expression)
    if found is None:
        return None
    names, pending = [], [found]          # the names of expressions known to be arithmetic
    while pending:
        for name in pending.pop():
            inner = _own_leaves(expanded[name]) if name in expanded else None
            if inner is not None:
                pending.append(inner)
            elif name not in names:
                names.append(name)
    return names


def _own_leaves(expression):
    """The names ``expression`` itself reads when it is arithmetic, else None."""
    names, functions = [], set()          # functions: the nodes naming a called function
    for node in walk(expression):         # (breadth-first: a call before its function)
        if id(node) in functions:
            continue
        if isinstance(node, gast.Name):
            names.append(node.id)
        elif isinstance(node, gast.Constant):
            if type(node.value) not in (int, float):
                return None
        elif isinstance(node, gast.BinOp):
            if not isinstance(node.op, _ARITHMETIC):
                return None
        elif isinstance(node, gast.UnaryOp):
            if not isinstance(node.op, (gast.USub, gast.UAdd)):
                return None
        elif isinstance(node, gast.Call) and _reduction_method(node):
            # (a * b).sum(axis=1), np.sum(a * b, axis=1): the leaves of what it reduces
            functions.update(id(n) for keyword in node.keywords for n in walk(keyword))
            if node.args:                         # np.sum: no leaf in the function's name
                functions.update(id(n) for n in walk(node.func))
            else:                                 # .sum: the receiver's are
                functions.add(id(node.func))
        elif isinstance(node, gast.Call) and anno.get(node, Anno.CALLEE) is np.take_along_axis:
            # a pick of entries of an array: its dtype, whatever picks them
            functions.update(id(n) for part in [node.func] + node.args[1:] + node.keywords
                             for n in walk(part))
        elif isinstance(node, gast.Call) and anno.get(node, Anno.CALLEE) is np.where:
            # np.where(c, a, b): the dtype of a and b's arithmetic (each reads a name: a
            # number there is an array of its own dtype), the condition only broadcasts
            if node.keywords or len(node.args) != 3 or not all(
                    any(isinstance(n, gast.Name) for n in walk(branch)) for branch in node.args[1:]):
                return None
            functions.update(id(n) for part in (node.func, node.args[0]) for n in walk(part))
        elif isinstance(node, gast.Call):
            callee = anno.get(node, Anno.CALLEE)
            if node.keywords or not any(callee is f for f in _ELEMENTWISE):
                return None
            functions.update(id(n) for n in walk(node.func))
        elif not isinstance(node, (gast.operator, gast.unaryop, gast.expr_context)):
            return None
    return names


# the reductions whose operand's names count as leaves: sum, mean, max and min
_REDUCTIONS = {f: method for f, method in REDUCTION_METHODS.items()
               if method in ("sum", "mean", "max", "min")}


def _reduction_method(call):
    """``e.sum(axis=1)``, ``np.sum(e, axis=1)`` (``mean``, ``max``, ``min`` too) with constant
    keywords: the dtype of ``e``'s arithmetic (a mean of ints is float64, as a float seed
    makes it)."""
    constant = all(k.arg in ("axis", "keepdims") and (
        isinstance(k.value, (gast.Constant, gast.Tuple)) or int_literal(k.value) is not None)
                   for k in call.keywords)                       # (axis=-1: a minus sign)
    if isinstance(call.func, gast.Attribute) and call.func.attr in _REDUCTIONS.values() \
            and anno.get(call, Anno.CALLEE) is None:
        return not call.args and constant
    callee = anno.get(call, Anno.CALLEE)
    return (any(callee is f for f in _REDUCTIONS) and len(call.args) == 1 and constant)


def _over_all_axes(axis, shape):
    """Whether a sum over ``axis`` (a node) of an array of ``shape`` sums every entry: None,
    or constant ints naming each axis once (``axis=0`` of a vector)."""
    if is_constant(axis, None):
        return True
    parts = axis.elts if isinstance(axis, gast.Tuple) else [axis]
    if not all(isinstance(p, gast.Constant) and type(p.value) is int for p in parts):
        return False
    axes = [p.value for p in parts]
    return (all(-len(shape) <= a < len(shape) for a in axes)
            and sorted(a % len(shape) for a in axes) == list(range(len(shape))))


def _copy(node):
    return gast.Constant(node.value, None) if isinstance(node, gast.Constant) else \
        gast.Name(node.id, gast.Load(), None, None)

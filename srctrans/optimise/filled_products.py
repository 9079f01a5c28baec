"""A filled array whose one reader multiplies it by a smaller factor is that factor broadcast.

Requires: the top-level statements of a fused gradient specialised on shapes, after
``fill_spreads`` (``optimise/filled_spreads.py``) made its fills and before its temporaries
are inlined; the measured shapes and NumPy's alias.
Guarantees: the values computed are unchanged, bit for bit. ``F = np.full_like(T, c, D)``
(or ``np.full(S, c, D)``) read only by a later statement of the same block, ``R = F * a``
or ``R = a * F``, where ``a`` is a name of a shape other than ``T``'s that broadcasts to it,
one of the names ``D = np.result_type(...)`` is taken of (so the product has ``F``'s shape
and dtype ``D``), and no statement between them assigns ``T``, ``a`` or a name ``c`` or
``D`` reads (nor may write into a name ``c`` reads: ``c`` is read at the product now),
becomes::

    R = np.empty_like(T, D)
    R[...] = a                                       (c the number 1.0)
    R[...] = np.multiply(a, c, dtype=R.dtype)        (any other c)

Each entry of the product was ``D(c) * D(a)``, computed in ``D`` after ``F`` was filled: two
passes over the whole shape. The broadcast writes ``D(a)`` (``D(c) * D(a)``, computed in
``D`` on ``a``'s entries only) in one; ``x * 1.0`` is ``x`` in floating point. The gradient
of ``np.sum(X * w)`` with respect to ``X`` is ``w`` broadcast over ``X``::

    d_mul = np.full_like(X, 1.0, np.result_type(1.0, X, w))
    dX = d_mul * w
        ->  dX = np.empty_like(X, np.result_type(1.0, X, w))
            dX[...] = w
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import dotted, ints_literal, load, may_change, store
from srctrans.optimise.dce import name_counts, reads_of, stores_of
from srctrans.optimise.expression_shapes import called

# a fill -> the function that makes an array of its shape and dtype unfilled
_FILLS = {np.full_like: "empty_like", np.full: "empty"}


def broadcast_filled_products(body, shapes, numpy_alias):
    """``body`` (a list, changed in place and returned) with each fill its one reader
    multiplies by a smaller factor written as that factor broadcast (see the module);
    ``shapes``: name -> the shape measured."""
    stores, reads = name_counts(body)
    index = 0
    while index < len(body):
        fill = _fill(body[index], shapes)
        if fill is None or stores.get(fill[0]) != 1 or reads.get(fill[0]) != 1:
            index += 1
            continue
        name, empty, shape, like, value, dtype = fill
        later = next((k for k in range(index + 1, len(body))
                      if name in reads_of(body[k])), None)
        product = None if later is None else _product(body[later], name)
        if product is None:
            index += 1
            continue
        target, factor = product
        scale = reads_of(value)
        fixed = scale | reads_of(dtype) | {factor} | (
            {like.id} if isinstance(like, gast.Name) else set())
        between = body[index + 1:later]
        if (factor not in {n.id for n in dtype.args if isinstance(n, gast.Name)}
                or _shape(factor, shapes) in (None, shape)
                or not _broadcasts(_shape(factor, shapes), shape)
                or target == factor or target in scale
                or any(stores_of(stmt) & fixed for stmt in between)
                or scale and any(may_change(stmt, scale) for stmt in between)):
            index += 1
            continue
        body[later:later + 1] = _broadcast(body[later], target, factor, empty, like, value,
                                           dtype, numpy_alias)
        del body[index]
    return body


def _fill(stmt, shapes):
    """``(name, empty, shape, like, value, dtype)`` of ``name = np.full_like(like, value,
    dtype)`` (``like`` a name of a measured shape) or ``name = np.full(shape, value, dtype)``,
    with ``dtype`` a ``np.result_type(...)`` call, ``empty`` the name of NumPy's function
    that makes such an array unfilled; else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
        return None
    call = stmt.value
    empty = _FILLS.get(called(call))
    if empty is None or len(call.args) != 3 or call.keywords:
        return None
    like, value, dtype = call.args
    if not (isinstance(dtype, gast.Call) and called(dtype) is np.result_type):
        return None
    if empty == "empty_like":
        shape = shapes.get(like.id) if isinstance(like, gast.Name) else None
    else:
        shape = ints_literal(like)
    if shape is None:
        return None
    return stmt.targets[0].id, empty, tuple(shape), like, value, dtype


def _product(stmt, name):
    """``(target, factor)`` of ``target = name * factor`` or ``factor * name`` (names), else
    None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BinOp)
            and isinstance(stmt.value.op, gast.Mult)):
        return None
    left, right = stmt.value.left, stmt.value.right
    if not (isinstance(left, gast.Name) and isinstance(right, gast.Name)):
        return None
    if left.id == name and right.id != name:
        return stmt.targets[0].id, right.id
    if right.id == name and left.id != name:
        return stmt.targets[0].id, left.id
    return None


def _shape(name, shapes):
    shape = shapes.get(name)
    return None if shape is None else tuple(shape)


def _broadcasts(small, whole):
    """Whether an array of shape ``small`` broadcasts to ``whole`` (and no larger)."""
    try:
        return np.broadcast_shapes(small, whole) == whole
    except ValueError:
        return False


def _broadcast(product, target, factor, empty, like, value, dtype, numpy_alias):
    """The statements that make ``target`` ``factor`` (times ``value``) broadcast over the
    fill's shape (``np.<empty>(like, dtype)``), with ``product``'s origin."""
    made = gast.Call(dotted(numpy_alias, empty), [like, dtype], [])
    anno.set_(made, Anno.CALLEE, getattr(np, empty))
    written = load(factor)
    if not (isinstance(value, gast.Constant) and type(value.value) is float
            and value.value == 1.0):
        written = gast.Call(dotted(numpy_alias, "multiply"), [written, value], [
            gast.keyword("dtype", gast.Attribute(load(target), "dtype", gast.Load()))])
        anno.set_(written, Anno.CALLEE, np.multiply)
    whole = gast.Subscript(load(target), gast.Constant(Ellipsis, None), gast.Store())
    statements = [gast.Assign([store(target)], made, None), gast.Assign([whole], written, None)]
    for stmt in statements:
        anno.copy(product, stmt)
    return statements

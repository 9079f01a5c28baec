"""Axis moves that a matrix of known shape does not need, in specialised code.

Requires: expressions of specialised statements and the shapes of the names they read.
Guarantees: ``np.swapaxes(x, -1, -2)`` (any two constants naming both axes) of a value ``x``
of two axes is ``x.T``, the same view; and ``np.expand_dims(g, axes) * y`` (or ``y * ...``)
of a number ``g`` and a ``y`` of known shape with at least as many axes as the expanded
number has is ``g * y``: the axes of length 1 put in front change neither the product's
values nor its shape (a rule's template for a stack of matrices, ``np.linalg.slogdet``'s
cotangent, run on one matrix). ``np.moveaxis(x, source, destination)`` (ints, or tuples of
them) of an array ``x`` of known rank is ``x.transpose(order)``, the same view, and
``np.transpose(x, ...)``, ``np.swapaxes(x, a, b)`` the array's own methods: NumPy's functions
check and normalise their axes in Python first (``np.moveaxis``: 2 us, the method 0.1 us).
A reshape's cotangent, ``rt.reshape_like(g, x)`` (order ``'C'``), of an array ``g`` of
known shape and an ``x`` of known shape is ``g.reshape(shape)``, ``shape`` written out.
"""

import gast
import numpy as np

from srctrans.nodes import int_literal, int_tuple, ints_literal
from srctrans.optimise.expression_shapes import called, is_runtime_helper_call, shape_of


def transposed_swap(call, known):
    """``x.T`` for ``call``, ``np.swapaxes(x, a, b)`` of a value ``x`` with two axes, ``a`` and
    ``b`` naming both; else None."""
    if not (isinstance(call, gast.Call) and called(call) is np.swapaxes
            and len(call.args) == 3 and not call.keywords):
        return None
    x, a, b = call.args[0], int_literal(call.args[1]), int_literal(call.args[2])
    if shape_of(x, known) is None or len(shape_of(x, known)) != 2 or a is None or b is None \
            or not -2 <= a < 2 or not -2 <= b < 2 or a % 2 == b % 2:
        return None
    return gast.Attribute(x, "T", gast.Load())


def unexpanded_product(node, known):
    """``node``, a product ``np.expand_dims(g, axes) * y`` (either order) of a number ``g``
    and a ``y`` of known shape with as many axes as the expanded number or more, as
    ``g * y`` (its order kept); else None."""
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
        return None
    for side, other in (("left", node.right), ("right", node.left)):
        expanded = getattr(node, side)
        added = _added_axes(expanded)
        other_shape = shape_of(other, known)
        if added is not None and shape_of(expanded.args[0], known) == () \
                and other_shape is not None and len(other_shape) >= added:
            setattr(node, side, expanded.args[0])
            return node
    return None


def _added_axes(call):
    """How many axes ``np.expand_dims(g, axes)`` puts in (``axes`` an int or a tuple of ints
    literal), or None for another expression."""
    if not (isinstance(call, gast.Call) and called(call) is np.expand_dims
            and len(call.args) == 2 and not call.keywords):
        return None
    axes = ints_literal(call.args[1])
    return None if axes is None else len(axes)


def moved_axes(call, known):
    """The array's own method for ``call``, ``np.moveaxis(x, source, destination)`` (as
    ``x.transpose(order)``), ``np.transpose(x[, axes])``, ``np.swapaxes(x, a, b)`` or
    ``rt.transpose_grad(x[, axes])`` (the inverse order's transpose), of an
    ``x`` of known shape with an axis or more (an array), its axes int literals; else None
    (the function's own error for axes out of range or repeated)."""
    if not isinstance(call, gast.Call) or call.keywords or not call.args:
        return None
    callee = called(call)
    x = call.args[0]
    rank = len(shape_of(x, known) or ())
    if is_runtime_helper_call(call, "transpose_grad") and rank and len(call.args) <= 2:
        axes = ints_literal(call.args[1]) if len(call.args) == 2 else None
        if axes is None:                       # the transpose of a reversal: a reversal
            return _method(x, "transpose", []) if len(call.args) == 1 else None
        if sorted(a % rank for a in axes if -rank <= a < rank) != list(range(rank)):
            return None
        inverse = tuple(int(a) for a in np.argsort([a % rank for a in axes]))
        return _method(x, "transpose", [int_tuple(inverse)])
    if callee not in (np.moveaxis, np.transpose, np.swapaxes) or rank == 0:
        return None
    if callee is np.moveaxis and len(call.args) == 3:
        source, destination = ints_literal(call.args[1]), ints_literal(call.args[2])
        order = _moved_order(rank, source, destination)
        return None if order is None else _method(x, "transpose", [int_tuple(order)])
    if callee is np.transpose and len(call.args) <= 2:
        axes = ints_literal(call.args[1]) if len(call.args) == 2 else ()
        if axes is None or axes and sorted(a % rank for a in axes
                                           if -rank <= a < rank) != list(range(rank)):
            return None
        return _method(x, "transpose", [int_tuple(axes)] if axes else [])
    if callee is np.swapaxes and len(call.args) == 3 and all(
            a is not None and -rank <= a < rank for a in map(int_literal, call.args[1:])):
        return _method(x, "swapaxes", call.args[1:])
    return None


def reshaped_like(call, known):
    """``g.reshape(shape)`` for ``call``, ``rt.reshape_like(g, x)`` or ``rt.reshape_like(g, x,
    'C')`` of an array ``g`` (at least one axis) and an ``x`` of known ``shape``; else None."""
    if not (is_runtime_helper_call(call, "reshape_like") and 2 <= len(call.args) <= 3
            and not call.keywords):
        return None
    g, x = call.args[:2]
    if len(call.args) == 3 and not (isinstance(call.args[2], gast.Constant)
                                    and call.args[2].value == "C"):
        return None
    g_shape, x_shape = shape_of(g, known), shape_of(x, known)
    if not g_shape or x_shape is None or not all(type(n) is int for n in x_shape):
        return None
    return _method(g, "reshape", [int_tuple(x_shape)])


def _moved_order(rank, source, destination):
    """The axes' order ``np.moveaxis`` gives an array of ``rank`` axes, or None where it
    raises (axes out of range or repeated, source and destination of other lengths)."""
    if source is None or destination is None or len(source) != len(destination):
        return None
    if not all(-rank <= a < rank for a in source + destination):
        return None
    source = [a % rank for a in source]
    destination = [a % rank for a in destination]
    if len(set(source)) != len(source) or len(set(destination)) != len(destination):
        return None
    order = [axis for axis in range(rank) if axis not in source]
    for position, axis in sorted(zip(destination, source)):
        order.insert(position, axis)
    return tuple(order)


def _method(x, name, args):
    return gast.Call(gast.Attribute(x, name, gast.Load()), args, [])

"""Axis moves that a matrix of known shape does not need, in specialised code.

Requires: expressions of specialised statements and the shapes of the names they read.
Guarantees: ``np.swapaxes(x, -1, -2)`` (any two constants naming both axes) of a value ``x``
of two axes is ``x.T``, the same view; and ``np.expand_dims(g, axes) * y`` (or ``y * ...``)
of a number ``g`` and a ``y`` of known shape with at least as many axes as the expanded
number has is ``g * y``: the axes of length 1 put in front change neither the product's
values nor its shape (a rule's template for a stack of matrices, ``np.linalg.slogdet``'s
cotangent, run on one matrix).
"""

import gast
import numpy as np

from srctrans.nodes import int_literal, ints_literal
from srctrans.optimise.expression_shapes import called, shape_of


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

"""Cotangents of a matrix's trace and of a tile, written for known shapes.

Requires: specialised backward statements (``optimise.specialise`` calls this on each call
it rewrites) and the shapes of the values they read.
Guarantees: ``rt.trace_grad(g, x, 0, 0, 1)`` of a number ``g`` and a value ``x`` of two axes
``(n, m)`` is ``g * np.eye(n, m)`` (``x`` itself, made only for its shape, is then not
computed): the helper's values and dtype (a float64 identity times the number); and
``rt.tile_grad(g, a, reps)`` of constant ``reps`` and an ``a`` of known shape is
``g.reshape(split).sum(axis=copies).reshape(shape)`` with the lengths the helper computes
at every call written in, each reshape left out where it changes nothing and an axis not
copied (or of length 1) not split: the copies' sums, in the helper's order.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import dotted, int_literal, int_tuple, ints_literal
from srctrans.optimise.expression_shapes import is_runtime_helper_call, shape_of


def scan_cotangent(node, known, numpy_alias):
    """``node`` written out where it is such a call of ``rt.trace_grad`` or ``rt.tile_grad``;
    else None."""
    if is_runtime_helper_call(node, "trace_grad") and len(node.args) == 5 and not node.keywords:
        return _trace_cotangent(node, known, numpy_alias)
    if is_runtime_helper_call(node, "tile_grad") and len(node.args) == 3 and not node.keywords:
        return _tile_cotangent(node, known)
    return None


def _trace_cotangent(call, known, numpy_alias):
    g, x, offset, axis1, axis2 = call.args
    shape = shape_of(x, known)
    if shape_of(g, known) != () or shape is None or len(shape) != 2 \
            or not all(type(n) is int for n in shape) or int_literal(offset) != 0 \
            or {int_literal(axis1), int_literal(axis2)} != {0, 1}:
        return None
    eye = gast.Call(dotted(numpy_alias, "eye"), [gast.Constant(n, None) for n in shape], [])
    anno.set_(eye, Anno.CALLEE, np.eye)
    return gast.BinOp(g, gast.Mult(), eye)


def _tile_cotangent(call, known):
    g, a, reps = call.args
    shape, g_shape = shape_of(a, known), shape_of(g, known)
    counts = ints_literal(reps)
    if shape is None or g_shape is None or counts is None \
            or not all(type(n) is int for n in shape):
        return None
    ndim = max(len(counts), len(shape))
    counts = (1,) * (ndim - len(counts)) + counts
    promoted = (1,) * (ndim - len(shape)) + tuple(shape)
    if g_shape != tuple(c * n for c, n in zip(counts, promoted)):
        return None
    split, copies, kept = [], [], []
    for count, n in zip(counts, promoted):
        if count == 1:                        # not copied: the axis as it is
            kept.append(n)
            split.append(n)
            continue
        copies.append(len(split))
        split.append(count)
        if n != 1:                            # (a length-1 axis is its copies alone)
            kept.append(n)
            split.append(n)
    written = g if tuple(split) == g_shape else _method(g, "reshape", [int_tuple(split)])
    if copies:
        axis = gast.Constant(copies[0], None) if len(copies) == 1 else int_tuple(copies)
        written = _method(written, "sum", [], [gast.keyword("axis", axis)])
    return written if tuple(kept) == tuple(shape) else _method(written, "reshape", [int_tuple(shape)])


def _method(receiver, name, args, keywords=()):
    return gast.Call(gast.Attribute(receiver, name, gast.Load()), list(args), list(keywords))

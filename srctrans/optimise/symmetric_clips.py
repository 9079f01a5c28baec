"""A clip between ``-c`` and ``c`` passes its input where ``|x| <= c``.

Requires: the body of a fused gradient specialised on shapes (real values), after its
temporaries are inlined, and the name generated code calls NumPy by.
Guarantees: each value is what it was. The derivative of ``np.clip(x, -c, c)`` (gradient
clipping, a robust loss's residuals) passes the cotangent where ``(x >= lo) & (x <= c)``, ``lo``
the name the forward pass gave ``-c``; with ``lo = -c`` assigned once, at the body's top level,
and ``c`` never assigned or assigned once above it at the top level (its value for good), that
mask is ``np.abs(x) <= c``: the same booleans for every real ``x`` and ``c``
(NaN gives False in both; ``-0.0`` and ``0.0`` compare equal), in two operations for four; so
is a mask between two number literals ``-c`` and ``c``::

    _neg = -clip                                _neg = -clip
    r_2 = np.clip(r, _neg, clip)        ->      r_2 = np.clip(r, _neg, clip)
    dr = d * ((r >= _neg) & (r <= clip))        dr = d * (np.abs(r) <= clip)
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import load, number_literal, single_target
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import replace_children


def symmetric_clip_masks(body, numpy_alias):
    """``body`` with each mask of a clip between ``-c`` and ``c`` written as ``|x| <= c``
    (see the module), in place."""
    stores, _ = name_counts(body)
    negations = {}                # lo -> c, for lo = -c assigned once, c's value for good
    before = set()                # the names the body's top level assigned so far
    for stmt in body:
        target = single_target(stmt)
        value = getattr(stmt, "value", None)
        if target is not None and stores.get(target) == 1 and isinstance(value, gast.UnaryOp) \
                and isinstance(value.op, gast.USub) and isinstance(value.operand, gast.Name):
            c = value.operand.id     # never assigned in the body, or once, above, not in a loop
            if stores.get(c, 0) == 0 or stores.get(c) == 1 and c in before:
                negations[target] = c
        if target is not None:
            before.add(target)

    def rewritten(node):
        bounds = _bounds(node)
        if bounds is None:
            return node
        x, lo, hi = bounds
        if isinstance(lo, gast.Name) and isinstance(hi, gast.Name):
            symmetric = negations.get(lo.id) == hi.id
        else:                                             # literals: np.clip(r, -1.0, 1.0)
            symmetric = number_literal(lo) and number_literal(hi) and lo.value == -hi.value
        if not symmetric:
            return node
        magnitude = gast.Call(gast.Attribute(load(numpy_alias), "abs", gast.Load()), [load(x)], [])
        anno.set_(magnitude, Anno.CALLEE, np.abs)
        return gast.Compare(magnitude, [gast.LtE()], [hi])
    for stmt in body:
        replace_children(stmt, rewritten)
    return body


def _bounds(node):
    """``(x, lo, hi)`` when ``node`` is ``(x >= lo) & (x <= hi)``, ``x`` a name, else None."""
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.BitAnd)):
        return None
    left, right = node.left, node.right
    if not all(isinstance(c, gast.Compare) and len(c.ops) == 1 and isinstance(c.left, gast.Name)
               for c in (left, right)):
        return None
    if not (isinstance(left.ops[0], gast.GtE) and isinstance(right.ops[0], gast.LtE)
            and left.left.id == right.left.id):
        return None
    return left.left.id, left.comparators[0], right.comparators[0]

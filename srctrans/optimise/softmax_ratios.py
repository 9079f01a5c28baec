"""A softmax's runtime calls written as NumPy in specialised code.

Requires: statements of generated code that reach the runtime's softmax helpers
(``normalize/softmax_logs.py`` made ``p = rt.softmax_ratio(e, s, a, axis)``).
Guarantees: :func:`plain_softmax_ratio` is ``e / s`` for ``rt.softmax_ratio(e, s, a, axis)``,
the helper's value (its ``a`` is for derivatives only); :func:`softmax_ratio_cotangent` is
``p * (g - (g * p).sum(axis=axis, keepdims=True))`` for ``rt.softmax_ratio_grad(g, p, axis)``
where ``g`` has ``p``'s shape (the helper spreads a ``g`` of another shape first): what the
helper computes, without a call of Python's.
"""

import gast

from srctrans.nodes import clone
from srctrans.optimise.expression_shapes import is_runtime_helper_call, shape_of


def plain_softmax_ratio(node):
    """``e / s`` for ``node`` a call ``rt.softmax_ratio(e, s, a, axis)``, else None."""
    if is_runtime_helper_call(node, "softmax_ratio") and len(node.args) == 4 \
            and not node.keywords:
        return gast.BinOp(node.args[0], gast.Div(), node.args[1])
    return None


def softmax_ratio_cotangent(node, known):
    """``node``, a call ``rt.softmax_ratio_grad(g, p, axis)`` with ``g`` a name of ``p``'s
    known shape, written out; else None."""
    if not (is_runtime_helper_call(node, "softmax_ratio_grad") and len(node.args) == 3
            and not node.keywords):
        return None
    g, p, axis = node.args
    if not isinstance(g, gast.Name) or shape_of(g, known) is None \
            or shape_of(g, known) != shape_of(p, known):
        return None
    total = gast.Call(gast.Attribute(gast.BinOp(g, gast.Mult(), clone(p)), "sum", gast.Load()),
                      [], [gast.keyword("axis", axis),
                           gast.keyword("keepdims", gast.Constant(True, None))])
    return gast.BinOp(p, gast.Mult(), gast.BinOp(clone(g), gast.Sub(), total))


def plain_softmax_ratios(statements):
    """``statements`` (changed in place) with each ``rt.softmax_ratio`` call's ``e / s``."""
    for stmt in statements:
        if isinstance(stmt, gast.Assign):
            plain = plain_softmax_ratio(stmt.value)
            if plain is not None:
                stmt.value = plain
    return statements

"""A quotient by a hyperbolic cosine times the sine of the same value is a hyperbolic tangent.

Requires: the top-level statements of a fused gradient (temporaries inlined), the names read
after them, and the name the code reaches NumPy by.
Guarantees: the values are the product's, up to rounding, where ``cosh(u)`` is finite (where
it overflows, ``|u| > 710``, the product is NaN and the tangent its limit, ``±1`` times the
numerator). The derivative of ``np.log(np.cosh(u))`` (the log-cosh loss) is ``g / cosh(u)``
times ``sinh(u)``: a derivative ``r = n / np.cosh(u)`` read once, as a factor of ``r *
np.sinh(u)`` (either order) in a later statement (not in a loop), ``r``, ``u`` and the names
of ``n`` assigned nowhere between the two, is not made, and the product is ``n *
np.tanh(u)``: one function of ``u`` for three operations::

    d_cosh = 1.0 / np.cosh(_sub)            ->      d_sub = np.tanh(_sub)
    d_sub = d_cosh * np.sinh(_sub)

``np.sinh(u) / np.cosh(u)`` is ``np.tanh(u)`` likewise.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import clone, dotted, number_literal
from srctrans.optimise.dce import name_counts, reads_of, stores_of
from srctrans.optimise.expression_shapes import called
from srctrans.treewalk import replace_children


def tanh_ratios(body, live_out, numpy_alias):
    """``body`` (changed in place, and returned) with each such ratio a hyperbolic tangent
    (see the module); ``live_out``: the names read after it."""
    _, reads = name_counts(body)
    quotients = {}                  # r -> (its position, n, u) of r = n / np.cosh(u)
    dropped = set()
    for position, stmt in enumerate(body):
        found = _quotient(stmt)
        if found is not None and found[0] not in live_out and reads.get(found[0]) == 1:
            quotients[found[0]] = (position,) + found[1:]
        if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Return)):
            continue                                            # (not into a loop)

        def written(node, here=position):
            direct = _ratio_of(node, "sinh", "cosh")
            if direct is not None:
                return _tanh(direct, numpy_alias)
            if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
                return node
            for name, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(name, gast.Name) and name.id in quotients:
                    start, numerator, u = quotients[name.id]
                    if _hyperbolic(other, "sinh") == u and not stores_of(gast.Module(
                            body[start + 1:here], [])) & (reads_of(numerator) | {u, name.id}):
                        dropped.add(start)
                        tangent = _tanh(gast.Name(u, gast.Load(), None, None), numpy_alias)
                        if number_literal(numerator) and numerator.value == 1:
                            return tangent
                        return gast.BinOp(clone(numerator), gast.Mult(), tangent)
            return node
        replace_children(stmt, written)
    body[:] = [stmt for position, stmt in enumerate(body) if position not in dropped]
    return body


def _quotient(stmt):
    """``(r, n, u)`` of ``r = n / np.cosh(u)``, else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Div)):
        return None
    u = _hyperbolic(value.right, "cosh")
    if u is None:
        return None
    return stmt.targets[0].id, value.left, u


def _hyperbolic(node, name):
    """``u`` for ``np.<name>(u)`` of a name ``u``, else None."""
    if isinstance(node, gast.Call) and called(node) is getattr(np, name) and len(node.args) == 1 \
            and not node.keywords and isinstance(node.args[0], gast.Name):
        return node.args[0].id
    return None


def _ratio_of(node, top, bottom):
    """The name ``u`` of ``np.<top>(u) / np.<bottom>(u)``, else None."""
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Div)):
        return None
    u = _hyperbolic(node.left, top)
    return gast.Name(u, gast.Load(), None, None) if u is not None \
        and u == _hyperbolic(node.right, bottom) else None


def _tanh(u, numpy_alias):
    call = gast.Call(dotted(numpy_alias, "tanh"), [u], [])
    anno.set_(call, Anno.CALLEE, np.tanh)
    return call

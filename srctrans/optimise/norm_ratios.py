"""A norm's cotangent divides the norms' cotangents, not the array the norms were taken of.

Requires: the statements of a specialised fused gradient (after the forward pass's
quotients are shared and checked divisors divide), the shapes of their names, and the name
generated code calls the runtime by.
Guarantees: the values are those of the product, up to rounding (a quotient taken before
the product instead of after it), NaN and 0 where a norm is 0 as before (its slice of ``x``
is zeros: ``g * 0``, ``rt.ratio_or_zero_times``). The cotangent of
``np.linalg.norm(x, axis=k)`` is ``g * rt.ratio_or_zero(x, n)`` (so marked:
``Anno.NORM_QUOTIENT``), with ``g`` and the norms ``n`` put back along the reduced axes
(``g[:, :, None]``); where ``g`` and ``n`` have one shape and are put back alike, the
quotient is taken on their shape, one division a slice, and the product spreads it over
``x``, as an expert writes ``w = -np.exp(-d) / d; (w[:, :, None] * diff).sum(axis=1)``::

    dd[:, :, None] * rt.ratio_or_zero(_sub, d[:, :, None])
        ->  rt.ratio_or_zero_times(dd, d)[:, :, None] * _sub
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.optimise.expression_shapes import shape_of
from srctrans.treewalk import replace_children


def divide_norms_cotangents(body, known, runtime_alias):
    """``body`` (changed in place, and returned) with each such product's quotient taken on
    the norms' shape (see the module); ``known``: name -> shape."""
    def written(node):
        return _divided_first(node, known, runtime_alias) or node
    for stmt in body:
        replace_children(stmt, written)
    return body


def _divided_first(node, known, runtime_alias):
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
        return None
    for g, ratio in ((node.left, node.right), (node.right, node.left)):
        if not (is_runtime_call(ratio, runtime_alias, "ratio_or_zero", 2)
                and anno.get(ratio, Anno.NORM_QUOTIENT)):
            continue
        x, norms = ratio.args
        g_name, g_index = _put_back(g)
        n_name, n_index = _put_back(norms)
        x_shape = shape_of(x, known)
        if g_name is None or n_name is None or x_shape is None \
                or known.get(g_name) is None or known.get(g_name) != known.get(n_name) \
                or _text(g_index) != _text(n_index) \
                or shape_of(node, known) != x_shape:
            continue
        ratio.func.attr = "ratio_or_zero_times"
        ratio.args = [gast.Name(g_name, gast.Load(), None, None),
                      gast.Name(n_name, gast.Load(), None, None)]
        divided = ratio if g_index is None else gast.Subscript(ratio, g_index, gast.Load())
        return gast.BinOp(divided, gast.Mult(), x)
    return None


def _put_back(node):
    """``(name, index)`` for a name, or a name indexed (``d[:, :, None]``); (None, None)."""
    if isinstance(node, gast.Name):
        return node.id, None
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
        return node.value.id, node.slice
    return None, None


def _text(index):
    return None if index is None else unparse(index)

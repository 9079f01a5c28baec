"""The right-hand side's cotangent of a linear solve, picked from the pair, as its own solve.

Requires: specialised backward statements (``optimise.specialise`` calls this on each pick
it rewrites) and the shapes of the values they read.
Guarantees: ``rt.solve_grads(g, x, a, b)[1]``, the cotangent of ``b`` in
``x = np.linalg.solve(a, b)``, is ``np.linalg.solve(a.T, g)`` when ``g``, ``x``, ``a`` and
``b`` are names of known shapes: ``a`` one matrix, ``g``, ``x`` and ``b`` of one shape with
one or two axes and as many rows as ``a`` (nothing broadcast). That is what the helper
computes there, without its checks at every call nor the matrix's cotangent, which the pick
drops. A pair picked twice keeps the helper (the solve would run twice), and so does the
matrix's cotangent ``[0]`` (``optimise/traces.py`` reads it there: its trace is a vdot).
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import clone, dotted, int_literal
from srctrans.optimise.dce import name_counts
from srctrans.optimise.expression_shapes import is_runtime_helper_call, shape_of
from srctrans.optimise.tuple_picks import constant_picks


def solve_cotangent(node, known, numpy_alias):
    """``node``, a pick ``rt.solve_grads(g, x, a, b)[k]`` the module rewrites, written as its
    solve; else None."""
    if not (isinstance(node, gast.Subscript) and is_runtime_helper_call(node.value, "solve_grads")
            and len(node.value.args) == 4 and not node.value.keywords):
        return None
    g, x, a, b = node.value.args
    if int_literal(node.slice) != 1 or not all(isinstance(v, gast.Name) for v in (g, x, a, b)):
        return None
    shapes = [shape_of(v, known) for v in (g, x, a, b)]
    if None in shapes or len(shapes[2]) != 2 or not shapes[0] == shapes[1] == shapes[3] \
            or not 1 <= len(shapes[1]) <= 2 or shapes[1][0] != shapes[2][0]:
        return None
    solve = gast.Call(dotted(numpy_alias, "linalg", "solve"),
                      [gast.Attribute(clone(a), "T", gast.Load()), clone(g)], [])
    anno.set_(solve, Anno.CALLEE, np.linalg.solve)
    return solve


def single_picks(statements):
    """``{name: k}`` for each name assigned once in ``statements`` whose every read is the pick
    ``name[k]``, one constant ``k`` for all."""
    stores, reads = name_counts(statements)
    found = {name: {int_literal(node.slice) for node in nodes}
             for name, nodes in constant_picks(statements).items()
             if stores.get(name) == 1 and len(nodes) == reads.get(name)}
    return {name: indices.pop() for name, indices in found.items() if len(indices) == 1}


def picked_solve(value, k, known, numpy_alias):
    """For ``value`` a pair ``rt.solve_grads(...)`` of which only entry ``k`` is read, the
    tuple of that entry's solve (:func:`solve_cotangent`) and None; else None."""
    if not is_runtime_helper_call(value, "solve_grads"):
        return None
    solved = solve_cotangent(gast.Subscript(value, gast.Constant(k, None), gast.Load()),
                             known, numpy_alias)
    if solved is None:
        return None
    entries = [gast.Constant(None, None), gast.Constant(None, None)]
    entries[k] = solved
    return gast.Tuple(entries, gast.Load())

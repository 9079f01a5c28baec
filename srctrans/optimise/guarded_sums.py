"""The whole sum of a guarded product checks the sum instead of the product.

Requires: the body of a fused gradient (not differentiated again), after its temporaries
are inlined, and the name generated code calls the runtime by.
Guarantees: each value is what it was. ``rt.zero_guard(g, p).sum()`` (a number's cotangent:
``-(dz * z / scale).sum()`` for ``z = (y - X @ b) / scale``) becomes
``rt.zero_guard_sum(g, p)``, which sums ``p`` and returns the sum when it is finite, as it is
exactly when every entry is (an infinity or a NaN makes the sum one), and otherwise sums what
the guard gives (``runtime/singular.py``): the check the guard made over the product, its sum
of squares, is saved (half a microsecond for a small array). A sum along an axis keeps its
guard: checking its sums costs what checking the product does, for small arrays.
"""

import gast

from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.treewalk import walk


def sum_guarded_products(body, runtime_alias):
    """``body`` with each whole sum ``rt.zero_guard(g, p).sum()`` written as
    ``rt.zero_guard_sum(g, p)`` (in place)."""
    for stmt in body:
        for node in walk(stmt):
            if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                    and node.func.attr == "sum" and not node.args and not node.keywords
                    and is_runtime_call(node.func.value, runtime_alias, "zero_guard", 2)):
                guard = node.func.value
                node.func, node.args = guard.func, guard.args
                node.func.attr = "zero_guard_sum"
    return body

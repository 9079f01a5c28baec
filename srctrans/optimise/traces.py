"""The sum of a matrix times an identity is the matrix's trace.

Requires: the body of a fused gradient specialised on shapes, the shapes known of its names
(``expression_shapes.infer_shapes``), the names that may hold ints or booleans
(``analyse.values.maybe_not_float``), the names of its derivatives (the cotangents its
backward statements assign), and the name NumPy is called by.
Guarantees: a derivative's value is the same up to rounding (the trace adds the diagonal
alone; the product's sum adds its zeros too, in another order); the statements that assign
anything else (the program's values) are left as they are. In a statement assigning a
derivative, ``(d * E).sum()``,
``(E * d).sum()`` and ``np.sum(d * E)``, where ``E`` is a name the body assigns once,
to ``np.eye(n)`` (one argument), and ``d`` is a name of floats of ``E``'s shape ``(n, n)``
(an int matrix's trace is an int, the product's sum a float), become
``d.trace()``: the cotangent of ``lam`` in ``A + lam * np.eye(n)`` (a ridge penalty, a
kernel's noise) without a product of two matrices::

    dlam = (dA * _eye).sum()      ->      dlam = dA.trace()
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.optimise.inner_products import derivative_statements, summed_product
from srctrans.treewalk import replace_children, walk


def sum_traces(body, derivatives, known, not_float, numpy_alias):
    """``body`` (changed in place, and returned) with each sum of a matrix times an identity
    in a statement assigning one of ``derivatives`` its trace (see the module); ``known``:
    name -> shape; ``not_float``: the names that may hold ints or booleans."""
    identities = _identities(body, numpy_alias)
    if identities:
        def traced(node):
            return _traced(node, identities, known, not_float, numpy_alias) or node
        for stmt in derivative_statements(body, derivatives):
            replace_children(stmt.value, traced)
            stmt.value = traced(stmt.value)
    return body


def _identities(body, numpy_alias):
    """The names ``body`` assigns once, each to ``np.eye(n)``."""
    stores = {}
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
    return {stmt.targets[0].id for stmt in body
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stores[stmt.targets[0].id] == 1
            and _is_eye(stmt.value, numpy_alias)}


def _is_eye(value, numpy_alias):
    if not (isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords):
        return False
    called = anno.get(value, Anno.CALLEE)
    if called is not None:
        return called is np.eye
    return (isinstance(value.func, gast.Attribute) and value.func.attr == "eye"
            and isinstance(value.func.value, gast.Name) and value.func.value.id == numpy_alias)


def _traced(node, identities, known, not_float, numpy_alias):
    """``d.trace()`` for a sum of ``d`` times an identity of ``d``'s shape, else None."""
    product = summed_product(node, numpy_alias)
    if product is None:
        return None
    for eye, other in ((product.right, product.left), (product.left, product.right)):
        if isinstance(eye, gast.Name) and eye.id in identities:
            shape = known.get(eye.id)
            if shape is not None and len(shape) == 2 and shape[0] == shape[1] \
                    and isinstance(other, gast.Name) and other.id not in not_float \
                    and known.get(other.id) == tuple(shape):
                return gast.Call(gast.Attribute(other, "trace", gast.Load()), [], [])
    return None

"""The sum of a product of two arrays of one shape is their inner product.

Requires: code specialised on shapes, the shapes known of its names
(``expression_shapes.infer_shapes``), the names that may hold ints or booleans
(``analyse.values.maybe_not_float``), the names of derivatives (the cotangents a
backward pass assigns, the tangents of a JVP, and the values a fused gradient reads only
to compute them: ``optimise/derivative_only.py``), and the name NumPy is called by.
Guarantees: a derivative's value is the same up to rounding (a dot product adds in
another order than a sum does); the statements that assign anything else are left as
they are, so the program's own values, and the branches they decide, are unchanged.
In a statement assigning a derivative (or an entry of one), ``(a * b).sum()`` and
``np.sum(a * b)``, ``a`` and ``b`` expressions (or their negations) of one known shape
of at least one axis reading no name that may hold ints or booleans, become
``a.dot(b)`` for vectors and ``np.vdot(a, b)`` otherwise, a negation taken outside: one
pass over the arrays and no temporary, where the product and its sum take two; a name's
square summed, ``(a ** 2).sum()``, is ``a.dot(a)``::

    d_out = 2 * (-dlevel * r).sum()      ->      d_out = 2 * -dlevel.dot(r)
    r2 = (d ** 2).sum()                  ->      r2 = d.dot(d)     (r2 read by derivatives only)
"""

import gast

from srctrans.nodes import clone
from srctrans.optimise.expression_shapes import shape_of
from srctrans.treewalk import replace_children, walk, walk_names


def inner_products(body, derivatives, known, not_float, numpy_alias):
    """``body`` (changed in place, and returned) with the sums of products in statements
    assigning ``derivatives`` (names) made inner products (see the module); ``known``:
    name -> shape; ``not_float``: the names that may hold ints or booleans."""
    def inner(node):
        return _inner(node, known, not_float, numpy_alias) or node

    for stmt in derivative_statements(body, derivatives):
        replace_children(stmt.value, inner)
        stmt.value = inner(stmt.value)
    return body


def derivative_statements(body, derivatives):
    """The assignments of ``body`` (nested ones too) to ``derivatives`` or their entries, and
    to nothing else: those whose rounding is a derivative's, not the program's."""
    return [stmt for top in body for stmt in walk(top)
            if isinstance(stmt, (gast.Assign, gast.AugAssign))
            and (assigned := _assigns(stmt)) and assigned <= derivatives]


def summed_product(node, numpy_alias):
    """The product ``a * b`` that ``node`` sums whole (``(a * b).sum()``, ``np.sum(a * b)``,
    NumPy called ``numpy_alias``), else None."""
    product = _summed(node, numpy_alias)
    return product if isinstance(product, gast.BinOp) and isinstance(product.op, gast.Mult) \
        else None


def summed_square(node, numpy_alias):
    """The square ``a ** 2`` of a name that ``node`` sums whole, else None."""
    power = _summed(node, numpy_alias)
    if (isinstance(power, gast.BinOp) and isinstance(power.op, gast.Pow)
            and isinstance(power.left, gast.Name) and isinstance(power.right, gast.Constant)
            and type(power.right.value) in (int, float) and power.right.value == 2):
        return power
    return None


def _summed(node, numpy_alias):
    """What ``node`` sums whole (``e.sum()``, ``np.sum(e)``), else None."""
    if not isinstance(node, gast.Call) or node.keywords:
        return None
    if isinstance(node.func, gast.Attribute) and node.func.attr == "sum" and not node.args:
        return node.func.value
    if (len(node.args) == 1 and isinstance(node.func, gast.Attribute)
            and node.func.attr == "sum" and isinstance(node.func.value, gast.Name)
            and node.func.value.id == numpy_alias):
        return node.args[0]
    return None


def _assigns(stmt):
    """The names ``stmt`` assigns or writes entries of (``d[i] = ...``, ``d += ...``)."""
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
    names = set()
    for target in targets:
        while isinstance(target, gast.Subscript):
            target = target.value
        names |= {n.id for n in walk_names(target)}
    return names


def _inner(node, known, not_float, numpy_alias):
    """The inner product a sum of a product ``node`` is (a name's square's too), else None."""
    product = summed_product(node, numpy_alias) or summed_square(node, numpy_alias)
    if product is None:
        return None
    if isinstance(product.op, gast.Pow):
        (left, left_negated), (right, right_negated) = (product.left, False), \
            (clone(product.left), False)
    else:
        (left, left_negated), (right, right_negated) = map(_negation,
                                                           (product.left, product.right))
    if any(isinstance(n, gast.Name) and n.id in not_float
           for side in (left, right) for n in walk(side)):
        return None
    shape = shape_of(left, known)
    if not shape or shape_of(right, known) != shape:
        return None
    if len(shape) == 1:
        inner = gast.Call(gast.Attribute(left, "dot", gast.Load()), [right], [])
    else:
        inner = gast.Call(gast.Attribute(gast.Name(numpy_alias, gast.Load(), None, None), "vdot",
                                         gast.Load()), [left, right], [])
    return gast.UnaryOp(gast.USub(), inner) if left_negated != right_negated else inner


def _negation(node):
    """``(operand, negated)``: what ``node`` negates (any number of times), or ``node``."""
    negated = False
    while isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node, negated = node.operand, not negated
    return node, negated

"""The cotangents of a matrix product's operands, written for known shapes.

Requires: a call ``rt.matmul_lhs(g, a, b)`` or ``rt.matmul_rhs(g, a, b)`` (the cotangent of
``a`` or ``b`` for ``a @ b``) in specialised code, and the shapes of what it reads.
Guarantees: the helper's values, up to BLAS's rounding, for operands of the shapes given:

- two vectors (an inner product, ``g`` a number): ``g * b`` and ``g * a``;
- a matrix and a vector: the outer products ``g[:, None] * b`` (``A @ v``'s ``A``) and
  ``a[:, None] * g`` (``v @ A``'s ``A``), and ``A.T @ g``, ``A @ g`` for the vector;
- two matrices: ``g @ b.T`` and ``a.T @ g``;
- a stack of matrices times one matrix (``X @ W``, ``X`` of shape ``(..., n, k)``, a batch of
  inputs through a layer): ``g @ W.T`` for the stack, and for ``W`` the product of the
  stack's rows, ``X.reshape(-1, k).T @ g.reshape(-1, m)``, where the helper multiplies each
  matrix of the stack and sums the products over its leading axes.
"""

import gast

from srctrans.optimise.expression_shapes import is_runtime_helper_call, shape_of


def matmul_cotangent(node, known):
    """``node`` written out where it is such a call of ``rt.matmul_lhs`` or ``rt.matmul_rhs``
    (see the module); else None."""
    for name in ("matmul_lhs", "matmul_rhs"):
        if is_runtime_helper_call(node, name) and len(node.args) == 3:
            g, a, b = node.args
            shapes = shape_of(g, known), shape_of(a, known), shape_of(b, known)
            if None not in shapes[1:]:
                return _written(name == "matmul_lhs", g, a, b, *shapes)
    return None


def _written(lhs, g, a, b, g_shape, a_shape, b_shape):
    ranks = len(a_shape), len(b_shape)
    if ranks == (1, 1) and a_shape == b_shape and g_shape == ():
        return gast.BinOp(g, gast.Mult(), b if lhs else a)              # a @ b of vectors
    if ranks == (2, 1) and g_shape == a_shape[:1]:
        return _outer(g, b) if lhs else _matmul(_transposed(a), g)       # A @ v
    if ranks == (1, 2) and g_shape == b_shape[1:]:
        return _matmul(b, g) if lhs else _outer(a, g)                    # v @ A
    if ranks == (2, 2):
        return _matmul(g, _transposed(b)) if lhs else _matmul(_transposed(a), g)
    if ranks[0] > 2 and ranks[1] == 2 and g_shape == a_shape[:-1] + b_shape[1:]:
        if lhs:                                                          # a stack @ W
            return _matmul(g, _transposed(b))
        rows_of = [gast.Constant(-1, None)]
        return _matmul(_transposed(_reshaped(a, rows_of, a_shape[-1])),
                       _reshaped(g, rows_of, b_shape[1]))
    return None


def _outer(u, v):
    """``u[:, None] * v``: the outer product of two vectors (what ``np.outer`` gives)."""
    column = gast.Subscript(u, gast.Tuple([gast.Slice(None, None, None), gast.Constant(None, None)],
                                          gast.Load()), gast.Load())
    return gast.BinOp(column, gast.Mult(), v)


def _matmul(left, right):
    return gast.BinOp(left, gast.MatMult(), right)


def _transposed(x):
    return gast.Attribute(x, "T", gast.Load())


def _reshaped(x, lead, last):
    shape = gast.Tuple(lead + [gast.Constant(last, None)], gast.Load())
    return gast.Call(gast.Attribute(x, "reshape", gast.Load()), [shape], [])

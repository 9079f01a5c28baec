"""Derivative rules of the runtime's helpers of products (``rt.matmul_lhs``,
``rt.tensordot_rhs``, ``rt.einsum_grads``...): the helpers a product's derivative calls,
which derivatives of derivatives differentiate again (``runtime_helpers.py`` says how
helpers' rules are written).
"""

import numpy as np

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


# -- products ------------------------------------------------------------------
# lhs(v, a, b) is the gradient of <v, P(a, b)> in a, so <c, lhs(v, a, b)> =
# <v, P(c, b)>: its transpose in v is P(c, b) and its gradient in b is
# rhs(v, c, b). Likewise <c, rhs(v, a, b)> = <v, P(a, c)>.

@vjp(rt.matmul_lhs)
def matmul_lhs(g, ans, v, a, b):
    return np.matmul(g, b), None, rt.matmul_rhs(v, g, b)

@jvp(rt.matmul_lhs)
def matmul_lhs_jvp(dv, db, ans, v, a, b):
    return rt.matmul_lhs(dv, a, b), rt.matmul_lhs(v, a, db)

@vjp(rt.matmul_rhs)
def matmul_rhs(g, ans, v, a, b):
    return np.matmul(a, g), rt.matmul_lhs(v, a, g)

@jvp(rt.matmul_rhs)
def matmul_rhs_jvp(dv, da, ans, v, a, b):
    return rt.matmul_rhs(dv, a, b), rt.matmul_rhs(v, da, b)

@vjp(rt.dot_lhs)
def dot_lhs(g, ans, v, a, b):
    return np.dot(g, b), None, rt.dot_rhs(v, g, b)

@jvp(rt.dot_lhs)
def dot_lhs_jvp(dv, db, ans, v, a, b):
    return rt.dot_lhs(dv, a, b), rt.dot_lhs(v, a, db)

@vjp(rt.dot_rhs)
def dot_rhs(g, ans, v, a, b):
    return np.dot(a, g), rt.dot_lhs(v, a, g)

@jvp(rt.dot_rhs)
def dot_rhs_jvp(dv, da, ans, v, a, b):
    return rt.dot_rhs(dv, a, b), rt.dot_rhs(v, da, b)

@vjp(rt.inner_lhs)
def inner_lhs(g, ans, v, a, b):
    return np.inner(g, b), None, rt.inner_rhs(v, g, b)

@jvp(rt.inner_lhs)
def inner_lhs_jvp(dv, db, ans, v, a, b):
    return rt.inner_lhs(dv, a, b), rt.inner_lhs(v, a, db)

@vjp(rt.inner_rhs)
def inner_rhs(g, ans, v, a, b):
    return np.inner(a, g), rt.inner_lhs(v, a, g)

@jvp(rt.inner_rhs)
def inner_rhs_jvp(dv, da, ans, v, a, b):
    return rt.inner_rhs(dv, a, b), rt.inner_rhs(v, da, b)

@vjp(rt.outer_lhs)
def outer_lhs(g, ans, v, a, b):
    return np.outer(g, b), None, rt.outer_rhs(v, g, b)

@jvp(rt.outer_lhs)
def outer_lhs_jvp(dv, db, ans, v, a, b):
    return rt.outer_lhs(dv, a, b), rt.outer_lhs(v, a, db)

@vjp(rt.outer_rhs)
def outer_rhs(g, ans, v, a, b):
    return np.outer(a, g), rt.outer_lhs(v, a, g)

@jvp(rt.outer_rhs)
def outer_rhs_jvp(dv, da, ans, v, a, b):
    return rt.outer_rhs(dv, a, b), rt.outer_rhs(v, da, b)

@vjp(rt.tensordot_lhs)
def tensordot_lhs(g, ans, v, a, b, axes=2):
    return np.tensordot(g, b, axes), None, rt.tensordot_rhs(v, g, b, axes)

@jvp(rt.tensordot_lhs)
def tensordot_lhs_jvp(dv, db, ans, v, a, b, axes=2):
    return rt.tensordot_lhs(dv, a, b, axes), rt.tensordot_lhs(v, a, db, axes)

@vjp(rt.tensordot_rhs)
def tensordot_rhs(g, ans, v, a, b, axes=2):
    return np.tensordot(a, g, axes), rt.tensordot_lhs(v, a, g, axes)

@jvp(rt.tensordot_rhs)
def tensordot_rhs_jvp(dv, da, ans, v, a, b, axes=2):
    return rt.tensordot_rhs(dv, a, b, axes), rt.tensordot_rhs(v, da, b, axes)


# einsum_grads returns one gradient per operand (a tuple), so its cotangent
# is a tuple and its tangent too: the JVP adds the two parts entry by entry.
@vjp(rt.einsum_grads)
def einsum_grads(g, ans, v, subscripts, operands):
    return (rt.einsum_grads_transpose(g, subscripts, operands), None,
            rt.einsum_grads_doperands_transpose(g, v, subscripts, operands))

@jvp(rt.einsum_grads)
def einsum_grads_jvp(dv, doperands, ans, v, subscripts, operands):
    return rt.add(rt.einsum_grads(dv, subscripts, operands),
                  rt.einsum_grads_doperands(doperands, v, subscripts, operands))


# einsum_jvp adds up the einsums with one operand replaced by its tangent:
# linear in the tangents (the transpose is einsum_grads) and in each other
# operand. ``product`` (the einsum's value) only gives a zero tangent's shape.
@vjp(rt.einsum_jvp)
def einsum_jvp(g, ans, tangents, product, subscripts, operands):
    return (rt.einsum_grads(g, subscripts, operands), None, None,
            rt.einsum_grads_doperands_transpose(tangents, g, subscripts, operands))

@jvp(rt.einsum_jvp)
def einsum_jvp_jvp(dtangents, doperands, ans, tangents, product, subscripts, operands):
    return (rt.einsum_jvp(dtangents, product, subscripts, operands),
            rt.einsum_jvp_doperands(doperands, tangents, product, subscripts, operands))

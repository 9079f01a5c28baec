"""VJP rules of products: matmul (``@``), dot, inner, outer, tensordot, einsum."""

import numpy as np

import runtime as rt
from srctrans.rules import REGISTRY

vjp = REGISTRY.vjp


@vjp(np.matmul)
def matmul(g, ans, x, y):
    return rt.matmul_lhs(g, x, y), rt.matmul_rhs(g, x, y)

@vjp(np.dot)
def dot(g, ans, a, b):
    return rt.dot_lhs(g, a, b), rt.dot_rhs(g, a, b)

@vjp(np.inner)
def inner(g, ans, a, b):
    return rt.inner_lhs(g, a, b), rt.inner_rhs(g, a, b)

@vjp(np.outer)
def outer(g, ans, a, b):
    return rt.outer_lhs(g, a, b), rt.outer_rhs(g, a, b)

@vjp(np.tensordot)
def tensordot(g, ans, a, b, axes=2):
    return rt.tensordot_lhs(g, a, b, axes), rt.tensordot_rhs(g, a, b, axes), None

@vjp(np.einsum)
def einsum(g, ans, subscripts, *operands):
    return (None, *rt.einsum_grads(g, subscripts, operands))

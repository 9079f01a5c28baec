"""Derivative rules of the two terms of a softplus written the stable way
(``normalize/softplus_terms.py``): the tail ``rt.log1p_tail`` / ``rt.log_tail`` sends the whole
softplus's derivative, the sigmoid, to ``z``; the maximum ``rt.relu_of_softplus`` sends none
(``runtime/softplus_terms.py``)."""

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY
from srctrans.runtime import softplus_terms

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


# ``e`` and ``p`` get no cotangent and their tangents are not read: the term sent to ``z``
# holds the derivative of both terms of the softplus (``e`` and ``p`` are computed from ``z``)
@vjp(rt.log1p_tail, elementwise=True)
def log1p_tail(g, ans, e, z):
    return None, g * rt.sigmoid_from_tail(e, z)

@jvp(rt.log1p_tail)
def log1p_tail_jvp(dz, ans, e, z):
    return dz * rt.sigmoid_from_tail(e, z)


@vjp(rt.log_tail, elementwise=True)
def log_tail(g, ans, p, e, z):
    return None, None, g * rt.sigmoid_from_tail(e, z)

@jvp(rt.log_tail)
def log_tail_jvp(dz, ans, p, e, z):
    return dz * rt.sigmoid_from_tail(e, z)


REGISTRY.nondifferentiable(rt.relu_of_softplus)

# The sigmoid's derivatives: srctrans reads its source (plain NumPy).
REGISTRY.differentiate_through_module(
    softplus_terms, except_=(rt.relu_of_softplus, rt.log1p_tail, rt.log_tail))

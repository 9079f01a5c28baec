"""Derivative rules of ``rt.log_of_softmax`` and ``rt.softmax_ratio``: a softmax computed as
probabilities and its log (``normalize/softmax_logs.py``), differentiated in closed form
(``runtime/softmax_logs.py``)."""

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY
from srctrans.runtime import softmax_logs

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


# ``p`` gets no cotangent: the term sent to ``a`` holds the whole derivative (``p`` is the
# softmax of ``a``), and its tangent is not read for the same reason
@vjp(rt.log_of_softmax)
def log_of_softmax(g, ans, p, a, axis):
    return None, rt.log_of_softmax_grad(g, p, axis), None

@jvp(rt.log_of_softmax)
def log_of_softmax_jvp(da, ans, p, a, axis):
    return rt.log_of_softmax_tangent(da, p, axis)


# Likewise ``e`` and ``s`` of a softmax ``e / s``: the term sent to ``a`` holds the whole
# derivative (their other reads are differentiated as they are)
@vjp(rt.softmax_ratio)
def softmax_ratio(g, ans, e, s, a, axis):
    return None, None, rt.softmax_ratio_grad(g, ans, axis), None

@jvp(rt.softmax_ratio)
def softmax_ratio_jvp(da, ans, e, s, a, axis):
    return rt.softmax_ratio_grad(da, ans, axis)


# Their second derivatives: srctrans reads the helpers' source (plain NumPy).
REGISTRY.differentiate_through_module(softmax_logs,
                                      except_=(rt.log_of_softmax, rt.softmax_ratio))

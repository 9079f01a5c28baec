"""Derivative rules of ``scipy.spatial.distance.cdist``, ``pdist`` (metrics ``"euclidean"``
and ``"sqeuclidean"``; another metric is refused when the derivative runs) and
``squareform``.

Loaded on demand, once the user has imported ``scipy.spatial.distance`` (see
``scipy_special.py``); the formulas are in ``runtime/scipy_distance.py``.
"""

import scipy.spatial.distance as distance

from srctrans import runtime as rt
from srctrans.runtime import scipy_distance as formulas
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


@vjp(distance.cdist)
def cdist(g, ans, XA, XB, metric="euclidean"):
    return (*rt.scipy_distance.cdist_grads(g, ans, XA, XB, metric), None)

@jvp(distance.cdist)
def cdist_jvp(dXA, dXB, ans, XA, XB, metric="euclidean"):
    return rt.scipy_distance.cdist_jvp(dXA, dXB, ans, XA, XB, metric)

@vjp(distance.pdist)
def pdist(g, ans, X, metric="euclidean"):
    return rt.scipy_distance.pdist_grad(g, ans, X, metric), None

@jvp(distance.pdist)
def pdist_jvp(dX, ans, X, metric="euclidean"):
    return rt.scipy_distance.pdist_jvp(dX, ans, X, metric)

@vjp(distance.squareform)
def squareform(g, ans, X, force="no", checks=True):
    return rt.scipy_distance.squareform_grad(g, X, force), None, None

@jvp(distance.squareform)
def squareform_jvp(dX, ans, X, force="no", checks=True):
    return rt.scipy_distance.squareform_jvp(dX, ans, X, force)


REGISTRY.differentiate_through_module(formulas)

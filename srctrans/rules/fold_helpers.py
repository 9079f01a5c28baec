"""Derivative rules of ``rt.logaddexp_fold`` and ``rt.logaddexp_fold_from``: a loop folding
``np.logaddexp`` over the slices of an array (``normalize/folds.py``), from a value or from a
slice of the array, differentiated in closed form (``runtime/folds.py``)."""

import numpy as np

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY
from srctrans.runtime import folds

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp


@vjp(rt.logaddexp_fold)
def logaddexp_fold(g, ans, acc, x, axis, start, stop):
    return (rt.unbroadcast(g * rt.logaddexp_fold_share(acc, ans, start, stop), acc),
            rt.logaddexp_fold_grad(g, ans, x, axis, start, stop), None, None, None)

@jvp(rt.logaddexp_fold)
def logaddexp_fold_jvp(dacc, dx, ans, acc, x, axis, start, stop):
    return (dacc * rt.logaddexp_fold_share(acc, ans, start, stop),
            rt.logaddexp_fold_tangent(dx, ans, x, axis, start, stop))


@vjp(rt.logaddexp_fold_from)
def logaddexp_fold_from(g, ans, x, axis, start, stop):
    return (rt.logaddexp_fold_grad(g, ans, x, axis, start - 1, stop), None, None, None)

@jvp(rt.logaddexp_fold_from)
def logaddexp_fold_from_jvp(dx, ans, x, axis, start, stop):
    return rt.logaddexp_fold_tangent(dx, ans, x, axis, start - 1, stop)


@vjp(folds.logaddexp_reduced)
def logaddexp_reduced(g, ans, x, axis):
    return (g * np.exp(x - ans), None)

@jvp(folds.logaddexp_reduced)
def logaddexp_reduced_jvp(dx, ans, x, axis):
    return (dx * np.exp(x - ans)).sum(axis=axis, keepdims=True)


# Their second derivatives: srctrans reads the helpers' source (plain NumPy).
REGISTRY.differentiate_through_module(folds, except_=(rt.logaddexp_fold, rt.logaddexp_fold_from,
                                                      folds.logaddexp_reduced))

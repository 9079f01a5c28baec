"""Batching rules of calls that are their own batched form, and of queries.

``SAME_CALL``: functions already vectorised over leading axes (``np.linalg.inv`` on
stacks of matrices) or of one argument's shape alone (``np.zeros_like``);
``np.array`` of a list of batched entries stacks them after the batch axis;
shape and dtype queries give the per-example, unbatched answer; ``math``'s
functions of numbers run as NumPy's ufuncs.
"""

import math

import gast
import numpy as np

from srctrans import runtime as rt
from srctrans.differentiate.batching_rules.calls import flag_node, same_func


SAME_CALL = frozenset({
    np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy, np.array, np.asarray,
    np.ascontiguousarray, np.asanyarray, np.linalg.inv, np.linalg.det, np.linalg.slogdet,
    np.linalg.cholesky, np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr,
    np.linalg.pinv, np.linalg.eig, np.linalg.eigvals, np.linalg.matrix_power, np.real, np.imag,
    np.conj, np.conjugate, np.isnan, np.isfinite, np.isinf, np.nan_to_num, np.around, np.round, np.sign,
    rt.inv, rt.cholesky,
})

# functions whose batched call takes the same arguments when their first argument alone is
# batched and is at least of rank 2 per example (they work on the last two axes)
_LAST_TWO_AXES = frozenset({np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.cholesky,
                            np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr,
                            np.linalg.pinv, np.linalg.eig, np.linalg.eigvals,
                            np.linalg.matrix_power, rt.inv, rt.cholesky})

SHAPE_QUERIES = {np.shape: "shape", np.ndim: "ndim", np.size: "size", len: "len",
                 rt.axis_length: "axis"}

# what reads a value's dtype alone: the same for every member, so unbatched, and the same call
# (and positions in a list that grows, whose length is every member's)
DTYPE_QUERIES = frozenset({np.result_type, np.iscomplexobj, np.isrealobj, rt.is_complex_value,
                           rt.position, rt.slice_position})

# ``math``'s functions of numbers, as the NumPy ufuncs that compute them for every member
MATH_AS_NUMPY = {getattr(math, name): getattr(np, numpy_name) for name, numpy_name in (
    ("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log1p", "log1p"), ("log2", "log2"),
    ("log10", "log10"), ("sqrt", "sqrt"), ("sin", "sin"), ("cos", "cos"), ("tan", "tan"),
    ("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"), ("atan2", "arctan2"),
    ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"), ("asinh", "arcsinh"),
    ("acosh", "arccosh"), ("atanh", "arctanh"), ("fabs", "fabs"), ("hypot", "hypot"),
    ("pow", "power"), ("copysign", "copysign"), ("degrees", "degrees"),
    ("radians", "radians"))}

_ARRAY_MAKERS = frozenset({np.array, np.asarray, np.ascontiguousarray, np.asanyarray})

def same_call(call):
    first = call.args[0] if call.args else None
    if call.callee in _ARRAY_MAKERS and first is not None and len(call.args) == 1:
        # an array of a list of batched entries: the entries stacked after the batch axis
        keywords = gast.Dict([gast.Constant(k, None) for k in call.keywords],
                             list(call.keywords.values()))
        return call.template("rt.batch.array_of(F, X, FL, S, K)", F=same_func(call), X=first,
                             FL=flag_node(call.flag(first)), S=call.size(), K=keywords)
    if call.callee in _LAST_TWO_AXES:
        if any(call.flag(o) for o in call.operands() if o is not first):
            return None
        if call.rank_of(first) is not None and call.rank_of(first) < 2:
            return None                 # (they need a matrix per member: an unknown rank is one)
    elif any(call.flag(o) for o in call.operands() if o is not first):
        return None                     # (np.full_like(x, v) of a batched v: one call per member)
    return call.call(same_func(call), call.args)

def shape_query(call):
    """``np.shape(x)``, ``len(x)``, ``np.ndim(x)``, ``np.size(x)``, ``np.size(x, axis)``,
    ``rt.axis_length(x, axis)`` of a batched array: the per-example value, unbatched."""
    kind = SHAPE_QUERIES[call.callee]
    x = call.args[0]
    axis = call.args[1] if len(call.args) > 1 else call.keywords.get("axis")
    if kind in ("size", "axis") and axis is not None:
        return call.template("rt.batch.member_size(X, A)", X=x, A=axis)
    if kind == "len":
        return call.template("rt.batch.length(X)", X=x) if call.rank_of(x) is None \
            else call.template("X.shape[1]", X=x)
    if kind == "shape":
        return call.template("np.shape(X)[1:]", X=x)
    if kind == "ndim":
        return call.template("np.ndim(X) - 1", X=x)
    return call.template("np.size(X) // np.shape(X)[0]", X=x)

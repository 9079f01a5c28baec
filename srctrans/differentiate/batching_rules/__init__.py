"""Batching rules: how a call runs on a batch of its arguments (``st.vmap``).

A batched value has its batch axis first; an unbatched value is as the
unbatched function has it. A rule is given the call's arguments, which of
them are batched and their per-example ranks (None where unknown), and
returns the batched expression, whose result is batched too. Rules are
grouped in tables by what the function does with axes:

* elementwise (:func:`is_elementwise`): NumPy's ufuncs, ``ELEMENTWISE_EXTRA`` and
  the functions the VJP registry marks ``elementwise=True`` broadcast their
  arguments: a batched argument of a lower per-example rank than another gets
  axes after its batch axis (``x[:, None] * y``); unbatched ones broadcast from
  the right already.
* ``AXIS_ARGUMENTS``: reductions, scans and axis-wise functions name an axis
  (or axes) per example; when their first argument alone is batched, the
  batched call's is one further right (negative axes count from the right and
  stay); ``axis=None`` (all axes) becomes every
  axis after the batch axis. ``FLAT_WHEN_NONE`` lists those that flatten
  their argument when ``axis`` is None (``np.cumsum``): rank-known members
  are reshaped to rows first.
* ``SAME_CALL``: functions already vectorised over leading axes
  (``np.linalg.inv`` on stacks of matrices), or of one argument's shape
  alone (``np.zeros_like``): the same call.
* products (``@``, ``np.dot``, ``np.einsum``), shape functions
  (``np.reshape``, ``np.transpose``, ``np.concatenate``...) and shape queries
  (``np.shape``, ``len``) have rules of their own.

The rules live in the modules of this package by kind (``calls``: what they share;
``axes``, ``values``, ``products``, ``shapes``; ``helpers``: the runtime's
derivative helpers); this module dispatches a call to its rule.

A rule returns None for a case it does not cover; the transform then runs the
call once per member (``rt.batch.loop``), with a one-time warning.
"""

import gast
import numpy as np

from srctrans import runtime as rt
from srctrans.nodes import module_of
from srctrans.differentiate.batching_rules.axes import (
    AXIS_ARGUMENTS, FLAT_WHEN_NONE, axis_rule, scipy_axis_function)
from srctrans.differentiate.batching_rules.calls import (
    Call, aligned, bound_arguments, flag_constant, is_elementwise, lift, same_func)
from srctrans.differentiate.batching_rules.products import dot, einsum, matmul, outer, solve
from srctrans.differentiate.batching_rules.shapes import (
    at_least, broadcast_to, join, pad, ravel, reshape, spaced, transpose)
from srctrans.differentiate.batching_rules.values import (
    DTYPE_QUERIES, MATH_AS_NUMPY, SAME_CALL, SHAPE_QUERIES, same_call, shape_query)

# what the transform and the helpers' rules use
__all__ = ["Call", "DTYPE_QUERIES", "FLAT_WHEN_NONE", "aligned", "bound_arguments",
           "flag_constant", "has_rule",
           "is_elementwise", "is_random", "lift", "matmul", "rule", "same_func", "transpose"]


SPECIAL = {
    np.matmul: lambda call: matmul(call, *call.args) if len(call.args) == 2 and not call.keywords
    else None,
    np.dot: dot, np.einsum: einsum, np.concatenate: join, np.stack: join, np.reshape: reshape,
    np.transpose: transpose, np.ravel: ravel, np.outer: outer, np.broadcast_to: broadcast_to,
    np.linalg.solve: solve, rt.solve: solve, np.atleast_1d: at_least, np.atleast_2d: at_least,
    np.atleast_3d: at_least, np.linspace: spaced, np.logspace: spaced, np.geomspace: spaced,
    np.pad: pad,
}

def has_rule(callee):
    """Whether :func:`rule` has a rule for calls of ``callee`` (that may still decline one)."""
    try:
        return callee in SHAPE_QUERIES or callee in DTYPE_QUERIES or callee in MATH_AS_NUMPY \
            or callee in SPECIAL or callee in AXIS_ARGUMENTS or callee in SAME_CALL \
            or scipy_axis_function(callee) or is_elementwise(callee)
    except TypeError:                   # an unhashable callable
        return False

def rule(call):
    """The batched expression of ``call`` (a :class:`Call`), or None when no rule covers it."""
    callee = call.callee
    if callee in SHAPE_QUERIES:
        return shape_query(call)
    if callee in DTYPE_QUERIES:
        return call.call(same_func(call), call.args)
    if callee in MATH_AS_NUMPY:
        return call.call(call.template(f"np.{MATH_AS_NUMPY[callee].__name__}"),
                         aligned(call, call.args))
    special = SPECIAL.get(callee)
    if special is not None:
        return special(call)
    if callee in AXIS_ARGUMENTS or scipy_axis_function(callee):
        return axis_rule(call)
    if callee in SAME_CALL:
        return same_call(call)
    if is_elementwise(callee) and not any(isinstance(v, (gast.List, gast.Tuple))
                                          for v in call.operands()):
        positional = aligned(call, call.args + list(call.keywords.values()))
        args = positional[:len(call.args)]
        keywords = dict(zip(call.keywords, positional[len(call.args):]))
        return call.call(same_func(call), args, keywords)
    return None

def is_random(callee):
    """Whether ``callee`` draws random numbers (``np.random.normal``, a ``Generator``'s
    method): under ``vmap`` each member would need its own draw."""
    owner = getattr(getattr(callee, "__self__", None), "__class__", None)
    return any(module_of(c).startswith("numpy.random") for c in (callee, owner))

"""A softmax computed as probabilities, and its log, are each one call of the runtime.

Requires: a function in A-normal form after SSA (each name of the function's own block
assigned once there), its calls resolved.
Guarantees: the function computes what it did. A softmax written as probabilities and then
logged (a cross-entropy's ``-np.sum(T * np.log(p))``)::

    e = np.exp(a)                               e = np.exp(a)
    s = e.sum(axis=1, keepdims=True)    ->      s = e.sum(axis=1, keepdims=True)
    p = e / s                                   p = e / s
    l = np.log(p)                               l = rt.log_of_softmax(p, a, 1)

has the log become ``rt.log_of_softmax``, whose value is ``np.log(p)`` and whose derivatives
are the log-softmax's closed forms (``runtime/softmax_logs.py``), when ``p``, ``s``, ``e``
and ``a`` are each assigned once (``a`` may be a parameter), ``p``, ``s`` and ``e`` in the
function's own block, none of them in a ``with st.stop_recording():`` block or named by a
``with st.grad_of(...)`` hook (the log's term would pass what they stop or change), the
sum is of ``e`` along one literal axis, with ``keepdims=True``
(``np.sum(e, axis=-1, keepdims=True)`` and the method alike), and ``np.exp``, ``np.log``
and ``np.sum`` have srctrans's own rules (no user's replaces them). The backward pass then sends
``g - p * g.sum(axis=1, keepdims=True)`` to ``a`` for the log's cotangent ``g``, where the
chain through the log, the division, the sum and the exponential took eight operations and
two guards of ``g / p``; other reads of ``p``, ``s`` or ``e`` are differentiated as before.

Then the softmax itself, ``p = e / s`` under the same conditions, becomes
``p = rt.softmax_ratio(e, s, a, 1)``: the same value, ``e / s``, whose cotangent ``g`` sends
``p * (g - (g * p).sum(axis=1, keepdims=True))`` to ``a`` and nothing to ``e`` or ``s``
(an attention's weights: the chain took five operations and a guard of ``g / s``). A log
rewritten before reads ``p`` for its value only, so the two compose.
"""

import gast
import numpy as np

from srctrans.analyse.invariance import reduction
from srctrans.nodes import load, resolved_runtime_call, single_target
from srctrans.normalize.definitions import argument_of, calls_at_top, has_own_rule, own_definitions
from srctrans.optimise.dce import name_counts


def log_softmax_calls(function, aliases):
    """Rewrite, in place, each log of a softmax of ``function``'s own block the module
    describes, then each softmax (``aliases``: the names generated code gives NumPy and the
    runtime)."""
    if not any(calls_at_top(function, np.exp)) \
            or not all(has_own_rule(primal) for primal in (np.exp, np.log, np.sum)):
        return                   # (no softmax to rewrite; a user's rule of one: the chain)
    stores, _ = name_counts([function])          # (a parameter counts as assigned)
    definitions = own_definitions(function)
    for stmt in function.body:
        p = argument_of(getattr(stmt, "value", None), np.log) if single_target(stmt) else None
        softmax = None if p is None else _softmax_of(p, definitions, stores)
        if softmax is not None:
            a, axis = softmax
            stmt.value = gast.copy_location(resolved_runtime_call(aliases, "log_of_softmax", [
                load(p), load(a), gast.Constant(axis, None)]), stmt.value)
    for stmt in function.body:
        p = single_target(stmt)
        softmax = None if p is None else _softmax_of(p, definitions, stores)
        if softmax is not None and definitions.get(p) is stmt.value:
            a, axis = softmax
            ratio = stmt.value
            stmt.value = gast.copy_location(resolved_runtime_call(aliases, "softmax_ratio", [
                load(ratio.left.id), load(ratio.right.id), load(a), gast.Constant(axis, None)]),
                ratio)


def _softmax_of(p, definitions, stores):
    """``(a, axis)`` when ``p`` is ``np.exp(a)`` divided by its sum along ``axis`` (kept), each
    name assigned once; else None."""
    ratio = definitions.get(p)
    if stores.get(p) != 1 or not (isinstance(ratio, gast.BinOp) and isinstance(ratio.op, gast.Div)
                                  and isinstance(ratio.left, gast.Name)
                                  and isinstance(ratio.right, gast.Name)):
        return None
    e, s = ratio.left.id, ratio.right.id
    a, total = argument_of(definitions.get(e), np.exp), reduction(definitions.get(s))
    if stores.get(e) != 1 or stores.get(s) != 1 or total is None or a is None:
        return None
    kind, operand, axis, keepdims = total
    if kind != "sum" or not (isinstance(operand, gast.Name) and operand.id == e) \
            or axis is None or not keepdims or stores.get(a) != 1:
        return None
    return a, axis

"""A softplus written the stable way sends its derivative, the sigmoid, through one term.

Requires: a function in A-normal form after SSA (each name of the function's own block
assigned once there), its calls resolved.
Guarantees: the function computes what it did. ``np.maximum(z, 0)`` and
``np.log1p(np.exp(-np.abs(z)))`` added with the same sign in one sum are the softplus of
``z``, ``log(1 + exp(z))``, written so that it cannot overflow (a binary cross-entropy of
logits, ``max(z, 0) - z * y + log1p(exp(-|z|))``; a VAE's reconstruction loss)::

    m = np.maximum(z, 0)                        m = rt.relu_of_softplus(z, 0)
    u = z * y                                   u = z * y
    s = m - u                                   s = m - u
    a = np.abs(z)                       ->      a = np.abs(z)
    n = -a                                      n = -a
    e = np.exp(n)                               e = np.exp(n)
    t = np.log1p(e)                             t = rt.log1p_tail(e, z)
    r = s + t                                   r = s + t

The tail (``np.log1p(e)``, or ``np.log(p)`` with ``p = 1 + e``: ``rt.log_tail(p, e, z)``)
keeps its value and sends the softplus's whole derivative, ``g * sigmoid(z)`` computed from
``e``, to ``z``; the maximum keeps its value and sends nothing
(``runtime/softplus_terms.py``). Both terms get the same cotangent, so the sum's derivative
is unchanged: each is read once, by an addition or subtraction whose result is read once by
the next, up to a sum both reach, with the same sign there (the sign counts the right
operands of subtractions on the way); the maximum's other operand is the literal 0. ``z``,
``a``, ``n``, ``e`` and ``p`` are each assigned once (``z`` may be a parameter), in the
function's own block, none of these statements under ``st.stop_recording()`` or named by a
``st.grad_of(...)`` hook, and NumPy's ``maximum``, ``abs``, ``exp``, ``log1p`` and ``log``
have srctrans's own rules. The backward pass then computes the sigmoid as
``np.exp(np.minimum(z, 0.0)) / (1 + e)`` where the two rules took the maximum's tie, ``z``'s
sign and the chain through ``log1p`` and ``exp``: four operations for ten.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import load, resolved_runtime_call
from srctrans.normalize.definitions import argument_of, calls_at_top, has_own_rule, own_assignments
from srctrans.optimise.dce import name_counts

_PRIMALS = (np.maximum, np.abs, np.exp, np.log1p, np.log)


def softplus_terms(function, aliases):
    """Rewrite, in place, the two terms of each softplus of ``function``'s own block the
    module describes (``aliases``: the names generated code gives NumPy and the runtime)."""
    if not any(calls_at_top(function, np.log1p, np.log)) \
            or not all(has_own_rule(primal) for primal in _PRIMALS):
        return                   # (no log: no tail; a user's rule of one of them: the chain)
    stores, reads = name_counts([function])      # (a parameter counts as assigned)
    assignments = {name: stmt for name, stmt in own_assignments(function).items()
                   if stores.get(name) == 1}
    definitions = {name: stmt.value for name, stmt in assignments.items()}
    sums = _sums(definitions, reads)
    maxima = {}                                  # z -> [(name, 0) for name = np.maximum(z, 0)]
    for name, value in definitions.items():
        found = _maximum_of(value)
        if found is not None and reads.get(name) == 1:
            maxima.setdefault(found[0], []).append((name, found[1]))
    for tail, value in definitions.items():
        parts = _tail_of(value, definitions, stores) if reads.get(tail) == 1 else None
        if parts is None:
            continue
        z, e, p = parts
        head = next((m for m in maxima.get(z, ()) if _same_sign(m[0], tail, sums)), None)
        if head is None:
            continue
        maxima[z].remove(head)
        head_stmt, tail_stmt = assignments[head[0]], assignments[tail]
        head_stmt.value = gast.copy_location(resolved_runtime_call(
            aliases, "relu_of_softplus", [load(z), gast.Constant(head[1], None)]), head_stmt.value)
        tail_stmt.value = gast.copy_location(
            resolved_runtime_call(aliases, "log1p_tail", [load(e), load(z)]) if p is None else
            resolved_runtime_call(aliases, "log_tail", [load(p), load(e), load(z)]),
            tail_stmt.value)


def _sums(definitions, reads):
    """``{name: (the sum that reads it, its sign there)}`` for each name read once, by an
    addition or subtraction of names assigned once."""
    sums = {}
    for name, value in definitions.items():
        if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Sub)):
            right_sign = 1 if isinstance(value.op, gast.Add) else -1
            for operand, sign in ((value.left, 1), (value.right, right_sign)):
                if isinstance(operand, gast.Name) and reads.get(operand.id) == 1:
                    sums[operand.id] = (name, sign)
    return sums


def _path(name, sums):
    """``{sum: the sign of name in it}`` for ``name`` and each sum above it."""
    signs, sign = {name: 1}, 1
    while name in sums and sums[name][0] not in signs:
        name, step = sums[name]
        sign *= step
        signs[name] = sign
    return signs


def _same_sign(head, tail, sums):
    """Whether ``head`` and ``tail`` reach a common sum, the first, with the same sign."""
    above_tail = _path(tail, sums)
    for name, sign in _path(head, sums).items():
        if name in above_tail:
            return sign == above_tail[name]
    return False


def _maximum_of(value):
    """``(z, zero)`` when ``value`` is ``np.maximum(z, zero)`` or ``np.maximum(zero, z)``, ``zero``
    a literal 0 (integer or float), else None."""
    if not (isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is np.maximum
            and len(value.args) == 2 and not value.keywords):
        return None
    first, second = value.args
    if isinstance(second, gast.Name) and _is_zero(first):
        return second.id, first.value
    if isinstance(first, gast.Name) and _is_zero(second):
        return first.id, second.value
    return None


def _tail_of(value, definitions, stores):
    """``(z, e, p)`` when ``value`` is ``np.log1p(e)`` (``p`` None) or ``np.log(p)`` with
    ``p = 1 + e``, and ``e = np.exp(-np.abs(z))`` through names assigned once; else None."""
    e, p = argument_of(value, np.log1p), None
    if e is None:
        p = argument_of(value, np.log)
        e = _one_plus(definitions.get(p))
    n = argument_of(definitions.get(e), np.exp)
    negated = definitions.get(n)
    if not (isinstance(negated, gast.UnaryOp) and isinstance(negated.op, gast.USub)
            and isinstance(negated.operand, gast.Name)):
        return None
    z = argument_of(definitions.get(negated.operand.id), np.abs)
    return None if z is None or stores.get(z) != 1 else (z, e, p)


def _one_plus(value):
    """``e`` when ``value`` is ``1 + e`` or ``e + 1`` (a literal one), else None."""
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
        return None
    for one, e in ((value.left, value.right), (value.right, value.left)):
        if isinstance(e, gast.Name) and isinstance(one, gast.Constant) \
                and type(one.value) in (int, float) and one.value == 1:
            return e.id
    return None


def _is_zero(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float) and node.value == 0


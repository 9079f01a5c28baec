"""A log-sum-exp computed only for its terms' shares is not computed.

Requires: the forward and backward statements of a fused gradient (the output's value is
not returned), after copies are propagated and before dead code is eliminated, and the
runtime's alias.
Guarantees: the values computed are unchanged up to rounding. The gradient of
``L = scipy.special.logsumexp(a, axis)`` (no weights ``b``, no ``return_sign``) is
``rt.logsumexp_share(g, L, a, axis, keepdims, False)``, ``g * exp(a - L)``: the softmax of
``a`` along ``axis``. When the fused gradient reads ``L`` for nothing else, that softmax is
computed from ``a`` directly, ``rt.softmax_share(g, a, axis, keepdims)``, and the
log-sum-exp (whose SciPy implementation costs more than the rest of such a gradient) is
left to dead code elimination. Where ``L`` is read otherwise, nothing changes: the two
differ in rounding, and a path that gains nothing gives the generic code's numbers. A
seed spread over ``L`` only to be passed here, ``g = rt.unreduce(1.0, L, None, False)``,
is read as the number itself::

    L = logsumexp(z, axis=1)                         (L no longer computed)
    g = rt.unreduce(1.0, L, None, False)      ->
    dz = rt.logsumexp_share(g, L, z, 1, False, False)    dz = rt.softmax_share(1.0, z, 1, False)

Only statements of the function's own block are rewritten: there ``L`` and ``a``, each
assigned once, hold the values of the same call when the share reads them (in a loop, ``a``
may be assigned again after ``L``).
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import none_literal, number_literal
from srctrans.optimise.dce import name_counts
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.treewalk import walk


def share_softmax(forward, backward, runtime_alias, kept, reads_of_live_code):
    """Rewrite each qualifying ``rt.logsumexp_share`` of ``backward`` (see the module), in
    place. ``kept``: the expressions the function returns; ``reads_of_live_code(forward,
    backward, kept)``: the names read by the statements that dead code elimination keeps. A
    log-sum-exp something else reads (``np.tanh(L)``, the returned value) is computed
    anyway: its shares stay as they are, so that every path of the function gives the same
    numbers where nothing is gained."""
    stores, reads = name_counts(forward + backward)
    once = {name for name, count in stores.items() if count == 1}
    sums = {stmt.targets[0].id: stmt.value for stmt in forward
            if _assigns_one_name(stmt) and stmt.targets[0].id in once
            and _is_unweighted_logsumexp(stmt.value)}
    spreads = {stmt.targets[0].id: stmt.value.args for stmt in backward
               if _assigns_one_name(stmt) and stmt.targets[0].id in once
               and reads.get(stmt.targets[0].id) == 1
               and is_runtime_call(stmt.value, runtime_alias, "unreduce", 4)
               and number_literal(stmt.value.args[0]) and none_literal(stmt.value.args[2])}
    shares = []             # (share call, its arguments, its new cotangent argument)
    for stmt in backward:
        if not _assigns_one_name(stmt):
            continue
        for node in walk(stmt.value):
            if not is_runtime_call(node, runtime_alias, "logsumexp_share", 6):
                continue
            g, total, a, _, _, return_sign = node.args
            if not (isinstance(total, gast.Name) and total.id in sums
                    and isinstance(return_sign, gast.Constant) and return_sign.value is False
                    and all(stores.get(n.id, 0) <= 1 for n in walk(a)
                            if isinstance(n, gast.Name))):
                continue
            if isinstance(g, gast.Name) and g.id in spreads:
                number, spread_over = spreads[g.id][:2]
                if isinstance(spread_over, gast.Name) and spread_over.id == total.id:
                    g = number                 # (the spread's read of L goes with it)
            shares.append((node, node.args, g))
    for node, (_, _, a, axis, keepdims, _), g in shares:
        node.func.attr = "softmax_share"
        node.args = [g, a, axis, keepdims]
    if shares:
        live = reads_of_live_code(forward, backward, kept)
        for node, args, _ in shares:
            if args[1].id in live:             # L is computed anyway
                node.func.attr, node.args = "logsumexp_share", args
    return backward


def _assigns_one_name(stmt):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name))


def _is_unweighted_logsumexp(value):
    """``scipy.special.logsumexp(a, axis[, keepdims=...])``: no ``b``, no ``return_sign``."""
    callee = anno.get(value, Anno.CALLEE) if isinstance(value, gast.Call) else None
    if not (getattr(callee, "__name__", None) == "logsumexp"
            and str(getattr(callee, "__module__", "")).startswith("scipy.special")):
        return False
    if len(value.args) > 2:                          # logsumexp(a, axis, b, ...)
        return False
    for keyword in value.keywords:
        if keyword.arg == "b" or keyword.arg is None:
            return False
        if keyword.arg == "return_sign" and not (
                isinstance(keyword.value, gast.Constant) and keyword.value.value is False):
            return False
    return True



"""Activity analysis: which names carry a derivative.

Requires: a body in A-normal form with SSA names (``normalize.ssa``).
Guarantees: :func:`active_names` returns the names that both depend on a
selected input (*varied*) and reach the returned value (*useful*); only they
get adjoints. Values computed through functions without a derivative
(comparisons, ``np.argmax``, ``x.shape``) are constants.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.rules import ATTRIBUTES, METHODS, REGISTRY, operator_primal


def active_names(function, wrt, constants=()):
    """The set of active names of ``function`` for the selected parameters ``wrt``.

    ``constants`` are names known to carry no derivative although they are
    computed from varied values (``analyse.invariance``).
    """
    varied = set(wrt)
    for stmt in function.body:
        targets, value = _definition(stmt)
        if targets and _propagates(value) and _reads(value) & varied:
            varied.update(t for t in targets if t not in constants)
    useful = set()
    for stmt in reversed(function.body):
        if isinstance(stmt, gast.Return):
            useful |= _reads(stmt.value)
            continue
        targets, value = _definition(stmt)
        if set(targets) & useful and _propagates(value):
            useful |= _reads(value)
    return varied & useful


def _definition(stmt):
    """(names assigned, value expression) of an ANF statement, or ((), None)."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            return (target.id,), stmt.value
        return tuple(e.id for e in target.elts), stmt.value
    return (), None


def _reads(expr):
    if expr is None:
        return set()
    return {n.id for n in gast.walk(expr) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _propagates(value):
    """Whether a derivative can flow from ``value``'s operands to its result."""
    if isinstance(value, gast.Compare):
        return False
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return not REGISTRY.is_nondifferentiable(operator_primal(value.op))
    if isinstance(value, gast.Attribute):
        return ATTRIBUTES.get(value.attr, True) is not None
    if isinstance(value, gast.Call):
        callee = anno.get(value, Anno.CALLEE)
        if callee is None and isinstance(value.func, gast.Attribute):
            method = METHODS.get(value.func.attr)
            callee = method.primal if method else None
        return callee is None or not REGISTRY.is_nondifferentiable(callee)
    return True

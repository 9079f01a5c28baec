"""The values a function's own block assigns, read through by the passes that recognise a
formula spread over the statements of its A-normal form (``softmax_logs``, ``softplus_terms``).

Requires: a function in A-normal form after SSA, its calls resolved (``Anno.CALLEE``).
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.custom import gradient_hooks
from srctrans.nodes import single_target
from srctrans.rules import REGISTRY


def own_assignments(function):
    """``{name: statement}`` for each ``name = value`` of ``function``'s own block, but those a
    rewrite must not read through: a statement whose gradient is stopped (``with
    st.stop_recording():``) and a name a ``with st.grad_of(...)`` hook names, whose derivative
    a formula's closed form would pass over."""
    hooked = {hook.items[0].context_expr.args[0].id for hook in gradient_hooks(function)}
    assignments = {}
    for stmt in function.body:
        target = single_target(stmt)
        if target is not None and not anno.get(stmt, Anno.NO_GRADIENT) and target not in hooked:
            assignments[target] = stmt
    return assignments


def own_definitions(function):
    """``{name: value}`` for the statements of :func:`own_assignments`."""
    return {name: stmt.value for name, stmt in own_assignments(function).items()}


def calls_at_top(function, *callees):
    """The statements ``name = f(...)`` of ``function``'s own block whose ``f`` is one of
    ``callees`` (resolved): a pass with none to rewrite returns before it walks the function."""
    for stmt in function.body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Call):
            callee = anno.get(stmt.value, Anno.CALLEE)
            if any(callee is wanted for wanted in callees):
                yield stmt


def has_own_rule(primal):
    """Whether ``primal`` has srctrans's own rule, no user's (looked up, so that a build relies
    on it: registering one later builds the function again)."""
    rule = REGISTRY.lookup(primal)
    return rule is not None and rule.custom_vjp is None and rule.custom_jvp is None


def argument_of(value, function):
    """The name ``value`` calls ``function`` (a resolved NumPy function) of, alone, else None."""
    if isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is function \
            and len(value.args) == 1 and not value.keywords \
            and isinstance(value.args[0], gast.Name):
        return value.args[0].id
    return None

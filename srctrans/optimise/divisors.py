"""A divisor the measuring call found safe is checked once, not each quotient guarded.

Requires: the body of a specialised fused gradient, the names of numbers that held a
float neither 0 nor NaN in the call that specialised it, and of float arrays whose entries
were all positive (``measuring.measure``, with guesses), the function's parameters, and the
runtime's alias.
Guarantees: each value is what it was on every call that runs the body to its end. The
quotient rule's ``rt.zero_guard(g, g / s)`` makes the quotient 0 where ``g`` is 0, for
``0 / 0`` (and ``0 / NaN``): where no entry of ``s`` is either, ``g / s`` is already 0
there, and the guard only checks. For such an ``s`` (a parameter, or a name the body
assigns once at its top level; an array also one that nothing in the body changes in
place, nor any name that may share its memory: ``common_values.changed_groups``) the guard
becomes the quotient ``g / s``, and a check right after ``s`` is known (at the top for a
parameter) raises ``MissedBranch`` on a call where it fails: ``rt.expect_divisor(s)``, a
number 0 or NaN; ``rt.expect_positive(s)``, an array whose least entry is not above 0 (one
reduction; a NaN fails it too). That call runs the generic code, which keeps the guards
(``runtime.branches``). One test a call replaces a pass over each quotient, and the plain
quotient lets other rewrites through (a sign, a constant factor). A guarded sum of a
quotient by a number, ``rt.zero_guard_sum(g, g * c / s)`` (a number's cotangent), divides
the sum: ``rt.zero_guard_sum(g, g * c) / s``, one array operation fewer. By a checked
array, ``rt.ratio_or_zero(x, s)`` (a norm's derivative: ``x / s`` where ``s`` is not 0) is
the quotient ``x / s``, which ``common_values`` then reads from the forward pass's name for
it (``a = A / norm``), if any::

    _pow_2 = sigma ** 2                            _pow_2 = sigma ** 2
    ...                                   ->       rt.expect_divisor(_pow_2)
    d_mul = rt.zero_guard(dlc, dlc / _pow_2)       ...
                                                   d_mul = dlc / _pow_2
"""

import math

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.naming import RUNTIME_ALIAS
from srctrans.nodes import load, resolved_runtime_call
from srctrans.optimise.common_values import changed_groups
from srctrans.optimise.dce import name_positions
from srctrans.treewalk import replace_children


def divide_by_checked(body, numbers, arrays, parameters, aliases):
    """``body`` (changed in place, and returned) with the guards of quotients by ``numbers``
    and ``arrays`` (names) dropped and each divisor checked once (see the module); returns
    ``(body, whether a ratio became a quotient)``."""
    if not numbers and not arrays:
        return body, False
    stores, _ = name_positions(body)
    assigned = {name: indices[0] for name, indices in stores.items()
                if len(indices) == 1 and _assigns(body[indices[0]], name)}
    if arrays:
        arrays = set(arrays) - changed_groups(body, set(stores) | set(parameters),
                                              aliases[RUNTIME_ALIAS])
    usable = {name for name in set(numbers) | set(arrays)
              if name in assigned or name in parameters and name not in stores}
    checked, ratios = set(), []

    def unguarded(node):
        found = _guarded_quotient(node, usable, arrays)
        if found is None:
            found = _ratio(node, usable & arrays)
            if found is None:
                return node
            ratios.append(found[1])
        checked.add(found[1])
        return found[0]

    for top in body:
        replace_children(top, unguarded)
    if not checked:
        return body, False
    after = {}
    for name in sorted(checked):
        after.setdefault(assigned.get(name, -1), []).append(name)
    checks = {name: "expect_positive" if name in arrays else "expect_divisor" for name in checked}
    out = [_expectation(name, checks[name], aliases, None) for name in after.get(-1, ())]
    for index, stmt in enumerate(body):
        out.append(stmt)
        out += [_expectation(name, checks[name], aliases, stmt) for name in after.get(index, ())]
    body[:] = out
    return body, bool(ratios)


def _ratio(node, arrays):
    """``(x / s, s)`` when ``node`` is ``rt.ratio_or_zero(x, s)`` (``s`` one of ``arrays``:
    with no zero, the helper's value is the quotient), else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr == "ratio_or_zero" and len(node.args) == 2 \
            and not node.keywords and isinstance(node.args[1], gast.Name) \
            and node.args[1].id in arrays:
        return gast.BinOp(node.args[0], gast.Div(), node.args[1]), node.args[1].id
    return None


def _guarded_quotient(node, divisors, arrays):
    """``(what node is without its guard, s)`` when ``node`` is ``rt.zero_guard(g, g / s)``
    (``g`` a name, ``s`` one of ``divisors``; or ``g * c / s``, ``c`` a finite number):
    the quotient; or ``rt.zero_guard_sum(g, q / s)``, ``s`` not one of ``arrays``:
    ``rt.zero_guard_sum(g, q) / s`` (``q / s`` is finite where ``q`` is, so the same
    entries are zeroed, and the number divides the sum); else None."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in ("zero_guard", "zero_guard_sum") and len(node.args) == 2
            and not node.keywords):
        return None
    g, quotient = node.args
    if not (isinstance(g, gast.Name) and isinstance(quotient, gast.BinOp)
            and isinstance(quotient.op, gast.Div) and isinstance(quotient.right, gast.Name)
            and quotient.right.id in divisors):
        return None
    if node.func.attr == "zero_guard_sum":
        if quotient.right.id in arrays:
            return None                        # an array's entries divide the terms
        node.args[1] = quotient.left
        return gast.BinOp(node, gast.Div(), quotient.right), quotient.right.id
    if _is_name(quotient.left, g.id) or _scales(quotient.left, g.id):
        return quotient, quotient.right.id
    return None


def _is_name(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _scales(node, name):
    """Whether ``node`` is ``name * c`` or ``c * name`` for a finite number ``c`` (0 where
    ``name`` is 0: a square root's ``g * 0.5 / ans``)."""
    if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
        return False
    for one, other in ((node.left, node.right), (node.right, node.left)):
        if _is_name(one, name) and isinstance(other, gast.Constant) \
                and type(other.value) in (int, float) and math.isfinite(other.value):
            return True
    return False


def _assigns(stmt, name):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name)


def _expectation(name, check, aliases, assignment):
    """``rt.CHECK(name)``, of the user's line ``assignment`` is (if any)."""
    check = gast.Expr(resolved_runtime_call(aliases, check, [load(name)]))
    origin = anno.get(assignment, Anno.ORIGIN) if assignment is not None else None
    if origin is not None:
        anno.set_(check, Anno.ORIGIN, origin)
    return check

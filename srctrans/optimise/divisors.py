"""A number the measuring call divided by, neither 0 nor NaN, is checked once, not each quotient.

Requires: the body of a specialised fused gradient, the names of numbers that held a
float neither 0 nor NaN in the call that specialised it (``measuring.measure``, with
guesses), the function's parameters, and the runtime's alias.
Guarantees: each value is what it was on every call that runs the body to its end. The
quotient rule's ``rt.zero_guard(g, g / s)`` makes the quotient 0 where ``g`` is 0, for
``0 / 0`` (and ``0 / NaN``): where ``s`` is neither, ``g / s`` is already 0 there, and
the guard only checks. For such an ``s`` (a parameter, or a name the body assigns once at
its top level) the guard becomes the quotient ``g / s``, and ``rt.expect_divisor(s)``
right after ``s`` is known (at the top for a parameter) raises ``MissedBranch`` on a call
where ``s`` is 0 or NaN: that call runs the generic code, which keeps the guards
(``runtime.branches``). One scalar test a call replaces a pass over each quotient, and the
plain quotient lets other rewrites through (a sign, a constant factor). A guarded sum of a
quotient, ``rt.zero_guard_sum(g, g * c / s)`` (a number's cotangent), divides the sum:
``rt.zero_guard_sum(g, g * c) / s``, one array operation fewer::

    _pow_2 = sigma ** 2                            _pow_2 = sigma ** 2
    ...                                   ->       rt.expect_divisor(_pow_2)
    d_mul = rt.zero_guard(dlc, dlc / _pow_2)       ...
                                                   d_mul = dlc / _pow_2
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import load, resolved_runtime_call
from srctrans.optimise.dce import name_positions
from srctrans.treewalk import replace_children


def divide_by_numbers(body, numbers, parameters, aliases):
    """``body`` (changed in place, and returned) with the guards of quotients by ``numbers``
    (names) dropped and each divisor checked once (see the module)."""
    if not numbers:
        return body
    stores, _ = name_positions(body)
    assigned = {name: indices[0] for name, indices in stores.items()
                if len(indices) == 1 and _assigns(body[indices[0]], name)}
    usable = {name for name in numbers
              if name in assigned or name in parameters and name not in stores}
    checked = set()

    def unguarded(node):
        found = _guarded_quotient(node, usable)
        if found is None:
            return node
        checked.add(found[1])
        return found[0]

    for top in body:
        replace_children(top, unguarded)
    if not checked:
        return body
    after = {}
    for name in sorted(checked):
        after.setdefault(assigned.get(name, -1), []).append(name)
    out = [_expectation(name, aliases, None) for name in after.get(-1, ())]   # parameters
    for index, stmt in enumerate(body):
        out.append(stmt)
        out += [_expectation(name, aliases, stmt) for name in after.get(index, ())]
    body[:] = out
    return body


def _guarded_quotient(node, divisors):
    """``(what node is without its guard, s)`` when ``node`` is ``rt.zero_guard(g, g / s)``
    (``g`` a name, ``s`` one of ``divisors``): ``g / s``; or ``rt.zero_guard_sum(g, q /
    s)``: ``rt.zero_guard_sum(g, q) / s`` (``q / s`` is finite where ``q`` is, so the same
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
        node.args[1] = quotient.left
        return gast.BinOp(node, gast.Div(), quotient.right), quotient.right.id
    if isinstance(quotient.left, gast.Name) and quotient.left.id == g.id:
        return quotient, quotient.right.id
    return None


def _assigns(stmt, name):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name)


def _expectation(name, aliases, assignment):
    """``rt.expect_divisor(name)``, of the user's line ``assignment`` is (if any)."""
    check = gast.Expr(resolved_runtime_call(aliases, "expect_divisor", [load(name)]))
    origin = anno.get(assignment, Anno.ORIGIN) if assignment is not None else None
    if origin is not None:
        anno.set_(check, Anno.ORIGIN, origin)
    return check

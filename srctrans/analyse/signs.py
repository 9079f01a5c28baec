"""Names whose values are never zero at finite inputs, from how they are computed.

Requires: a function in A-normal form after SSA (a name assigned at the function's top
level is assigned there once).
Guarantees: :func:`positive_names` gives names assigned ``c + e`` (or ``e + c``) with
``c`` a positive number and ``e`` never negative and never NaN at finite inputs:
``np.exp``, ``np.cosh``, ``np.abs``, ``np.square`` of anything, an even power, a variance
or standard deviation (``ddof`` 0), ``np.sqrt`` of such a value, and sums of such values
or of names assigned them (an overflow gives ``inf``, never NaN; not a product, where
``inf * 0`` is NaN, nor ``np.sqrt`` of anything, NaN below 0); and names assigned
``np.sqrt`` of a positive name (a layer norm's ``np.sqrt(var + eps)``). Such a value is at
least ``c``, so a cotangent divided by it is zero where the cotangent is (the guard
``rt.zero_guard(g, g / s)`` changes nothing and is dropped, as for a softmax's
denominator). ``np.exp`` alone is no such value: it underflows to 0.

>>> import gast
>>> f = gast.parse("def f(z):\\n    _neg = -z\\n    _exp = np.exp(_neg)\\n"
...                "    _add = 1 + _exp\\n    return _add").body[0]
>>> import numpy as np
>>> from srctrans import annotations as anno
>>> from srctrans.annotations import Anno
>>> anno.set_(f.body[1].value, Anno.CALLEE, np.exp)
>>> sorted(positive_names(f, never_negative_names(f)))
['_add']
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno

_NEVER_NEGATIVE = (np.exp, np.cosh, np.abs, np.absolute, np.square)


def positive_names(function, never_negative):
    """The names of ``function``'s top level assigned ``c + e``, ``c > 0``, ``e >= 0``
    (``never_negative``: :func:`never_negative_names` of it), or ``np.sqrt`` of such a
    name (at least ``sqrt(c)``)."""
    found = set()
    for stmt in _assignments(function):              # in order: a name's operands come first
        value = stmt.value
        if is_positive(value, never_negative) or _is_call(value, (np.sqrt,)) and \
                isinstance(value.args[0], gast.Name) and value.args[0].id in found:
            found.add(stmt.targets[0].id)
    return found


def never_negative_names(function):
    """The names of ``function``'s top level assigned a value never negative, nor NaN."""
    found = set()
    for stmt in _assignments(function):              # in order: a name's operands come first
        if _never_negative(stmt.value, found):
            found.add(stmt.targets[0].id)
    return frozenset(found)


def is_positive(node, never_negative):
    """Whether ``node`` is ``c + e`` (or ``e + c``), ``c > 0`` a number and ``e`` never
    negative (``never_negative``: names known to be)."""
    return (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add)
            and any(_positive_number(side) and _never_negative(other, never_negative)
                    for side, other in ((node.left, node.right), (node.right, node.left))))


def _assignments(function):
    return [stmt for stmt in function.body if isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)]


def _never_negative(node, names):
    if isinstance(node, gast.Name):
        return node.id in names
    if _positive_number(node) or isinstance(node, gast.Constant) and node.value == 0:
        return True
    if isinstance(node, gast.Call):
        if _is_call(node, _NEVER_NEGATIVE):
            return not node.keywords
        if _is_call(node, (np.sqrt,)):
            return _never_negative(node.args[0], names)
        return _is_variance(node)
    if isinstance(node, gast.BinOp):
        if isinstance(node.op, gast.Pow):
            power = node.right
            return (isinstance(power, gast.Constant) and type(power.value) in (int, float)
                    and float(power.value).is_integer() and int(power.value) % 2 == 0)
        if isinstance(node.op, gast.Add):
            return _never_negative(node.left, names) and _never_negative(node.right, names)
    return False


def _is_call(node, functions):
    """Whether ``node`` calls one of ``functions`` on one positional argument."""
    callee = anno.get(node, Anno.CALLEE)
    return isinstance(node, gast.Call) and any(callee is f for f in functions) \
        and len(node.args) == 1


def _is_variance(call):
    """``np.var(x, axis=..., keepdims=...)`` or ``np.std``, or an array's ``x.var(...)``,
    ``x.std(...)``, with ``ddof`` 0 (left out or written): a mean of squares, never
    negative nor NaN at finite inputs (over no elements, NaN, but then the array and
    every cotangent computed from it are empty)."""
    callee = anno.get(call, Anno.CALLEE)
    if callee is None and isinstance(call.func, gast.Attribute):
        if call.func.attr not in ("var", "std") or call.args:
            return False
    elif not (any(callee is f for f in (np.var, np.std)) and len(call.args) == 1):
        return False
    return all(k.arg in ("axis", "keepdims") or k.arg == "ddof" and isinstance(k.value, gast.Constant)
               and k.value.value == 0 for k in call.keywords)


def _positive_number(node):
    return (isinstance(node, gast.Constant) and type(node.value) in (int, float)
            and node.value > 0)

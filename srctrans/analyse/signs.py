"""Names whose values are never zero, never negative or never infinite at finite inputs,
from how they are computed.

Requires: a function in A-normal form (its forward pass: every name is assigned by the
program's own statements).
Guarantees: :func:`positive_names` gives names assigned ``c + e`` (or ``e + c``) with
``c`` a positive number and ``e`` never negative and never NaN at finite inputs:
``np.exp``, ``np.cosh``, ``np.abs``, ``np.square`` of anything, an even power, a variance
or standard deviation (``ddof`` 0), ``np.sqrt`` of such a value, and sums of such values
or of names assigned them (``+``, ``np.sum``, an array's ``.sum``; an overflow gives
``inf``, never NaN; not a product, where ``inf * 0`` is NaN, nor ``np.sqrt`` of anything,
NaN below 0); and names assigned
``np.sqrt`` of a positive name (a layer norm's ``np.sqrt(var + eps)``). Such a value is at
least ``c``, so a cotangent divided by it is zero where the cotangent is (the guard
``rt.zero_guard(g, g / s)`` changes nothing and is dropped, as for a softmax's
denominator). ``np.exp`` alone is no such value: it underflows to 0.
:func:`bounded_names` gives the names finite wherever they are computed (a sigmoid,
``np.tanh``): a cotangent times one, divided by a positive name, is zero where the
cotangent is too. A name counts when every assignment of it does (one in a loop's step
too: each step assigns such a value anew); a parameter never does (its argument comes
first).

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

import math

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import number_literal, parameter_names
from srctrans.treewalk import walk

_NEVER_NEGATIVE = (np.exp, np.cosh, np.abs, np.absolute, np.square)


def positive_names(function, never_negative):
    """The names ``function`` assigns only ``c + e``, ``c > 0``, ``e >= 0``
    (``never_negative``: :func:`never_negative_names` of it), or ``np.sqrt`` of such a
    name (at least ``sqrt(c)``)."""
    def positive(value, found):
        return is_positive(value, never_negative) or _is_call(value, (np.sqrt,)) and \
            isinstance(value.args[0], gast.Name) and value.args[0].id in found
    return _names_whose_values(function, positive)


def never_negative_names(function):
    """The names ``function`` assigns only values never negative, nor NaN."""
    return frozenset(_names_whose_values(function, _never_negative))


def bounded_names(function, positive):
    """The names ``function`` assigns only values finite at finite inputs for any value of
    what they read: ``c / p`` (``c`` a finite number, ``p`` one of the ``positive`` names
    or a positive sum: a sigmoid's ``1.0 / (1.0 + np.exp(-z))``, in ``(0, c]``) and
    ``np.tanh`` of anything (in ``[-1, 1]``)."""
    def bounded(value, found):
        if _is_call(value, (np.tanh,)):
            return True
        return (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Div)
                and number_literal(value.left) and math.isfinite(value.left.value)
                and (isinstance(value.right, gast.Name) and value.right.id in positive
                     or is_positive(value.right, ())))
    return frozenset(_names_whose_values(function, bounded))


def _names_whose_values(function, holds, passes=3):
    """The names every assignment of which (in any block: a loop's step assigns each value
    anew) gives a value ``holds(value, found)`` says is such, ``found`` the names found so
    far; a few passes in order, so a name's operands assigned later (in a loop) are found
    too, or it is left out (fewer names, never a wrong one)."""
    assigned = _assignments(function)
    for parameter in parameter_names(function):
        assigned.pop(parameter, None)
    found = set()
    for _ in range(passes):
        before = len(found)
        for name, values in assigned.items():
            if name not in found and all(holds(value, found) for value in values):
                found.add(name)
        if len(found) == before:
            break
    return found


def is_positive(node, never_negative):
    """Whether ``node`` is ``c + e`` (or ``e + c``), ``c > 0`` a number and ``e`` never
    negative (``never_negative``: names known to be)."""
    return (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add)
            and any(_positive_number(side) and _never_negative(other, never_negative)
                    for side, other in ((node.left, node.right), (node.right, node.left))))


def _assignments(function):
    """``{name: [value, ...]}``: the values of the names ``function`` assigns only by
    ``name = value`` (in any block), in order; a name also bound otherwise (a loop's
    target, ``+=``, a tuple's entry) is left out."""
    values, stores = {}, {}
    for node in walk(function):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
    return {name: found for name, found in values.items() if stores.get(name) == len(found)}


def _never_negative(node, names):
    if isinstance(node, gast.Name):
        return node.id in names
    if _positive_number(node) or isinstance(node, gast.Constant) and node.value == 0:
        return True
    if isinstance(node, gast.Call):
        if _is_call(node, _NEVER_NEGATIVE):
            return not node.keywords
        if _is_call(node, (np.sqrt, np.sum)):
            operand = node.args[0]
        elif anno.get(node, Anno.CALLEE) is None and isinstance(node.func, gast.Attribute) \
                and node.func.attr == "sum" and not node.args:
            operand = node.func.value                                  # an array's sum
        else:
            return _is_variance(node)
        return _never_negative(operand, names) and all(
            k.arg in ("axis", "keepdims") for k in node.keywords)
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
    return number_literal(node) and node.value > 0

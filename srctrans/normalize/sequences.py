"""Concatenation and repetition of lists and tuples, told apart from arithmetic.

Requires: a desugared function, before ANF.
Guarantees: ``x + y`` where both operands are lists (or both tuples) that the
function builds itself -- displays, comprehensions, ``list(...)``/``tuple(...)``,
slices of them, and names every assignment of which is one -- becomes
``rt.concat(x, y)``, and ``x * n`` (or ``n * x``) with an integer literal ``n``
becomes ``rt.repeated(x, n)``; both have rules that split or sum the cotangent
entry by entry. NumPy's rules would read them as elementwise arithmetic. Where
the kinds cannot be seen (a list passed as an argument), ``rt.unbroadcast``
refuses a list or tuple operand at run time instead of guessing.

Iterative: an expression of any depth is rewritten without recursion.
"""

import gast

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.analyse.values import greatest_closed
from srctrans.nodes import resolved_runtime_call
from srctrans.treewalk import child_fields, walk

_SEQUENCE_CALLS = ("list", "tuple")


def split_sequence_arithmetic(function, aliases):
    """Rewrite the concatenations and repetitions of ``function`` (gast) in place."""
    names = _sequence_names(function)
    for parent, field, index, node in reversed(_edges(function)):   # operands first
        if not isinstance(node, gast.BinOp):
            continue
        replaced = None
        if isinstance(node.op, gast.Add) and _kind(node.left, names) is not None \
                and _kind(node.left, names) == _kind(node.right, names):
            replaced = resolved_runtime_call(aliases, "concat", [node.left, node.right])
        elif isinstance(node.op, gast.Mult) and _kind(node.left, names) and _is_count(node.right):
            replaced = resolved_runtime_call(aliases, "repeated", [node.left, node.right])
        elif isinstance(node.op, gast.Mult) and _kind(node.right, names) and _is_count(node.left):
            replaced = resolved_runtime_call(aliases, "repeated", [node.right, node.left])
        if replaced is not None:
            gast.copy_location(replaced, node)
            if index is None:
                setattr(parent, field, replaced)
            else:
                getattr(parent, field)[index] = replaced


def _edges(root):
    """``(parent, field, index, node)`` of every node under ``root``, parents first."""
    out, stack = [], [root]
    while stack:
        parent = stack.pop()
        held = parent.__dict__
        for field in child_fields(parent.__class__):
            value = held.get(field)
            if value.__class__ is list:
                for i, item in enumerate(value):
                    if isinstance(item, gast.AST):
                        out.append((parent, field, i, item))
                        stack.append(item)
            elif value is not None and isinstance(value, gast.AST):
                out.append((parent, field, None, value))
                stack.append(value)
    return out


def _sequence_names(function):
    values = {}
    for stmt in walk(function):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            values.setdefault(stmt.targets[0].id, []).append(stmt.value)
    kinds = {name: {_kind(v, {}) for v in assigned} for name, assigned in values.items()}
    lists = greatest_closed(values, {n for n, k in kinds.items() if k == {"list"}},
                            lambda v, known: _kind(v, dict.fromkeys(known, "list")) == "list")
    tuples = greatest_closed(values, {n for n, k in kinds.items() if k == {"tuple"}},
                             lambda v, known: _kind(v, dict.fromkeys(known, "tuple")) == "tuple")
    return {**dict.fromkeys(lists, "list"), **dict.fromkeys(tuples, "tuple")}


def _kind(node, names):
    """``"list"`` or ``"tuple"`` when ``node`` certainly builds one, else None."""
    if isinstance(node, (gast.List, gast.ListComp)):
        return "list"
    if isinstance(node, gast.Tuple) and isinstance(node.ctx, gast.Load):
        return "tuple"
    if isinstance(node, gast.Name):
        return names.get(node.id)
    if isinstance(node, gast.Call):
        if isinstance(node.func, gast.Name) and node.func.id in _SEQUENCE_CALLS:
            return node.func.id
        callee = anno.get(node, Anno.CALLEE)
        if callee is runtime.concat or callee is runtime.repeated:
            return _kind(node.args[0], names)
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
        return _kind(node.value, names)
    return None


def _is_count(node):
    return isinstance(node, gast.Constant) and type(node.value) is int

"""Shift invariance: the maximum subtracted before a softmax carries no derivative.

Requires: a body in A-normal form with SSA names.
Guarantees: :func:`softmax_offsets` returns the names ``m`` of statements
``m = np.max(z, axis=A, keepdims=True)`` whose only use is ``z2 = z - m`` and
where ``z2`` only feeds a softmax or log-softmax along the same axis ``A``::

    e = np.exp(z2); s = np.sum(e, axis=A, keepdims=True); p = e / s
    o = z2 - np.log(np.sum(np.exp(z2), axis=A, keepdims=True))

Those results do not change when a constant is added along ``A``, so the
derivative through ``m`` is exactly zero: activity analysis treats ``m`` as a
constant and the backward pass does not compute the zero (the ``max`` branch
of a numerically stable softmax costs as much as the rest of its gradient).

:func:`softmax_normalisers` returns the names ``s`` of such sums of
exponentials of a shifted value, ``s = np.sum(np.exp(z - m), axis=A,
keepdims=True)``, at least 1 wherever ``z`` is finite (the maximum's own term
is ``exp(0)``), so ``np.log(s)`` and ``e / s`` have no singular point there.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.treewalk import walk


def softmax_offsets(function):
    """The names whose derivative is exactly zero because of shift invariance."""
    body = function.body
    definitions, uses = {}, {}
    for stmt in body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            definitions[stmt.targets[0].id] = stmt.value
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                uses.setdefault(node.id, []).append(stmt)
    offsets = set()
    for shifted, value in definitions.items():
        if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Sub)
                and isinstance(value.left, gast.Name) and isinstance(value.right, gast.Name)):
            continue
        z, m = value.left.id, value.right.id
        axis = _maximum_axis(definitions.get(m), z)
        if axis is None or len(uses.get(m, ())) != 1:
            continue
        if _only_normalised(shifted, axis, definitions, uses):
            offsets.add(m)
    return offsets


def softmax_normalisers(function):
    """The names ``s = np.sum(np.exp(z - np.max(z, axis=A, keepdims=True)), axis=A, keepdims=True)``."""
    definitions = {stmt.targets[0].id: stmt.value for stmt in function.body
                   if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)}
    normalisers = set()
    for s, total in definitions.items():
        summed = _sum_operand(total)
        if summed is None:
            continue
        e, axis = summed
        exp = definitions.get(e)
        if not (isinstance(exp, gast.Call) and anno.get(exp, Anno.CALLEE) is np.exp
                and len(exp.args) == 1 and isinstance(exp.args[0], gast.Name)):
            continue
        shifted = definitions.get(exp.args[0].id)
        if (isinstance(shifted, gast.BinOp) and isinstance(shifted.op, gast.Sub)
                and isinstance(shifted.left, gast.Name) and isinstance(shifted.right, gast.Name)
                and _maximum_axis(definitions.get(shifted.right.id), shifted.left.id) == axis):
            normalisers.add(s)
    return normalisers


def _sum_operand(value):
    """``(x, A)`` when ``value`` is ``np.sum(x, axis=A, keepdims=True)`` or ``x.sum(...)``."""
    if not isinstance(value, gast.Call):
        return None
    args = list(value.args)
    if anno.get(value, Anno.CALLEE) is None and isinstance(value.func, gast.Attribute):
        args = [value.func.value] + args
    axis = _reduction_axis(args, value.keywords) if args else None
    if axis is None or not isinstance(args[0], gast.Name):
        return None
    return (args[0].id, axis) if _summed_name(value, axis) == args[0].id else None


def _maximum_axis(value, z):
    """``A`` when ``value`` is ``np.max(z, axis=A, keepdims=True)`` (or ``z.max(...)``)."""
    if not isinstance(value, gast.Call):
        return None
    callee = anno.get(value, Anno.CALLEE)
    args = list(value.args)
    if callee is None and isinstance(value.func, gast.Attribute) and value.func.attr == "max":
        args = [value.func.value] + args                   # z.max(axis=A, keepdims=True)
    elif not (callee is np.max or callee is np.amax):
        return None
    if not args or not _is_name(args[0], z):
        return None
    return _reduction_axis(args, value.keywords)


def _reduction_axis(args, keywords):
    """The constant axis of a reduction called with ``keepdims=True``, else None."""
    options = {k.arg: k.value for k in keywords}
    axis = args[1] if len(args) > 1 else options.get("axis")
    keepdims = options.get("keepdims")
    if len(args) > 2 or not (isinstance(keepdims, gast.Constant) and keepdims.value is True):
        return None
    return _integer(axis)


def _integer(node):
    """The value of an integer literal (``1``, ``-1``), else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _integer(node.operand)
        return None if inner is None else -inner
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    return None


def _only_normalised(shifted, axis, definitions, uses):
    """True when every use of ``shifted`` is part of a softmax or log-softmax along ``axis``."""
    for stmt in uses.get(shifted, ()):
        value = _assigned(stmt)
        if _is_call(value, np.exp, shifted):
            if not _exp_only_normalised(stmt.targets[0].id, axis, shifted, definitions, uses):
                return False
        elif _is_log_softmax(value, shifted, axis, definitions):
            continue
        else:
            return False
    return True


def _exp_only_normalised(e, axis, shifted, definitions, uses):
    """``e = exp(shifted)`` is used only as ``sum(e, axis)``, ``e / that sum``, or inside a log-softmax."""
    for stmt in uses.get(e, ()):
        value = _assigned(stmt)
        if _is_sum_of(value, e, axis):
            s = stmt.targets[0].id
            for use in uses.get(s, ()):
                inner = _assigned(use)
                if _is_division(inner, e, s):
                    continue
                if _is_call(inner, np.log, s) and all(
                        _is_log_softmax(_assigned(u), shifted, axis, definitions)
                        for u in uses.get(use.targets[0].id, ())):
                    continue
                return False
        elif not (_is_division(value, e, None) and _is_sum_of(
                definitions.get(getattr(value.right, "id", None)), e, axis)):
            return False
    return True


def _is_log_softmax(value, shifted, axis, definitions):
    """``shifted - log(sum(exp(shifted), axis, keepdims=True))``."""
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Sub)
            and _is_name(value.left, shifted) and isinstance(value.right, gast.Name)):
        return False
    log = definitions.get(value.right.id)
    if not (isinstance(log, gast.Call) and anno.get(log, Anno.CALLEE) is np.log
            and len(log.args) == 1 and isinstance(log.args[0], gast.Name)):
        return False
    total = definitions.get(log.args[0].id)
    if total is None or not isinstance(total, gast.Call):
        return False
    summed = _summed_name(total, axis)
    return summed is not None and _is_call(definitions.get(summed), np.exp, shifted)


def _is_sum_of(value, e, axis):
    return isinstance(value, gast.Call) and _summed_name(value, axis) == e


def _summed_name(value, axis):
    """``x`` when ``value`` is ``np.sum(x, axis=axis, keepdims=True)`` or ``x.sum(...)``."""
    callee = anno.get(value, Anno.CALLEE)
    args = list(value.args)
    if callee is None and isinstance(value.func, gast.Attribute) and value.func.attr == "sum":
        args = [value.func.value] + args
    elif callee is not np.sum:
        return None
    if not args or not isinstance(args[0], gast.Name):
        return None
    return args[0].id if _reduction_axis(args, value.keywords) == axis else None


def _is_division(value, e, s):
    return (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Div)
            and _is_name(value.left, e) and isinstance(value.right, gast.Name)
            and (s is None or value.right.id == s))


def _is_call(value, function, argument):
    return (isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is function
            and len(value.args) == 1 and not value.keywords and _is_name(value.args[0], argument))


def _assigned(stmt):
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
        return stmt.value
    return None


def _is_name(node, name):
    return isinstance(node, gast.Name) and node.id == name

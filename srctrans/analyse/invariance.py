"""Shift invariance: an offset that no later value sees carries no derivative.

Requires: a body in A-normal form with SSA names.
Guarantees: :func:`softmax_offsets` returns names ``m`` such that adding any
``c`` to ``m`` (``m`` has size 1 along the axes where it can vary, so ``c`` does
too) changes no value that the function goes on to use: the derivative
through ``m`` is exactly zero, so activity analysis treats ``m`` as a constant
and the backward pass does not compute the zero (the maximum's branch of a
numerically stable softmax costs as much as the rest of its gradient).

This is found from the algebra, not from a spelling. An *offset* is any
reduction along a literal axis ``A`` (``np.max(z, axis=A, keepdims=True)``,
``z.mean(A)``, ``np.max(z, axis=A)[:, None]``; or over every axis, a scalar).
Each value computed from it (``m[:, None]``, ``m[:, 0]`` moving the offset's axis in and
out) is either *shifted* by ``k * c`` (``z - m``,
``np.log(s)``, ``-x``) or *scaled* by ``exp(k * c)`` (``np.exp(z - m)``, its
products and its sums along ``A``), or neither (then ``m`` is no offset).
When ``k`` reaches 0 the value no longer depends on ``m``: ``e / s``,
``(z - m) - np.log(s)``, ``np.log(s) + m``. ``m`` is an offset when every
value computed from it reaches 0 before anything else reads it.

:func:`softmax_normalisers` returns the names ``s`` of sums of exponentials of
a shifted value, ``s = np.sum(np.exp(z - m), axis=A, keepdims=True)`` with
``m = np.max(z, axis=A, keepdims=True)``: at least 1 wherever ``z`` is finite
(the maximum's own term is ``exp(0)``), so ``np.log(s)`` and ``e / s`` have no
singular point there.
"""

from dataclasses import dataclass, replace

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.nodes import int_literal, none_literal, whole_slice
from srctrans.treewalk import walk

# reductions: which forms each keeps (a sum of shifted values is not shifted)
_REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "max", np.amax: "max",
               np.min: "min", np.amin: "min"}
_REDUCTION_METHODS = {"sum", "mean", "max", "min"}
_KEEPS_SHIFT = {"mean", "max", "min"}
# statements an offset's values may travel through before it is left alone (cost bound)
_MOST_FOLLOWED = 64


@dataclass(frozen=True)
class _Form:
    """How a value changes when ``c`` is added to the offset: ``kind`` ``"shift"``
    (it becomes ``value + k * c``) or ``"scale"`` (``value * exp(k * c)``).
    ``place`` says where ``c``'s axes sit in it: ``"kept"`` (the offset's own
    shape, size 1 along ``A``), ``"reduced"`` (``A`` removed) or ``"scalar"``;
    ``widened`` records that an operand of unknown rank joined it, so a positive
    ``A`` may no longer name ``c``'s axis."""
    kind: str
    k: int
    place: str
    widened: bool = False


@dataclass(frozen=True)
class _Offset:
    name: str
    source: str | None         # the reduced name (its own rank: joining it keeps A's meaning)
    axis: int | None
    place: str


def softmax_offsets(function):
    """The names whose derivative is exactly zero because no later value sees their shift."""
    body = function.body
    readers = {}                                  # name -> indices of statements reading it
    stores = {}                                   # name -> how many places assign it
    candidates = []
    for index, stmt in enumerate(body):
        for node in walk(stmt):
            if isinstance(node, gast.Name):
                if isinstance(node.ctx, gast.Load):
                    readers.setdefault(node.id, []).append(index)
                else:
                    stores[node.id] = stores.get(node.id, 0) + 1
        offset = _offset(stmt)
        if offset is not None:
            candidates.append((index, offset))
    once = {name for name, count in stores.items() if count == 1}
    return {offset.name for index, offset in candidates
            if _unseen(body, readers, once, index, offset)}


def _offset(stmt):
    """The :class:`_Offset` ``stmt`` defines, if it assigns a reduction to a name."""
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
        return None
    reduced = reduction(stmt.value)
    if reduced is None:
        return None
    _, operand, axis, keepdims = reduced
    if axis is None:
        place = None if keepdims else "scalar"
    else:
        place = "kept" if keepdims else "reduced"
    if place is None:
        return None
    source = operand.id if isinstance(operand, gast.Name) else None
    return _Offset(stmt.targets[0].id, source, axis, place)


def _unseen(body, readers, once, start, offset):
    """Whether every value computed from ``offset`` (defined at ``start``) stops depending
    on it before any statement but a form-keeping assignment reads it (each such value is
    assigned ``once``: no other statement can replace it)."""
    if offset.name not in once:
        return False
    forms = {offset.name: _Form("shift", 1, offset.place)}
    pending = sorted(set(readers.get(offset.name, ())))
    if not pending:
        return False
    done = set()
    while pending:
        index = pending.pop(0)
        if index in done:
            continue
        done.add(index)
        if len(done) > _MOST_FOLLOWED or index <= start:
            return False
        stmt = body[index]
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            return False
        form = _form(stmt.value, forms, offset)
        if form is None:
            return False
        if form.k != 0:
            name = stmt.targets[0].id
            if name not in once:
                return False
            forms[name] = form
            pending = sorted(set(pending) | set(readers.get(name, ())))
    return True


def _form(value, forms, offset):
    """The :class:`_Form` of ``value``, one A-normal-form operation reading at least one
    name of ``forms``; None when it is neither shifted nor scaled."""
    if isinstance(value, gast.Name):              # a copy (x = _sub) keeps the form
        return forms.get(value.id)
    if isinstance(value, gast.BinOp):
        return _binary(value, forms, offset)
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
        inner = _operand(value.operand, forms)
        if isinstance(inner, _Form) and isinstance(value.op, gast.USub) and inner.kind == "shift":
            return replace(inner, k=-inner.k)
        return inner if isinstance(inner, _Form) else None
    if isinstance(value, gast.Subscript):
        return _subscript(value, forms, offset)
    if isinstance(value, gast.Call):
        return _call(value, forms, offset)
    return None


def _operand(node, forms):
    """The operand's form; ``"constant"`` for a literal number; ``"free"`` for a name that
    does not depend on the offset; None for anything else (it may read a form)."""
    if isinstance(node, gast.Constant):
        return "constant" if type(node.value) in (int, float) else None
    if isinstance(node, gast.Name):
        return forms.get(node.id, "free")
    return None


def _binary(value, forms, offset):
    left, right = _operand(value.left, forms), _operand(value.right, forms)
    if left is None or right is None:
        return None
    shaped = [f for f in (left, right) if isinstance(f, _Form)]
    if not shaped:
        return None                          # cannot happen: the statement reads a form
    if len(shaped) == 2 and left.place != right.place:
        return None
    first = shaped[0]
    widened = any(f.widened for f in shaped) or any(
        f == "free" and not _is_name(node, offset.source)
        for f, node in ((left, value.left), (right, value.right)))
    if isinstance(value.op, (gast.Add, gast.Sub)):
        sign = 1 if isinstance(value.op, gast.Add) else -1
        if all(isinstance(f, _Form) and f.kind == "scale" for f in (left, right)):
            if left.k != right.k:                      # e1 +- e2, both scaled alike
                return None
            return replace(first, widened=widened)
        if any(isinstance(f, _Form) and f.kind != "shift" for f in (left, right)):
            return None
        k = _k(left) + sign * _k(right)
        return _Form("shift", k, first.place, widened)
    if isinstance(value.op, (gast.Mult, gast.Div)):
        if any(isinstance(f, _Form) and f.kind != "scale" for f in (left, right)):
            return None
        sign = 1 if isinstance(value.op, gast.Mult) else -1
        return _Form("scale", _k(left) + sign * _k(right), first.place, widened)
    if isinstance(value.op, gast.MatMult) and first.place == "scalar" and len(shaped) == 1:
        return first if first.kind == "scale" else None  # a scalar factor leaves a product
    return None


def _k(form):
    return form.k if isinstance(form, _Form) else 0


def _subscript(value, forms, offset):
    inner = _operand(value.value, forms)
    if not isinstance(inner, _Form) or any(
            isinstance(n, gast.Name) and n.id in forms for n in walk(value.slice)):
        return None
    if inner.place == "scalar":
        return inner                         # a scalar factor or term survives any indexing
    if inner.place == "reduced" and not (inner.widened and offset.axis >= 0) \
            and _inserts_axis(value.slice, offset.axis):
        return replace(inner, place="kept")  # m[:, None]: the reduced axis back, size 1
    if inner.place == "kept" and not (inner.widened and offset.axis >= 0) \
            and _drops_axis(value.slice, offset.axis):
        return replace(inner, place="reduced")   # m[:, 0]: the kept axis of size 1 gone
    return None


def _inserts_axis(index, axis):
    """Whether ``index`` is ``[:, ..., :, None]`` with the ``None`` at position ``axis``, or
    ``[..., None]`` for axis -1."""
    return _at_axis(index, axis, none_literal)


def _drops_axis(index, axis):
    """Whether ``index`` is ``[:, ..., :, 0]`` with the ``0`` at position ``axis``, or
    ``[..., 0]`` for axis -1."""
    return _at_axis(index, axis, lambda part: int_literal(part) == 0)


def _at_axis(index, axis, last):
    """Whether ``index`` is ``[:, ..., :, p]`` with ``p`` at position ``axis`` (``[..., p]``
    for axis -1), ``last(p)`` true."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    if not parts or not last(parts[-1]):
        return False
    leading = parts[:-1]
    if axis == -1 and len(leading) == 1 and isinstance(leading[0], gast.Constant) \
            and leading[0].value is Ellipsis:
        return True
    return axis == len(leading) and all(whole_slice(p) for p in leading)


def _call(value, forms, offset):
    callee = anno.get(value, Anno.CALLEE)
    if callee in (np.exp, np.log) and len(value.args) == 1 and not value.keywords:
        inner = _operand(value.args[0], forms)
        wanted, made = ("shift", "scale") if callee is np.exp else ("scale", "shift")
        if isinstance(inner, _Form) and inner.kind == wanted:
            return replace(inner, kind=made)
        return None
    if callee is runtime.log_of_softmax and len(value.args) == 3:
        # the log of a softmax p of a (normalize/softmax_logs.py): log(p), which no shift of a
        # along the offset's axis changes, when p's form is none (a ratio the shift left)
        p, a, axis = value.args
        shifted = _operand(a, forms)
        if _operand(p, forms) == "free" and isinstance(shifted, _Form) and \
                shifted.kind == "shift" and shifted.place == "kept" and not shifted.widened \
                and int_literal(axis) == offset.axis:
            return replace(shifted, k=0)
        return None
    if callee is runtime.softmax_ratio and len(value.args) == 4:
        # a softmax e / s (normalize/softmax_logs.py): its value's form is the ratio's
        return _binary(gast.BinOp(value.args[0], gast.Div(), value.args[1]), forms, offset)
    if callee in (np.squeeze, np.expand_dims):
        return _axis_moved(value, callee, forms, offset)
    reduced = reduction(value)
    if reduced is None:
        return None
    kind, operand, axis, keepdims = reduced
    inner = _operand(operand, forms)
    if not isinstance(inner, _Form) or any(
            isinstance(n, gast.Name) and n.id in forms for a in value.args[1:] for n in walk(a)):
        return None
    if inner.kind == "shift" and kind not in _KEEPS_SHIFT:
        return None
    if inner.place == "scalar":
        return inner
    if inner.place != "kept" or axis != offset.axis or (inner.widened and axis >= 0):
        return None
    return inner if keepdims else replace(inner, place="reduced")


def _axis_moved(value, callee, forms, offset):
    """``np.squeeze(x, axis=A)`` of a kept form, ``np.expand_dims(x, A)`` of a reduced one."""
    options = {k.arg: k.value for k in value.keywords}
    axis = int_literal(value.args[1] if len(value.args) > 1 else options.get("axis"))
    inner = _operand(value.args[0], forms) if value.args else None
    if not isinstance(inner, _Form) or axis != offset.axis or inner.widened:
        return None
    before, after = ("kept", "reduced") if callee is np.squeeze else ("reduced", "kept")
    return replace(inner, place=after) if inner.place == before else None


def reduction(value):
    """``(kind, operand, axis, keepdims)`` when ``value`` reduces one operand with a literal
    (or no) axis: ``np.max(x, axis=1, keepdims=True)``, ``x.sum(1)``, ``np.mean(x)``."""
    if not isinstance(value, gast.Call):
        return None
    callee = anno.get(value, Anno.CALLEE)
    args = list(value.args)
    if callee is None and isinstance(value.func, gast.Attribute) \
            and value.func.attr in _REDUCTION_METHODS:
        kind = value.func.attr
        args = [value.func.value] + args
    elif callee in _REDUCTIONS:
        kind = _REDUCTIONS[callee]
    else:
        return None
    options = {k.arg: k.value for k in value.keywords}
    if not args or len(args) > 2 or set(options) - {"axis", "keepdims"}:
        return None
    axis_node = args[1] if len(args) > 1 else options.get("axis")
    axis = int_literal(axis_node)
    keepdims = options.get("keepdims")
    if axis is None and not (axis_node is None or none_literal(axis_node)):
        return None                              # an axis not written as a literal
    if keepdims is not None and not (isinstance(keepdims, gast.Constant)
                                     and type(keepdims.value) is bool):
        return None
    return kind, args[0], axis, keepdims is not None and keepdims.value


def softmax_normalisers(function):
    """The names ``s = np.sum(np.exp(z - np.max(z, axis=A, keepdims=True)), axis=A, keepdims=True)``."""
    definitions = {stmt.targets[0].id: stmt.value for stmt in function.body
                   if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)}
    normalisers = set()
    for s, total in definitions.items():
        summed = reduction(total)
        if summed is None or summed[0] != "sum" or not summed[3] or summed[2] is None \
                or not isinstance(summed[1], gast.Name):
            continue
        exp = _copied(definitions, summed[1].id)
        if not (isinstance(exp, gast.Call) and anno.get(exp, Anno.CALLEE) is np.exp
                and len(exp.args) == 1 and isinstance(exp.args[0], gast.Name)):
            continue
        shifted = _copied(definitions, exp.args[0].id)
        if not (isinstance(shifted, gast.BinOp) and isinstance(shifted.op, gast.Sub)
                and isinstance(shifted.left, gast.Name) and isinstance(shifted.right, gast.Name)):
            continue
        maximum = reduction(definitions.get(shifted.right.id))
        if maximum is not None and maximum[0] == "max" and maximum[3] \
                and _is_name(maximum[1], shifted.left.id) and maximum[2] == summed[2]:
            normalisers.add(s)
    return normalisers


def _copied(definitions, name):
    """The value ``name`` is assigned, through copies (``S_2 = _sub``: a block's
    reassignment, straight-line once its branch is taken)."""
    value = definitions.get(name)
    for _ in range(len(definitions)):
        if not isinstance(value, gast.Name):
            break
        value = definitions.get(value.id)
    return value


def _is_name(node, name):
    return isinstance(node, gast.Name) and node.id == name

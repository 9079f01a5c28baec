"""Activity analysis: which names carry a derivative.

Requires: a body in A-normal form with SSA names (``normalize.ssa``).
Guarantees: :func:`active_names` returns the names that both depend on a
selected input (*varied*) and reach the returned value (*useful*); only they
get adjoints. Values computed through functions without a derivative
(comparisons, ``np.argmax``, ``x.shape``, ``st.stop_gradient``, integer
casts) and statements of ``with st.stop_recording():`` blocks are constants.
A ``with st.grad_of(h)`` block counts as a use of ``h``: it may give ``h`` a
gradient of its own (a synthetic gradient) even where nothing else does.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.analyse.values import greatest_closed
from srctrans.nodes import appended_to, parameter_names, popped_from
from srctrans.rules import ATTRIBUTES, METHODS, REGISTRY, operator_primal
from srctrans.treewalk import walk, walk_names


def active_names(function, wrt, constants=()):
    """The set of active names of ``function`` for the selected parameters ``wrt``.

    ``constants`` are names known to carry no derivative although they are
    computed from varied values (``analyse.invariance``).
    """
    varied = set(wrt)
    constants = frozenset(constants) | (integer_names(function) - set(wrt))
    _forward(function.body, varied, constants)
    useful = set()
    _backward(function.body, useful)
    return varied & useful


_INTEGER_CALLS = (range, len, int, bool)


def integer_names(function):
    """Names computed only from integers (loop ranges, counts, flags, indices): constants.

    A value a generated backward pass restores from its tape (``x = tape.pop()``)
    keeps the kind its other assignments give it, so a loop's ``range`` saved
    on a tape stays a constant in the derivatives of that pass; a name only
    ever popped (and set to ``None``) is not taken for an int.
    """
    values, others = {}, set(parameter_names(function))     # parameters come from outside
    for node in walk(function):
        if isinstance(node, gast.Assign):
            target = node.targets[0]
            if isinstance(target, gast.Name):
                values.setdefault(target.id, []).append(node.value)
            else:
                others.update(n.id for n in walk_names(target))
        elif isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            values.setdefault(node.target.id, []).append(gast.Subscript(
                node.iter, gast.Constant(0, None), gast.Load()))      # an entry of the iterable
    candidates = {name for name, assigned in values.items()
                  if name not in others and any(_tells_kind(v) for v in assigned)}
    return greatest_closed(values, candidates,
                           lambda v, names: popped_from(v) is not None or _integral(v, names))


def _tells_kind(value):
    """Whether an assigned ``value`` can show its name holds ints: a pop or the ``None`` a
    name starts as before a loop cannot (``x = None`` then ``x = stack.pop()`` of floats)."""
    return popped_from(value) is None and not (isinstance(value, gast.Constant)
                                               and value.value is None)


def _integral(value, names):
    if isinstance(value, gast.Constant):
        return value.value is None or type(value.value) in (int, bool)
    if isinstance(value, gast.Name):
        return value.id in names
    if isinstance(value, gast.Subscript):
        return _integral(value.value, names) and _integral_index(value.slice, names)
    if isinstance(value, (gast.Compare, gast.BoolOp)):
        return True
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, gast.Not) or _integral(value.operand, names)
    if isinstance(value, gast.BinOp):
        return _integral(value.left, names) and _integral(value.right, names)
    if isinstance(value, gast.Call):
        callee = anno.get(value, Anno.CALLEE)
        return any(callee is f for f in _INTEGER_CALLS)        # range(n), len(xs), int(s)
    return False


def _integral_index(index, names):
    return _integral(index, names) or isinstance(index, gast.Slice)


def _forward(statements, varied, constants):
    """Grow ``varied`` through ``statements``; returns True when it grew."""
    grew = False
    for stmt in statements:
        if isinstance(stmt, gast.If):
            grew |= _forward(stmt.body, varied, constants)
            grew |= _forward(stmt.orelse, varied, constants)
        elif isinstance(stmt, (gast.For, gast.While)):
            while _forward(stmt.body, varied, constants):     # until a pass adds nothing
                grew = True
        elif not anno.get(stmt, Anno.NO_GRADIENT):
            targets, value = _definition(stmt)
            new = [t for t in targets if t not in varied and t not in constants]
            if new and _propagates(value) and _reads(value) & varied:
                varied.update(new)
                grew = True
    return grew


def _backward(statements, useful):
    """Grow ``useful`` through ``statements`` read backwards; returns True when it grew."""
    grew = False
    for stmt in reversed(statements):
        if isinstance(stmt, gast.Return):
            grew |= _add(useful, _reads(stmt.value))
        elif isinstance(stmt, gast.If):
            grew |= _backward(stmt.body, useful)
            grew |= _backward(stmt.orelse, useful)
        elif isinstance(stmt, (gast.For, gast.While)):
            while _backward(stmt.body, useful):
                grew = True
        elif isinstance(stmt, gast.With):               # with st.grad_of(h): may give h a gradient
            grew |= _add(useful, _reads(stmt.items[0].context_expr.args[0]))
        elif not anno.get(stmt, Anno.NO_GRADIENT):
            targets, value = _definition(stmt)
            if set(targets) & useful and _propagates(value):
                grew |= _add(useful, _reads(value))
    return grew


def _add(names, more):
    before = len(names)
    names |= more
    return len(names) != before


def _definition(stmt):
    """(names assigned, value expression) of an ANF statement, or ((), None)."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            return (target.id,), stmt.value
        if isinstance(target, gast.Subscript):        # y[i] = v: the new y is made of the old y and v
            array = gast.Name(target.value.id, gast.Load(), None, None)
            return (target.value.id,), gast.Tuple([stmt.value, array], gast.Load())
        return tuple(e.id for e in target.elts), stmt.value
    appended = appended_to(stmt)
    if appended is not None:                          # xs.append(v): the list now holds v
        xs, value = appended
        return (xs,), gast.Tuple([value, gast.Name(xs, gast.Load(), None, None)], gast.Load())
    return (), None


def _reads(expr):
    if expr is None:
        return set()
    return {n.id for n in walk_names(expr) if isinstance(n.ctx, gast.Load)}


def _propagates(value):
    """Whether a derivative can flow from ``value``'s operands to its result."""
    if isinstance(value, gast.Compare):
        return False
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return not REGISTRY.is_nondifferentiable(operator_primal(value.op))
    if isinstance(value, gast.Attribute):
        return ATTRIBUTES.get(value.attr, True) is not None
    if isinstance(value, gast.Call):
        if anno.get(value, Anno.CONSTANT):
            return False
        callee = anno.get(value, Anno.CALLEE)
        if callee is None and isinstance(value.func, gast.Attribute):
            method = METHODS.get(value.func.attr)
            callee = method.primal if method else None
        return callee is None or not REGISTRY.is_nondifferentiable(callee)
    return True

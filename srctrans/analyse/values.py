"""Which names certainly hold arrays or numbers (never tuples or lists).

Requires: a body in A-normal form with SSA names.
Guarantees: :func:`array_valued` returns names defined by arithmetic on an
array or number, by a NumPy function with a derivative rule, or by an array
method or ``.T``. Their cotangents add with ``+``; other cotangents (of
parameters, subscripts, unpacked values, results of user functions, of
``list``/``tuple`` and of runtime helpers) may be tuples and add through
``rt.add``.
"""

import gast
import numpy as np

from srctrans import runtime

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import in_runtime, int_literal, parameter_names, popped_from
from srctrans.rules import METHODS, REGISTRY
from srctrans.treewalk import walk, walk_names

# Functions and methods whose result is a new array (or a NumPy number), never a view of an
# argument (but np.array's with copy=False: see :func:`makes_fresh`).
FRESH_FUNCTIONS = frozenset({
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.array, np.copy, np.stack, np.concatenate, np.hstack, np.vstack,
    np.arange, np.linspace, np.eye, np.identity, list,
    runtime.zeros_like, runtime.zeros_of,       # the zero tangents of forward-mode code
    runtime.restored_at, runtime.zero_at, runtime.copied,   # copies in generated code
    runtime.writable_copy, runtime.argument_copy, runtime.entry_copy, runtime.dict_copy,
    runtime.snapshot,
    runtime.concat, runtime.repeated,
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std,   # reductions
})
_FRESH_METHODS = frozenset({"copy", "astype"})


def fresh_arrays(function):
    """Names that only ever hold arrays the function made itself (safe to write into).

    A parameter, or anything that may be a view of one (``x.T``, ``x[1:]``,
    ``np.asarray(x)``, ``y = x``), is not fresh: writing into it would change
    the caller's array.
    """
    values, doubtful = {}, set()
    for stmt in walk(function):
        if not isinstance(stmt, gast.Assign):
            continue
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            values.setdefault(target.id, []).append(stmt.value)
        elif _paired(target, stmt.value):                 # xs, ys = [], []
            for name, value in zip(target.elts, stmt.value.elts):
                values.setdefault(name.id, []).append(value)
        elif isinstance(target, gast.Tuple):
            doubtful.update(n.id for n in walk_names(target))
    return greatest_closed(
        values, set(values) - doubtful,
        lambda v, fresh: makes_new_value(v) or isinstance(v, gast.Name) and v.id in fresh
        or isinstance(v, gast.Constant) and v.value is None)               # a placeholder


def _paired(target, value):
    """Whether ``target = value`` binds names to the entries of a display one by one."""
    return (isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple, gast.List))
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, gast.Name) for t in target.elts)
            and not any(isinstance(v, gast.Starred) for v in value.elts))


def greatest_closed(values, candidates, accepts):
    """The largest subset of ``candidates`` every one of whose names has only accepted values.

    ``values`` maps a name to the expressions assigned to it; ``accepts(value,
    names)`` judges one of them given the subset being built, so copies
    between names of the subset (``y = x``, loops included) are accepted.
    """
    names = set(candidates)
    changed = True
    while changed:
        changed = False
        for name in list(names):
            if not all(accepts(v, names) for v in values[name]):
                names.discard(name)
                changed = True
    return names


_BOOLEAN_CALLS = frozenset({
    np.isnan, np.isinf, np.isfinite, np.logical_and, np.logical_or, np.logical_not,
    np.logical_xor, np.greater, np.greater_equal, np.less, np.less_equal, np.equal,
    np.not_equal, np.signbit, np.isclose})


def maybe_not_float(function, wrt):
    """Names that may hold booleans or integers: ``1.0 * name`` is not ``name`` for them.

    Comparison and logical results, parameters not selected (a mask passed in),
    and names read from those (``m = mask[i]``, ``m = c``). Multiplying a
    boolean mask by ``1.0`` makes it a float array, whose sums count; two
    boolean arrays added are their logical or.
    """
    names = {p for p in parameter_names(function) if p not in wrt}
    for stmt in walk(function):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            continue
        value = stmt.value
        if isinstance(value, (gast.Compare, gast.BoolOp)) or (
                isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.Not, gast.Invert))):
            names.add(stmt.targets[0].id)
        elif isinstance(value, gast.Call) and any(
                anno.get(value, Anno.CALLEE) is f for f in _BOOLEAN_CALLS):
            names.add(stmt.targets[0].id)
        elif isinstance(value, (gast.Name, gast.Subscript, gast.Attribute)):
            root = value
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            if isinstance(root, gast.Name) and root.id in names:
                names.add(stmt.targets[0].id)
    return frozenset(names)


def dict_valued(function):
    """Names every assignment of which is a dict display (``d = {}``): item writes are dict writes.
    (Placeholders and values restored from a tape do not count.)"""
    values, doubtful = {}, set()
    for stmt in walk(function):
        if not isinstance(stmt, gast.Assign):
            continue
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            values.setdefault(target.id, []).append(stmt.value)
        elif _paired(target, stmt.value):                 # xs, hs = {}, {}
            for name, value in zip(target.elts, stmt.value.elts):
                values.setdefault(name.id, []).append(value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            doubtful.update(n.id for n in walk_names(target))
    candidates = {name for name, assigned in values.items() if name not in doubtful
                  and any(isinstance(v, gast.Dict) or _restored_entry(v) or _dict_copy(v)
                          or _zeros_of(v) is not None or _own_copy_of(v) is not None
                          for v in assigned)}
    return greatest_closed(values, candidates, lambda v, dicts: isinstance(v, gast.Dict)
                           or _restores(v) or isinstance(v, gast.Name) and v.id in dicts
                           or _zeros_of(v) in dicts or _dict_copy(v)
                           or _own_copy_of(v) in dicts)


def _dict_copy(value):
    return isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is runtime.dict_copy


def _own_copy_of(value):
    """``name`` for ``rt.writable_copy(name)`` (a tangent's own copy, as forward mode makes
    the tangent of a dict it writes into: a dict's copy is a dict), else None."""
    if (isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is runtime.writable_copy
            and len(value.args) == 1 and isinstance(value.args[0], gast.Name)):
        return value.args[0].id
    return None


def _zeros_of(value):
    """``name`` for ``rt.zeros_like(name)`` (a tangent made like a dict is a dict), else None."""
    if (isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is runtime.zeros_like
            and len(value.args) == 1 and isinstance(value.args[0], gast.Name)):
        return value.args[0].id
    return None


def _restores(value):
    """``None`` (a saved name's placeholder), ``tape.pop()`` or ``rt.restored_entry(d, ...)``
    (its old value, restored by a generated backward pass)."""
    return (isinstance(value, gast.Constant) and value.value is None
            or popped_from(value) is not None or _restored_entry(value))


def _restored_entry(value):
    return isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is runtime.restored_entry


def written_arrays(function):
    """Names written into by a subscript assignment (``y[i] = v``) anywhere in the function."""
    return {stmt.targets[0].value.id for stmt in walk(function)
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)
            and isinstance(stmt.targets[0].value, gast.Name)}


def makes_fresh(callee, call):
    """Whether ``call`` of ``callee`` returns new memory of its own: a function of
    :data:`FRESH_FUNCTIONS`, not told ``copy=`` (``np.array(x, copy=False)`` may be ``x``) or
    ``out=`` (``np.sum(x, axis=0, out=y)`` is ``y``)."""
    try:
        return callee in FRESH_FUNCTIONS and not any(k.arg in ("copy", "out")
                                                     for k in call.keywords)
    except TypeError:                     # unhashable
        return False


def makes_new_value(value):
    """Whether the expression ``value`` makes a new array (or number, list, dict) of its own:
    arithmetic, a display, a call of :data:`FRESH_FUNCTIONS` or of an elementwise function,
    ``.copy()`` or ``.astype(...)``; never one told ``out=`` (nor ``np.array(x, copy=False)``:
    :func:`makes_fresh`)."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.List, gast.Dict)):
        return True
    if isinstance(value, gast.Call):
        callee = anno.get(value, Anno.CALLEE)
        if callee is None:
            return isinstance(value.func, gast.Attribute) and value.func.attr in _FRESH_METHODS
        if callee is np.ndarray:          # new memory, unless it is given a buffer to use
            return not any(k.arg == "buffer" for k in value.keywords) and len(value.args) < 3
        if any(k.arg == "out" for k in value.keywords):
            return False                  # (a reduction or ufunc told where to write: that)
        rule = REGISTRY.lookup(callee)
        return makes_fresh(callee, value) or (rule is not None and rule.elementwise)
    return False


def array_valued(function):
    """The set of names of ``function`` that certainly hold arrays or numbers."""
    known, doubtful = set(), set()
    for stmt in walk(function):            # every assignment, nested ones too
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Name) and _is_array(stmt.value, known):
                known.add(target.id)
            else:
                doubtful.update(n.id for n in walk_names(target))
    return known - doubtful


def _is_array(value, known):
    if isinstance(value, gast.Constant):
        return isinstance(value.value, (int, float, complex))
    if isinstance(value, gast.Name):
        return value.id in known
    if isinstance(value, gast.BinOp):
        if not isinstance(value.op, (gast.Add, gast.Mult)):
            return True                 # only + and * also mean something for tuples and lists
        return _is_array(value.left, known) or _is_array(value.right, known)
    if isinstance(value, gast.UnaryOp):
        return True
    if isinstance(value, gast.Attribute):
        return value.attr == "T"
    if isinstance(value, gast.Call):
        callee = anno.get(value, Anno.CALLEE)
        if callee is None:
            return isinstance(value.func, gast.Attribute) and value.func.attr in METHODS
        rule = REGISTRY.lookup(callee)     # srctrans's own NumPy rules (not tuple-valued helpers)
        return rule is not None and rule.vjp is not None and not _may_return_container(callee)
    return False


def _may_return_container(callee):
    """``list(...)``, ``tuple(...)``, the runtime helpers (some return tuples or dicts), and
    the NumPy functions declared to return tuples (``np.linalg.slogdet``)."""
    if callee is list or callee is tuple:
        return True
    return in_runtime(callee) or REGISTRY.is_tuple_valued(callee)


def index_integers(statements):
    """Names of ``statements`` (a generated pass, loops included) that only ever hold a
    Python ``int``, so that ``x[name]`` drops an axis of ``x``: an element of a ``range``
    (a ``for`` loop's target over one, ``_range[_iteration]``), an int literal (not a
    bool: ``x[True]`` adds an axis), ``len(...)``, and ``+ - * // %`` and negation of
    these. A value restored from the tape (``t = tape.pop()``) is one its other
    assignments gave, and counts as none of them, as does the tape's placeholder (``t =
    None`` before a loop, never read as a value); a parameter, whose value comes from
    outside, is none. ``x[t - 1]`` then has a shape known from ``x``'s
    (``optimise.expression_shapes``)."""
    values, others = _bindings(statements)
    ranges = greatest_closed(values, set(values) - others,
                             lambda v, names: _is_range(v) or _is_name_in(v, names))
    return greatest_closed(values, set(values) - others - ranges,
                           lambda v, names: _is_int(v, names, ranges))


def natural_ranges(statements):
    """``{name: the least start}`` of the names ``statements`` assign only ``range(stop)`` or
    ``range(start, stop[, step])`` with a literal start of at least 0 and a positive literal
    step: distinct steps of a loop over one get distinct, non-negative indices (which pick
    distinct entries), each at least the start. The tape's placeholders and restores count
    as none of the assignments, as in :func:`index_integers`."""
    values, others = _bindings(statements)
    found = {}
    for name, assigned in values.items():
        starts = [_natural_start(value) for value in assigned]
        if name not in others and None not in starts:
            found[name] = min(starts)
    return found


def _natural_start(value):
    """The start of ``value``, a natural range (see :func:`natural_ranges`), else None."""
    if not (_is_range(value) and not value.keywords and 1 <= len(value.args) <= 3):
        return None
    start = int_literal(value.args[0]) if len(value.args) > 1 else 0
    step = int_literal(value.args[2]) if len(value.args) == 3 else 1
    if start is None or start < 0 or step is None or step <= 0:
        return None
    return start


def _bindings(statements):
    """``(values, others)``: name -> the values single-name assignments and ``for`` loops
    (their iterable's entry) give it, the tape's aside, and the names bound otherwise
    (unpacked, augmented)."""
    values, others = {}, set()
    for node in (n for stmt in statements for n in walk(stmt)):
        if anno.get(node, Anno.SAVES) is not None:
            continue                                   # a tape's push, pop or placeholder
        if isinstance(node, gast.Assign):
            target = node.targets[0]
            if len(node.targets) == 1 and isinstance(target, gast.Name):
                if popped_from(node.value) is None:
                    values.setdefault(target.id, []).append(node.value)
            else:
                others.update(_stored(node.targets))
        elif isinstance(node, gast.For):
            if isinstance(node.target, gast.Name):
                values.setdefault(node.target.id, []).append(
                    gast.Subscript(node.iter, gast.Constant(0, None), gast.Load()))
            else:
                others.update(_stored([node.target]))
        elif isinstance(node, (gast.AugAssign, gast.AnnAssign)):
            others.update(_stored([node.target]))
    return values, others


def _stored(targets):
    """The names ``targets`` assign (not those an indexed target reads: ``x[t] = v``)."""
    return {n.id for target in targets for n in walk(target)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _is_range(value):
    """``range(...)``: the builtin, as the resolver found it (or as generated code calls it)."""
    if not isinstance(value, gast.Call):
        return False
    callee = anno.get(value, Anno.CALLEE)
    return callee is range or (callee is None and isinstance(value.func, gast.Name)
                               and value.func.id == "range")


def _is_name_in(value, names):
    return isinstance(value, gast.Name) and value.id in names


# the operators that give an int of ints
INT_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def _is_int(value, names, ranges):
    """Whether ``value`` is a Python int given that ``names`` hold ints, ``ranges`` ranges."""
    if isinstance(value, gast.Constant):
        return type(value.value) is int
    if isinstance(value, gast.Name):
        return value.id in names
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, gast.USub) and _is_int(value.operand, names, ranges)
    if isinstance(value, gast.BinOp):
        return (isinstance(value.op, INT_OPERATORS) and _is_int(value.left, names, ranges)
                and _is_int(value.right, names, ranges))
    if isinstance(value, gast.Subscript):             # an element of a range
        return ((_is_range(value.value) or _is_name_in(value.value, ranges))
                and _is_int(value.slice, names, ranges))
    if isinstance(value, gast.Call):
        return anno.get(value, Anno.CALLEE) is len
    return False

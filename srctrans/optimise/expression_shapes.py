"""The shapes of expressions in code specialised on the shapes of the values it reads.

Requires: the shapes of names (measured on one call, then inferred), and expressions of
generated code (gast), each call annotated with what it calls where srctrans wrote it.
Guarantees: :func:`shape_of` gives the shape an expression has for every call whose
names have those shapes, or None where it cannot tell (a container, a value-dependent
shape); :func:`infer_shapes` adds the shapes of names assigned such expressions, and
:func:`one_valued` leaves out the names that hold more than one value where the
measuring run saw only the last.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.analyse.einsum_labels import einsum_labels
from srctrans.analyse.values import INT_OPERATORS, index_integers
from srctrans.annotations import Anno
from srctrans.nodes import int_literal
from srctrans.optimise.shape_tables import (  # noqa: F401  (REDUCTION_METHODS: read from here too)
    BROADCASTING, BROADCASTING_HELPERS, PAIR_SHAPES_OF_ARGUMENTS, REDUCTION_METHODS,
    RESULT_SHAPE_OF_ARGUMENT, SHAPE_REDUCING_METHODS, WHOLE_REDUCTIONS)
from srctrans.treewalk import walk


class _IntegerShape(tuple):
    """The shape ``()`` of a name that only ever holds a Python int
    (``analyse.values.index_integers``): it equals ``()``, and as an index it drops an
    axis (a number of unknown type may be a bool, which adds one)."""


INTEGER = _IntegerShape()


def one_valued(shapes, statements, parameters, loops):
    """``shapes`` without the names that hold more than one value in a run of code without
    ``loops``: a parameter assigned again, or a name assigned at two places (in a block,
    where SSA renames nothing). The measuring run of such code saw each name's last value
    only, whose shape a read before the last assignment need not have (``s = np.tanh(y) -
    np.sum(s)`` in a branch, ``s`` a number that becomes an array). With loops, the run
    watched every line and left out the names whose shape changed. :func:`infer_shapes`
    gives such a name back the shape all its assignments agree on, if they do."""
    if loops:
        return shapes
    stores = _assignments(statements, parameters)
    return {name: shape for name, shape in shapes.items() if stores.get(name, 0) <= 1}


def _assignments(statements, parameters):
    """name -> how many values ``statements`` give it: its stores (not a tape's
    placeholders), and its argument for a parameter."""
    assigned = dict.fromkeys(parameters, 1)
    for stmt in statements:
        for node in walk(stmt):
            if (isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)
                    and anno.get(stmt, Anno.SAVES) is None):
                assigned[node.id] = assigned.get(node.id, 0) + 1
    return assigned


def entry_key(name, index):
    """The key under which known shapes hold the shape of entry ``index`` of the pair a name
    holds (``_grads = rt.solve_grads(...)``: ``_grads[0]``); no name is spelled so."""
    return f"{name}[{index}]"


def record_pair(name, value, known):
    """Put the shapes of the entries of ``value`` assigned to ``name`` into ``known`` (a call
    of a helper of :data:`PAIR_SHAPES_OF_ARGUMENTS`, ``rt.einsum_grads``' cotangents, or a
    tuple display, each entry of known shape; all of them also as a tuple of shapes, None
    for an unknown one, under ``name[:]``: the cotangent of a split's pieces, which a
    concatenation joins; not a list's, whose entries a write may replace); forget them
    otherwise (``name`` holds something else now)."""
    shapes = entry_shapes(value, known)
    entries = known.pop(entry_key(name, ":"), ())
    for index in range(max(2, len(entries))):
        known.pop(entry_key(name, index), None)
    if shapes is None and isinstance(value, gast.Tuple):
        shapes = tuple(shape_of(entry, known) for entry in value.elts)
    if shapes is not None:                # (all of them: forgotten together when name changes)
        known[entry_key(name, ":")] = shapes
    for index, shape in enumerate(shapes or ()):
        if shape is not None:
            known[entry_key(name, index)] = shape


def entry_shapes(value, known):
    """The shapes of the entries of ``value``, a call of a helper of
    :data:`PAIR_SHAPES_OF_ARGUMENTS` or ``rt.einsum_grads`` (each operand's shape), or None."""
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)):
        return None
    if is_runtime_helper_call(value, "einsum_grads") and len(value.args) == 3 \
            and isinstance(value.args[2], gast.Tuple) and not value.keywords:
        return tuple(shape_of(operand, known) for operand in value.args[2].elts)
    positions = PAIR_SHAPES_OF_ARGUMENTS.get(value.func.attr)
    if positions is None or not is_runtime_helper_call(value, value.func.attr) \
            or len(value.args) <= max(positions) or value.keywords:
        return None
    return tuple(shape_of(value.args[position], known) for position in positions)


def infer_shapes(statements, shapes, parameters=()):
    """``shapes`` (name -> shape), with those of names assigned once from values of known shape,
    and :data:`INTEGER` for the names that only hold ints.

    The generic forward pass folds single-use temporaries into the expression
    that reads them, so the run that measured ``shapes`` never saw them; their
    shapes follow from their operands' (``_mul = a * x``: the broadcast of
    ``a`` and ``x``). A name assigned more than once keeps out: its shape may
    change from one assignment to the next.

    >>> body = gast.parse("_mul = 0.9 * x\\n_add = _mul + t\\ny = y * 2.0\\ny = y @ w").body
    >>> sorted(infer_shapes(body, {"x": (3,), "t": (), "w": (3, 2)}).items())
    [('_add', (3,)), ('_mul', (3,)), ('t', ()), ('w', (3, 2)), ('x', (3,))]
    """
    assigned = _assignments(statements, parameters)
    sites = {}                                       # name -> values it is assigned

    def visit(block, known, record=False):
        for stmt in block:
            if anno.get(stmt, Anno.SAVES) is not None:
                continue
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                visit(stmt.body, known, record)
                visit(stmt.orelse, known, record)
            elif (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                  and isinstance(stmt.targets[0], gast.Name)):
                name = stmt.targets[0].id
                if record:
                    sites.setdefault(name, []).append(stmt.value)
                if name not in known and assigned.get(name) == 1:
                    shape = shape_of(stmt.value, known)
                    if shape is not None:
                        known[name] = shape
                    else:
                        record_pair(name, stmt.value, known)     # (rt.solve_grads' pair)

    known = dict(shapes)
    known.update(dict.fromkeys(index_integers(statements), INTEGER))
    visit(statements, known, record=True)
    # a name assigned at several places (the branches of an if, a loop's body) has one
    # shape S when every place gives it S, from operands of known shape or from the name
    # itself taken to be S (r = 0.5 * r in a loop keeps r's shape: by induction, each
    # assignment keeps S); then what follows from it
    joined = True
    while joined:
        joined = False
        for name, values in sites.items():
            if name in known or assigned.get(name) != len(values) or len(values) < 2:
                continue
            for shape in {shape_of(value, known) for value in values} - {None}:
                trial = dict(known, **{name: shape})
                visit(statements, trial)                 # what follows from the guess
                if all(shape_of(value, trial) == shape for value in sites[name]):
                    known, joined = trial, True
                    break
    return known


def _matmul_shape(left, right):
    """The shape of ``a @ b`` for matrices, vectors and stacks of matrices of these shapes, or
    None."""
    if len(left) == 2 and len(right) == 2 and left[1] == right[0]:
        return (left[0], right[1])
    if len(left) == 2 and len(right) == 1 and left[1] == right[0]:
        return (left[0],)
    if len(left) == 1 and len(right) == 2 and left[0] == right[0]:
        return (right[1],)
    if len(left) == 1 and len(right) == 1 and left[0] == right[0]:
        return ()
    if len(left) >= 2 and len(right) >= 2 and left[-1] == right[-2]:     # stacks of matrices
        batch = _broadcast(left[:-2], right[:-2])
        return None if batch is None else batch + (left[-2], right[-1])
    return None


def shape_of(expression, known):
    """The shape of ``expression`` given the shapes of names, or None if unknown."""
    if isinstance(expression, gast.Name):
        return known.get(expression.id)
    if isinstance(expression, gast.Constant):
        return () if isinstance(expression.value, (int, float)) else None
    if isinstance(expression, gast.UnaryOp):
        return shape_of(expression.operand, known)
    if isinstance(expression, gast.BinOp):
        left, right = shape_of(expression.left, known), shape_of(expression.right, known)
        if left is None or right is None:
            return None
        if isinstance(expression.op, gast.MatMult):
            return _matmul_shape(left, right)
        return _broadcast(left, right)
    if isinstance(expression, gast.Compare) and len(expression.ops) == 1 \
            and not isinstance(expression.ops[0], (gast.Is, gast.IsNot, gast.In, gast.NotIn)):
        left, right = shape_of(expression.left, known), shape_of(expression.comparators[0], known)
        return None if left is None or right is None else _broadcast(left, right)
    if isinstance(expression, gast.Subscript):
        if isinstance(expression.value, gast.Attribute) and expression.value.attr == "shape" \
                and int_literal(expression.slice) is not None \
                and shape_of(expression.value.value, known):
            return INTEGER                                      # x.shape[0]: an int
        index = int_literal(expression.slice)
        if index is not None and index >= 0:            # an entry of a pair, of a display
            entries = entry_shapes(expression.value, known) if isinstance(
                expression.value, gast.Call) else None
            if isinstance(expression.value, gast.Tuple):
                entries = [shape_of(e, known) for e in expression.value.elts]
            if entries is not None:
                return entries[index] if index < len(entries) else None
            if isinstance(expression.value, gast.Name) and \
                    entry_key(expression.value.id, index) in known:
                return known[entry_key(expression.value.id, index)]
        return _subscript_shape(expression.value, expression.slice, known)
    if isinstance(expression, gast.Attribute) and expression.attr == "T":
        inner = shape_of(expression.value, known)
        return None if inner is None else tuple(reversed(inner))
    if isinstance(expression, gast.Call) and isinstance(expression.func, gast.Attribute) \
            and expression.func.attr in ("transpose", "swapaxes") and not expression.keywords:
        moved = _moved_shape(expression, known)
        if moved is not None:
            return moved
    if isinstance(expression, gast.Call) and called(expression) is np.concatenate:
        return _concatenated_shape(expression, known)
    if isinstance(expression, gast.Call) and called(expression) is np.take_along_axis:
        return _taken_along_shape(expression, known)
    if isinstance(expression, gast.Call) and any(called(expression) is f
                                                 for f in (np.convolve, np.correlate)):
        return _convolved_shape(expression, known)
    if isinstance(expression, gast.Call) and called(expression) is np.linalg.solve \
            and len(expression.args) == 2 and not expression.keywords:
        a, b = (shape_of(v, known) for v in expression.args)        # one matrix, no batch
        return b if a is not None and b is not None and len(a) == 2 and a[0] == a[1] \
            and 1 <= len(b) <= 2 and b[0] == a[0] else None
    if isinstance(expression, gast.Call) and called(expression) is np.einsum \
            and expression.args and isinstance(expression.args[0], gast.Constant) \
            and not expression.keywords:
        labels = einsum_labels(expression.args[0].value,
                               [shape_of(a, known) for a in expression.args[1:]])
        return None if labels is None else labels.shape
    if isinstance(expression, gast.Call) and not expression.keywords:
        callee = called(expression)
        if callee is np.matmul and len(expression.args) == 2:       # (a ufunc with a signature)
            left, right = (shape_of(a, known) for a in expression.args)
            return None if left is None or right is None else _matmul_shape(left, right)
        if isinstance(callee, np.ufunc) and callee.signature is None \
                and callee.nin == len(expression.args) and callee.nout == 1:
            shapes = [shape_of(a, known) for a in expression.args]   # np.tanh(x), np.maximum(x, 0)
            if None in shapes:
                return None
            try:
                return tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                return None
        if callee in BROADCASTING and len(expression.args) == 3:     # np.clip(r, lo, hi)
            shapes = [shape_of(a, known) for a in expression.args]
            try:
                return None if None in shapes else tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                return None
        if any(callee is f for f in WHOLE_REDUCTIONS) and len(expression.args) == 1 \
                and shape_of(expression.args[0], known) is not None:
            return ()                                                # np.sum(x)
        if callee is len and len(expression.args) == 1:
            return INTEGER                                           # len(X): an int
    if isinstance(expression, gast.Call) and isinstance(expression.func, gast.Attribute):
        if any(is_runtime_helper_call(expression, h) for h in BROADCASTING_HELPERS) \
                and len(expression.args) == 2:                 # rt.add, rt.abs_grad(g, x)
            left, right = (shape_of(a, known) for a in expression.args)
            return _broadcast(left, right)
        if is_runtime_helper_call(expression, "clip_mask"):    # x, lo, hi: None is no bound
            shapes = [shape_of(a, known) for a in expression.args
                      if not (isinstance(a, gast.Constant) and a.value is None)]
            try:
                return None if None in shapes else tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                return None
        if is_runtime_helper_call(expression, "written_part") and len(expression.args) == 2:
            return basic_index_shape(*expression.args, known)
        if _is_distribution_factor(expression):       # rt.scipy_stats.cdf_dx('norm', x, ...)
            shapes = [shape_of(a, known) for a in expression.args
                      if not (isinstance(a, gast.Constant) and (a.value is None
                                                                or isinstance(a.value, str)))]
            try:
                return None if None in shapes else tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                return None
        index = RESULT_SHAPE_OF_ARGUMENT.get(expression.func.attr)
        if index is not None and len(expression.args) > index:
            return shape_of(expression.args[index], known)
        if expression.func.attr in SHAPE_REDUCING_METHODS:
            return _summed_shape(expression, known)
    return None


def _convolved_shape(call, known):
    """The shape of ``np.convolve(a, v, mode)`` or ``np.correlate`` (vectors of known length,
    the mode a literal, positional or ``mode=``), or None."""
    modes = [k.value for k in call.keywords if k.arg == "mode"] + list(call.args[2:3])
    if not 2 <= len(call.args) <= 3 or len(modes) > 1 or \
            any(k.arg != "mode" for k in call.keywords):
        return None
    default = "full" if called(call) is np.convolve else "valid"
    mode = modes[0].value if modes and isinstance(modes[0], gast.Constant) else \
        (default if not modes else None)
    shapes = [shape_of(a, known) for a in call.args[:2]]
    if any(s is None or len(s) != 1 for s in shapes) or 0 in (shapes[0] + shapes[1]):
        return None
    n, m = shapes[0][0], shapes[1][0]
    lengths = {"full": n + m - 1, "same": max(n, m), "valid": max(n, m) - min(n, m) + 1}
    return (lengths[mode],) if mode in lengths else None


def _moved_shape(call, known):
    """The shape of ``x.transpose(order)``, ``x.transpose()`` or ``x.swapaxes(a, b)`` (int
    literals) of an array ``x`` of known shape, or None."""
    inner = shape_of(call.func.value, known)
    if not inner:
        return None
    rank = len(inner)
    axes = [int_literal(a) for a in call.args]
    if call.func.attr == "transpose" and len(call.args) == 1 and \
            isinstance(call.args[0], gast.Tuple):
        axes = [int_literal(a) for a in call.args[0].elts]
    if None in axes or not all(-rank <= a < rank for a in axes):
        return None
    if call.func.attr == "swapaxes":
        if len(axes) != 2:
            return None
        moved = list(inner)
        moved[axes[0]], moved[axes[1]] = inner[axes[1]], inner[axes[0]]
        return tuple(moved)
    if not axes:
        return tuple(reversed(inner))
    if sorted(a % rank for a in axes) != list(range(rank)):
        return None
    return tuple(inner[a] for a in axes)


def _concatenated_shape(call, known):
    """The shape of ``np.concatenate(parts, axis=k)`` (``k`` an int literal, 0 by default;
    ``parts`` a tuple or list display, or a name holding one: ``record_pair``), or None."""
    axes = [k.value for k in call.keywords if k.arg == "axis"] + list(call.args[1:])
    if not call.args or len(axes) > 1 or any(k.arg != "axis" for k in call.keywords):
        return None
    axis = int_literal(axes[0]) if axes else 0
    parts = call.args[0]
    if isinstance(parts, (gast.Tuple, gast.List)):
        shapes = tuple(shape_of(part, known) for part in parts.elts)
    elif isinstance(parts, gast.Name):
        shapes = known.get(entry_key(parts.id, ":"))
    else:
        return None
    if axis is None or not shapes or None in shapes:
        return None
    ndim = len(shapes[0])
    if not -ndim <= axis < ndim or any(len(s) != ndim for s in shapes):
        return None
    axis %= ndim
    rest = {s[:axis] + s[axis + 1:] for s in shapes}
    if len(rest) != 1 or not all(type(s[axis]) is int for s in shapes):
        return None
    return shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1:]


def _taken_along_shape(call, known):
    """The shape of ``np.take_along_axis(a, indices, axis=k)`` (``k`` an int literal; ``a`` and
    ``indices`` of one rank, broadcast against each other but along ``k``), or None."""
    options = {k.arg: k.value for k in call.keywords}
    if len(call.args) + len(options) != 3 or set(options) - {"axis"} or len(call.args) < 2:
        return None
    axis = int_literal(call.args[2] if len(call.args) == 3 else options["axis"])
    a, indices = shape_of(call.args[0], known), shape_of(call.args[1], known)
    if axis is None or a is None or indices is None or len(a) != len(indices) \
            or not -len(a) <= axis < len(a):
        return None
    axis %= len(a)
    try:
        rest = np.broadcast_shapes(a[:axis] + a[axis + 1:], indices[:axis] + indices[axis + 1:])
    except (ValueError, TypeError):
        return None
    return tuple(rest[:axis]) + (indices[axis],) + tuple(rest[axis:])


# The factors of a distribution's derivatives (runtime/scipy_stats.py), elementwise in their
# numbers and arrays (the family's name, a shape parameter's position and None aside).
_DISTRIBUTION_FACTORS = frozenset({"logpdf_dx", "logpdf_dscale", "logpdf_dshape", "cdf_dx",
                                   "cdf_dscale", "logcdf_dx", "logcdf_dscale"})


def _is_distribution_factor(call):
    """Whether ``call`` is ``rt.scipy_stats.f(...)``, ``f`` of :data:`_DISTRIBUTION_FACTORS`,
    with positional arguments only."""
    owner = call.func.value
    return (call.func.attr in _DISTRIBUTION_FACTORS and not call.keywords
            and isinstance(owner, gast.Attribute) and owner.attr == "scipy_stats"
            and isinstance(owner.value, gast.Name))


def _subscript_shape(value, index, known):
    """The shape of ``value[index]`` for an index of ints (:data:`INTEGER` names, int
    literals and their sums and products), slices with literal bounds and ``None`` (a new
    axis of length 1); None otherwise."""
    inner = shape_of(value, known)
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    taking = [p for p in parts if not (isinstance(p, gast.Constant) and p.value is None)]
    if inner is None or len(taking) > len(inner):
        return None
    shape, axes = [], iter(inner)
    for part in parts:
        if isinstance(part, gast.Constant) and part.value is None:
            shape.append(1)
            continue
        length = next(axes)
        if isinstance(part, gast.Slice):
            bounds = [None if b is None else int_literal(b) for b in (part.lower, part.upper, part.step)]
            if any(b is None and given is not None
                   for b, given in zip(bounds, (part.lower, part.upper, part.step))) \
                    or bounds[2] == 0:
                return None
            shape.append(len(range(*slice(*bounds).indices(length))))
        elif not _is_integer(part, known):
            return None
    return tuple(shape) + tuple(inner[len(taking):])


def _is_integer(node, known):
    """Whether ``node`` is a Python int: an int literal, a name of :data:`INTEGER` shape,
    or ``+ - * // %`` and negation of these."""
    if isinstance(node, gast.Name):
        return known.get(node.id) is INTEGER
    if isinstance(node, gast.UnaryOp):
        return isinstance(node.op, gast.USub) and _is_integer(node.operand, known)
    if isinstance(node, gast.BinOp):
        return (isinstance(node.op, INT_OPERATORS)
                and _is_integer(node.left, known) and _is_integer(node.right, known))
    return isinstance(node, gast.Constant) and type(node.value) is int


def basic_index_shape(value, index, known):
    """The shape of ``value[index]`` when ``index`` (``np.s_[...]`` too) is ints and slices
    with literal bounds, which pick each entry at most once; None otherwise."""
    return _subscript_shape(value, index_of(index), known)


def index_of(index, numpy_alias="np"):
    """The index ``np.s_[i, :]`` stands for (``i, :``), or ``index`` itself; ``numpy_alias``:
    generated code's name for NumPy."""
    if (isinstance(index, gast.Subscript) and isinstance(index.value, gast.Attribute)
            and index.value.attr == "s_" and isinstance(index.value.value, gast.Name)
            and index.value.value.id == numpy_alias):
        return index.slice
    return index


def _broadcast(*shapes):
    """The shape arrays of ``shapes`` broadcast to, or None (one unknown, or no broadcast)."""
    if None in shapes:
        return None
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _summed_shape(call, known):
    inner = shape_of(call.func.value, known)
    if inner is None or call.args:
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    axis = keywords.get("axis")
    keepdims = isinstance(keywords.get("keepdims"), gast.Constant) and keywords["keepdims"].value
    if axis is None:
        return tuple(1 for _ in inner) if keepdims else ()
    axes = [int_literal(a) for a in getattr(axis, "elts", [axis])]
    if not axes or None in axes or not inner:
        return None
    reduced = {a % len(inner) for a in axes}
    if keepdims:
        return tuple(1 if i in reduced else n for i, n in enumerate(inner))
    return tuple(n for i, n in enumerate(inner) if i not in reduced)


def called(call):
    """What ``call`` calls: the object the resolver found, or the NumPy function a rule's
    template wrote as ``np.f`` (its ``np`` is NumPy whatever generated code names it); None
    when neither is known."""
    return anno.get(call, Anno.CALLEE) or anno.get(call, Anno.TEMPLATE_NUMPY)


def is_runtime_helper_call(node, name):
    """``rt.name(...)``: a call of the runtime's helper ``name``, not of a function of the
    user's with that name (``np.zeros_like`` in a JVP's own statements), which the resolver
    annotated with what it calls."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == name and isinstance(node.func.value, gast.Name)):
        return False
    callee = anno.get(node, Anno.CALLEE)
    return callee is None or callee is getattr(runtime, name, None)

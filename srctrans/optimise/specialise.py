"""Specialise a backward pass on the shapes of the values it reads.

Requires: backward statements (after simplification) and the shapes of the
forward values they read (the residuals and the output), measured on one call.
Guarantees: the statements compute the same values for every call whose
forward values have those shapes. Runtime helpers that exist only to handle
every shape become the plain NumPy expression for the shapes at hand:

  >>> import ast, gast
  >>> body = gast.parse("dy = rt.unbroadcast(d_add, b)\\ndW = rt.matmul_rhs(dy, x, W)").body
  >>> shapes = {"d_add": (32, 4), "b": (4,), "x": (32, 16), "W": (16, 4)}
  >>> print("\\n".join(ast.unparse(gast.gast_to_ast(s)) for s in specialise(body, shapes)))
  dy = d_add.sum(axis=0)
  dW = x.T @ dy

``rt.unbroadcast`` disappears when nothing was broadcast and becomes a sum
over leading axes when only leading axes were added; 2-D ``rt.matmul_*``
become products with a transpose; ``rt.zeros_like`` of a value of known
shape (a number or an array, not a container) becomes ``rt.zeros_of``; the
spread of a scalar cotangent over an array (``rt.unreduce``) is dropped
when its only use multiplies it by an array of that shape
(``rt.mean_grad`` likewise, divided by the count). Whether a function's
shapes are fixed by its inputs' shapes is decided by
:func:`shape_obstacle`; :func:`path_dependent_names` names the values
whose shape may depend on the path a call takes through ``if`` and ``while``
(the cache drops their measured shapes); :func:`infer_shapes` adds the shapes
of the temporaries the measuring run did not see, and of names that every
branch gives one shape.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.analyse.indices import Indexing
from srctrans.annotations import Anno
from srctrans.nodes import changed_in_place, int_literal, substitute_names
from srctrans.optimise.accumulate import sink_into_branches
from srctrans.optimise.dce import reads_of
from srctrans.optimise.simplify import power_of_two
from srctrans.treewalk import walk

# Which argument of a runtime helper its result has the shape of.
RESULT_SHAPE_OF_ARGUMENT = {
    "unbroadcast": 1, "unreduce": 1, "mean_grad": 1, "var_grad": 1, "extremum_grad": 2,
    "prod_grad": 2, "std_grad": 2, "matmul_lhs": 1, "matmul_rhs": 2, "dot_lhs": 1,
    "dot_rhs": 2, "inner_lhs": 1, "inner_rhs": 2, "outer_lhs": 1, "outer_rhs": 2,
    "tensordot_lhs": 1, "tensordot_rhs": 2, "getitem_grad": 1, "tie_weight": None,
    "zeros_like": 0, "zeros_of": 0, "zero_at": 0, "restored_at": 0, "zero_guard": 1,
    "broadcast_like": 1, "logsumexp_share": 2,
}

# Runtime helpers of two arguments whose result has their broadcast shape.
BROADCASTING_HELPERS = ("add", "abs_grad", "tie_weight")

# Reductions of a whole array, to one number, when called with the array alone.
_WHOLE_REDUCTIONS = (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std)

# Functions of three arguments whose result has their broadcast shape.
_BROADCASTING = (np.clip, np.where)

# Functions whose result's shape depends on the values of their arguments.
VALUE_DEPENDENT_SHAPES = frozenset({
    np.nonzero, np.unique, np.argwhere, np.flatnonzero, np.compress, np.extract,
})


# NumPy reductions and the array methods that do the same with less dispatch.
REDUCTION_METHODS = {
    np.sum: "sum", np.mean: "mean", np.prod: "prod", np.max: "max", np.amax: "max",
    np.min: "min", np.amin: "min", np.var: "var", np.std: "std",
}


def use_array_methods(statements, shapes):
    """Call reductions of known arrays as methods: ``np.sum(a, axis=1)`` -> ``a.sum(axis=1)``.

    Only where ``a`` is known to be an array of at least one dimension (a name,
    or an expression of names: ``np.sum(d * (2 * r))``); the method gives the
    same result and skips NumPy's function-level dispatch.
    """
    for stmt in statements:
        for node in walk(stmt):
            if not isinstance(node, gast.Call) or not node.args:
                continue
            callee = anno.get(node, Anno.CALLEE)
            try:
                method = REDUCTION_METHODS.get(callee)
            except TypeError:
                continue
            receiver = node.args[0]
            if method and len(shape_of(receiver, shapes) or ()) >= 1:
                node.func = gast.Attribute(receiver, method, gast.Load())
                node.args = node.args[1:]
                anno.set_(node, Anno.CALLEE, None)
    return statements


def specialise_tangents(statements, shapes):
    """A JVP's ``statements`` rewritten, in place, for values of the given ``shapes``.

    ``shapes`` holds each name's one shape whenever it has a value (measured, then
    :func:`one_valued` and :func:`infer_shapes`). ``rt.broadcast_like(t, y)`` becomes ``t`` where
    ``t`` already has ``y``'s shape, reductions of arrays become their methods
    (:func:`use_array_methods`), and the runtime's other helpers their plain
    NumPy form, as in a backward pass (``rt.zeros_like`` of a number or an
    array, ``rt.unbroadcast``, 2-D ``rt.matmul_*``).
    """
    use_array_methods(statements, shapes)
    rewriter = _Rewriter(shapes)
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, (gast.Assign, gast.Return, gast.Expr)) and node.value is not None:
                node.value = rewriter.visit(node.value)
    return statements


def factor_out_of_sums(statements, tangents):
    """The assignments of ``statements`` to the names ``tangents``, rewritten in place:
    ``(d * (2 * r)).sum()`` -> ``2 * (d * r).sum()`` (:func:`_factor_out_of_sum`)."""
    for stmt in statements:
        for node in walk(stmt):
            if (isinstance(node, gast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], gast.Name) and node.targets[0].id in tangents):
                node.value = _factor_out_of_sum(node.value)
    return statements


def _factor_out_of_sum(node):
    """``(d * (2 * r)).sum()`` -> ``2 * (d * r).sum()``: a power of two out of a whole sum (one
    array operation less; multiplying by a power of two is exact, so each term rounds alike).
    The tangent of ``np.sum((y - t) ** 2)`` is such a sum."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == "sum" and not node.args and not node.keywords
            and isinstance(node.func.value, gast.BinOp) and isinstance(node.func.value.op, gast.Mult)):
        return node
    product = node.func.value
    for side in ("left", "right"):
        inner = getattr(product, side)
        if isinstance(inner, gast.BinOp) and isinstance(inner.op, gast.Mult):
            for factor, rest in ((inner.left, inner.right), (inner.right, inner.left)):
                if power_of_two(factor):
                    setattr(product, side, rest)
                    return gast.BinOp(factor, gast.Mult(), node)
    return node


def shape_obstacle(function, indexing=None):
    """What in ``function`` (ANF) makes a shape depend on values, as a phrase naming its
    line; None when every shape is fixed by the shape key of its inputs and the path a
    call takes through its branches and ``while`` loops.

    Subscripts with computed indices (boolean masks) and functions such as
    ``np.nonzero`` make shapes depend on values; such functions are not
    specialised. An index of ints, int arrays or values read from the arguments
    does not (:class:`~srctrans.analyse.indices.Indexing`, which ``indexing``
    is, if given: it notes whether one reads the arguments). A ``for`` loop over
    ``range(...)`` repeats the same statements a number of times fixed by its
    bounds, which come from shapes and int arguments (both in the shape key); a
    name whose shape changes from one iteration to the next is left out of the
    measured shapes (see ``measuring.run_keeping_locals``). Names whose shape
    depends on the path are left out too (:func:`path_dependent_names`).
    """
    for node in walk(function):
        if isinstance(node, gast.For):
            if not (isinstance(node.iter, gast.Call) and isinstance(node.iter.func, gast.Name)
                    and node.iter.func.id == "range"):
                return f"{_at(node)}a `for` loop over a sequence srctrans did not turn into a range"
    indexing = indexing or Indexing(function)
    for node in walk(function):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
            name = indexing.unfixed(node)
            if name is not None:
                return (f"{_at(node)}a subscript by `{name}`, a computed index (a mask or an "
                        "index array) or bound")
        if isinstance(node, gast.Call):
            callee = anno.get(node, Anno.CALLEE)
            try:
                if callee in VALUE_DEPENDENT_SHAPES:
                    return f"{_at(node)}`np.{callee.__name__}`, whose result's shape depends on values"
            except TypeError:
                continue
            if callee is np.where and len(node.args) == 1:
                return f"{_at(node)}`np.where(condition)`, whose result's shape depends on values"
    return None


def _at(node):
    line = getattr(node, "lineno", None)
    return "" if line is None else f"line {line}: "


def path_dependent_names(statements, keyed=frozenset()):
    """``(names, conditional)``: the names of forward-pass ``statements`` whose shape may
    depend on the path a call takes through their ``if`` and ``while`` statements, not
    only on the inputs' shapes.

    A name assigned at one place has the shape that place gives it whenever it
    has a value (when its branch did not run, nothing reads it). A name assigned
    at several places, one of them inside an ``if``, has the shape of whichever
    ran last, and a container written into or resized inside an ``if`` or a
    ``while`` holds what that path put in it: both depend on values, and so does
    every name computed from one of them (the saved values of a call too). These
    are ``names``: specialised code takes none of their measured shapes. An
    ``if`` whose test is one of ``keyed`` (tests the shape key decides,
    ``analyse.keyed_tests``: the class of an argument, a key of a dict argument)
    takes the same branch on every call with the key: it counts as straight-line
    code.

    A name that only a ``while`` loop's body assigns again (the state the loop
    carries) keeps one shape for any number of steps when the measuring call ran
    the body at least once without its shape changing (the measuring call drops
    the names that changed): the body then maps that shape to itself.
    ``conditional`` maps such a name, and each name computed from it, to the
    trip counters of its loops (``trips = trips + 1`` heads each ``while`` body of
    the forward pass); the cache keeps its measured shape only when each counted
    at least one step. The tape's pushes, pops and placeholders (``Anno.SAVES``)
    are not assignments of the program's.
    """
    sites, branch, loops, dependents = {}, set(), {}, {}
    pending = [(stmt, None) for stmt in statements]      # context: None, "if", or counters
    while pending:
        stmt, context = pending.pop()
        if anno.get(stmt, Anno.SAVES) is not None:
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            inner = context
            if isinstance(stmt, gast.If) and not (isinstance(stmt.test, gast.Name)
                                                  and stmt.test.id in keyed) or context == "if":
                inner = "if"
            elif isinstance(stmt, gast.While):
                counter = _trip_counter(stmt)
                inner = "if" if counter is None else (context or ()) + (counter,)
            pending.extend((s, inner) for s in stmt.body + stmt.orelse)
            if isinstance(stmt, gast.For):
                _depends(dependents, reads_of(stmt.iter), _stored(stmt.target))
                _assigned_at(sites, branch, loops, _stored(stmt.target), context)
            continue
        if isinstance(stmt, gast.Assign):
            targets = [n for t in stmt.targets for n in _stored(t)]
            _depends(dependents, reads_of(stmt.value), targets)
            _assigned_at(sites, branch, loops, targets, context)
        for node in walk(stmt):
            changed = changed_in_place(node)
            if changed is not None and context is not None:
                sites[changed] = 2                     # a container changed on one path,
                branch.add(changed)                    # or as many times as a loop ran
    names = _closure({name for name in branch if sites.get(name, 0) > 1}, dependents)
    conditional = {}
    for root, counters in loops.items():
        if sites.get(root, 0) > 1 and root not in names:
            for name in _closure({root}, dependents) - names:
                conditional.setdefault(name, set()).update(counters)
    return names, conditional


def _trip_counter(loop):
    """The name of ``trips = trips + 1``, the first statement of a forward ``while`` body."""
    first = loop.body[0] if loop.body else None
    if (isinstance(first, gast.Assign) and isinstance(first.targets[0], gast.Name)
            and isinstance(first.value, gast.BinOp) and isinstance(first.value.left, gast.Name)
            and first.value.left.id == first.targets[0].id):
        return first.targets[0].id
    return None


def _closure(roots, dependents):
    found, work = set(roots), list(roots)
    while work:
        for name in dependents.get(work.pop(), ()):
            if name not in found:
                found.add(name)
                work.append(name)
    return found


def _stored(target):
    return [n.id for n in walk(target) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]


def _depends(dependents, reads, targets):
    for name in reads:
        dependents.setdefault(name, set()).update(targets)


def _assigned_at(sites, branch, loops, names, context):
    for name in names:
        sites[name] = sites.get(name, 0) + 1
        if context == "if":
            branch.add(name)
        elif context:
            loops.setdefault(name, set()).update(context)


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
    stores = dict.fromkeys(parameters, 1)
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
    return {name: shape for name, shape in shapes.items() if stores.get(name, 0) <= 1}


def infer_shapes(statements, shapes, parameters=()):
    """``shapes`` (name -> shape), with those of names assigned once from values of known shape.

    The generic forward pass folds single-use temporaries into the expression
    that reads them, so the run that measured ``shapes`` never saw them; their
    shapes follow from their operands' (``_mul = a * x``: the broadcast of
    ``a`` and ``x``). A name assigned more than once keeps out: its shape may
    change from one assignment to the next.

    >>> body = gast.parse("_mul = 0.9 * x\\n_add = _mul + t\\ny = y * 2.0\\ny = y @ w").body
    >>> sorted(infer_shapes(body, {"x": (3,), "t": (), "w": (3, 2)}).items())
    [('_add', (3,)), ('_mul', (3,)), ('t', ()), ('w', (3, 2)), ('x', (3,))]
    """
    assigned = dict.fromkeys(parameters, 1)          # a parameter holds its argument first
    for stmt in statements:
        for node in walk(stmt):
            if (isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)
                    and anno.get(stmt, Anno.SAVES) is None):        # not a tape's placeholder
                assigned[node.id] = assigned.get(node.id, 0) + 1
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

    known = dict(shapes)
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


def specialise(statements, shapes):
    """``statements`` rewritten for values of the given ``shapes`` (name -> tuple)."""
    known = dict(shapes)
    statements = sink_into_branches(statements)
    spreads = _Spreads(statements)
    _specialise_block(statements, known, _Rewriter(known), shapes, spreads)
    return spreads.drop(statements, known)


def _specialise_block(statements, known, rewriter, measured, spreads):
    for stmt in statements:
        if isinstance(stmt, gast.If):
            # each branch from the shapes before it; after it, the shapes both agree on
            branches = [dict(known), dict(known)]
            for field, shapes in zip(("body", "orelse"), branches):
                block = getattr(stmt, field)
                _specialise_block(block, shapes, _Rewriter(shapes, rewriter.zeros), measured,
                                  spreads)
                setattr(stmt, field, spreads.drop(block, shapes) or
                        ([gast.Pass()] if field == "body" else []))
            merged = {k: v for k, v in branches[0].items() if branches[1].get(k) == v}
            known.clear()
            known.update(merged)
            rewriter.zeros.clear()
        elif isinstance(stmt, (gast.For, gast.While)):
            rewriter.zeros.clear()            # a later step may have changed them
            _specialise_block(stmt.body, known, rewriter, measured, spreads)
            _specialise_block(getattr(stmt, "orelse", []), known, rewriter, measured, spreads)
            rewriter.zeros.clear()
        elif isinstance(stmt, gast.Assign):
            stmt.value = rewriter.visit(stmt.value)
            target = stmt.targets[0]
            if rewriter.zeros:
                for name in _stored(target):
                    rewriter.zeros.pop(name, None)
            if isinstance(target, gast.Name) and _runtime_call(stmt.value, "zeros_of"):
                rewriter.zeros[target.id] = shape_of(stmt.value, known)
            if isinstance(target, gast.Name):
                if target.id in measured:
                    continue              # measured: one shape all along (a pop restores it)
                shape = shape_of(stmt.value, known)
                if shape is not None:
                    known[target.id] = shape
                else:
                    known.pop(target.id, None)


def _matmul_shape(left, right):
    """The shape of ``a @ b`` for matrices and vectors of these shapes, or None."""
    if len(left) == 2 and len(right) == 2 and left[1] == right[0]:
        return (left[0], right[1])
    if len(left) == 2 and len(right) == 1 and left[1] == right[0]:
        return (left[0],)
    if len(left) == 1 and len(right) == 2 and left[0] == right[0]:
        return (right[1],)
    if len(left) == 1 and len(right) == 1 and left[0] == right[0]:
        return ()
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
    if isinstance(expression, gast.Attribute) and expression.attr == "T":
        inner = shape_of(expression.value, known)
        return None if inner is None else tuple(reversed(inner))
    if isinstance(expression, gast.Call) and not expression.keywords:
        callee = anno.get(expression, Anno.CALLEE)
        if isinstance(callee, np.ufunc) and callee.nin == len(expression.args) and callee.nout == 1:
            shapes = [shape_of(a, known) for a in expression.args]   # np.tanh(x), np.maximum(x, 0)
            if None in shapes:
                return None
            try:
                return tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                return None
        if callee in _BROADCASTING and len(expression.args) == 3:     # np.clip(r, lo, hi)
            shapes = [shape_of(a, known) for a in expression.args]
            try:
                return None if None in shapes else tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                return None
        if any(callee is f for f in _WHOLE_REDUCTIONS) and len(expression.args) == 1 \
                and shape_of(expression.args[0], known) is not None:
            return ()                                                # np.sum(x)
    if isinstance(expression, gast.Call) and isinstance(expression.func, gast.Attribute):
        if any(_runtime_call(expression, h) for h in BROADCASTING_HELPERS) \
                and len(expression.args) == 2:                 # rt.add, rt.abs_grad(g, x)
            left, right = (shape_of(a, known) for a in expression.args)
            return _broadcast(left, right)
        index = RESULT_SHAPE_OF_ARGUMENT.get(expression.func.attr)
        if index is not None and len(expression.args) > index:
            return shape_of(expression.args[index], known)
        if expression.func.attr == "sum":
            return _summed_shape(expression, known)
    return None


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


def _runtime_call(node, name):
    """``rt.name(...)``: a call of the runtime's helper ``name``, not of a function of the
    user's with that name (``np.zeros_like`` in a JVP's own statements), which the resolver
    annotated with what it calls."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == name and isinstance(node.func.value, gast.Name)):
        return False
    callee = anno.get(node, Anno.CALLEE)
    return callee is None or callee is getattr(runtime, name, None)


def _sum(expression, axes, keepdims=False):
    axis = gast.Constant(axes[0], None) if len(axes) == 1 else \
        gast.Tuple([gast.Constant(a, None) for a in axes], gast.Load())
    keywords = [gast.keyword("axis", axis)] if axes else []
    if keepdims:
        keywords.append(gast.keyword("keepdims", gast.Constant(True, None)))
    return gast.Call(gast.Attribute(expression, "sum", gast.Load()), [], keywords)


def _outer(u, v):
    """``u[:, None] * v``: the outer product of two vectors (what ``np.outer`` gives)."""
    column = gast.Subscript(u, gast.Tuple([gast.Slice(None, None, None), gast.Constant(None, None)],
                                          gast.Load()), gast.Load())
    return gast.BinOp(column, gast.Mult(), v)


class _Rewriter(gast.NodeTransformer):
    """Rewrites the runtime's calls for the shapes ``known``; ``zeros`` maps the names
    that hold ``rt.zeros_of(x)`` in the block being rewritten to ``x``'s shape."""

    def __init__(self, known, zeros=None):
        self.known = known
        self.zeros = dict(zeros or {})

    def visit_Call(self, node):
        self.generic_visit(node)
        known = self.known
        if _runtime_call(node, "zeros_like") and len(node.args) == 1 \
                and shape_of(node.args[0], known) is not None:   # a number or an array
            node.func.attr = "zeros_of"
            if anno.get(node, Anno.CALLEE) is not None:
                anno.set_(node, Anno.CALLEE, runtime.zeros_of)
            return node
        if _runtime_call(node, "broadcast_like") and len(node.args) == 2:
            tangent, like = (shape_of(a, known) for a in node.args)
            if tangent is not None and tangent == like:
                return node.args[0]                     # already the output's shape
            return node
        if _runtime_call(node, "add") and len(node.args) == 2:
            left, right = (shape_of(a, known) for a in node.args)
            first = node.args[0]
            if isinstance(first, gast.Name) and first.id in self.zeros and \
                    right is not None and right == self.zeros[first.id]:
                return node.args[1]                     # zeros + e, e of the zeros' shape
            if left is not None and right is not None:     # arrays or numbers, not containers
                return gast.BinOp(node.args[0], gast.Add(), node.args[1])
        if _runtime_call(node, "unbroadcast") and len(node.args) == 2:
            g, x = node.args
            g_shape, x_shape = shape_of(g, known), shape_of(x, known)
            if g_shape is None or x_shape is None:
                return node
            if g_shape == x_shape:
                return g
            lead = len(g_shape) - len(x_shape)
            if lead > 0 and g_shape[lead:] == x_shape:
                return _sum(g, tuple(range(lead)) if x_shape else ())
            if lead == 0 and all(a == b or a == 1 for a, b in zip(x_shape, g_shape)):
                kept = tuple(i for i, (a, b) in enumerate(zip(x_shape, g_shape)) if a != b)
                return _sum(g, kept, keepdims=True)
            return node
        if _runtime_call(node, "entry_zero_like") and len(node.args) == 3 \
                and shape_of(node.args[2], known) is not None:
            return node.args[0]              # an array's (or number's): nothing to change
        for name in ("matmul_lhs", "matmul_rhs"):
            if _runtime_call(node, name) and len(node.args) == 3:
                g, a, b = node.args
                a_shape, b_shape = shape_of(a, known), shape_of(b, known)
                if a_shape is not None and b_shape is not None and len(a_shape) == 1 \
                        and a_shape == b_shape and shape_of(g, known) == ():
                    return gast.BinOp(g, gast.Mult(), b if name == "matmul_lhs" else a)  # a @ b
                g_shape = shape_of(g, known)
                if (name == "matmul_lhs" and a_shape is not None and b_shape is not None
                        and len(a_shape) == 2 and len(b_shape) == 1 and g_shape == a_shape[:1]):
                    return _outer(g, b)                                       # A @ v: g v^T
                if (name == "matmul_rhs" and a_shape is not None and b_shape is not None
                        and len(a_shape) == 1 and len(b_shape) == 2 and g_shape == b_shape[1:]):
                    return _outer(a, g)                                       # v @ A: v g^T
                if a_shape is not None and b_shape is not None and len(a_shape) == len(b_shape) == 2:
                    if name == "matmul_lhs":        # g @ b.T
                        return gast.BinOp(g, gast.MatMult(), gast.Attribute(b, "T", gast.Load()))
                    return gast.BinOp(gast.Attribute(a, "T", gast.Load()), gast.MatMult(), g)
                g_shape = shape_of(g, known)
                if (name == "matmul_rhs" and a_shape is not None and b_shape is not None
                        and len(a_shape) == 2 and len(b_shape) == 1 and g_shape == a_shape[:1]):
                    return gast.BinOp(gast.Attribute(a, "T", gast.Load()), gast.MatMult(), g)  # X.T @ g
                if (name == "matmul_lhs" and a_shape is not None and b_shape is not None
                        and len(a_shape) == 1 and len(b_shape) == 2 and g_shape == b_shape[1:]):
                    return gast.BinOp(b, gast.MatMult(), g)                                     # W @ g
        return node


class _Spreads:
    """``d = rt.unreduce(s, A, ...); e = d * E`` -> ``e = s * E``, block by block.

    Valid when ``s`` broadcasts against ``A`` (a scalar, or reduced with
    ``keepdims=True``), every read of ``d`` is a factor of a product (or the
    dividend of a quotient) whose other operand has ``A``'s shape, and ``d`` is
    assigned nowhere else in all of ``statements`` (a loop that reassigns it
    reads its other values). A branch's spreads are dropped with the shapes
    known in that branch.
    """

    def __init__(self, statements):
        self.uses, self.assignments, self.factors = {}, {}, {}
        for stmt in statements:
            for node in walk(stmt):
                if isinstance(node, gast.Name):
                    counts = self.assignments if isinstance(node.ctx, gast.Store) else self.uses
                    counts[node.id] = counts.get(node.id, 0) + 1
                elif isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div)):
                    sides = [(node.left, node.right)]
                    if isinstance(node.op, gast.Mult):
                        sides.append((node.right, node.left))
                    for this, other in sides:
                        if isinstance(this, gast.Name):
                            self.factors.setdefault(this.id, []).append(other)
        self.replace = {}

    def drop(self, block, known):
        """``block`` without its droppable spreads (their uses read the scalar instead)."""
        kept = []
        for stmt in block:
            if self.replace:
                substitute_names(stmt, self.replace)
            spread = _scalar_spread(stmt, known)
            if spread is not None and self.assignments.get(spread[0]) == 1:
                name, scalar, shape = spread
                others = self.factors.get(name, ())
                if (len(others) == self.uses.get(name) and shape is not None
                        and all(shape_of(other, known) == shape and name not in reads_of(other)
                                for other in others)):
                    self.replace[name] = scalar
                    continue
            kept.append(stmt)
        return kept


def _scalar_spread(stmt, known):
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if not ((_runtime_call(value, "unreduce") or _runtime_call(value, "mean_grad"))
            and len(value.args) == 4):
        return None
    g, x, axis, keepdims = value.args
    if not isinstance(g, gast.Name) or shape_of(g, known) is None:
        return None
    if value.func.attr == "mean_grad":
        count = _count(shape_of(x, known), axis)
        if count is None:
            return None
        g = gast.BinOp(g, gast.Div(), gast.Constant(count, None))
    scalar = shape_of(g, known) == ()
    kept = isinstance(keepdims, gast.Constant) and keepdims.value is True
    if not (scalar or kept):
        g = _with_reduced_axes(g, shape_of(x, known), axis, keepdims)
        if g is None:
            return None
    return stmt.targets[0].id, g, shape_of(x, known)


def _with_reduced_axes(g, shape, axis, keepdims):
    """``g[:, :, None]``: the reduction's cotangent ``g`` with the axes ``axis`` (a constant
    int or tuple of ints) reduced away from an array of ``shape`` put back as length 1, so
    that it broadcasts against that array; None when they are not constants."""
    if shape is None or not (isinstance(keepdims, gast.Constant) and keepdims.value is False):
        return None
    axes = [int_literal(a) for a in getattr(axis, "elts", [axis])]
    if not axes or None in axes or not all(-len(shape) <= a < len(shape) for a in axes):
        return None
    reduced = {a % len(shape) for a in axes}
    index = [gast.Constant(None, None) if i in reduced else gast.Slice(None, None, None)
             for i in range(len(shape))]
    return gast.Subscript(g, gast.Tuple(index, gast.Load()), gast.Load())


def _count(shape, axis):
    """How many elements a mean over ``axis`` (a Constant node) averages, or None."""
    if shape is None or not isinstance(axis, gast.Constant):
        return None
    if axis.value is None:
        return int(np.prod(shape, dtype=np.int64))
    if isinstance(axis.value, int) and shape:
        return shape[axis.value % len(shape)]
    return None

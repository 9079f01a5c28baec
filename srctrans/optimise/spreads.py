"""A reduction's cotangent spread over the reduced array, dropped where only multiplied.

Requires: a backward pass being specialised (:mod:`srctrans.optimise.specialise`) and the
shapes of its names.
Guarantees: ``d = rt.unreduce(s, A, ...); e = d * E`` -> ``e = s * E`` when ``s``
broadcasts against ``A`` (see :class:`Spreads`): the values are those the spread gives.
"""

import gast
import numpy as np

from srctrans.nodes import clone, int_literal, number_literal, substitute_names, whole_slice
from srctrans.optimise.dce import reads_of, stores_of
from srctrans.optimise.expression_shapes import called, is_runtime_helper_call, shape_of
from srctrans.treewalk import replace_children, walk, walk_names


class Spreads:
    """``d = rt.unreduce(s, A, ...); e = d * E`` -> ``e = s * E``, block by block.

    Valid when ``s`` broadcasts against ``A`` (a scalar, or reduced with
    ``keepdims=True``), every read of ``d`` is a factor of a product (or the
    dividend of a quotient) whose other operand has ``A``'s shape, and ``d`` is
    assigned nowhere else in all of ``statements`` (a loop that reassigns it
    reads its other values). A branch's spreads are dropped with the shapes
    known in that branch.

    Also valid when every read of ``d`` is in a later assignment of its block whose
    value has the same shape with ``s`` read instead (``d - d * e``, ``e`` of ``A``'s
    shape; ``np.where(c, d * e, d * f)`` too, the one selection two selections of ``d``
    merged into), or is a scaling by a number ``t = d * k`` (a literal, or a name holding a
    number: an inlined helper's ``scale = 2.0``) whose reads are such, or a negation ``t = -d``
    whose own reads are such (the sum of
    ``1 + v - m ** 2 - np.exp(v)``: ``dv = d - d * e``, ``dm = -d * (2 * m)``)::

        d = rt.unreduce(s, v, None, False)              dm_part = -s
        dm_part = -d                            ->      dm = dm_part * (2 * m)
        dm = dm_part * (2 * m)                          dv = s - s * e
        dv = d - d * e
    """

    def __init__(self, statements, live_out=frozenset(), forward=(), known=None):
        """``live_out``: the names read after ``statements`` (each counts as a read that is
        not a product's: its spread stays); ``forward``: the forward pass's statements,
        whose elementwise definitions (``_pow = _item ** 2``) tell which names share a
        shape where it is not known (:func:`elementwise_roots`, with ``known`` shapes)."""
        self.roots = elementwise_roots(forward, known or {})
        self.uses, self.assignments, self.factors = dict.fromkeys(live_out, 1), {}, {}
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
        self.numbers = set()                    # the names of self.replace a number replaces

    def drop(self, block, known):
        """``block`` without its droppable spreads (their uses read the scalar instead)."""
        kept = []
        for position, stmt in enumerate(block):
            if self.replace:
                _collapsed(stmt, self.numbers)
                substitute_names(stmt, self.replace)
            spread = _scalar_spread(stmt, known)
            if spread is not None and self.assignments.get(spread[0]) == 1:
                name, scalar, shape = spread
                others = self.factors.get(name, ())
                if shape is not None and (
                        len(others) == self.uses.get(name)
                        and all(shape_of(other, known) == shape and name not in reads_of(other)
                                for other in others)
                        or self._shapes_kept(name, scalar, shape, block[position + 1:], known)) \
                        or shape is None and len(others) == self.uses.get(name) \
                        and _same_elementwise(stmt.value.args[1], others, name, known,
                                              self.roots, self.assignments) \
                        or self._placed_back(name, scalar, block[position + 1:], known):
                    self.replace[name] = scalar
                    if shape_of(scalar, known) == ():
                        self.numbers.add(name)
                    continue
            kept.append(stmt)
        return kept

    def _placed_back(self, name, scalar, rest, known):
        """Whether ``name``, a spread over the array whose cotangent it is, is read only as
        what ``rt.getitem_grad(name, x, index)`` puts back where that array was picked from
        (the array is ``x[index]``, ``x`` an array of a known shape): the helper places its
        cotangent by NumPy's assignment or ``np.add.at``, which broadcast ``scalar`` over the
        pick as the spread did, with no need to know the picks' shape (a fancy index's:
        ``-np.sum(log_p[rows, y]) / N``; the rows of ``E[tokens].sum(axis=0)``)."""
        places = [node for stmt in rest for node in walk(stmt)
                  if is_runtime_helper_call(node, "getitem_grad") and len(node.args) == 3
                  and isinstance(node.args[0], gast.Name) and node.args[0].id == name]
        # (into an array, of a known shape: a container's entry must get an array)
        return len(places) == self.uses.get(name) and all(
            shape_of(node.args[1], known) and name not in reads_of(node.args[2])
            and name not in reads_of(node.args[1]) for node in places)

    def _shapes_kept(self, name, scalar, shape, rest, known):
        """Whether every read of ``name`` (a spread over ``shape``) is in an assignment of
        ``rest`` whose value keeps its shape with ``scalar`` read instead, or negates it into
        a name assigned once whose reads are such in turn, or copies it into a name whose
        reads are such until one of them assigns that name again (the first term of a sum,
        ``dq = d_neg; ...; dq = dq + e``), or scales it by a number into a name assigned once
        whose reads are such in turn (``d_pow = d * 100.0``). A number's spread may be read through
        ``d[:, None]`` (not a copy's: the copy is reassigned an array); the names of its
        negations are then added to :attr:`numbers`."""
        numbers = shape_of(scalar, known) == ()   # a number: read through d[:, None] too
        negated = []
        pending = [(name, scalar, rest, False)]
        while pending:
            current, value, statements, copied = pending.pop()
            shapes = dict(known, **{current: shape})
            reads, replaced = 0, False
            for position, stmt in enumerate(statements):
                count = sum(1 for n in walk_names(stmt)
                            if n.id == current and isinstance(n.ctx, gast.Load))
                if not count and copied and current in stores_of(stmt):
                    return False                  # assigned again unread: it was read nowhere
                if not count:
                    continue
                reads += count
                if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], gast.Name)):
                    return False
                target = stmt.targets[0].id
                if (isinstance(stmt.value, gast.UnaryOp) and isinstance(stmt.value.op, gast.USub)
                        and isinstance(stmt.value.operand, gast.Name)
                        and self.assignments.get(target) == 1):
                    pending.append((target, gast.UnaryOp(gast.USub(), clone(value)), rest, False))
                    negated.append(target)
                    continue
                scaled = _scaled_by_number(stmt.value, current, value, lambda c: (
                    shape_of(c, known) == () and self.assignments.get(c.id, 0) <= 1))
                if scaled is not None and self.assignments.get(target) == 1 \
                        and (not copied or self.assignments.get(current) == 1):   # (an alias)
                    pending.append((target, scaled, rest, False))      # d * 100.0: a number's
                    negated.append(target)                            # spread again
                    continue
                if isinstance(stmt.value, gast.Name) and not copied and target != current:
                    pending.append((target, clone(value), statements[position + 1:], True))
                    continue
                if not _arithmetic_reading(stmt.value, current):
                    return False
                read = _collapsed(clone(stmt.value), {current} if numbers and not copied else ())
                if any(_expanded(n, current) for n in walk(read)):
                    return False        # (an array's spread has its axes; a copy is reassigned)
                after = shape_of(substitute_names(read, {current: value}), shapes)
                if after is None or after != shape_of(stmt.value, shapes):
                    return False
                if copied and target == current:  # its reads after this read the sum
                    replaced = True
                    break
            if copied and not replaced or not copied and reads != self.uses.get(current):
                return False
        if numbers:                               # -d's reads d_neg[:, None] are of a number
            self.numbers.update(negated)
        return True


def elementwise_roots(statements, known):
    """name -> the name whose shape it has, for each name the top level of ``statements``
    assigns once an elementwise expression of one array name and numbers
    (:func:`_elementwise_root`), through chains of such definitions (one pass, in order)."""
    assigned, roots = {}, {}
    for stmt in statements:
        for target in stores_of(stmt):
            assigned[target] = assigned.get(target, 0) + 1
    for stmt in statements:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) \
                and assigned.get(stmt.targets[0].id) == 1:
            root = _elementwise_root(stmt.value, known, roots)
            if isinstance(root, str) and assigned.get(root, 0) <= 1:   # (one value all along)
                roots[stmt.targets[0].id] = root
    return roots


def _same_elementwise(spread_over, others, name, known, roots, assignments):
    """Whether the array a spread is over (``spread_over``) and every factor in ``others``
    are elementwise arithmetic of one and the same name with numbers (``_item ** 2`` and
    ``2 * _item``, directly or through ``roots``), a name the backward pass does not assign
    (``assignments``): of that name's shape, whatever it is (a computed mask's pick, whose
    shape follows the values), and none reads the spread's ``name``."""
    root = _elementwise_root(spread_over, known, roots)
    return isinstance(root, str) and not assignments.get(root) and all(
        _elementwise_root(other, known, roots) == root and name not in reads_of(other)
        for other in others)


_NUMBER = object()       # (_elementwise_root of a number)


def _elementwise_root(node, known, roots):
    """The one name whose shape ``node`` has, for arithmetic and one-argument ufuncs of that
    name and numbers (literals, names of shape ``()``), a name standing for its root in
    ``roots``; ``_NUMBER`` for numbers alone; else None."""
    if isinstance(node, gast.Name):
        return _NUMBER if known.get(node.id) == () else roots.get(node.id, node.id)
    if number_literal(node):
        return _NUMBER
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return _elementwise_root(node.operand, known, roots)
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult,
                                                             gast.Div, gast.Pow)):
        found = {_elementwise_root(node.left, known, roots),
                 _elementwise_root(node.right, known, roots)}
        found.discard(_NUMBER)
        return _NUMBER if not found else found.pop() if len(found) == 1 and None not in found \
            else None
    callee = called(node) if isinstance(node, gast.Call) else None
    if isinstance(callee, np.ufunc) and callee.nin == 1 and len(node.args) == 1 \
            and not node.keywords:
        return _elementwise_root(node.args[0], known, roots)
    return None


def _scaled_by_number(expression, name, value, is_number):
    """``value * c`` (``c * value``, ``value / c``) for ``expression`` ``name * c`` (``c *
    name``, ``name / c``), ``c`` a number constant or a name ``is_number`` holds one of (a
    number assigned once: ``scale = 2.0`` of an inlined helper); else None."""
    if not (isinstance(expression, gast.BinOp) and isinstance(expression.op, (gast.Mult, gast.Div))):
        return None
    left, right = expression.left, expression.right

    def number(node):
        return number_literal(node) or (isinstance(node, gast.Name) and node.id != name
                                        and is_number(node))
    if isinstance(left, gast.Name) and left.id == name and number(right):
        return gast.BinOp(clone(value), type(expression.op)(), clone(right))
    if isinstance(expression.op, gast.Mult) and isinstance(right, gast.Name) and right.id == name \
            and number(left):
        return gast.BinOp(clone(left), gast.Mult(), clone(value))
    return None


def _selects_products(call, name):
    """``np.where(c, a, b)`` whose operands read ``name`` only inside arithmetic (``np.where(c,
    d * r, d * e)``, two selections merged): each entry is the arithmetic's, of the dtype its
    arrays give, as with ``name`` spread (a bare ``name`` would be a number's array, of
    NumPy's default dtype)."""
    return called(call) is np.where and len(call.args) == 3 and not call.keywords and not any(
        isinstance(arg, gast.Name) and arg.id == name for arg in call.args)


def _arithmetic_reading(expression, name):
    """Whether ``expression`` is ``+ - *`` and unary minus of names, numbers and calls that do
    not read ``name``, ``/`` too where ``name`` is no divisor: broadcasting then gives each
    entry what it gave with ``name`` spread (a helper's result need not:
    ``rt.matmul_lhs(d, a, b)``), and ``rt.zero_guard`` of them, which broadcasts its
    cotangent as arithmetic does."""
    guarded = set()                           # the rt.zero_guard attributes called
    opaque = set()                            # inside an operand that does not read name
    for node in walk(expression):             # (breadth-first: a call before its function)
        if id(node) in opaque:
            continue
        if isinstance(node, gast.Call) and not (is_runtime_helper_call(node, "zero_guard")
                                                and len(node.args) == 2) \
                and name not in reads_of(node):
            opaque.update(id(n) for n in walk(node))       # rt.power_base_factor(r, 2)
            continue
        if isinstance(node, gast.BinOp):
            if isinstance(node.op, gast.Div):
                if any(isinstance(n, gast.Name) and n.id == name for n in walk(node.right)):
                    return False
            elif not isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
                return False
        elif isinstance(node, gast.UnaryOp):
            if not isinstance(node.op, (gast.USub, gast.UAdd)):
                return False
        elif isinstance(node, gast.Call):          # rt.zero_guard(d, d / m): 0 where d is
            if not (is_runtime_helper_call(node, "zero_guard") and len(node.args) == 2
                    or _selects_products(node, name)):
                return False
            guarded.add(id(node.func))
        elif isinstance(node, gast.Attribute):
            if id(node) not in guarded:
                return False
        elif _expanded(node, name):                # d[:, None]: the same entries, more axes
            opaque.update(id(n) for n in walk(node.slice))
        elif not isinstance(node, (gast.Name, gast.Constant, gast.expr_context, gast.operator,
                                   gast.unaryop)):
            return False
    return True


def _expanded(node, name):
    """Whether ``node`` is ``name`` with axes of length 1 put in (``d[:, None]``,
    ``d[None, :]``, ``d[..., None]``): a spread number's entries, still all that number."""
    if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == name):
        return False
    parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    return all(whole_slice(p) or isinstance(p, gast.Constant) and p.value in (None, Ellipsis)
               for p in parts)


def _collapsed(tree, names):
    """``tree`` (changed in place) with ``name[:, None]`` read as ``name`` for each of
    ``names``: spreads of a number, which the number replaces (it broadcasts as it is)."""
    def collapse(node):
        if isinstance(node, gast.Subscript) and any(_expanded(node, n) for n in names):
            return node.value
        return node
    if not names:
        return tree
    if isinstance(tree, gast.expr):                    # (the expression itself may be one)
        return replace_children(gast.Expr(tree), collapse).value
    return replace_children(tree, collapse)


def _scalar_spread(stmt, known):
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if not (is_spread(value) and isinstance(value.args[0], gast.Name)):
        return None
    spread = spread_of(value, known)
    return None if spread is None else (stmt.targets[0].id,) + spread


def is_spread(node):
    """``rt.unreduce(g, A, axis, keepdims)`` or ``rt.mean_grad(g, A, axis, keepdims)``: a
    reduction's cotangent ``g`` spread over the array ``A`` it reduced."""
    return ((is_runtime_helper_call(node, "unreduce") or is_runtime_helper_call(node, "mean_grad"))
            and len(node.args) == 4)


def spread_of(spread, known):
    """``(s, shape)`` for a spread (:func:`is_spread`) of a cotangent ``g`` of known shape
    over an array ``A`` of ``shape`` (None if unknown): ``s`` is an expression of ``g``
    (``g`` itself, ``g`` divided by a mean's count, ``g[:, None]``: the reduced axes put
    back) that broadcasts against ``A`` to the spread's values. None when ``g``'s shape, the
    axes or a mean's count are not known."""
    g, x, axis, keepdims = spread.args
    if shape_of(g, known) is None:
        return None
    if spread.func.attr == "mean_grad":
        count = reduced_count(shape_of(x, known), axis)
        if count is None:
            return None
        g = gast.BinOp(g, gast.Div(), gast.Constant(count, None))
    shape = shape_of(x, known)
    spread = spread_against(g, shape, axis, keepdims, known)
    return None if spread is None else (spread, shape)


def spread_against(g, shape, axis, keepdims, known):
    """The cotangent ``g`` of a reduction along ``axis`` (with ``keepdims``; constant nodes)
    of an array of ``shape``, as an expression that broadcasts against that array (``g``
    itself when a number or kept dims, else with the reduced axes put back:
    :func:`_with_reduced_axes`); None when that cannot be told."""
    scalar = shape_of(g, known) == ()
    kept = isinstance(keepdims, gast.Constant) and keepdims.value is True
    return g if scalar or kept else _with_reduced_axes(g, shape, axis, keepdims)


def _with_reduced_axes(g, shape, axis, keepdims):
    """``g[:, :, None]``: the reduction's cotangent ``g`` with the axes ``axis`` (a constant
    int or tuple of ints) reduced away from an array of ``shape`` put back as length 1, so
    that it broadcasts against that array (``g`` itself when they are its leading axes);
    None when they are not constants."""
    if shape is None or not (isinstance(keepdims, gast.Constant) and keepdims.value is False):
        return None
    axes = [int_literal(a) for a in getattr(axis, "elts", [axis])]
    if not axes or None in axes or not all(-len(shape) <= a < len(shape) for a in axes):
        return None
    reduced = {a % len(shape) for a in axes}
    if reduced == set(range(len(reduced))):
        return g                          # leading axes: broadcasting puts them back
    index = [gast.Constant(None, None) if i in reduced else gast.Slice(None, None, None)
             for i in range(len(shape))]
    return gast.Subscript(g, gast.Tuple(index, gast.Load()), gast.Load())


def reduced_count(shape, axis):
    """How many elements a mean over ``axis`` (a Constant node) averages, or None."""
    if shape is None or not isinstance(axis, gast.Constant):
        return None
    if axis.value is None:
        return int(np.prod(shape, dtype=np.int64))
    if isinstance(axis.value, int) and shape:
        return shape[axis.value % len(shape)]
    return None

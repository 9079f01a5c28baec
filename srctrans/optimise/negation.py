"""Move a negation down the statements that use its value, to where a subtraction absorbs it.

Requires: straight-line backward statements (the top level of a backward
pass, or a loop's body: :func:`sink_negations_in_loops`), after simplification;
:func:`negations_into_updates` takes a fused gradient's body.
Guarantees: the values computed are unchanged (a sign moves through a
product, a quotient or a sum exactly, in floating point too), and a chain
is rewritten only when its last statement takes the sign into a difference
(``a + -b`` is ``a - b``) that lets NumPy reuse a large temporary as the sum
did, so no statement gains a negation or an allocation. The adjoint of
a subtracted value is a negated cotangent, and the rules that read it carry
the sign along, so the backward pass of ``z - np.log(s)`` reads

    d_log = -dlogp.sum(axis=1, keepdims=True)
    d_sum = d_log / s
    dz = dlogp + d_sum * e

When each name of the chain is read by one statement only, the next of the
chain (twice, in a guard ``rt.zero_guard(d, d / s)``), the sign moves along it
and the negated array is never made:

    d_log = dlogp.sum(axis=1, keepdims=True)
    d_sum = d_log / s
    dz = dlogp - d_sum * e

>>> import ast, gast
>>> body = gast.parse("d = -g.sum(axis=0)\\ne = d / s\\nf = h + e * x").body
>>> shapes = {"g": (10, 64), "s": (), "h": (64,), "x": (64,)}
>>> [ast.unparse(gast.gast_to_ast(s)) for s in sink_negations(body, set(), shapes)]
['d = g.sum(axis=0)', 'e = d / s', 'f = h - e * x']

But ``h - e * x`` allocates its result, where ``h + e * x`` writes into the
temporary ``e * x``; for arrays of the size NumPy reuses (256 KiB and more),
or of unknown shape, the sign stays on the small array:

>>> body = gast.parse("d = -g.sum(axis=0)\\ne = d / s\\nf = h + e * x").body
>>> [ast.unparse(gast.gast_to_ast(s)) for s in sink_negations(body, set())]
['d = -g.sum(axis=0)', 'e = d / s', 'f = h + e * x']
"""

import gast
import numpy as np

from srctrans.nodes import clone, load, may_change
from srctrans.optimise.dce import name_counts, reads_of, targets_of
from srctrans.optimise.simplify import keeps_reuse
from srctrans.optimise.expression_shapes import shape_of
from srctrans.treewalk import replace_names, walk, walk_names


def sink_negations(statements, live_out, shapes=None):
    """``statements`` (a flat list) with negations moved to where a difference absorbs them.

    ``live_out`` holds the names read after ``statements``; their values stay
    as they are. ``shapes`` (name -> shape, in a specialised build) tells
    which differences are small enough that NumPy would not reuse a
    temporary anyway (see :func:`~srctrans.optimise.simplify.keeps_reuse`);
    without it, a sign is moved only where no reuse is lost.
    """
    statements = list(statements)
    if not any(_negated_assignment(stmt) for stmt in statements):
        return statements
    known = dict(shapes or {})
    for stmt in statements:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            shape = shape_of(stmt.value, known)
            if shape is not None:
                known.setdefault(stmt.targets[0].id, shape)
    reads, writes = {}, {}
    reading = []                 # per statement, the names it reads and how often (a sign's
    for stmt in statements:      # move keeps them)
        read = {}
        for node in walk(stmt):
            if isinstance(node, gast.Name):
                counts = reads if isinstance(node.ctx, gast.Load) else writes
                counts[node.id] = counts.get(node.id, 0) + 1
                if counts is reads:
                    read[node.id] = read.get(node.id, 0) + 1
        reading.append(read)
    first_reader = {}
    for index, read in enumerate(reading):
        for name in read:
            first_reader.setdefault(name, index)

    def single_use(name):
        """Whether ``name`` is assigned once and read by one statement only (a guard's
        ``rt.zero_guard(d, d / s)`` reads it twice)."""
        return (writes.get(name) == 1 and name not in live_out and name in first_reader
                and reading[first_reader[name]][name] == reads[name])

    for i, stmt in enumerate(statements):
        if _negated_assignment(stmt) is None:
            continue
        chain = _chain(statements, first_reader, i, single_use, known)
        if chain is not None:
            stmt.value = stmt.value.operand                   # n = -e  ->  n = e
            for index, value in chain:
                statements[index].value = value
    return statements


def sink_negations_in_loops(statements, live_out, shapes=None):
    """``statements`` with :func:`sink_negations` run on the body of each loop among them
    (nested ones too), in place: a name of a chain is read once in its body, after it is
    assigned, and nowhere outside the body (``live_out``: the names read after
    ``statements``). A sigmoid's cotangent in a recurrent step, ``-(dz * s / a)`` then
    ``* e`` then negated, loses both signs."""
    _, outside = name_counts(statements)
    loops = [stmt for stmt in statements for stmt in walk(stmt)
             if isinstance(stmt, (gast.For, gast.While))]
    for loop in loops:
        _, inside = name_counts(loop.body)
        elsewhere = {name for name, count in outside.items() if count > inside.get(name, 0)}
        loop.body = sink_negations(loop.body, set(live_out) | elsewhere, shapes)
    return statements


def _chain(statements, first_reader, i, single_use, known):
    """``[(index, new value)]`` for the statements the sign of ``statements[i]`` moves through.

    None when the sign would not end absorbed by a difference.
    """
    chain = []
    name = _negated_assignment(statements[i])
    while single_use(name):
        j = first_reader[name]
        if j <= i or _negated_assignment(statements[j], any_value=True) is None:
            return None
        value = statements[j].value
        trial = _PullOut().visit(_replace_read(clone(value), name))
        if not _is_negation(trial):
            absorbed = (_negations(trial) <= _negations(value)
                        and _costly_differences(trial, known) <= _costly_differences(value, known))
            return chain + [(j, trial)] if absorbed else None
        chain.append((j, trial.operand))                      # the sign moves on
        i, name = j, statements[j].targets[0].id
    return None


# NumPy reuses temporaries of this many bytes and more (NPY_MIN_ELIDE_BYTES); 8-byte elements
REUSED_FROM_ELEMENTS = 256 * 1024 // 8


def _costly_differences(node, known):
    """Differences in ``node`` that keep NumPy from reusing a temporary of a size it would reuse."""
    count = 0
    for n in walk(node):
        if isinstance(n, gast.BinOp) and isinstance(n.op, gast.Sub) and not keeps_reuse(n.left, n.right):
            shape = shape_of(n, known)
            if shape is None or int(np.prod(shape, dtype=np.int64)) >= REUSED_FROM_ELEMENTS:
                count += 1
    return count


def _negated_assignment(stmt, any_value=False):
    """``n`` when ``stmt`` is ``n = -e`` (``n = e`` for any ``e`` with ``any_value``)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    if not any_value and not _is_negation(stmt.value):
        return None
    return targets_of(stmt)[0]


def _is_negation(node):
    return isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)


def _negations(node):
    return sum(1 for n in walk(node) if _is_negation(n))


def _replace_read(expression, name):
    """``expression`` with its read of ``name`` replaced by ``-name``."""
    def negated(node):
        if isinstance(node.ctx, gast.Load) and node.id == name:
            return gast.UnaryOp(gast.USub(), load(name))
        return node
    return replace_names(expression, negated)


def _negate(node):
    return node.operand if _is_negation(node) else gast.UnaryOp(gast.USub(), node)


class _PullOut(gast.NodeTransformer):
    """Move signs outwards: ``-a * b`` -> ``-(a * b)``, ``a + -b`` -> ``a - b``, ``--a`` -> ``a``."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right, op = node.left, node.right, node.op
        if isinstance(op, (gast.Mult, gast.Div)) and (_is_negation(left) or _is_negation(right)):
            if _is_negation(left) and _is_negation(right):
                return gast.BinOp(left.operand, op, right.operand)
            inner = gast.BinOp(_negate(left) if _is_negation(left) else left, op,
                               _negate(right) if _is_negation(right) else right)
            return gast.UnaryOp(gast.USub(), inner)
        if isinstance(op, gast.Add):                              # (checked for reuse after)
            if _is_negation(right):                               # a + -b -> a - b
                return gast.BinOp(left, gast.Sub(), right.operand)
            if _is_negation(left):                                # -a + b -> b - a
                return gast.BinOp(right, gast.Sub(), left.operand)
        if isinstance(op, gast.Sub):
            if _is_negation(right):                               # a - -b -> a + b
                return gast.BinOp(left, gast.Add(), right.operand)
            if _is_negation(left):                                # -a - b -> -(a + b)
                return gast.UnaryOp(gast.USub(), gast.BinOp(left.operand, gast.Add(), right))
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if _is_negation(node) and _is_negation(node.operand):
            return node.operand.operand
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if _is_negation(node.value):                              # (-a)[i] -> -(a[i])
            node.value = node.value.operand
            return gast.UnaryOp(gast.USub(), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        # summing is linear: (-a).sum(...) -> -(a.sum(...)), rt.unbroadcast(-a, x) likewise;
        # rt.zero_guard(-g, -v) -> -rt.zero_guard(g, v) (it zeroes where -g is 0: where g is)
        func = node.func
        if (isinstance(func, gast.Attribute) and func.attr == "zero_guard" and len(node.args) == 2
                and all(_is_negation(a) for a in node.args)):
            node.args = [a.operand for a in node.args]
            return gast.UnaryOp(gast.USub(), node)
        if isinstance(func, gast.Attribute) and func.attr == "sum" and _is_negation(func.value) \
                and not node.args:
            func.value = func.value.operand
            return gast.UnaryOp(gast.USub(), node)
        if (isinstance(func, gast.Attribute) and func.attr == "unbroadcast" and node.args
                and _is_negation(node.args[0])):
            node.args[0] = node.args[0].operand
            return gast.UnaryOp(gast.USub(), node)
        return node


def negations_into_updates(body):
    """``body`` (changed in place, its loops' and branches' blocks too) with each negated
    value ``t = -e`` read only by a later ``x[k] += t`` (or ``x += t``) of its block
    subtracted there instead, ``x[k] -= e``, when nothing between changes what ``e`` reads:
    ``a + -b`` is ``a - b`` exactly, and the negated array is never made (a pairwise loop's
    ``dx[j] += -d``); likewise through a linear map read only by such an update
    (:func:`_negated_through`)."""
    stores, reads = name_counts(body)
    blocks = [body]
    while blocks:
        block = blocks.pop()
        for stmt in block:
            if isinstance(stmt, (gast.For, gast.While, gast.If)):
                blocks += [stmt.body, stmt.orelse]
        dropped = set()
        for index, stmt in enumerate(block):
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.UnaryOp)
                    and isinstance(stmt.value.op, gast.USub)):
                continue
            name = stmt.targets[0].id
            if stores.get(name) != 1 or reads.get(name) != 1:
                continue
            operands = {n.id for n in walk_names(stmt.value)}
            for position, later in enumerate(block[index + 1:], index + 1):
                if _is_update_by(later, name):
                    later.op, later.value = gast.Sub(), stmt.value.operand
                    dropped.add(id(stmt))
                    break
                if name in reads_of(later):
                    if _negated_through(later, name, stmt.value.operand, block[position + 1:],
                                        stores, reads):
                        dropped.add(id(stmt))
                    break
                if may_change(later, operands):
                    break
        if dropped:
            block[:] = [stmt for stmt in block if id(stmt) not in dropped]
    return body


def _is_update_by(stmt, name):
    """Whether ``stmt`` is ``x[k] += name`` (or ``x += name``)."""
    return isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) \
        and isinstance(stmt.value, gast.Name) and stmt.value.id == name


def _negated_through(stmt, name, source, rest, stores, reads):
    """Rewrite, in place, ``u = a @ name`` (``name @ a``, ``c * name``, ``name * c``,
    ``name / c``; ``name = -source`` read nowhere else) as ``u = a @ source`` and the later
    ``x[k] += u`` of ``rest`` that alone reads ``u`` as ``x[k] -= u``: a linear map moves
    the sign to the update, the smaller array when the map reduces (``X.T @ -d``). The maps
    may chain, each result read once by the next (``v = u * y``), and the update may apply
    the last map itself (``x += X.T @ v``): ``-`` commutes with each, exactly."""
    first = _linear_side(stmt, name)
    if first is None:
        return False
    current, later = stmt, rest
    while True:
        target = current.targets[0].id
        if stores.get(target) != 1 or reads.get(target) != 1:
            return False
        position = next((k for k, s in enumerate(later) if target in reads_of(s)), None)
        if position is None:
            return False
        update, later = later[position], later[position + 1:]
        if _is_update_by(update, target) or (
                isinstance(update, gast.AugAssign) and isinstance(update.op, gast.Add)
                and _linear_operand(update.value, target) is not None):
            break
        if _linear_side(update, target) is None:
            return False
        current = update
    setattr(stmt.value, first, source)
    update.op = gast.Sub()
    return True


def _linear_side(stmt, name):
    """The side (``"left"``/``"right"``) of ``stmt``'s value where ``name`` is, when ``stmt``
    assigns one name a map linear in ``name`` (:func:`_linear_operand`); else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    return _linear_operand(stmt.value, name)


def _linear_operand(value, name):
    """The side of ``value``, ``a @ name`` (``name @ a``, ``c * name``, ``name * c``, ``name
    / c``), where ``name`` is, read there once; else None."""
    if not isinstance(value, gast.BinOp):
        return None
    sides = [side for side in ("left", "right")
             if isinstance(getattr(value, side), gast.Name) and getattr(value, side).id == name]
    linear = isinstance(value.op, (gast.MatMult, gast.Mult)) or (
        isinstance(value.op, gast.Div) and sides == ["left"])
    if len(sides) != 1 or not linear or name in reads_of(getattr(value, _OTHER[sides[0]])):
        return None
    return sides[0]


_OTHER = {"left": "right", "right": "left"}

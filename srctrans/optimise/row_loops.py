"""Sums over the rows of arrays, differentiated as one batched step.

Requires: a specialised build's function in A-normal form with SSA names, before it is
differentiated, and the shapes the measuring call saw (``shapes``: only NumPy arrays and
numbers have one, so a name measured with an axis holds an array).
Guarantees: a top-level loop over the rows of arrays whose steps only add a value to
accumulators (a loss over examples)::

    total = 0.0                             total = 0.0
    for x, y in zip(X, Y):                  total_start = total
        err = layer.W @ x + layer.b - y     total_loop = rt.stop_gradient(total)
        total = total + err @ err     ->    for x, y in zip(X, Y): ...    (constant, total_loop)
                                            err_rows = (layer.W @ X.T).T + layer.b - Y
                                            e_rows = np.sum(err_rows * err_rows, axis=-1)
                                            total_rows = total_start + e_rows.sum(axis=0)
                                            total_valued = rt.valued(total_loop, total_rows)

keeps the loop for the value (what Python computes, to the last bit) and differentiates the
sum of the batched step (``differentiate.batching``) instead: the derivative of a sum over
steps is the sum of the steps' derivatives, which the batched step computes with one
product where the loop made one per row (the order of the sum's terms and BLAS's kernels,
and so the last bits of a gradient, may differ). The loop is marked constant
(``Anno.NO_GRADIENT``), so nothing of it is saved; a gradient that does not return the
value reads the batched sum (:func:`differentiated_values`) and drops the loop as dead code.

A loop is rewritten only when the shape key decides it all: it runs over ``range`` of the
length of the arrays it reads rows of (``for x in X``, ``zip``, ``range(len(X))``), all
with that many rows (at least one); its steps assign names only (no ``if``, no loop, no
write into a value), read its count only to pick rows or in arithmetic with number
literals (``np.exp(-0.1 * i)`` of ``enumerate``: the counts batched are ``np.arange(n)``),
and carry nothing but the accumulators, sums of numbers or arrays, each updated once
(``acc = acc + e``) and read nowhere else in the step;
nothing after it reads a name a step assigns but the accumulators; each step's
statements that read no row are pure (NumPy's or the runtime's functions, no random draw),
and the rest batch without a per-member loop or a runtime helper of batching (which has
no derivative rules). Anything else is left as it is.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.differentiate.batched_names import Unbatchable, truthy
from srctrans.differentiate.batching import batch
from srctrans.differentiate.batching_rules import is_random
from srctrans.differentiate.calls import is_library
from srctrans.errors import SrcTransError
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS
from srctrans.nodes import (
    assign, clone, int_literal, load, parameter_names, rename_reads, resolved_runtime_call,
    substitute_names)
from srctrans.optimise.dce import reads_of, stores_of, targets_of
from srctrans.optimise.expression_shapes import infer_shapes, shape_of
from srctrans.optimise.stacked_lists import append_of, stacked_lists
from srctrans.treewalk import walk


def batch_row_loops(unit, shapes, normal_form):
    """Rewrite, in ``unit.function`` (in place), each top-level loop over rows this module
    describes, and add the shapes of the names it makes to ``shapes``;
    ``normal_form(statements)`` puts new statements in A-normal form with their calls
    resolved. Returns the loops rewritten (SSA names and activity must then be found
    again)."""
    body = unit.function.body
    changed = []
    for position in range(len(body) - 1, -1, -1):
        loop = body[position]
        if isinstance(loop, gast.For):
            rewritten = _rewritten(unit, shapes, body[:position], loop, body[position + 1:],
                                   normal_form)
            if rewritten is not None:
                before, after = rewritten
                body[position:position + 1] = before + [loop] + after
                changed.append(loop)
    return changed


class _Loop:
    """What a loop over rows reads and computes: ``rows`` (target name -> the array it is a
    row of), ``counts`` (the names holding the step's count: the loop's and its copies,
    ``i`` of ``enumerate``), ``sums`` (accumulator -> the name of the value each step adds),
    ``updates`` (the statements that add them), ``step`` (the statements left), ``appends``
    (list -> the name of the value each step appends to it)."""

    def __init__(self, rows, counts, sums, updates, step, appends):
        self.rows, self.counts, self.sums, self.updates, self.step, self.appends = \
            rows, counts, sums, updates, step, appends

    def batched(self):
        """The names that differ from step to step before the step computes anything."""
        return set(self.rows) | self.counts


def _rewritten(unit, shapes, before, loop, after, normal_form):
    """``(statements before the loop, statements after it)`` replacing ``loop``'s place, or
    None when it is not a sum over rows that batches."""
    definitions = {target: stmt.value for stmt in before for target in targets_of(stmt)}
    found = _row_loop(loop, definitions, shapes, unit.aliases[RUNTIME_ALIAS])
    if found is None or reads_of(gast.Module(after, [])) & (stores_of(loop) - set(found.sums)) \
            or stores_of(gast.Module(after, [])) & set(found.sums) or not _numeric_sums(
                found, before, definitions, loop, shapes, parameter_names(unit.function)):
        return None
    stacks = stacked_lists(found, before, after, definitions)
    if stacks is None or found.appends and not _known_values(
            found, loop, shapes, parameter_names(unit.function)):
        return None
    fixed, batched = _split(found)
    if fixed is None or not all(_pure(stmt) for stmt in fixed):
        return None
    step = _batched_step(unit, shapes, found, fixed, batched)
    if step is None:
        return None
    fresh = {name: unit.namer.fresh(name + "_rows") for stmt in fixed + step
             for name in targets_of(stmt)}
    unit.namer.temporaries.update(new for old, new in fresh.items()   # (inlined where read
                                  if old in unit.namer.temporaries)   # once, as theirs are)
    trips = shapes[next(iter(found.rows.values()))][0]
    rows = {target: load(array) for target, array in found.rows.items()}
    new = []
    if (reads_of(gast.Module(step, [])) | set(found.sums.values())) & found.counts:
        # the counts, 0, 1, ..., at once
        counted = unit.namer.fresh("_counts")
        new.append(assign(counted, gast.Call(gast.Attribute(
            load(unit.aliases[NUMPY_ALIAS]), "arange", gast.Load()), [gast.Constant(trips, None)], [])))
        shapes[counted] = (trips,)
        rows.update((name, load(counted)) for name in found.counts)
    for stmt in [clone(s) for s in fixed + step]:
        stmt = substitute_names(stmt, {**rows, **{old: load(n) for old, n in fresh.items()}})
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                node.id = fresh.get(node.id, node.id)
        new.append(stmt)
    for statements, lead in ((fixed, ()), (step, (trips,))):   # the shapes of what they make
        for name in (t for stmt in statements for t in targets_of(stmt)):
            if name in shapes:
                shapes[fresh[name]] = lead + tuple(shapes[name])
    for stmt, name, axis in stacks:          # the lists' stacks: the batched values' axes moved
        value = found.appends[name]
        batched_value = load(fresh[value]) if value in fresh else clone(rows[value])
        stacked = unit.namer.fresh(name + "_rows")
        new.append(assign(stacked, batched_value if axis == 0 else gast.Call(
            gast.Attribute(load(unit.aliases[NUMPY_ALIAS]), "moveaxis", gast.Load()),
            [batched_value, gast.Constant(0, None), gast.Constant(axis, None)], [])))
        if shapes.get(value) is not None:
            moved = list(shapes[value])
            moved.insert(axis % (len(moved) + 1), trips)
            shapes[stacked] = tuple(moved)
        stmt.value = resolved_runtime_call(unit.aliases, "valued", [stmt.value, load(stacked)])
    starts, sums, renaming = [], [], {}
    loop_names = {}
    for accumulator, added in found.sums.items():
        start = unit.namer.fresh(accumulator + "_start")
        starts.append(assign(start, load(accumulator)))
        loop_names[accumulator] = unit.namer.fresh(accumulator + "_loop")
        starts.append(assign(loop_names[accumulator], resolved_runtime_call(
            unit.aliases, "stop_gradient", [load(accumulator)])))
        total = unit.namer.fresh(accumulator + "_rows")
        new.append(assign(total, gast.BinOp(load(start), gast.Add(), gast.Call(
            gast.Attribute(fresh.get(added) and load(fresh[added]) or clone(rows[added]), "sum",
                           gast.Load()), [],
            [gast.keyword("axis", gast.Constant(0, None))]))))
        valued = unit.namer.fresh(accumulator + "_valued")
        sums.append(assign(valued, resolved_runtime_call(
            unit.aliases, "valued", [load(loop_names[accumulator]), load(total)])))
        renaming[accumulator] = valued
        if accumulator in shapes:
            for name in (start, total, loop_names[accumulator], valued):
                shapes[name] = shapes[accumulator]
    for node in walk(loop):
        if isinstance(node, gast.stmt):
            anno.set_(node, Anno.NO_GRADIENT, True)
            appended = append_of(node)
            if appended is not None:      # a list no other name holds, read by its stacks
                anno.set_(node, Anno.CHANGES_ONLY, appended[0])
        if isinstance(node, gast.Name) and node.id in loop_names:
            node.id = loop_names[node.id]          # the loop's sums: constants from the start
    for stmt in new + starts + sums:
        stmt.lineno = loop.lineno
    for stmt in after:
        rename_reads(stmt, renaming)
    return normal_form(starts), normal_form(new) + sums


def _known_values(found, loop, shapes, parameters):
    """Whether each value appended has a known shape (measured or inferred), or is a row."""
    known = infer_shapes(loop.body, shapes, parameters)
    return all(v in known or v in found.batched() for v in found.appends.values())


def _numeric_sums(found, before, starts, loop, shapes, parameters):
    """Whether each sum is of numbers or arrays: the accumulator measured (or starting from a
    value of a known shape: ``total = 0.0``, then vectors added), and each step's
    term of a known shape (measured, or inferred from its operands': the generic code the
    measuring call ran folded it into the sum). ``starts``: name -> its value before the
    loop."""
    earlier = infer_shapes(before, shapes, parameters)
    if not all(a in shapes or starts.get(a) is not None and shape_of(starts[a], earlier) is not None
               for a in found.sums):
        return False                              # (a sum of vectors from 0.0: shapes vary)
    known = infer_shapes(loop.body, shapes, parameters)
    return all(t in known or t in found.batched() for t in found.sums.values())


def _row_loop(loop, definitions, shapes, runtime_alias):
    """The :class:`_Loop` of ``loop``, or None when it is not over rows, or its steps do
    more than add to accumulators; ``definitions``: name -> its value before the loop."""
    if loop.orelse or not isinstance(loop.target, gast.Name) \
            or not isinstance(loop.iter, gast.Call) or anno.get(loop.iter, Anno.CALLEE) is not range \
            or len(loop.iter.args) != 1 or loop.iter.keywords \
            or not isinstance(loop.iter.args[0], gast.Name):
        return None
    appends, assignments = {}, []
    for stmt in loop.body:
        appended = append_of(stmt)
        if appended is None:
            assignments.append(stmt)
        elif appended[0] in appends:
            return None                           # (two appends a step)
        else:
            appends[appended[0]] = appended[1]
    if not all(isinstance(s, gast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], gast.Name) for s in assignments) \
            or set(appends) & (reads_of(gast.Module(assignments, [])) | stores_of(loop)):
        return None
    counts, rows, rest = {loop.target.id}, {}, []
    for stmt in assignments:
        value = stmt.value
        if isinstance(value, gast.Name) and value.id in counts:        # i = _index
            counts.add(stmt.targets[0].id)
        elif isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                and isinstance(value.slice, gast.Name) and value.slice.id in counts:
            rows[stmt.targets[0].id] = value.value.id
        else:
            rest.append(stmt)
    if not rows or not _read_as_numbers(rest, counts) or counts & set(rows) \
            or (counts | set(rows)) & {t for stmt in rest for t in targets_of(stmt)}:
        return None
    length = _rows_counted(loop.iter.args[0].id, definitions, runtime_alias)
    lengths = {shapes[a][0] if len(shapes.get(a, ())) else None for a in set(rows.values())}
    lengths |= {shapes[a][0] if len(shapes.get(a, ())) else None for a in length or ()}
    if length is None or len(lengths) != 1 or None in lengths or lengths.pop() < 1 \
            or any(shapes.get(t, shapes[a][1:]) != shapes[a][1:] for t, a in rows.items()) \
            or set(rows.values()) & stores_of(loop):
        return None
    for target, array in rows.items():     # (a row read folded into what reads it: unmeasured)
        shapes.setdefault(target, shapes[array][1:])
    return _accumulations(rows, counts, rest, appends)


def _read_as_numbers(statements, counts):
    """Whether ``statements`` read the step's count (``counts``) only in arithmetic with
    number literals, and what that computes only so or in NumPy's ufuncs (``np.exp(-0.1 *
    i)``). A count is a Python int, and such arithmetic keeps a Python number, which
    NumPy's promotion lets an array's dtype decide (float32 stays float32); batched, the
    counts are an int64 array, whose dtype would decide instead. A ufunc gives a NumPy
    scalar of the same dtype as it gives for the batched counts."""
    weak = set(counts)
    for stmt in statements:
        value = stmt.value
        if not reads_of(value) & weak:
            continue
        operands = [value.left, value.right] if isinstance(value, gast.BinOp) and isinstance(
            value.op, (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)) else \
            [value.operand] if isinstance(value, gast.UnaryOp) and isinstance(
                value.op, (gast.USub, gast.UAdd)) else \
            value.args if isinstance(value, gast.Call) and not value.keywords and isinstance(
                anno.get(value, Anno.CALLEE), np.ufunc) else None
        if operands is None or not all(
                isinstance(o, gast.Name) and o.id in weak or _number_literal(o) for o in operands):
            return False
        if not isinstance(value, gast.Call):
            weak.update(targets_of(stmt))            # still a Python number in the loop
    return True


def _number_literal(node):
    """Whether ``node`` is an int or float literal (``-0.1`` too: a minus sign and a number)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def _rows_counted(count, definitions, runtime_alias):
    """The arrays ``count`` is the length of (``len(X)``, ``rt.sequence_length(X)`` of
    ``for x in X``, or ``min`` of lengths: ``zip``), or None."""
    value = definitions.get(count)
    parts = value.args if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
        and value.func.id == "min" and anno.get(value, Anno.CALLEE) is min else [value]
    arrays = set()
    for part in parts:
        if isinstance(part, gast.Name):
            part = definitions.get(part.id)
        lead = _first_length(part, definitions)
        if lead is not None:                      # X.shape[0]
            arrays.add(lead)
            continue
        if not (isinstance(part, gast.Call)
                and (anno.get(part, Anno.CALLEE) is len
                     or isinstance(part.func, gast.Attribute)
                     and part.func.attr == "sequence_length"
                     and isinstance(part.func.value, gast.Name)
                     and part.func.value.id == runtime_alias)
                and len(part.args) == 1 and isinstance(part.args[0], gast.Name)
                and not part.keywords):
            return None
        arrays.add(part.args[0].id)
    return arrays


def _first_length(value, definitions):
    """The array ``value`` is the first length of (``X.shape[0]``, ``_shape[0]`` of a name
    assigned ``X.shape``), else None."""
    if not (isinstance(value, gast.Subscript) and int_literal(value.slice) == 0):
        return None
    shape = value.value
    if isinstance(shape, gast.Name):
        shape = definitions.get(shape.id)
    if isinstance(shape, gast.Attribute) and shape.attr == "shape" \
            and isinstance(shape.value, gast.Name):
        return shape.value.id
    return None


def _accumulations(rows, counts, statements, appends):
    """The :class:`_Loop` of a step's ``statements`` (after its row reads and copies of its
    count; ``appends``: list -> the value a step appends to it), or None when it carries a
    name that is not an accumulator."""
    assigned, exposed = set(rows) | counts, set()
    for stmt in statements:
        exposed |= reads_of(stmt) - assigned
        assigned |= set(targets_of(stmt))
    carried = exposed & assigned
    sums, updates = {}, []
    for accumulator in carried:
        reads = [s for s in statements if accumulator in reads_of(s)]
        writes = [s for s in statements if accumulator in targets_of(s)]
        if len(reads) != 1 or len(writes) != 1:
            return None
        added = _added(reads[0].value, accumulator)
        if added is None:
            return None
        if writes[0] is not reads[0]:       # _add = total + e; total = _add
            copy = writes[0].value
            partial = targets_of(reads[0])[0]
            if not (isinstance(copy, gast.Name) and copy.id == partial) or \
                    sum(partial in reads_of(s) for s in statements) != 1:
                return None
            updates.append(writes[0])
        updates.append(reads[0])
        sums[accumulator] = added
    step = [s for s in statements if not any(s is u for u in updates)]
    return _Loop(rows, counts, sums, updates, step, appends)


def _added(value, accumulator):
    """The name ``value`` (``acc + e`` or ``e + acc``) adds to ``accumulator``, or None."""
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
        return None
    sides = [value.left, value.right]
    if not all(isinstance(s, gast.Name) for s in sides):
        return None
    names = [s.id for s in sides]
    if names.count(accumulator) != 1:
        return None
    return names[1 - names.index(accumulator)]


def _split(found):
    """``(the step's statements that read no row, directly or not; the others)``, or
    ``(None, None)`` when an accumulator's term reads no row (a constant added per step)."""
    varying = found.batched()
    fixed, batched = [], []
    for stmt in found.step:
        if reads_of(stmt) & varying:
            varying |= set(targets_of(stmt))
            batched.append(stmt)
        else:
            fixed.append(stmt)
    if not set(found.sums.values()) | set(found.appends.values()) <= varying:
        return None, None
    return fixed, batched


def _pure(stmt):
    """Whether computing ``stmt`` once, where a loop computed it at each step, does the same:
    it calls only library functions (NumPy's, the runtime's) that draw no random numbers."""
    for node in walk(stmt):
        if isinstance(node, gast.Call):
            callee = anno.get(node, Anno.CALLEE)
            if callee is None or not is_library(callee) or is_random(callee):
                return False
    return True


def _refused(*_):
    raise Unbatchable("a call of a function of the user's inside a loop over rows", None)


class _Step:
    """The unit :func:`batch` reads, for one step of a loop as a function."""

    def __init__(self, unit, function):
        self.parsed, self.namer, self.aliases = unit.parsed, unit.namer, unit.aliases
        self.resolver = unit.resolver
        self.function = function
        self.dict_valued = set()


def _batched_step(unit, shapes, found, fixed, statements):
    """The batched statements of a step (its rows' arrays named as the rows are), or None."""
    outputs = list(found.sums.values()) + list(found.appends.values())
    given = found.batched() | {t for s in fixed for t in targets_of(s)}
    free = reads_of(gast.Module(statements, [])) - {t for s in statements for t in targets_of(s)}
    parameters = sorted(given | free)
    returned = load(outputs[0]) if len(outputs) == 1 else \
        gast.Tuple([load(o) for o in outputs], gast.Load())
    function = gast.FunctionDef(
        "step", gast.arguments([gast.Name(p, gast.Param(), None, None) for p in parameters],
                               [], None, [], [], None, []),
        [clone(s) for s in statements] + [gast.Return(returned)], [], None, None)
    function.lineno = statements[0].lineno if statements else unit.function.lineno
    ranks = {name: 0 if name in found.counts else len(shapes[name]) if name in shapes else None
             for name in parameters}
    try:
        result = batch(_Step(unit, function), dict.fromkeys(found.batched(), True), ranks,
                       _refused)
    except (Unbatchable, SrcTransError):
        return None
    flags = result.output_flag if len(outputs) > 1 else (result.output_flag,)
    runtime_alias = unit.aliases[RUNTIME_ALIAS]
    if result.loops or result.selects or result.closure or not all(map(truthy, flags)) \
            or any(isinstance(n, gast.Attribute) and n.attr == "batch"
                   and isinstance(n.value, gast.Name) and n.value.id == runtime_alias
                   for s in result.body for n in walk(s)):
        return None
    *body, ret = result.body
    if not (isinstance(ret, gast.Return) and reads_of(ret) <= set(outputs)):
        return None
    return body


def differentiated_values(stmt):
    """``stmt`` with ``x = rt.valued(value, differentiated)`` made ``x = differentiated``:
    where no value is returned (a fused gradient), a derivative may read the batched sums,
    and the loops that computed the values are then dead."""
    value = stmt.value if isinstance(stmt, gast.Assign) else None
    if isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is runtime.valued:
        stmt.value = value.args[1]
    return stmt

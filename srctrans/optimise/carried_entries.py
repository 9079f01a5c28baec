"""A loop that writes ``a[t]`` and reads ``a[t - 1]`` at its next step keeps what it wrote.

Requires: the body of a fused gradient specialised on shapes (top-level statements, after
its list forms: ``optimise/float_lists.py``), the shapes of names (a vector's has one axis),
the names read after it, the runtime's alias and a namer.
Guarantees: the values computed are unchanged. In a top-level ``for t in <range of step
1>`` loop whose statements are assignments, a vector ``a`` that the body made itself
(bound last before the loop to new memory: a call that makes it, or arithmetic; then read
only in ways that give no other name its memory: written into, read a number at a time,
an operand of arithmetic or of a call that makes new memory) and that the loop touches
only by one statement ``a[t] = e`` and by reads of ``a[t - 1]`` before it, is read at each
step after the first at the entry the step before wrote: the loop keeps that value in a
name, and reads the array once, before its first step (an exponential smoothing's level
and its tangent, a filter, an Euler step)::

    for t in _range:                       if _range and level.dtype is y.dtype is rt.FLOAT64 and ...:
        s = level[t - 1]                        _level_last = level[_range.start - 1]
        level[t] = alpha * y[t] + c * s   ->    for t in _range:
                                                    s = _level_last
                                                    _level_last = alpha * y[t] + c * s
                                                    level[t] = _level_last
                                            else:
                                                (the loop as it was)

Reading an entry of a float64 array gives a NumPy float64 of the value written; the kept
value is that same float64 when ``e`` is arithmetic (``+ - * /``, unary minus) of numbers
and of such entries and reads at least one of them: the test before the loop checks that
the loop takes a step, that the carried vectors and every vector the arithmetic reads are
of float64, and that every number it reads from outside the loop is a float, an int or a
float64 (float64 with any of those is float64). A fused gradient differentiated again keeps
the loop as it was (``float_lists.keep_array_loops``).
"""

import gast

from srctrans import annotations as anno
from srctrans.analyse.values import makes_new_value
from srctrans.nodes import assign, clone, dotted, load
from srctrans.optimise.dce import needs_of
from srctrans.optimise.expression_shapes import shape_of
from srctrans.treewalk import replace_children, walk

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)


def carry_entries(body, known, live_out, runtime_alias, fresh):
    """``body`` with each loop that qualifies keeping the entries it writes for its next
    step (see the module); ``known``: the shapes of names (a vector's has one axis);
    ``live_out``: the names read after ``body``; ``fresh(base)``: a new name. One walk of
    ``body`` for what each name was last bound to and how it was read since (:class:`_Made`),
    one for where each name is read last."""
    ranges = _ranges(body)
    vectors = {name for name, shape in known.items() if len(shape) == 1}
    last_read = {name: index for index, stmt in enumerate(body) for name in needs_of(stmt)}
    made = _Made(known)
    out = []
    for index, stmt in enumerate(body):
        plan = _plan(stmt, made, vectors, ranges) if isinstance(stmt, gast.For) else None
        made.note(stmt)
        if plan is None:
            out.append(stmt)
            continue
        out.extend(_carried_form(stmt, plan, lambda name, index=index: name in live_out
                                 or last_read.get(name, -1) > index, runtime_alias, fresh))
    return out


class _Made:
    """The names the statements seen so far bound last, at the top level, to new memory (a
    call that makes it, or arithmetic), and read since only in ways that give no other name
    their memory: written into, read a number at a time (``known``: the shapes of names),
    an operand of arithmetic or of a call that makes new memory (``rt.zeros_of(level)``)."""

    def __init__(self, known):
        self.known, self.names = known, set()

    def note(self, stmt):
        """Account for ``stmt``, the next statement of the body. (The walk is breadth first:
        a node's parent, which makes it harmless, comes before it.)"""
        harmless, dropped = set(), set()
        for node in walk(stmt):
            if isinstance(node, gast.Subscript) and (not isinstance(node.ctx, gast.Load)
                                                     or shape_of(node, self.known) == ()):
                harmless.add(id(node.value))
            elif isinstance(node, (gast.BinOp, gast.UnaryOp)) \
                    or isinstance(node, gast.Call) and makes_new_value(node):
                harmless.update(id(child) for child in gast.iter_child_nodes(node))
            elif isinstance(node, gast.Name) and (not isinstance(node.ctx, gast.Load)
                                                  or id(node) not in harmless):
                dropped.add(node.id)               # (bound again, or read otherwise)
        self.names -= dropped
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and makes_new_value(stmt.value):
            self.names.add(stmt.targets[0].id)


class _Plan:
    """A loop's carried vectors, the vectors its kept arithmetic reads entries of, and the
    numbers it reads from outside the loop."""

    def __init__(self, carried, read, numbers):
        self.carried, self.read, self.numbers = carried, read, numbers


def _ranges(body):
    """``{name: its range(...) call}`` for the names the top level of ``body`` assigns a
    range of step 1 once (and nothing else)."""
    calls, counts = {}, {}
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and _unit_range(stmt.value):
            calls[stmt.targets[0].id] = stmt.value
    return {name: call for name, call in calls.items() if counts[name] == 1}


def _unit_range(node):
    """Whether ``node`` is ``range(n)`` or ``range(a, b)``: consecutive ints."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "range" and 1 <= len(node.args) <= 2 and not node.keywords \
        and not any(isinstance(arg, gast.Starred) for arg in node.args)


def _plan(loop, made, vectors, ranges):
    """The :class:`_Plan` of ``loop`` when some of ``vectors`` (the names of arrays of one
    axis) qualifies (see the module), else None."""
    if loop.orelse or not isinstance(loop.target, gast.Name) or not (
            _unit_range(loop.iter) or isinstance(loop.iter, gast.Name) and loop.iter.id in ranges):
        return None
    counter = loop.target.id
    if not all(isinstance(s, (gast.Assign, gast.AugAssign)) for s in loop.body) or any(
            isinstance(s, gast.Assign) and len(s.targets) != 1 for s in loop.body):
        return None
    assigned = [node.id for stmt in loop.body for node in walk(stmt)
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)]
    if counter in assigned:
        return None
    once = {name for name in assigned if assigned.count(name) == 1}
    written = {node.value.id for stmt in loop.body for node in walk(stmt)
               if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
               and isinstance(node.value, gast.Name)}
    carried = [name for name in sorted(written & vectors & made.names)
               if _touched_as_carried(loop, name, counter, once)]
    if not carried:
        return None
    read, numbers = [], []
    kinds = {counter: "int"}                 # the kinds of the names the step has assigned
    for stmt in loop.body:
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
        stored = target.value.id if isinstance(target, gast.Subscript) \
            and isinstance(target.value, gast.Name) else None
        found = (vectors, carried, assigned, (read, numbers))
        if isinstance(stmt, gast.Assign) and isinstance(target, gast.Name) and target.id in once:
            kinds[target.id] = "int" if _is_int(stmt.value, kinds) \
                else _kind(stmt.value, kinds, found)
        elif stored in carried and _kind(stmt.value, kinds, found) != "entry":
            return None                     # (what it writes might not be what a read gives)
    return _Plan(carried, read, numbers)


def _is_previous(node, counter):
    """Whether ``node`` is ``counter - 1``."""
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.Sub) \
        and isinstance(node.left, gast.Name) and node.left.id == counter \
        and isinstance(node.right, gast.Constant) and type(node.right.value) is int \
        and node.right.value == 1


def _touched_as_carried(loop, name, counter, once):
    """Whether ``loop`` touches ``name`` by one ``name[counter] = ...`` alone and reads of
    ``name[counter - 1]`` before it (or ``name[s]``, ``s`` a name of ``once``, those the
    body assigns once, assigned ``counter - 1`` earlier in the step)."""
    stores, reads, previous = 0, 0, set()
    for stmt in loop.body:
        store = isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript) \
            and isinstance(stmt.targets[0].value, gast.Name) and stmt.targets[0].value.id == name
        if store:
            index = stmt.targets[0].slice
            if not (isinstance(index, gast.Name) and index.id == counter) or stores:
                return False
        part = stmt.value if store else stmt
        entries = set()
        for node in walk(part):
            if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                    and node.value.id == name:
                if stores or not isinstance(node.ctx, gast.Load) or not (
                        _is_previous(node.slice, counter)
                        or isinstance(node.slice, gast.Name) and node.slice.id in previous):
                    return False
                entries.add(id(node.value))
                reads += 1
            elif isinstance(node, gast.Name) and node.id == name and id(node) not in entries:
                return False                     # (a read outside an entry, a rebinding)
        stores += store
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and stmt.targets[0].id in once and _is_previous(stmt.value, counter):
            previous.add(stmt.targets[0].id)
    return stores == 1 and reads > 0


def _kind(node, kinds, found):
    """``"entry"`` when ``node`` is arithmetic of numbers that reads a vector's entry (a
    float64 once the test holds), ``"number"`` when it reads none, None when it is other
    than such arithmetic; ``kinds``: those of the names the step assigned so far; ``found``:
    ``(vectors, carried, the names the loop assigns, (read, numbers))``, into which it
    records the vectors read and the numbers from outside the loop."""
    vectors, carried, assigned, (read, numbers) = found
    if isinstance(node, gast.BinOp) and isinstance(node.op, _ARITHMETIC):
        left, right = _kind(node.left, kinds, found), _kind(node.right, kinds, found)
        if left is None or right is None:
            return None
        return "entry" if "entry" in (left, right) else "number"
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return _kind(node.operand, kinds, found)
    if isinstance(node, gast.Constant):
        return "number" if type(node.value) in (int, float) else None
    if isinstance(node, gast.Name):
        if node.id in kinds:
            return "number" if kinds[node.id] == "int" else kinds[node.id]
        if node.id in assigned or node.id in vectors:
            return None                     # (a value of the step before, or an array)
        if node.id not in numbers:
            numbers.append(node.id)
        return "number"
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
            and node.value.id in vectors and _is_int(node.slice, kinds):
        if node.value.id not in carried and node.value.id not in read:
            read.append(node.value.id)
        return "entry"
    return None


def _is_int(node, kinds):
    """Whether ``node`` is an int of the step: its counter, a name of an int, a literal, or
    sums and differences of them."""
    if isinstance(node, gast.Name):
        return kinds.get(node.id) == "int"
    if isinstance(node, gast.Constant):
        return type(node.value) is int
    return isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)) \
        and _is_int(node.left, kinds) and _is_int(node.right, kinds)


def _carried_form(loop, plan, read_later, runtime_alias, fresh):
    """``[steps = ...,] if <carried_test>: <first reads; carried loop> else: <loop>``;
    ``read_later(name)``: whether a statement after the loop reads ``name``."""
    before = []
    steps = loop.iter
    if not isinstance(steps, gast.Name):
        name = fresh("_steps")
        before.append(gast.copy_location(assign(name, steps), loop))
        loop.iter = steps = load(name)
    last = {vector: fresh(f"_{vector}_last") for vector in plan.carried}
    carried = clone(loop)
    body = []
    for stmt in carried.body:
        replace_children(stmt, lambda node: load(last[node.value.id]) if isinstance(
            node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id in last and isinstance(node.ctx, gast.Load) else node)
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and target.value.id in last:
            kept = last[target.value.id]
            body.append(anno.copy(stmt, gast.copy_location(assign(kept, stmt.value), stmt)))
            stmt.value = load(kept)
        body.append(stmt)
    carried.body = _without_unread(body, carried.target.id, read_later)
    first = [assign(last[vector], gast.Subscript(
        load(vector), gast.BinOp(gast.Attribute(load(steps.id), "start", gast.Load()),
                                 gast.Sub(), gast.Constant(1, None)), gast.Load()))
        for vector in last]
    test = carried_test(steps.id, list(plan.carried) + plan.read, plan.numbers, runtime_alias)
    choice = gast.If(test, first + [carried], [loop])
    for node in walk(choice):
        if isinstance(node, gast.stmt) and not hasattr(node, "lineno"):
            gast.copy_location(node, loop)
    return before + [gast.copy_location(choice, loop)]


def carried_test(steps, vectors, numbers, runtime_alias):
    """``steps and a.dtype is b.dtype is rt.FLOAT64 and n.__class__ in rt.NUMBERS ...``: the
    loop takes a step, each of ``vectors`` is of float64, each of ``numbers`` a float, an int
    or a float64 (``n.__class__``: a module may name something else ``type``)."""
    dtypes = [gast.Attribute(load(v), "dtype", gast.Load()) for v in vectors]
    values = [load(steps), gast.Compare(dtypes[0], [gast.Is() for _ in dtypes],
                                        dtypes[1:] + [dotted(runtime_alias, "FLOAT64")])]
    values += [gast.Compare(gast.Attribute(load(n), "__class__", gast.Load()), [gast.In()],
                            [dotted(runtime_alias, "NUMBERS")]) for n in numbers]
    return gast.BoolOp(gast.And(), values)


def is_carried_test(test):
    """The name of the runtime ``test`` reads when it is :func:`carried_test`'s, else None."""
    if not (isinstance(test, gast.BoolOp) and isinstance(test.op, gast.And)
            and len(test.values) >= 2 and isinstance(test.values[1], gast.Compare)):
        return None
    last = test.values[1].comparators[-1]
    return last.value.id if isinstance(last, gast.Attribute) and last.attr == "FLOAT64" \
        and isinstance(last.value, gast.Name) else None


def _without_unread(body, counter, read_later):
    """``body`` without the assignments of an index ``s = t - 1`` that no statement of it,
    nor one after the loop (``read_later(name)``), reads any more (the reads it named were
    of a carried entry)."""
    read = set()
    for stmt in body:
        read |= needs_of(stmt)
    return [stmt for stmt in body if not (
        isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id not in read and not read_later(stmt.targets[0].id)
        and _is_previous(stmt.value, counter))]

"""A loop of arithmetic on the entries of vectors runs on lists of their floats.

Requires: the body of a fused gradient specialised on shapes (its last pass), the names
known to hold vectors (one axis), the names read after the body (its returned values), the
names the runtime and NumPy are called by, and a namer.
Guarantees: the values computed are unchanged. A top-level ``for`` loop over a range (a
``range(...)`` call, or a name assigned one once) whose body is assignments and
augmented assignments of ``+``, ``-``, ``*`` and unary minus of numbers, of names, and of
entries ``v[i]`` of vectors or of the body's own lists (a loop's saved values,
``optimise/step_lists.py``), ``i`` an int (the loop's counter, a range's entry, sums of
them and int literals, and names the body assigns one of those once), runs on
``v.tolist()`` when ``rt.runs_on_float_lists`` finds each vector a float64 array that no written
one shares memory with, each number the arithmetic reads from outside the loop a float,
and the loop long enough (16 steps) to gain by it (an exponential smoothing's level,
forward and backward)::

    for t in _range:                          if rt.runs_on_float_lists((level, y), 1, _range, (alpha, c)):
        _s[t - 1] = s                              _level, _y = level.tolist(), y.tolist()
        s = level[t - 1]               ->         for t in _range:
        level[t] = alpha * y[t] + c * s               _s[t - 1] = s
                                                      s = _level[t - 1]
                                                      _level[t] = alpha * _y[t] + c * s
                                                  level[:] = _level
                                              else:
                                                  (the loop as it was)

Sums, differences and products of float64 values are the same IEEE operations on NumPy's
floats and on Python's, which take a third of the time; the written vectors are written
back after the loop, and a name the loop leaves a float64 (one computed from a vector's
entry) is a float64 again after it when the loop ran. A value the loop saves in one of its
lists is the same number as a Python float. The loop's list form is plain Python that no
rule covers: a fused gradient differentiated again keeps the loop as it was
(:func:`keep_array_loops`, in its front end).
"""

import gast

from srctrans import runtime
from srctrans.runtime.float_lists import FEWEST_STEPS
from srctrans.nodes import assign, clone, load
from srctrans.optimise.carried_entries import is_carried_test
from srctrans.optimise.dce import reads_of
from srctrans.optimise.entry_cotangents import runtime_call
from srctrans.parse.resolve import current_value
from srctrans.treewalk import walk

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult)


def float_list_loops(body, vectors, live_out, parameters, runtime_alias, numpy_alias, fresh):
    """``body`` with each qualifying top-level loop given its list form (see the module);
    ``vectors``: the names known to hold arrays of one axis, and their lengths (a loop whose
    vectors are all shorter than the 16 steps the list form needs keeps its arrays alone,
    with no test); ``live_out``: the names read
    after ``body``; ``parameters``: the function's; ``fresh(base)``: a new name."""
    ranges = {stmt.targets[0].id for stmt in body if _assigns_range(stmt)}
    lists = {stmt.targets[0].id for stmt in body if _assigns_list(stmt)}
    sources = _list_sources(body, lists, vectors)
    out = []
    for index, stmt in enumerate(body):
        plan = _plan(stmt, vectors, ranges, lists, sources) if isinstance(stmt, gast.For) \
            else None
        if plan is None or max(vectors[name] for name in plan.vectors) < FEWEST_STEPS:
            out.append(stmt)
            continue
        later = set(live_out) | set(parameters)          # (a parameter's caller reads it)
        for after in body[index + 1:]:
            later |= reads_of(after)
        later |= {name for name in plan.written if _maybe_viewed(body[:index], name)}
        out.extend(_list_form(stmt, plan, later, runtime_alias, numpy_alias, fresh))
    return out


def _maybe_viewed(statements, name):
    """Whether ``statements`` may have made another name for the array ``name`` holds (read
    it otherwise than at an entry, ``name[i]``: a slice is a view, a call may return it), so
    that what the loop writes into it is read after the loop though ``name`` is not."""
    entries = {id(node.value) for stmt in statements for node in walk(stmt)
               if isinstance(node, gast.Subscript)
               and not any(isinstance(part, gast.Slice) for part in walk(node.slice))}
    return any(isinstance(node, gast.Name) and node.id == name
               and isinstance(node.ctx, gast.Load) and id(node) not in entries
               for stmt in statements for node in walk(stmt))


class _Plan:
    """What a loop's list form needs: the vectors it reads entries of (``written`` ones
    first), the vectors whose entries filled the lists it reads (``checked``), the numbers
    its arithmetic reads from outside it, and the names it computes from a vector's
    entries."""

    def __init__(self, written, read, checked, numbers, from_entries):
        self.vectors = written + [name for name in read if name not in written]
        self.checked = [name for name in checked if name not in self.vectors]
        self.written, self.numbers, self.from_entries = written, numbers, from_entries


def _statements(loop):
    """``(target, value)`` of each statement of ``loop``'s body (an augmented assignment's
    value is its operation on its target), or None if one is of another kind."""
    pairs = []
    for stmt in loop.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            pairs.append((stmt.targets[0], stmt.value))
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, _ARITHMETIC):
            current = clone(stmt.target)
            current.ctx = gast.Load()
            pairs.append((stmt.target, gast.BinOp(current, stmt.op, stmt.value)))
        else:
            return None
    return pairs


def _list_sources(body, lists, vectors):
    """``{list: the vectors whose entries fill it}`` for each of the body's own ``lists``
    that top-level loops alone fill, each ``lst[i] = name`` with ``name`` assigned in that
    loop by entries of ``vectors`` alone (``name = v[j]``: a loop's saved entries); the
    first value saved is the name's value before the loop, which is restored last and
    read by no arithmetic of the loop that restores."""
    sources, unknown = {}, set()
    for stmt in body:
        if not isinstance(stmt, gast.For):
            unknown |= {node.value.id for node in walk(stmt) if isinstance(node, gast.Subscript)
                        and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name)}
            continue
        pairs = _statements(stmt) or []
        entries = {}                      # name -> the vectors it is assigned entries of
        for target, value in pairs:
            if isinstance(target, gast.Name):
                vector = value.value.id if isinstance(value, gast.Subscript) \
                    and isinstance(value.value, gast.Name) and value.value.id in vectors else None
                entries.setdefault(target.id, set()).add(vector)
        for target, value in pairs:
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                    and target.value.id in lists:
                found = entries.get(value.id) if isinstance(value, gast.Name) else None
                if found and None not in found:
                    sources.setdefault(target.value.id, set()).update(found)
                else:
                    unknown.add(target.value.id)
        if not pairs:
            unknown |= {node.value.id for node in walk(stmt) if isinstance(node, gast.Subscript)
                        and isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name)}
    read_into = {id(node.value) for stmt in body for node in walk(stmt)
                 if isinstance(node, gast.Subscript)}
    for stmt in body:                     # a list passed on, mutated by a method, or bound
        for node in walk(stmt):           # again: its entries are not only those saves
            if isinstance(node, gast.Name) and node.id in lists and id(node) not in read_into \
                    and not (_assigns_list(stmt) and node is stmt.targets[0]):
                unknown.add(node.id)
    return {name: found for name, found in sources.items() if name not in unknown}


def _plan(loop, vectors, ranges, lists, sources):
    """The :class:`_Plan` of ``loop`` when its list form keeps its values, else None."""
    if loop.orelse or not isinstance(loop.target, gast.Name) or not _is_range(loop.iter, ranges):
        return None
    pairs = _statements(loop)
    if pairs is None:
        return None
    ints, assigned = {loop.target.id}, set()
    written, read, checked, numbers, from_entries = [], [], [], [], set()
    for target, value in pairs:
        if isinstance(target, gast.Name) and target.id not in assigned and (
                _is_range_entry(value, ranges, ints) or _is_index(value, ints, ranges)):
            ints.add(target.id)                           # t = _range[_iteration]; s = t - 1
            assigned.add(target.id)
            continue
        kept = _kept_value(value, vectors, (lists, sources), ranges, ints, assigned, numbers,
                           read, checked)
        if not kept:
            return None
        if isinstance(target, gast.Name):
            if target.id in ints or target.id in vectors or target.id in ranges \
                    or target.id in lists:
                return None
            assigned.add(target.id)
            if _reads_entries(value, vectors, from_entries):
                from_entries.add(target.id)
            continue
        if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
                and _is_index(target.slice, ints, ranges)):
            return None
        if target.value.id in vectors:
            if target.value.id not in written:
                written.append(target.value.id)
            if kept == "saved" and value.id not in assigned and value.id not in numbers:
                numbers.append(value.id)            # (a vector's entry becomes a float64)
        elif target.value.id not in lists or kept != "saved":
            return None                                   # a list gets a name's value alone
    if not written and not read:
        return None
    return _Plan(written, read, checked, numbers, from_entries)


def _kept_value(value, vectors, listed, ranges, ints, assigned, numbers, read, checked):
    """``"saved"`` for a name's value saved as it is, True for arithmetic the list form
    keeps, else False; records the vectors it reads entries of (``read``), the vectors whose
    entries filled the lists it reads (``checked``) and the names it reads from outside the
    loop so far (``numbers``); ``listed``: the body's own lists, and those of them filled by
    vectors' entries alone (``{list: the vectors}``)."""
    lists, sources = listed
    if isinstance(value, gast.Name) and value.id not in vectors and value.id not in ranges \
            and value.id not in lists and value.id not in ints:
        return "saved"             # (copied as it is: whatever it holds, it stays)
    todo = [value]
    while todo:
        node = todo.pop()
        if isinstance(node, gast.BinOp) and isinstance(node.op, _ARITHMETIC):
            todo += [node.left, node.right]
        elif isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            todo.append(node.operand)
        elif isinstance(node, gast.Constant):
            if type(node.value) not in (int, float):
                return False
        elif isinstance(node, gast.Name):
            if node.id in vectors or node.id in lists or node.id in ranges or node.id in ints:
                return False
            if node.id not in assigned and node.id not in numbers:
                numbers.append(node.id)
        elif isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and _is_index(node.slice, ints, ranges):
            if node.value.id in vectors:
                if node.value.id not in read:
                    read.append(node.value.id)
            elif node.value.id in sources:
                checked.extend(v for v in sorted(sources[node.value.id]) if v not in checked)
            else:
                return False
        else:
            return False
    return True


def _reads_entries(value, vectors, from_entries):
    """Whether ``value`` reads a vector's entry or a name computed from one (a float64 in
    the loop as it was)."""
    return any(isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
               and node.value.id in vectors
               or isinstance(node, gast.Name) and node.id in from_entries
               for node in walk(value))


def _is_index(node, ints, ranges):
    """Whether ``node`` is an int: a name of ``ints``, an int literal, a range's ``start``,
    or sums and differences of them."""
    if isinstance(node, gast.Name):
        return node.id in ints
    if isinstance(node, gast.Constant):
        return type(node.value) is int
    if isinstance(node, gast.Attribute):
        return node.attr in ("start", "stop", "step") and isinstance(node.value, gast.Name) \
            and node.value.id in ranges
    return isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)) \
        and _is_index(node.left, ints, ranges) and _is_index(node.right, ints, ranges)


def _is_range(node, ranges):
    """Whether ``node`` is a name assigned a range, or a ``range(...)`` call of ints."""
    if isinstance(node, gast.Name):
        return node.id in ranges
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
        and node.func.id == "range" and not node.keywords


def _is_range_entry(value, ranges, ints):
    """Whether ``value`` is ``r[i]`` of a range ``r`` and an int ``i``."""
    return isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
        and value.value.id in ranges and _is_index(value.slice, ints, ranges)


def _assigns_range(stmt):
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name) and _is_range(stmt.value, ())


def _assigns_list(stmt):
    """Whether ``stmt`` is ``name = [None] * n`` or ``name = []``: a list of the body's own."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    value = stmt.value
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult):
        value = value.left
    return isinstance(value, gast.List)


def _list_form(loop, plan, later, runtime_alias, numpy_alias, fresh):
    """``[steps = ...,] if rt.runs_on_float_lists(...): <list form> else: <loop>``."""
    before = []
    steps = loop.iter
    if not isinstance(steps, gast.Name):
        name = fresh("_steps")
        before.append(gast.copy_location(assign(name, steps), loop))
        loop.iter = steps = load(name)
    entries = {vector: fresh(f"_{vector}_entries") for vector in plan.vectors}
    listed = clone(loop)
    for node in walk(listed):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and node.value.id in entries:
            node.value = load(entries[node.value.id])
    body = [assign(entries[vector], gast.Call(gast.Attribute(load(vector), "tolist",
                                                             gast.Load()), [], []))
            for vector in plan.vectors]
    body.append(listed)
    for vector in plan.written:
        if vector not in later:
            continue                                      # (read by nothing after)
        whole = gast.Subscript(load(vector), gast.Slice(None, None, None), gast.Store())
        body.append(gast.Assign([whole], load(entries[vector]), None))
    floats = [name for name in sorted(plan.from_entries) if name in later]
    if floats:                  # what the loop as it was leaves a float64, when it ran
        body.append(gast.If(load(steps.id), [
            assign(name, gast.Call(gast.Attribute(load(numpy_alias), "float64", gast.Load()),
                                   [load(name)], [])) for name in floats], []))
    test = runtime_call(runtime_alias, "runs_on_float_lists", [
        gast.Tuple([load(v) for v in plan.vectors + plan.checked], gast.Load()),
        gast.Constant(len(plan.written), None), load(steps.id),
        gast.Tuple([load(n) for n in plan.numbers], gast.Load())])
    choice = gast.If(test, body, [loop])
    for node in walk(choice):
        if isinstance(node, gast.stmt) and not hasattr(node, "lineno"):
            gast.copy_location(node, loop)
    return before + [gast.copy_location(choice, loop)]


def keep_array_loops(function, fn):
    """In place: each ``if rt.runs_on_float_lists(...): ... else: loop`` of ``function``'s own block
    is its ``loop`` (a fused gradient differentiated again, or batched: its list form is
    plain Python that no rule covers), and so is each loop's form that keeps the entry it
    writes (``optimise/carried_entries.py``: its test is of values; the loop as it was is
    the one to differentiate); ``fn``: the function parsed, whose closure (generated code's) or
    globals hold ``rt``."""
    if not any(_is_loop_form(stmt, fn) for stmt in function.body):
        return
    body = []
    for stmt in function.body:
        body.extend(stmt.orelse if _is_loop_form(stmt, fn) else [stmt])
    function.body = body


def _is_loop_form(stmt, fn):
    test = stmt.test if isinstance(stmt, gast.If) else None
    if isinstance(test, gast.Call) and isinstance(test.func, gast.Attribute) \
            and test.func.attr == "runs_on_float_lists" and isinstance(test.func.value, gast.Name):
        alias = test.func.value.id
    else:
        alias = is_carried_test(test)
    return alias is not None and current_value(fn, alias) is runtime

"""Keep a loop's saved values in lists of its own, indexed by the step, in a fused gradient.

Requires: the body of a fused gradient (forward statements, then the backward
pass), after :func:`srctrans.differentiate.control.iterate_saved_values`.
Guarantees: the values computed are unchanged. Take a top-level loop over
``_range = range(stop)`` (or ``range(start, stop[, step])``) that runs to its end
(``trips = len(_range)``, no ``break``, its variable assigned by nothing in its body),
whose body uses the tape only in pushes of names at its top level, and whose reversed
loop (a later top-level loop counting ``trips`` down) uses the tape only in as many pops
at its top level. Each pushed value is stored instead in a list made once for all
the steps, at the step's index, and its pop reads it back from there; a
reversed loop that iterated over its one value's pops iterates over that list
backwards::

    tape = []                               xs = [None] * trips
    for i in _range:                        for i in _range:
        tape.append(x)              ->          xs[i] = x
        x = a * x * (1.0 - x)                   x = a * x * (1.0 - x)
    ...                                     ...
    for x in rt.pop_many(tape, trips):      for x in rt.reversed(xs):

    for _iteration in range(trips - 1, -1, -1):       (two values a step)
        h = tape.pop()                  ->          h = hs[_iteration]

as an expert writes it: no list growing step by step, no copy of the popped
values. The loop's pops, last pushed first, pair with its pushes, so each pop
reads the list its push wrote. The tape's other values keep their order (the
loop's were pushed after and popped before every value pushed earlier). A tape
left unread is no longer made. A loop over ``range(start, stop)`` stores its step
``j`` at ``j - _range.start`` (divided by ``_range.step`` when it has one), the index
the reversed loop counts. A fused gradient may be differentiated again
(``st.hessian``): the fence and desugar read ``rt.reversed(xs)`` as
``reversed(xs)``, and the lists are lists like the user's.

A reversed loop that iterated over its one value's pops reading none of them, with no
statement after it reading the value before a statement of the function's block assigns
or deletes it (a damping loop ``r = 0.5 * r`` whose cotangent only scales), saves nothing
and counts its steps::

    for i in _range:                        for i in _range:
        tape.append(r)              ->          r = 0.5 * r
        r = 0.5 * r                         ...
    ...                                     for _step in range(trips):
    for r in rt.pop_many(tape, trips):          dr = dr * 0.5
        dr = dr * 0.5
"""

import collections
import keyword

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.control import is_pop
from srctrans.nodes import appended_to, assign, clone, load
from srctrans.treewalk import walk, walk_names


def save_steps_in_lists(body, namer, runtime_alias):
    """``body`` with each qualifying loop's pushes moved to lists of its own (see above)."""
    position = {id(stmt): index for index, stmt in enumerate(body)}
    assigned = collections.defaultdict(list)         # name -> the top-level statements assigning it
    lengths = collections.defaultdict(list)          # _range -> the statements trips = len(_range)
    for stmt in body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name):
            assigned[stmt.targets[0].id].append(stmt)
            if (_is_call(stmt.value, "len") and len(stmt.value.args) == 1
                    and isinstance(stmt.value.args[0], gast.Name)):
                lengths[stmt.value.args[0].id].append(stmt)
    counting_down = {}                                # trips -> the top-level loop counting it down
    for stmt in body:
        if isinstance(stmt, gast.For) and (trips := _counted_by(stmt, runtime_alias)) is not None:
            counting_down.setdefault(trips, stmt)
    made, tapes = {}, set()
    for loop in body:
        if isinstance(loop, gast.For) and _runs_to_its_end(loop, assigned):
            found = _reversed_loop(loop, assigned, lengths[loop.iter.id], counting_down, position)
            if found is not None:
                backward, tape = found
                if _unread_restore(backward, body[position[id(backward)] + 1:]):
                    made[id(loop)] = _counted_only(loop, backward, namer)
                else:
                    made[id(loop)] = _own_lists(loop, backward, tape, namer, runtime_alias,
                                                _step_index(loop, assigned))
                tapes.add(tape)
    if not made:
        return body
    read = {n.id for stmt in body for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    result = []
    for stmt in body:
        if _made_list(stmt) in tapes - read:
            continue                                     # a tape nothing uses any more
        result.extend(made.get(id(stmt), []))
        result.append(stmt)
    return result


def _runs_to_its_end(loop, assigned):
    """The loop iterates over ``_range``, assigned once, ``range(...)``; no ``break`` in it,
    and its variable assigned by no statement of its body (it tells the step)."""
    if not (isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Name)):
        return False
    ranges = assigned.get(loop.iter.id, [])
    if len(ranges) != 1 or not _is_call(ranges[0].value, "range") \
            or not 1 <= len(ranges[0].value.args) <= 3 or ranges[0].value.keywords:
        return False
    return not (any(isinstance(n, gast.Break) for stmt in loop.body for n in walk(stmt))
                or _assigned_in_body(loop, loop.target.id))


def _step_index(loop, assigned):
    """Which step of ``loop`` its variable ``j`` tells: ``j`` over ``range(stop)``, ``j -
    _range.start`` over ``range(start, stop)``, ``(j - _range.start) // _range.step`` with a
    step (read from the range object: a name the arguments read may change)."""
    arguments = assigned[loop.iter.id][0].value.args
    if len(arguments) == 1:
        return load(loop.target.id)
    index = gast.BinOp(load(loop.target.id), gast.Sub(),
                       gast.Attribute(load(loop.iter.id), "start", gast.Load()))
    if len(arguments) == 3:
        index = gast.BinOp(index, gast.FloorDiv(),
                           gast.Attribute(load(loop.iter.id), "step", gast.Load()))
    return index


def _assigned_in_body(loop, name):
    """Whether a statement of ``loop``'s body assigns ``name``."""
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == name
               for stmt in loop.body for n in walk(stmt))


def _reversed_loop(loop, assigned, counts, counting_down, position):
    """``(reversed loop, tape)`` for ``loop``, or None (see the module); ``counts`` are the
    statements ``trips = len(_range)`` of its ``_range``."""
    pushes = _pushes(loop)
    if not pushes:
        return None
    tape = appended_to(pushes[0])[0]
    if _uses(loop, tape) != len(pushes) or any(appended_to(p)[0] != tape for p in pushes):
        return None
    if len(counts) != 1 or position[id(counts[0])] > position[id(loop)] \
            or len(assigned[counts[0].targets[0].id]) != 1:
        return None
    later = counting_down.get(counts[0].targets[0].id)
    if later is None or position[id(later)] < position[id(loop)]:
        return None
    if _iterates_pops(later):                        # one value a step, iterated over
        if not (later.iter.args[0].id == tape and len(pushes) == 1
                and isinstance(later.target, gast.Name)
                and later.target.id == appended_to(pushes[0])[1].id and _uses(later, tape) == 1):
            return None
    else:
        pops = [s for s in later.body if _pops(s, tape)]
        if not (_uses(later, tape) == len(pops) and [p.targets[0].id for p in pops]
                == [appended_to(p)[1].id for p in reversed(pushes)]):
            return None
    return later, tape


def _pushes(loop):
    """The statements at the top of ``loop``'s body that push a name onto a tape."""
    return [s for s in loop.body if anno.get(s, Anno.SAVES) is not None and appended_to(s)
            and isinstance(appended_to(s)[1], gast.Name)]


def _pops(stmt, tape):
    """``stmt`` is ``name = tape.pop()``."""
    return is_pop(stmt) and stmt.value.func.value.id == tape


def _counted_by(loop, runtime_alias):
    """``trips`` when ``loop`` iterates over ``rt.pop_many(tape, trips)`` or over
    ``range(trips - 1, -1, -1)`` (into a name no statement of its body assigns), else None."""
    call = loop.iter
    if not (isinstance(call, gast.Call) and not call.keywords):
        return None
    if (isinstance(call.func, gast.Attribute) and call.func.attr == "pop_many"
            and isinstance(call.func.value, gast.Name) and call.func.value.id == runtime_alias
            and len(call.args) == 2 and all(isinstance(a, gast.Name) for a in call.args)):
        return call.args[1].id
    if not (_is_call(call, "range") and len(call.args) == 3 and isinstance(loop.target, gast.Name)):
        return None
    start, stop, step = call.args
    if (isinstance(start, gast.BinOp) and isinstance(start.op, gast.Sub)
            and isinstance(start.left, gast.Name) and _is_constant(start.right, 1)
            and _is_constant(stop, -1) and _is_constant(step, -1)
            and not _assigned_in_body(loop, loop.target.id)):
        return start.left.id
    return None


def _iterates_pops(loop):
    """``loop`` iterates over ``rt.pop_many(...)`` (not over a ``range``)."""
    return isinstance(loop.iter.func, gast.Attribute)


def _own_lists(loop, backward, tape, namer, runtime_alias, step):
    """The statements making the lists (``steps = [None] * trips``); ``steps[step] = value``
    replaces each push in ``loop`` (``step`` the index its variable tells), and each pop in
    ``backward`` reads its list."""
    trips = _counted_by(backward, runtime_alias)
    made, lists = [], []
    pushes = {id(stmt) for stmt in _pushes(loop)}
    for k, stmt in enumerate(loop.body):
        if id(stmt) in pushes:
            value = appended_to(stmt)[1].id
            steps = namer.fresh(value + "s" if not keyword.iskeyword(value + "s") else value + "_s")
            lists.append(steps)
            making = assign(steps, gast.BinOp(gast.List([gast.Constant(None, None)], gast.Load()),
                                              gast.Mult(), load(trips)))
            anno.set_(making, Anno.ORIGIN, anno.get(loop, Anno.ORIGIN))
            made.append(making)
            kept = gast.Assign([gast.Subscript(load(steps), clone(step), gast.Store())],
                               load(value), None)
            anno.set_(kept, Anno.ORIGIN, anno.get(stmt, Anno.ORIGIN))
            loop.body[k] = kept
    if _iterates_pops(backward):
        backward.iter = gast.Call(gast.Attribute(load(runtime_alias), "reversed", gast.Load()),
                                  [load(lists[0])], [])
        return made
    pops = [k for k, stmt in enumerate(backward.body) if _pops(stmt, tape)]
    for k, steps in zip(pops, reversed(lists)):       # the last pushed is popped first
        stmt = backward.body[k]
        stmt.value = gast.Subscript(load(steps), load(backward.target.id), gast.Load())
    return made


def _unread_restore(backward, after):
    """Whether ``backward`` iterates over one value's pops that nothing reads: not its body,
    nor a statement ``after`` it before one that assigns the name again or deletes it."""
    if not _iterates_pops(backward):
        return False
    name = backward.target.id
    if any(_uses(stmt, name) for stmt in backward.body):
        return False
    for stmt in after:
        found = [n for n in walk_names(stmt) if n.id == name]
        if not found:
            continue
        # assigned again, or deleted, first: by the statement itself (a branch's assignment
        # may not run, and the name may be read after it)
        return isinstance(stmt, (gast.Assign, gast.Delete)) and not any(
            isinstance(n.ctx, gast.Load) for n in found) and all(
            isinstance(target, gast.Name) for target in stmt.targets)
    return True


def _counted_only(loop, backward, namer):
    """``loop`` without its one push, and ``backward`` counting its steps (``for _step in
    range(trips)``) where it iterated over the values no statement reads: nothing saved."""
    pushed = {id(push) for push in _pushes(loop)}
    loop.body[:] = [stmt for stmt in loop.body if id(stmt) not in pushed]
    backward.target = gast.Name(namer.fresh("_step"), gast.Store(), None, None)
    backward.iter = gast.Call(gast.Name("range", gast.Load(), None, None),
                              [clone(backward.iter.args[1])], [])
    return []


def _uses(node, name):
    return sum(isinstance(n, gast.Name) and n.id == name for n in walk(node))


def _made_list(stmt):
    """The name ``stmt`` binds to a new empty list (``tape = []``), else None."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.List)
            and not stmt.value.elts):
        return stmt.targets[0].id
    return None


def _is_call(node, function):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == function and not node.keywords)


def _is_constant(node, value):
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return _is_constant(node.operand, -value)
    return isinstance(node, gast.Constant) and type(node.value) is int and node.value == value

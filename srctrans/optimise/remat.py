"""Recompute cheap scalar temporaries of a loop in its reversed loop instead of saving them.

Requires: a backward pass whose reversed loops are annotated with the forward
loop they reverse (``Anno.REVERSES``, set by :mod:`srctrans.differentiate.control`),
before :func:`~srctrans.differentiate.control.drop_unneeded_saves`, and the
measured shapes of the forward values (a specialised build).
Guarantees: the backward pass computes the same values. A value ``t = e``
that a loop body computes once per iteration from operands it can find again,
where ``e`` is one arithmetic operation on numbers (shape ``()``), or a number read from
an array no write reaches (``y[t]``, ``y[t - 1]``; ``unchanged``), is computed
again at the top of the reversed iteration under a new name, and the reversed
body reads that instead; nothing reads the saved ``t`` any more, so
``drop_unneeded_saves`` drops its push, its pop and its placeholder. For
Python floats one operation costs about what a push and a pop cost, and the
tape, the forward loop and the inlining of both passes get simpler.

A tape pop of an operand may move up, past adjoint statements that neither
read nor assign that name nor touch the tape, so that the operand holds the
value ``e`` read. For the logistic map ``x = a * x * (1.0 - x)`` (ANF:
``_mul = a * x``, ``_sub = 1.0 - x``, ``x = _mul * _sub``), the reversed body

    d_mul = dx * _sub                    x = tape.pop()
    d_sub = dx * _mul                    _sub_2 = 1.0 - x
    x = tape.pop()                       d_mul = dx * _sub_2
    dx = -d_sub                  ->      _mul_2 = a * x
    _sub = tape.pop()                    d_sub = dx * _mul_2
    da = da + d_mul * x                  dx = -d_sub
    dx = dx + d_mul * a                  da = da + d_mul * x
    _mul = tape.pop()                    dx = dx + d_mul * a

keeps only ``x`` on the tape, as a hand-written backward loop would.

Arrays are never recomputed: an array operation costs far more than saving a
reference. A name is recomputed only when the reversed body is the only part
of the backward pass that reads it, and only before its own pop (the value
of this iteration); an operand must be assigned at most once in the loop
body, outside nested blocks (or be the loop's variable, read back from its
range).

>>> import gast
>>> from srctrans.emit.printer import block_lines
>>> from srctrans import annotations as anno
>>> from srctrans.annotations import Anno
>>> from srctrans.naming import Namer
>>> def tape_saves(tree):                   # what the reverse pass annotates
...     for node in walk(tree):
...         if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
...             anno.set_(node, Anno.SAVES, node.value.args[0].id)           # tape.append(n)
...         elif isinstance(node, gast.Assign) and isinstance(node.value, gast.Call):
...             anno.set_(node, Anno.SAVES, node.targets[0].id)              # n = tape.pop()
...     return tree.body
>>> forward = tape_saves(gast.parse('''
... for i in _range:
...     tape.append(_mul)
...     _mul = a * x
...     tape.append(_sub)
...     _sub = 1.0 - x
...     tape.append(x)
...     x = _mul * _sub'''))
>>> backward = tape_saves(gast.parse('''
... for _iteration in range(trips - 1, -1, -1):
...     d_mul = dx * _sub
...     d_sub = dx * _mul
...     x = tape.pop()
...     dx = -d_sub
...     _sub = tape.pop()
...     da = da + d_mul * x
...     dx = dx + d_mul * a
...     _mul = tape.pop()'''))
>>> anno.set_(backward[0], Anno.REVERSES, forward[0])
>>> shapes = dict.fromkeys(["_mul", "_sub", "a", "x"], ())
>>> rematerialise(backward, shapes, Namer({"_mul", "_sub", "a", "x"}))
['_sub', '_mul']
>>> print("\\n".join(block_lines(backward, 0)))
for _iteration in range(trips - 1, -1, -1):
    x = tape.pop()
    _sub_2 = 1.0 - x
    d_mul = dx * _sub_2
    _mul_2 = a * x
    d_sub = dx * _mul_2
    dx = -d_sub
    _sub = tape.pop()
    da = da + d_mul * x
    dx = dx + d_mul * a
    _mul = tape.pop()

(The pops of ``_sub`` and ``_mul``, now unread, are left to ``drop_unneeded_saves``.)
"""

import collections

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import assign, clone
from srctrans.optimise.dce import reads_of, targets_of
from srctrans.optimise.expression_shapes import INTEGER
from srctrans.treewalk import walk

# One operation of these on numbers costs about as much as a tape push and pop.
CHEAP_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.USub, gast.UAdd)


def rematerialise(backward, shapes, namer, unchanged=frozenset()):
    """Recompute cheap scalar loop temporaries in ``backward`` (in place); the names, in order.

    ``shapes`` maps forward names to their measured shapes; ``namer`` gives
    the new names (temporaries stay temporaries, so the inliner can fold them).
    ``unchanged``: arrays the forward pass never changes (nor any array that may share
    memory with them), whose entries the reversed loop may read again (``y[t]``).
    """
    done = []
    everywhere = _loads(backward)           # reads of each name, kept current as loops change
    for loop in list(_reversed_loops(backward)):
        forward_loop = anno.get(loop, Anno.REVERSES)
        inside = _loads([loop])
        outside = everywhere - inside
        done += _rematerialise_loop(forward_loop, loop, outside, shapes, namer, unchanged)
        everywhere = outside + _loads([loop])
    return done


def _loads(statements):
    """How many times ``statements`` (nested ones included) read each name."""
    return collections.Counter(n.id for stmt in statements for n in walk(stmt)
                               if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))


def _reversed_loops(statements):
    """Every reversed loop in ``statements``, inner loops first."""
    for stmt in statements:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            yield from _reversed_loops(stmt.body)
            yield from _reversed_loops(getattr(stmt, "orelse", []))
            if isinstance(stmt, gast.For) and anno.get(stmt, Anno.REVERSES) is not None:
                yield stmt


def _rematerialise_loop(forward_loop, loop, outside, shapes, namer, unchanged):
    """Recompute the loop's cheap scalar temporaries; ``outside`` counts the reads of each
    name in the backward pass outside ``loop``."""
    body = forward_loop.body
    assigned = _assignment_counts(body)
    done = []
    # last first: a recomputed value may read one computed earlier in the iteration,
    # whose own recomputation must then come before it
    for k in reversed(range(len(body))):
        stmt = body[k]
        name = _cheap_scalar(stmt, shapes, unchanged)
        if name is None or assigned.get(name) != 1 or not _pushed_before(body, k, name):
            continue
        renamed = _recompute(stmt, k, name, forward_loop, loop, outside, assigned, namer)
        if renamed:
            done.append(name)
    return done


def _cheap_scalar(stmt, shapes, unchanged=frozenset()):
    """``t`` when ``stmt`` is ``t = e``, one cheap operation on numbers (or a number read
    from an array of ``unchanged`` at an int index: ``y[t]``, ``y[t - 1]``), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if isinstance(value, gast.Subscript):
        return stmt.targets[0].id if _entry_read(value, shapes, unchanged) \
            and shapes.get(stmt.targets[0].id) == () else None
    if isinstance(value, gast.BinOp):
        operands, op = [value.left, value.right], value.op
    elif isinstance(value, gast.UnaryOp):
        operands, op = [value.operand], value.op
    else:
        return None
    if not isinstance(op, CHEAP_OPERATORS):
        return None
    name = stmt.targets[0].id
    if shapes.get(name) != ():
        return None
    for operand in operands:
        if isinstance(operand, gast.Name):
            if shapes.get(operand.id) != () or operand.id == name:
                return None
        elif not (isinstance(operand, gast.Constant) and type(operand.value) in (int, float)):
            return None
    return name


def _entry_read(value, shapes, unchanged):
    """Whether ``value`` is ``y[i]`` or ``y[i + c]`` of an array of ``unchanged`` and an int."""
    index = value.slice
    if isinstance(index, gast.BinOp) and isinstance(index.op, (gast.Add, gast.Sub)) \
            and isinstance(index.right, gast.Constant) and type(index.right.value) is int:
        index = index.left
    return (isinstance(value.value, gast.Name) and value.value.id in unchanged
            and len(shapes.get(value.value.id) or ()) >= 1
            and isinstance(index, gast.Name) and shapes.get(index.id) is INTEGER)


def _pushed_before(body, k, name):
    return k > 0 and anno.get(body[k - 1], Anno.SAVES) == name and isinstance(body[k - 1], gast.Expr)


def _assignment_counts(statements):
    """How many statements of ``statements`` (nested ones included) assign each name."""
    counts = {}
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _recompute(stmt, k, name, forward_loop, loop, outside, assigned, namer):
    """Recompute ``name`` (assigned by ``stmt``, the ``k``-th forward statement) in ``loop``;
    ``outside`` counts the reads of each name outside ``loop``."""
    # every read of the saved value is in the reversed body, before its pop
    body = list(loop.body)                   # a trial copy: pops may move
    pop = _pop_index(body, name)
    if pop is None or outside[name]:
        return False
    reading = [i for i, s in enumerate(body) if name in reads_of(s)]
    if not reading or reading[-1] > pop:
        return False
    if any(_assigns(s, name) for i, s in enumerate(body) if i != pop):
        return False
    first = reading[0]
    for operand in sorted(reads_of(stmt.value)):
        first = _operand_ready(operand, k, first, forward_loop, body, assigned)
        if first is None:
            return False
    new_name = namer.fresh(name)
    if name in namer.temporaries:
        namer.temporaries.add(new_name)
    for i in range(first, _pop_index(body, name)):
        if name in reads_of(body[i]):
            body[i] = _renamed(body[i], name, new_name)
    body.insert(first, anno.copy(stmt, assign(new_name, clone(stmt.value))))
    loop.body[:] = body
    return True


def _operand_ready(operand, k, first, forward_loop, body, assigned):
    """Where to recompute so that ``operand`` holds the value it had, or None if nowhere.

    ``first`` is the index of the first statement of the reversed ``body``
    that reads the recomputed value. The operand's pop may move up to just
    before that statement (``body`` changes then, and so does the index).
    """
    restores = [i for i, s in enumerate(body) if _assigns(s, operand)]
    target = getattr(forward_loop, "target", None)        # a while loop has none
    if isinstance(target, gast.Name) and operand == target.id:    # read back from the range
        read_anyway = any(operand in reads_of(s) for s in body)   # else the range lookup is extra
        return first if len(restores) == 1 and restores[0] < first and read_anyway else None
    if operand not in assigned:                           # unchanged by the loop
        return first if not restores else None
    at = [i for i, s in enumerate(forward_loop.body) if operand in targets_of(s)]
    if assigned[operand] != 1 or len(at) != 1 or len(restores) != 1:
        return None                                       # assigned in a nested block, or twice
    pop = restores[0]
    if not (anno.get(body[pop], Anno.SAVES) == operand and _is_pop(body[pop].value)):
        return None
    if at[0] < k:                      # this iteration's value: there until its pop
        return first if pop > first else None
    if pop < first:                    # the value before this iteration's: after its pop
        return first
    for above in body[first:pop]:      # move the pop up, past statements that ignore it
        if (isinstance(above, (gast.If, gast.For, gast.While)) or _touches_tape(above, body[pop])
                or operand in reads_of(above) or _assigns(above, operand)):
            return None
    body.insert(first, body.pop(pop))
    return first + 1


def _assigns(stmt, name):
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == name
               for n in walk(stmt))


def _touches_tape(stmt, pop):
    tape = pop.value.func.value.id                        # `name = tape.pop()`
    return tape in reads_of(stmt)


def _pop_index(statements, name):
    for i, stmt in enumerate(statements):
        if (anno.get(stmt, Anno.SAVES) == name and isinstance(stmt, gast.Assign)
                and _is_pop(stmt.value)):
            return i
    return None


def _is_pop(value):
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "pop" and isinstance(value.func.value, gast.Name)
            and not value.args)


def _renamed(stmt, old, new):
    """A copy of ``stmt`` reading ``new`` where it read ``old``.

    (A copy: an adjoint statement may share the nodes of its operands with
    the forward statement, which must keep reading ``old``.)
    """
    stmt = clone(stmt)
    for node in walk(stmt):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id == old:
            node.id = new
    return stmt

"""A ``while`` loop that counts an integer up (or down) to a bound is a ``for`` over a range.

Requires: a fenced function, before its loops are desugared.
Guarantees: each ``while`` loop of this form (``n`` any name, the step ``c`` a positive
int literal, the bound a literal or a name the loop does not assign)::

    n = 0
    while n < steps:                       for n in range(0, rt.range_stop(0, steps, "<")):
        ...body...                  ->         ...body...
        n += 1

becomes a ``for`` loop over the same integers, which the reverse pass gives its own lists of
saved values (as any ``range`` loop) instead of a tape and a trip count. Also ``<=``, a count
down (``while t >= 0: ...; t -= 1``) and ``n = n + c``. The rewrite is exact, so it applies
only where nothing can tell the two loops apart:

- ``n`` starts at an int: its last assignment before the loop, in the same block, is an
  integer expression (literals, ``len(...)``, ``+ - * //`` of them), so every value it takes
  is an int, which ``range`` yields;
- the body changes ``n`` only in its last statement, and has no ``break`` or ``continue``;
- nothing after the loop reads ``n`` (its last value differs: the ``for`` loop leaves the
  last value it ran, the ``while`` loop the first it did not), and nothing before its
  assignment in the block reads it either (an enclosing loop's next step would);
- the bound is a literal, or a local name the body does not assign: the ``while`` test
  reads the same bound at every step. ``rt.range_stop`` turns a bound of any real number
  (a float, a NumPy scalar, a 0-d array) into the int ``range`` stops at, so a float bound
  runs the same steps (a NaN none; an infinite one raises rather than loop forever);
- a loop without ``break`` always runs its ``else`` block, so it follows the ``for`` loop.
"""

import gast

from srctrans.normalize.desugar import located
from srctrans.nodes import int_literal, load, local_names, store
from srctrans.optimise.dce import reads_of
from srctrans.runtime.counting import range_stop
from srctrans.treewalk import child_fields, walk, walk_names

_TESTS = {gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">="}
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INTEGER_CALLS = ("len",)


def count_while_loops(function, namespace, runtime_name="rt"):
    """Rewrite, in place, each counted ``while`` loop of ``function`` (a gast FunctionDef) as
    a ``for`` loop over a range (see the module); ``namespace`` is the function's globals
    (a ``range`` or ``len`` of the user's own is not the builtin)."""
    locals_ = local_names(function)
    if any(name in locals_ or name in namespace for name in ("range",) + _INTEGER_CALLS):
        return
    pending = [function]
    while pending:
        owner = pending.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(owner, field, None)
            if not (isinstance(block, list) and block and isinstance(block[0], gast.stmt)):
                continue
            index = len(block)
            while index > 0:
                index -= 1
                if _as_range_loop(function, block, index, locals_, runtime_name):
                    index = min(index, len(block))      # (the loop's start may have left
            pending.extend(block)                       # the block: those before it stay)


def _as_range_loop(function, block, index, locals_, runtime_name):
    """Whether ``block[index]`` is a counted ``while`` loop, rewritten in ``block`` as a
    ``for`` loop (with, when it starts at a literal only the loop reads, its start)."""
    loop = block[index]
    if not isinstance(loop, gast.While):
        return False
    form = _counted_form(loop, locals_)
    if form is None:
        return False
    counter, comparison, bound, step = form
    start = _start(block, index, counter)
    if start is None or not _read_only_inside(function, block, start, loop, counter):
        return False
    first = int_literal(block[start].value)
    if _is_integer(block[start].value):       # every value an int: the range of them
        if first is not None and not any(counter in reads_of(s) for s in block[start + 1:index]):
            del block[start]                  # n = 0 read by nothing but the loop: its start
            index -= 1
            begin = gast.Constant(first, None)
        else:
            begin = load(counter)
        stop = _stop(begin, bound, comparison, runtime_name)
        bounds = [begin, stop] + ([gast.Constant(step, None)] if step != 1 else [])
        steps = gast.Call(load("range"), bounds, [])
    elif _read_as_a_value(loop.body[:-1], counter):
        # a counter of any kind (t = T - 1): rt.counted gives its values, an int's as a range
        steps = gast.Call(gast.Attribute(load(runtime_name), "counted", gast.Load()),
                          [load(counter), bound, gast.Constant(comparison, None),
                           gast.Constant(step, None)], [])
    else:
        return False
    body = loop.body[:-1] or [gast.Pass()]
    rewritten = gast.For(store(counter), steps, body, [], None)
    block[index:index + 1] = [located(rewritten, loop)] + loop.orelse
    return True


def _read_as_a_value(statements, name):
    """Whether ``statements`` read ``name`` only as an operand of arithmetic or a comparison,
    or as an index: nothing keeps a reference to the counter (``t -= 1`` of a 0-d array
    changes that array in place, which a reference kept from an earlier step would see)."""
    for node in walk(gast.Module(list(statements), [])):
        for field in child_fields(type(node)):
            children = getattr(node, field, None)
            for child in children if isinstance(children, list) else [children]:
                if not (isinstance(child, gast.Name) and child.id == name):
                    continue
                if not (isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare))
                        or isinstance(node, gast.Subscript) and field == "slice"):
                    return False
    return True


def _counted_form(loop, locals_):
    """``(counter, comparison, bound, step)`` of ``while n OP bound: ...; n += c``, the
    comparison as ``n OP bound`` and the step signed; None for any other loop."""
    test = loop.test
    if not (isinstance(test, gast.Compare) and len(test.ops) == 1
            and type(test.ops[0]) in _TESTS):
        return None
    comparison = _TESTS[type(test.ops[0])]
    left, right = test.left, test.comparators[0]
    if not isinstance(left, gast.Name):
        left, right, comparison = right, left, _MIRRORED[comparison]
    if not isinstance(left, gast.Name):
        return None
    counter = left.id
    step = _step(loop.body[-1], counter)
    if step is None or (step > 0) != (comparison in ("<", "<=")):
        return None
    if not _bound_is_fixed(right, loop, locals_, counter):
        return None
    for node in walk(gast.Module(loop.body[:-1], [])):
        if isinstance(node, (gast.Break, gast.Continue)):
            return None
        if isinstance(node, gast.Name) and node.id == counter and \
                isinstance(node.ctx, (gast.Store, gast.Del)):
            return None
    if any(isinstance(node, (gast.Break, gast.Continue)) for node in walk(loop.body[-1])):
        return None
    return counter, comparison, right, step


def _step(stmt, counter):
    """The signed int ``c`` of ``n += c``, ``n -= c``, ``n = n + c`` or ``n = n - c`` (c > 0)."""
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) \
            and stmt.target.id == counter:
        op, amount = stmt.op, stmt.value
    elif (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
          and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == counter
          and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.left, gast.Name)
          and stmt.value.left.id == counter):
        op, amount = stmt.value.op, stmt.value.right
    else:
        return None
    amount = int_literal(amount)
    if amount is None or amount <= 0 or not isinstance(op, (gast.Add, gast.Sub)):
        return None
    return amount if isinstance(op, gast.Add) else -amount


def _bound_is_fixed(bound, loop, locals_, counter):
    """Whether the ``while`` test reads the same ``bound`` at every step: a number literal,
    or a local name (not the counter) the body does not assign or change in place."""
    if isinstance(bound, gast.Constant):
        return type(bound.value) in (int, float)
    if int_literal(bound) is not None:
        return True
    if not (isinstance(bound, gast.Name) and bound.id in locals_ and bound.id != counter):
        return False
    # not assigned, nor changed in place: read only as an operand (a 0-d array's
    # lim[...] = v, lim.fill(v), or a call given it could change the value the test reads)
    return not any(isinstance(node, gast.Name) and node.id == bound.id
                   and not isinstance(node.ctx, gast.Load) for node in walk(loop)) \
        and _read_as_a_value(loop.body, bound.id)


def _start(block, index, counter):
    """The position in ``block`` of the last assignment of ``counter`` before ``index``, when
    it is ``counter = value`` (and so no statement between reassigns it); else None."""
    for position in reversed(range(index)):
        stmt = block[position]
        stores = [node for node in walk_names(stmt)
                  if node.id == counter and not isinstance(node.ctx, gast.Load)]
        if not stores:
            continue
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and len(stores) == 1):
            return position
        return None
    return None


def _is_integer(node):
    """An int literal, ``len(...)``, or ``+ - * //`` of them: an int whatever it reads."""
    if int_literal(node) is not None:
        return True
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id in _INTEGER_CALLS and len(node.args) == 1 and not node.keywords:
        return True
    return (isinstance(node, gast.BinOp)
            and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv))
            and _is_integer(node.left) and _is_integer(node.right))


def _read_only_inside(function, block, start, loop, counter):
    """Whether every read of ``counter`` in ``function`` is in ``loop``, or in ``block``
    between its assignment at ``start`` and the loop."""
    allowed = {id(node) for stmt in block[start + 1:block.index(loop) + 1] for node in walk(stmt)}
    return all(id(node) in allowed for node in walk(function)
               if isinstance(node, gast.Name) and node.id == counter
               and isinstance(node.ctx, gast.Load))


def _stop(start, bound, comparison, runtime_name):
    """The int ``range`` stops at for ``n OP bound`` from ``start``: folded for an int
    literal, else ``rt.range_stop(start, bound, OP)``."""
    value = int_literal(bound)
    if value is not None:                       # (an int's stop depends on no start)
        return gast.Constant(range_stop(0, value, comparison), None)
    helper = gast.Attribute(load(runtime_name), "range_stop", gast.Load())
    return gast.Call(helper, [start, bound, gast.Constant(comparison, None)], [])

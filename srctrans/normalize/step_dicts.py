"""A dict of states kept by step becomes a name per step, and one for the step before.

Requires: a desugared function (:mod:`~srctrans.normalize.desugar`: every ``for`` loops over
``range``, no ``continue``, a ``break`` only at the end of a body), before the effects pass.
Guarantees: the function computes what it did, with fewer dicts. A dict made empty
(``hs = {}``, alone or in a tuple assignment), used by nothing but its entries, all in the
statements after it in its block, where

* one loop ``for t in range(...)`` writes it once per step, by a statement of the loop's own
  block (``hs[t] = value``; ``t`` is not assigned in the loop, which has no ``break``; it may
  be a name the loop's first statements bind to its variable, as ``enumerate`` desugars),
* the loop reads it at ``t`` after that write, and at ``t - 1`` anywhere in the loop,
* before the loop only ``hs[start - 1] = value`` writes it (needed when the loop reads
  ``t - 1``: the range's start a literal, its step 1),
* after the loop only ``hs[stop - 1]`` reads it (both bounds literals, ``stop > start``),

has its entries replaced by names (``hs_t`` and ``hs_prev``; the ``hs = {}`` goes)::

    hs = {}                                 hs_prev = np.copy(h0)
    hs[-1] = np.copy(h0)                    for t in range(len(xs)):
    for t in range(len(xs)):          ->        hs_t = np.tanh(W @ hs_prev + xs[t])
        hs[t] = np.tanh(W @ hs[t - 1] + xs[t])  loss = loss + np.sum(hs_t)
        loss = loss + np.sum(hs[t])             hs_prev = hs_t

Each key is written once before it is read, so each entry the loop reads is the value of a
name holding the same object (an entry's writes in place, ``xs[t][i] = 1``, change the
object the name holds), and nothing else can see the dict. The derivatives then go through
names (the loop's saved values in lists, :mod:`~srctrans.optimise.step_lists`) rather than
entries saved and restored on a tape and a dict of cotangents; a dict any other way used is
left as it is.
"""

import gast

from srctrans.nodes import assign, int_literal, load, subscripts_of
from srctrans.normalize.desugar import is_range, located
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import replace_children, statement_lists, walk


def replace_step_dicts(function, namer):
    """Rewrite, in place, each dict of ``function`` the module describes; ``namer`` gives
    the new names."""
    blocks = statement_lists(function)
    if not any(_made_empty(stmt) for block in blocks for stmt in block):
        return                                       # (no empty dict made: no walk)
    stores, reads = name_counts([function])
    for block in blocks:
        made = [(stmt, name) for stmt in block for name in _made_empty(stmt)]
        for stmt, name in made:
            count = stores.get(name, 0) + reads.get(name, 0)
            plan = _plan(block, block.index(stmt), name, count)
            if plan is not None:
                _rewrite(block, stmt, name, plan, namer)


def _made_empty(stmt):
    """The names ``stmt`` assigns an empty dict display: ``d = {}``, ``a, d = x, {}``."""
    if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1:
        return []
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, gast.Name):
        return [target.id] if _empty_dict(value) else []
    if isinstance(target, gast.Tuple) and isinstance(value, gast.Tuple) \
            and len(target.elts) == len(value.elts):
        return [t.id for t, v in zip(target.elts, value.elts)
                if isinstance(t, gast.Name) and _empty_dict(v)]
    return []


def _empty_dict(value):
    return isinstance(value, gast.Dict) and not value.keys


class _Plan:
    """What the rewrite of one dict changes: the loop, its variable, the statement writing
    the entry (its index in the loop body), the reads by step offset (0 or -1), the
    write before the loop (or None) and the reads after it."""

    def __init__(self, loop, write, reads, before, after, step):
        self.loop, self.write, self.reads, self.step = loop, write, reads, step
        self.before, self.after = before, after
        self.carried = bool(reads[-1] or after)     # the step before's value is kept


def _plan(block, made_at, name, count):
    """The :class:`_Plan` for the dict ``name`` made at ``block[made_at]`` (``count`` Name
    nodes of it in the function), or None when the module's conditions do not all hold."""
    entries, loop, before, after = 0, None, [], []
    for stmt in block[made_at + 1:]:
        found = subscripts_of(stmt, {name})
        if found is None:
            return None                             # the dict itself is read: not only its entries
        entries += len(found)
        if not found:
            continue
        if isinstance(stmt, gast.For) and loop is None and not after:
            loop = stmt
        elif loop is None:
            before.append(stmt)
        else:
            after.extend(found)
    if loop is None or entries + 1 != count or not isinstance(loop.target, gast.Name):
        return None
    bounds = _bounds(loop)
    if bounds is None:
        return None
    start, stop, step = bounds
    step_of = _step_keys(loop, name)
    if step_of is None:
        return None
    write, reads, step_name = step_of
    if reads[-1] and (start is None or step != 1):
        return None
    written_before = _written_before(before, name, start)
    if written_before is False or bool(written_before) != bool(reads[-1]):
        return None                                 # a write before that nothing reads, or none
    last = None if start is None or stop is None or stop <= start or step != 1 else stop - 1
    if any(node.ctx.__class__ is not gast.Load or last is None or int_literal(node.slice) != last
           for node in after):
        return None
    return _Plan(loop, write, reads, written_before, after, step_name)


def _bounds(loop):
    """``(start, stop, step)`` of ``loop``'s ``range``, each an int or None when not a
    literal (a one-argument range starts at 0 and steps 1); None when it is not a range."""
    if not is_range(loop.iter) or loop.iter.keywords or not 1 <= len(loop.iter.args) <= 3:
        return None
    args = [int_literal(a) for a in loop.iter.args]
    if len(args) == 1:
        return 0, args[0], 1
    return args[0], args[1], args[2] if len(args) == 3 else 1


def _step_keys(loop, name):
    """``(index of the body statement writing name[t], {0: reads at t, -1: reads at t - 1},
    the step's name)`` when the loop uses ``name``'s entries as the module requires, else
    None. The step is the loop's variable or a name the body's first statements bind to it
    (``t = _index``: what ``enumerate`` desugars to), assigned nowhere else in the loop."""
    steps, step = {loop.target.id}, loop.target.id
    bindings = 0
    for stmt in loop.body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name)
                and stmt.value.id == loop.target.id):
            break
        step = stmt.targets[0].id
        steps.add(step)
        bindings += 1
    write, reads = None, {0: [], -1: []}
    for index, stmt in enumerate(loop.body):
        for node in walk(stmt):
            if isinstance(node, (gast.Break, gast.Lambda, gast.FunctionDef, gast.ClassDef)):
                return None
            if isinstance(node, gast.Name) and node.id in steps \
                    and node.ctx.__class__ is not gast.Load and index >= bindings:
                return None
            if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
                    and node.value.id == name):
                continue
            offset = _offset(node.slice, steps)
            if node.ctx.__class__ is gast.Load and offset is not None \
                    and (offset == -1 or write is not None and index > write):
                reads[offset].append(node)
            elif (offset == 0 and write is None and isinstance(stmt, gast.Assign)
                  and stmt.targets == [node]):
                write = index
            else:
                return None                         # another key, a write again, a read before
    return None if write is None else (write, reads, step)


def _offset(key, steps):
    """0 for a name of ``steps``, -1 for such a name minus 1, else None."""
    if isinstance(key, gast.Name) and key.id in steps:
        return 0
    if isinstance(key, gast.BinOp) and isinstance(key.op, gast.Sub) \
            and isinstance(key.left, gast.Name) and key.left.id in steps \
            and int_literal(key.right) == 1:
        return -1
    return None


def _written_before(before, name, start):
    """The statement ``name[start - 1] = value`` that is all of ``before``; None when
    ``before`` is empty, False when it is anything else."""
    if not before:
        return None
    if len(before) != 1 or start is None:
        return False
    stmt = before[0]
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Subscript)
            and isinstance(stmt.targets[0].value, gast.Name) and stmt.targets[0].value.id == name
            and int_literal(stmt.targets[0].slice) == start - 1
            and subscripts_of(stmt.value, {name}) == []):
        return False
    return stmt


def _rewrite(block, made, name, plan, namer):
    """Replace ``name``'s entries by names as ``plan`` says, and drop its ``{}``."""
    loop = plan.loop
    here = namer.fresh(f"{name}_{plan.step}")
    before = namer.fresh(f"{name}_prev") if plan.carried else None
    replaced = {id(node): gast.copy_location(load(here), node) for node in plan.reads[0]}
    replaced.update((id(node), gast.copy_location(load(before), node))
                    for node in plan.reads[-1] + plan.after)
    writing = loop.body[plan.write]
    loop.body[plan.write] = located(assign(here, writing.value), writing)
    for stmt in block:
        replace_children(stmt, lambda node: replaced.get(id(node), node))
    if plan.carried:
        loop.body.append(located(assign(before, load(here)), writing))
    if plan.before is not None:
        block[block.index(plan.before)] = located(assign(before, plan.before.value), plan.before)
    _unmake(block, made, name)


def _unmake(block, made, name):
    """Drop ``name = {}`` (or its pair of a tuple assignment) from ``block``."""
    target, value = made.targets[0], made.value
    if isinstance(target, gast.Name):
        block.remove(made)
        return
    pairs = [(t, v) for t, v in zip(target.elts, value.elts)
             if not (isinstance(t, gast.Name) and t.id == name)]
    if len(pairs) == 1:
        made.targets, made.value = [pairs[0][0]], pairs[0][1]
    else:
        target.elts, value.elts = [t for t, _ in pairs], [v for _, v in pairs]

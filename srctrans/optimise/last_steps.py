"""A value a reversed loop's step computes for the next step alone is not computed at the last.

Requires: a body of statements (a fused gradient) whose backward loops count down to 0
(``for _iteration in range(n, -1, -1)``), the names read after it, and a test of the
statements that may be dropped when their result is unused.
Guarantees: the values computed are unchanged. In such a loop (nested ones too), an
assignment ``v = e`` of its body's top level that may be dropped, where no statement after
it in the body reads ``v`` and nothing after the loop reads the value a step leaves in
``v`` (it is assigned again before any read, or never read), gives its value to the next
step alone; at the last step, ``_iteration`` 0, nothing reads it, and it runs under
``if _iteration:``. That is the cotangent of a network's input at its first layer (data,
whose gradient nobody asked for), or of a recurrence's initial state that is a constant::

    for _iteration in range(n - 1, -1, -1):          for _iteration in range(n - 1, -1, -1):
        d_a = da * s * (1.0 - s)                         d_a = da * s * (1.0 - s)
        dW = dW + np.outer(d_a, a)           ->          dW = dW + np.outer(d_a, a)
        da = W.T @ d_a                                   if _iteration:
                                                             da = W.T @ d_a
"""

import gast

from srctrans import annotations as anno
from srctrans.nodes import load
from srctrans.optimise.dce import needs_of, targets_of
from srctrans.treewalk import walk


def skip_last_steps(body, live_out, may_drop):
    """``body`` with the assignments of its backward loops that only feed the next step
    skipped at the last (see the module); ``live_out``: the names read after ``body``;
    ``may_drop(stmt)``: whether ``stmt`` may be dropped when its result is unused. Each
    block is walked backward once, for what is read after each of its statements."""
    pending = [(body, set(live_out))]
    while pending:
        block, live = pending.pop()
        live = set(live)
        for stmt in reversed(block):
            if isinstance(stmt, gast.For):
                if _counts_down_to_zero(stmt):
                    _skip_at_last(stmt, live, may_drop)
                # (a step's end: what follows the loop, and what the next step reads first)
                pending.append((stmt.body, live | _live_before(stmt.body, set())))
            _kill_and_read(stmt, live)
    return body


def _counts_down_to_zero(loop):
    """Whether ``loop`` is ``for i in range(n, -1, -1)``: its last step has ``i`` 0."""
    it = loop.iter
    return isinstance(loop.target, gast.Name) and not loop.orelse \
        and isinstance(it, gast.Call) and isinstance(it.func, gast.Name) \
        and it.func.id == "range" and len(it.args) == 3 and not it.keywords \
        and all(_is_minus_one(arg) for arg in it.args[1:])


def _is_minus_one(node):
    return isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) \
        and isinstance(node.operand, gast.Constant) and node.operand.value == 1 \
        and type(node.operand.value) is int or isinstance(node, gast.Constant) \
        and type(node.value) is int and node.value == -1


def _skip_at_last(loop, live_after, may_drop):
    """Put each assignment of ``loop``'s body that feeds the next step alone under ``if i:``."""
    counter = loop.target.id
    if any(isinstance(node, gast.Name) and node.id == counter and not isinstance(node.ctx, gast.Load)
           for stmt in loop.body for node in walk(stmt)):
        return                                  # (a step that rebinds its counter: not 0 last)
    last_read = {}                              # name -> the last statement of the step reading it
    for index, stmt in enumerate(loop.body):
        for name in needs_of(stmt):
            last_read[name] = index
    body = []
    for index, stmt in enumerate(loop.body):
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else None
        if isinstance(target, gast.Name) and target.id not in live_after \
                and target.id != counter and last_read.get(target.id, -1) <= index \
                and may_drop(stmt):
            stmt = anno.copy(stmt, gast.copy_location(gast.If(load(counter), [stmt], []), stmt))
        body.append(stmt)
    loop.body = body


def _live_before(statements, live_out):
    """The names read by ``statements`` (or, read after them, in ``live_out``) before they
    assign them for certain (:func:`_kill_and_read`, backward)."""
    live = set(live_out)
    for stmt in reversed(statements):
        _kill_and_read(stmt, live)
    return live


def _kill_and_read(stmt, live):
    """``live`` (changed in place), the names read after ``stmt``, made those read before it:
    a name ``stmt`` assigns at its top level is not, every name it reads (its nested blocks'
    too: ``dce.needs_of``) is."""
    live -= set(targets_of(stmt))
    live |= needs_of(stmt)


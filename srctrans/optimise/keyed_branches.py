"""Specialised code takes the branch its shape key decides, and no other.

Requires: a function in A-normal form, before it is differentiated, and the values its
keyed tests (``analyse.keyed_tests``: the class of an argument, a key of a dict argument,
``v is None``, ``len(args) > 1``, ``X.ndim != 2``) had in the call the code is specialised
on, and the values of the other tests the measuring call decided, which are checked as
the code runs (``runtime.branches``). A branch that only raises (an argument check) is
dropped with its ``if``.
Guarantees: every call with the same shape key takes the same branch of an ``if`` on
a keyed test, so the ``if`` is replaced by that branch; an ``if`` on a checked test is
replaced by ``rt.expect_branch(test, taken)`` and the branch, so a call whose test goes
the other way raises ``MissedBranch`` (the API then runs the generic code). A method
called through ``self`` desugars to a test of ``self``'s class and a call in each branch
(the method, or a call through the value for another class); in a loop its derivative
pushes the test, and the residuals of whichever branch ran, on the tape at every step,
and pops them in the backward pass. Specialised, the method is called as straight-line
code::

    _is_Net = rt.has_class(self, Net)              _is_Net = rt.has_class(self, Net)
    if _is_Net:                             ->     out = Net_feedforward(self, x)
        out = Net_feedforward(self, x)
    else:
        out = rt.unseen_callee(self, ...)
"""

import gast

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.nodes import literal_truth, load, resolved_runtime_call
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import walk


def fold_keyed_branches(function, tests, checked=frozenset(), aliases=None):
    """``function`` (changed in place) with each ``if`` on a name of ``tests`` (name -> the
    bool it held), or on a copy of one (``_cond = _and``: the measured run's code kept
    the name the copies read), replaced by the branch it took; the branch of a test of
    ``checked`` (or of a copy of one) is headed by ``rt.expect_branch(test, taken)`` (the
    runtime package's alias in ``aliases``)."""
    copies = _copied_tests(function, tests)
    checked = set(checked) | {name for name, source in copies.items() if source in checked}
    tests = {**tests, **{name: tests[source] for name, source in copies.items()}}
    pending = [function]
    while pending:
        owner = pending.pop()
        for field in ("body", "orelse"):
            block = getattr(owner, field, None)
            if not (isinstance(block, list) and block and isinstance(block[0], gast.stmt)):
                continue
            folded, unseen, known = [], list(reversed(block)), {}
            while unseen:                 # a taken branch's own keyed ifs are folded in turn
                stmt = unseen.pop()
                if (isinstance(stmt, gast.If) and isinstance(stmt.test, gast.Name)
                        and stmt.test.id in tests):
                    taken = tests[stmt.test.id]
                    unseen.extend(reversed(stmt.body if taken else stmt.orelse))
                    if stmt.test.id in checked and known.get(stmt.test.id) is not taken:
                        folded.append(_expectation(stmt, taken, aliases))
                else:
                    folded.append(stmt)
                    _note_constant(stmt, known)
            block[:] = [s for s in folded if not isinstance(s, gast.Pass)] or [gast.Pass()]
            pending.extend(s for s in block if isinstance(s, (gast.If, gast.For, gast.While)))
    return function


def _note_constant(stmt, known):
    """Update ``known`` (name -> the bool it holds at this point of a block) for ``stmt``:
    ``flag = False`` and ``test = not flag`` of a known ``flag`` (an early return's flag and
    the test of the code after it, which needs no check); any other store forgets."""
    for node in walk(stmt):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            known.pop(node.id, None)
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return
    value = stmt.value
    if isinstance(value, gast.Constant) and type(value.value) is bool:
        known[stmt.targets[0].id] = value.value
    elif (isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not)
            and isinstance(value.operand, gast.Name) and value.operand.id in known):
        known[stmt.targets[0].id] = not known[value.operand.id]


def _expectation(branch, taken, aliases):
    """``rt.expect_branch(test, taken)`` of the ``if`` statement ``branch``, at its line."""
    call = resolved_runtime_call(aliases, "expect_branch",
                                 [load(branch.test.id), gast.Constant(taken, None)])
    return gast.copy_location(gast.Expr(call), branch)


def _copied_tests(function, tests):
    """The names assigned once a copy of a name of ``tests`` (or of such a copy), with the
    name of ``tests`` it copies."""
    stores, _ = name_counts([function])
    copies = {node.targets[0].id: node.value.id for node in walk(function)
              if isinstance(node, gast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.Name)
              and stores.get(node.targets[0].id) == 1}
    found = {}
    for name in copies:
        source, seen = name, set()
        while source in copies and source not in tests and source not in seen:
            seen.add(source)
            source = copies[source]
        if source in tests:
            found[name] = source
    return found


def drop_settled_expectations(body):
    """``body`` without the checks ``rt.expect_branch(test, taken)`` whose test is a literal
    that holds ``taken`` (``0 == 0``, once specialising folded ``np.ndim(df) == 0`` to it,
    and inlining put it in the check): no call can take the other branch. In every block."""
    pending = [body]
    while pending:
        block = pending.pop()
        block[:] = [stmt for stmt in block if not _settled(stmt)] or [gast.Pass()]
        for stmt in block:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    pending.append(inner)
            pending.extend(handler.body for handler in getattr(stmt, "handlers", ()))
    return body


def _settled(stmt):
    """Whether ``stmt`` is ``rt.expect_branch(test, taken)`` of a literal ``test`` that holds
    ``taken``."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "expect_branch" and len(call.args) == 2
            and isinstance(call.args[1], gast.Constant) and type(call.args[1].value) is bool
            and anno.get(call, Anno.CALLEE) is runtime.expect_branch):
        return False
    test = call.args[0]
    truth = test.value if isinstance(test, gast.Constant) and type(test.value) is bool \
        else literal_truth(test)
    return truth is not None and truth == call.args[1].value

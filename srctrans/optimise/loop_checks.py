"""A check of what a call dispatches on, which a loop cannot change, is made once before it.

Requires: statements of specialised code (a fused gradient, a specialised forward or
backward pass) and the runtime's alias.
Guarantees: every call that runs the statements to their end computes what it computed
before; a call may now stop sooner, at a check a loop that runs no step would not have
made, and then runs the generic code (``runtime.branches.MissedBranch``), as any failed
check does. A call through a value in a loop (``a = self.sigmoid(W @ a + b)`` in a layer
loop) is specialised to the kind the measuring run met, and checked at each step:
``rt.expect_branch(rt.has_method(self, Network, 'sigmoid'), True)``. Such a check,
at the top level of a loop's body, moves before the loop when

* its test is one of the runtime's tests of a value's kind (``has_method``, ``has_class``,
  ``holds_own``, ``is_same``) of constants and of names bound before the loop that it does
  not assign (parameters and globals the statements never assign, or names a statement of
  the loop's own block assigns before it): such a test raises nothing, and reads only the
  value's class and the names of its own attributes;
* and nothing in the loop can change those: no attribute is assigned or deleted in it, and
  it calls only NumPy's and SciPy's functions with srctrans's own rules, the runtime's
  helpers (which call no user code: a container's class is called only to rebuild a
  cotangent of its kind), builtins that change no object's attributes (the compiler's own
  ``len(...)`` and ``range(...)`` by name), array methods, and
  ``append``/``pop`` of the lists the statements make (a tape). A user's function or
  method (inlined ones are no calls here), ``setattr``, any other call keeps the check in
  the loop.

Nested loops are done inside out, so a check leaves every loop it may; equal checks before
a loop are made once. In a per-example loop over a network's layers, 12 checks a call
become 2 (the textbook network's gradient, about 5%).
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.optimise.common_values import PURE_BUILTINS, PURE_METHODS, has_own_rule
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.treewalk import walk, walk_names

_KIND_TESTS = frozenset({"has_method", "has_class", "holds_own", "is_same"})
_LIST_METHODS = frozenset({"append", "pop"})
_BUILTIN_NAMES = frozenset(f.__name__ for f in PURE_BUILTINS)


def hoist_loop_checks(statements, runtime_alias):
    """``statements`` (changed in place, and returned) with the checks of kinds that no step
    of a loop can change made before the loop (see the module)."""
    lists = {stmt.targets[0].id for stmt in statements
             if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
             and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.List)}
    stored = {node.id for stmt in statements for node in walk(stmt)
              if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)}
    blocks = [statements]                  # every block, outer ones first
    index = 0
    while index < len(blocks):
        for stmt in blocks[index]:
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(stmt, (gast.For, gast.While, gast.If)) and inner:
                    blocks.append(inner)
        index += 1
    for block in reversed(blocks):         # inner blocks first
        position, bound = 0, set()         # bound: what the block assigns before a statement
        while position < len(block):
            stmt = block[position]
            if isinstance(stmt, (gast.For, gast.While)):
                hoisted = _hoisted(stmt, runtime_alias, lists, stored - bound)
                block[position:position] = hoisted
                position += len(hoisted)
            elif isinstance(stmt, gast.Assign):
                bound |= {n.id for target in stmt.targets for n in walk(target)
                          if isinstance(n, gast.Name)}
            position += 1
    return statements


def _hoisted(loop, runtime_alias, lists, unsure):
    """The checks moved out of ``loop``'s body (removed from it), one of each; ``unsure``: the
    names that may hold no value before the loop."""
    checks = [stmt for stmt in loop.body if _kind_check(stmt, runtime_alias)]
    if not checks or not _keeps_objects(loop, runtime_alias, lists):
        return []
    assigned = {node.id for node in walk(loop)
                if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)}
    moved, seen = [], set()
    for check in checks:
        names = {n.id for n in walk_names(check)}
        if names & (assigned | unsure):
            continue
        loop.body.remove(check)
        text = gast.dump(check)
        if text not in seen:
            seen.add(text)
            moved.append(check)
    if not loop.body:
        loop.body.append(gast.Pass())
    return moved


def _kind_check(stmt, runtime_alias):
    """Whether ``stmt`` is ``rt.expect_branch(rt.TEST(names and constants...), True/False)``
    for a test of :data:`_KIND_TESTS`."""
    if not (isinstance(stmt, gast.Expr)
            and is_runtime_call(stmt.value, runtime_alias, "expect_branch", 2)
            and isinstance(stmt.value.args[1], gast.Constant)):
        return False
    test = stmt.value.args[0]
    return (_runtime_call(test, runtime_alias) and test.func.attr in _KIND_TESTS
            and not test.keywords
            and all(isinstance(a, (gast.Name, gast.Constant)) for a in test.args))


def _runtime_call(node, runtime_alias):
    """Whether ``node`` calls any of the runtime's helpers (``rt.name(...)``)."""
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and isinstance(node.func.value, gast.Name) and node.func.value.id == runtime_alias)


def _keeps_objects(loop, runtime_alias, lists):
    """Whether nothing in ``loop`` may assign or delete an attribute of any object: see the
    module for the calls that may run in it."""
    for node in walk(loop):
        if isinstance(node, gast.Attribute) and not isinstance(node.ctx, gast.Load):
            return False
        if isinstance(node, gast.Call) and not _calls_no_user_code(node, runtime_alias, lists):
            return False
    return True


def _calls_no_user_code(call, runtime_alias, lists):
    func = call.func
    if _runtime_call(call, runtime_alias):
        return True
    callee = anno.get(call, Anno.CALLEE)
    if callee is not None:
        return any(callee is f for f in PURE_BUILTINS) or has_own_rule(callee)
    if isinstance(func, gast.Name):            # the compiler's own len(...), range(...)
        return func.id in _BUILTIN_NAMES
    if not isinstance(func, gast.Attribute):   # fs[0](x), f(a)(b): anything may run
        return False
    if isinstance(func.value, gast.Name) and func.value.id in lists:
        return func.attr in _LIST_METHODS
    return func.attr in PURE_METHODS

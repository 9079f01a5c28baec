"""Batching through an ``if`` or a ``while`` whose test is batched: both branches run,
then a select per member; the loop runs until every member is done.

Requires: the batching pass (:mod:`srctrans.differentiate.batching`) to provide ``unit``,
``namer``, ``result``, ``defined``, ``maybe``, ``_block``, ``batched`` and ``expression``.
Guarantees: :meth:`BatchedControl._selected` and :meth:`BatchedControl._masked` return the
statements of such an ``if`` and ``while``, each name they assign taking, per member, the
value of the path that member takes (``np.where``: a NaN or inf of the path not taken never
reaches the result, and NumPy's warnings are off while it runs); a block that writes into
an array or calls for an effect, or a name assigned on some paths only, raises
:class:`~srctrans.differentiate.batched_names.Unbatchable`.
"""

import gast

from srctrans import annotations as anno
from srctrans.differentiate.batched_names import (
    Unbatchable, assigned_in, definitely_assigned, read_before_assigned)
from srctrans.nodes import assign, load
from srctrans.treewalk import walk, walk_names


class BatchedControl:
    """Mixin of the batching pass: control flow on batched values."""

    def _selected(self, stmt):
        """``if c: A else: B`` for a batched ``c``: A and B both run, from the same values,
        and each name they assign takes A's value where ``c`` holds and B's elsewhere
        (``np.where``: a NaN or inf of the branch not taken never reaches the result)."""
        _pure_branches(stmt)
        self.result.selects = True
        names = self._live(stmt, assigned_in(stmt.body + stmt.orelse))
        self._defined_or_never(stmt, names)
        test = self.namer.fresh("_taken")
        before = {n: self.namer.fresh(n + "_before") for n in names}
        then = {n: self.namer.fresh(n + "_then") for n in names}
        errors = self.namer.fresh("_errors")
        out = [assign(test, self.batched(stmt.test)), self._quiet(errors)]
        out += [assign(before[n], load(n) if n in self.defined else gast.Constant(None, None))
                for n in names]
        out += self._block(stmt.body)
        out += [assign(then[n], load(n)) for n in names]
        out += [assign(n, load(before[n])) for n in names]
        out += self._block(stmt.orelse)
        out += [assign(n, self._select(test, load(then[n]), load(n))) for n in names]
        return out + [self._loud(errors)]

    def _quiet(self, errors):
        """NumPy's warnings off while code runs for members that would not run it (a log of
        a negative number in the branch not taken); ``BatchBuild.selects`` makes the caller
        restore them should that code raise."""
        return assign(errors, self.expression("np.seterr(all='ignore')"))

    def _loud(self, errors):
        return gast.Expr(self.expression("np.seterr(**E)", E=load(errors)))

    def _masked(self, stmt):
        """``while c: A`` for a batched ``c``: A runs while ``c`` holds for any member, and
        each name it assigns keeps its value in the members whose ``c`` no longer holds."""
        _pure_branches(stmt)
        self.result.selects = True
        names = self._live(stmt, assigned_in(stmt.body))
        self._defined_or_never(stmt, names)
        active = self.namer.fresh("_running")
        before = {n: self.namer.fresh(n + "_before") for n in names}
        errors = self.namer.fresh("_errors")
        out = [assign(n, gast.Constant(None, None)) for n in names if n not in self.defined]
        body = [assign(active, self.batched(stmt.test)), self._quiet(errors)]
        body += [assign(before[n], load(n)) for n in names]
        self.defined.update(names)
        body += self._block(stmt.body)
        body += [assign(n, self._select(active, load(n), load(before[n]))) for n in names]
        body += [self._loud(errors)]
        test = self.expression("np.any(C)", C=self.batched(stmt.test))
        return out + [anno.copy(stmt, gast.While(test, body, []))]

    def _live(self, stmt, names):
        """The names among ``names`` (assigned under ``stmt``) whose values matter after it:
        read outside it, or read under it before it assigns them (a loop's carried values,
        the test); the others are temporaries of one branch or one step."""
        inside = {id(n) for n in walk(stmt)}
        outside = {n.id for n in walk_names(self.unit.function)
                   if isinstance(n.ctx, gast.Load) and id(n) not in inside}
        carried = set(read_before_assigned(stmt.body)) | set(read_before_assigned(stmt.orelse)) \
            | {n.id for n in walk_names(stmt.test)}
        return [n for n in names if n in outside or n in carried]

    def _defined_or_never(self, stmt, names):
        """Raise :class:`Unbatchable` for a name the branches assign that earlier code, or a
        branch, assigns on some paths only: whether it holds a value depends on the run."""
        for name in names:
            partly = name in self.maybe and name not in self.defined or any(
                name in assigned_in(block) and name not in definitely_assigned(block)
                and name not in self.defined for block in (stmt.body, stmt.orelse))
            if partly:
                raise Unbatchable(f"`{name}`, assigned on some paths only, then under an "
                                  f"`{_keyword(stmt)}` on a batched value", stmt)

    def _select(self, test, chosen, other):
        return self.expression("rt.batch.select(C, A, B)", C=load(test), A=chosen, B=other)



def _pure_branches(stmt):
    """Raise :class:`Unbatchable` unless the blocks under ``stmt`` only assign names: a
    write into an array or a call for its effect would happen in every member."""
    for node in (n for block in (stmt.body, stmt.orelse) for s in block for n in walk(s)):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            raise Unbatchable(f"a write into an array under an `{_keyword(stmt)}` on a batched "
                              f"value", node)
        if isinstance(node, (gast.Expr, gast.Break, gast.Continue)):
            raise Unbatchable(f"a statement with an effect under an `{_keyword(stmt)}` on a "
                              f"batched value", node)


def _keyword(stmt):
    return "if" if isinstance(stmt, gast.If) else "while"

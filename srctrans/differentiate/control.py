"""Reverse mode through blocks: ``if``, ``for ... in range(...)`` and ``while``.

Requires: the statement-level reverse pass (:mod:`srctrans.differentiate.reverse`)
to provide ``_simple(stmt)``, which differentiates one simple statement.
Guarantees: :meth:`ControlFlow._block` returns the forward statements and
the backward statements of a list of statements, such that

* a value overwritten inside a block is pushed on the tape before it is
  overwritten and popped back after its adjoint is computed (``push``/``pop``
  statements are annotated with ``Anno.SAVES``; :func:`drop_unneeded_saves`
  removes the pairs of names the backward pass never reads, so the tape holds
  only what is needed, loop counters and values the rules read);
* a branch is reversed by reading its condition, which the tape has restored
  to the value it had in that iteration;
* a loop counts its iterations and is reversed by a ``for`` over that count;
  a ``for`` loop's variable is read back from its ``range`` object;
* every adjoint that flows around a loop, or out of only one branch, starts
  at zero, so the first contribution to an adjoint assigns it and later ones
  add to it, whichever way control went; and the adjoint of a value a loop
  body overwrites before reading it is zero again at the end of each
  reversed iteration (only the last iteration's value reached the code after
  the loop).
"""

import collections

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import assign, clone, load, runtime_call, store
from srctrans.optimise.dce import reads_of, targets_of
from srctrans.treewalk import walk, walk_names

COMPOUND = (gast.If, gast.For, gast.While)


class ControlFlow:
    """Mixin of the reverse pass: blocks, branches, loops and the tape.

    Reads ``self.parameters`` (the function's parameter names) and keeps
    ``self.loop_depth`` (how many loops enclose the statement at hand)."""

    def _block(self, statements, depth):
        """(forward statements, backward statements) of ``statements`` at nesting ``depth``."""
        forward, backward = [], []
        for stmt in reversed(statements):
            self._origin = anno.get(stmt, Anno.ORIGIN)
            if isinstance(stmt, gast.If):
                f, b = self._if(stmt, depth)
            elif isinstance(stmt, gast.For) and anno.get(stmt, Anno.CHECKPOINTED) is not None:
                f, b = self._checkpointed(stmt, depth)
            elif isinstance(stmt, gast.For):
                f, b = self._loop(stmt, depth, stmt.target.id)
            elif isinstance(stmt, gast.While):
                f, b = self._loop(stmt, depth, None)
            elif isinstance(stmt, gast.With):             # with st.grad_of(h) as dh:
                f, b = self._gradient_hook(stmt)
            else:
                f, b = self._simple(stmt, depth)
            forward[:0] = f
            backward.extend(b)
        return forward, backward

    def _assignments(self, name):
        """How many times the function assigns ``name`` (a loop variable: once, as the loop's
        own target, unless another statement reuses the name). Counted once per build."""
        counts = getattr(self, "_assignment_counts", None)
        if counts is None:
            counts = self._assignment_counts = collections.Counter(
                n.id for n in walk(self.unit.function)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
        return counts[name]

    # -- saving overwritten values ---------------------------------------------
    @property
    def tape(self):
        if self._tape is None:
            self._tape = self.namer.fresh("tape")
        return self._tape

    def _push(self, name):
        stmt = gast.Expr(gast.Call(gast.Attribute(load(self.tape), "append", gast.Load()),
                                   [load(name)], []))
        return self._saves(stmt, name)

    def _pop(self, name):
        value = gast.Call(gast.Attribute(load(self.tape), "pop", gast.Load()), [], [])
        return self._saves(assign(name, value), name)

    def _saves(self, stmt, name):
        anno.set_(stmt, Anno.SAVES, name)
        anno.set_(stmt, Anno.ORIGIN, self._origin)
        self.saved.add(name)
        return stmt

    def _saving(self, forward_stmt, backward, names, depth):
        """Wrap one statement that assigns ``names``: save and restore them inside blocks.

        Outside every loop, a name the function assigns only here (not a
        parameter) runs this statement at most once: no value of it is
        overwritten, so none is saved
        (a branch's own temporaries; a placeholder still stands in for it when the
        branch does not run)."""
        if depth and not self.loop_depth:
            once = [n for n in names if self._assignments(n) == 1 and n not in self.parameters]
            self.saved.update(once)
            names = [n for n in names if n not in once]
        if depth == 0 or not names:
            return [forward_stmt], backward
        return ([self._push(n) for n in names] + [forward_stmt],
                backward + [self._pop(n) for n in reversed(names)])

    # -- adjoints that must start at zero --------------------------------------
    def _zeros(self, adjoints):
        """``d = rt.zeros_like(x)`` for each adjoint ``d`` (in a stable order)."""
        out = []
        for adjoint in sorted(adjoints):
            primal = self.namer.primal_of(adjoint)
            zero = runtime_call(self.aliases, "zeros_like", [load(primal)])
            stmt = assign(adjoint, zero)
            anno.set_(stmt, Anno.ORIGIN, self._origin)
            out.append(stmt)
        return out

    # -- branches ---------------------------------------------------------------
    def _if(self, stmt, depth):
        origin = self._origin
        before = set(self.initialised)
        then_forward, then_backward = self._block(stmt.body, depth + 1)
        after_then = self.initialised
        self.initialised = set(before)
        else_forward, else_backward = self._block(stmt.orelse, depth + 1)
        after_else = self.initialised
        self._origin = origin
        union = after_then | after_else
        then_backward += self._zeros(union - after_then)
        else_backward += self._zeros(union - after_else)
        self.initialised = union
        forward = anno.copy(stmt, gast.If(stmt.test, then_forward or [gast.Pass()], else_forward))
        backward = anno.copy(stmt, gast.If(clone(stmt.test), then_backward or [gast.Pass()],
                                           else_backward))
        return [forward], [backward]

    # -- loops ------------------------------------------------------------------
    def _loop_body(self, stmt, depth):
        """``(before the loop, body forward, body backward, back edge)`` of a loop's body: the
        adjoints that flow around the loop start at zero before it and again after each
        reversed iteration (the back edge)."""
        origin = self._origin
        carried = {self.namer.adjoint(n) for n in exposed_reads(stmt.body) if n in self.active}
        before_loop = self._zeros(carried - self.initialised)
        self.initialised |= carried
        # the adjoint of a value the body overwrites before reading it, if it has one after
        # the loop: the last iteration's value flows there, an earlier one's nowhere
        overwritten = {self.namer.adjoint(n) for n in assigned_names(stmt.body)
                       if n in self.active} & self.initialised
        self.loop_depth += 1
        body_forward, body_backward = self._block(stmt.body, depth + 1)
        self.loop_depth -= 1
        self._origin = origin
        back_edge = self._zeros((carried | overwritten) - self.initialised)
        self.initialised |= carried | overwritten
        return before_loop, body_forward, body_backward, back_edge

    def _loop_variable_kept(self, target):
        """``(forward, after)`` statements that keep a ``for`` loop's variable for code before
        the loop: the backward loop leaves it at its first value, and code before the loop (a
        loop that used the same name, or a parameter of that name) reads the value it had
        before."""
        if target is not None and (self._assignments(target) > 1 or target in self.parameters):
            return [self._push(target)], [self._pop(target)]
        return [], []

    def _loop(self, stmt, depth, target):
        """A ``for`` (``target`` is its variable) or a ``while`` (``target`` None)."""
        origin = self._origin
        trips = self.namer.fresh("trips")
        before_loop, body_forward, body_backward, back_edge = self._loop_body(stmt, depth)
        count = assign(trips, gast.BinOp(load(trips), gast.Add(), gast.Constant(1, None)))
        anno.set_(count, Anno.ORIGIN, origin)
        iteration = self.namer.fresh("_iteration")
        backwards = gast.Call(gast.Name("range", gast.Load(), None, None),
                              [gast.BinOp(load(trips), gast.Sub(), gast.Constant(1, None)),
                               gast.Constant(-1, None), gast.Constant(-1, None)], [])
        setup = []
        reset = assign(trips, gast.Constant(0, None))
        if target is None:
            loop = gast.While(stmt.test, [count] + body_forward, [])
            restore_target = []
        else:
            # the k-th value of the loop variable is read back from the range itself,
            # which also holds when the loop was left early
            indices = self.namer.fresh("_range")
            setup = [anno.copy(stmt, assign(indices, stmt.iter))]
            leaves_early = any(isinstance(n, gast.Break) for n in walk(stmt))
            if not leaves_early:          # it runs len(range) times: no counting needed
                reset = assign(trips, gast.Call(gast.Name("len", gast.Load(), None, None),
                                                [load(indices)], []))
            loop = gast.For(stmt.target, load(indices),
                            ([count] if leaves_early else []) + body_forward, [], None)
            restore_target = [self._saves(assign(target, gast.Subscript(
                load(indices), load(iteration), gast.Load())), target)]    # dropped if unread
        anno.copy(stmt, loop)
        reverse_loop = anno.copy(stmt, gast.For(store(iteration), backwards,
                                                restore_target + body_backward + back_edge, [], None))
        anno.set_(reverse_loop, Anno.REVERSES, loop)
        anno.set_(reset, Anno.ORIGIN, origin)
        forward, after = self._loop_variable_kept(target)
        for start in setup + [reset]:
            saved_forward, saved_backward = self._saving(start, [], targets_of(start), depth)
            forward += saved_forward
            after = saved_backward + after
        return forward + [loop], before_loop + [reverse_loop] + after


def exposed_reads(statements):
    """Names a block reads before it assigns them (values flowing into the block)."""
    exposed, assigned = set(), set()
    for stmt in statements:
        if isinstance(stmt, COMPOUND):
            header = stmt.test if not isinstance(stmt, gast.For) else stmt.iter
            exposed |= reads_of(header) - assigned
            own = set()                                  # a for loop's variable: the loop sets it
            if isinstance(stmt, gast.For):
                own = {n.id for n in walk_names(stmt.target)}
            for block in (stmt.body, getattr(stmt, "orelse", [])):
                exposed |= exposed_reads(block) - assigned - own
        else:
            exposed |= reads_of(stmt) - assigned
            assigned |= {n.id for n in walk(stmt)
                         if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return exposed


def assigned_names(statements):
    """Names a block assigns (nested blocks included)."""
    return {n.id for stmt in statements for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def drop_empty_blocks(statements):
    """``statements`` without branches that do nothing (a backward pass's ``if c: pass``)."""
    kept = []
    for stmt in statements:
        if isinstance(stmt, COMPOUND):
            stmt.body = drop_empty_blocks(stmt.body)
            if isinstance(stmt, gast.If):
                stmt.orelse = drop_empty_blocks(stmt.orelse)
                if not stmt.body and not stmt.orelse:
                    continue
                if not stmt.body:                   # if c: pass else: B  ->  if not c: B
                    stmt.test = gast.UnaryOp(gast.Not(), stmt.test)
                    stmt.body, stmt.orelse = stmt.orelse, []
            stmt.body = stmt.body or [gast.Pass()]
        if not isinstance(stmt, gast.Pass):
            kept.append(stmt)
    return kept


def drop_unneeded_saves(forward, backward, needed):
    """Remove the push/pop pairs (and placeholders) of names not in ``needed``, and of the
    names a loop assigns the same value at every step (:func:`same_at_every_step`)."""
    same = same_at_every_step(forward)

    def keep(saved):
        return saved is None or saved in needed

    forward, backward = without_saves(forward, keep), without_saves(backward, keep)
    if same:             # their placeholders stay: a loop that never runs leaves them bound
        def varies(saved):
            return saved not in same
        forward = without_saves(forward, varies, placeholders=True)
        backward = without_saves(backward, varies, placeholders=True)
    return forward, backward


def same_at_every_step(forward):
    """The names whose one assignment in ``forward`` (placeholders and saves aside) is in a
    loop and gives the same value at every step of every loop around it: ``range``, ``len``,
    ``min``, ``max`` and arithmetic of constants, of names no such loop changes
    (:func:`changed_in`) and of names of this kind (an inner loop's ``_range = range(F)``
    and ``trips = len(_range)``). Restoring one before the step that assigned it is not
    needed: the backward pass reads the value every step gave."""
    stores, found = collections.Counter(), {}
    pending = [(stmt, None) for stmt in forward]        # (statement, its outermost loop)
    while pending:
        stmt, outermost = pending.pop()
        if anno.get(stmt, Anno.SAVES) is not None:
            continue
        if isinstance(stmt, COMPOUND):
            if isinstance(stmt, gast.For):
                stores.update(n.id for n in walk_names(stmt.target))
            loop = stmt if outermost is None and not isinstance(stmt, gast.If) else outermost
            pending += [(s, loop) for s in stmt.body + stmt.orelse]
            continue
        stores.update(targets_of(stmt))
        if outermost is not None and isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name):
            found[stmt.targets[0].id] = (stmt.value, outermost)
    assigned, same = {}, set()
    changed = True
    while changed:                                     # names of this kind may read others
        changed = False
        for name, (value, loop) in found.items():
            if name in same or stores[name] != 1:
                continue
            if id(loop) not in assigned:
                assigned[id(loop)] = changed_in(loop)
            if _steady(value, assigned[id(loop)] - same):
                same.add(name)
                changed = True
    return same


def changed_in(loop):
    """The names ``loop`` may change: those it assigns, writes into (an item or attribute),
    calls a method of (``hs.append(h)``), or passes to a call (which may write into it) but
    one of :data:`_STEADY_CALLS`."""
    changed = assigned_names([loop])
    for node in walk(loop):
        if isinstance(node, (gast.Subscript, gast.Attribute)) and not isinstance(node.ctx, gast.Load):
            root = node
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            if isinstance(root, gast.Name):
                changed.add(root.id)
        elif isinstance(node, gast.Call):
            if isinstance(node.func, gast.Attribute) and isinstance(node.func.value, gast.Name):
                changed.add(node.func.value.id)
            if not (isinstance(node.func, gast.Name) and node.func.id in _STEADY_CALLS):
                changed.update(a.id for a in node.args + [k.value for k in node.keywords]
                               if isinstance(a, gast.Name))
    return changed


# builtins whose result only depends on their arguments' values (ints and containers' lengths)
_STEADY_CALLS = frozenset({"range", "len", "min", "max"})


def _steady(value, assigned):
    """Whether ``value`` is ``range``/``len``/``min``/``max`` of, or arithmetic of, constants
    and names not among ``assigned``."""
    for node in walk(value):
        if isinstance(node, gast.Name):
            if node.id in assigned:
                return False
        elif isinstance(node, gast.Call):
            if not (isinstance(node.func, gast.Name) and node.func.id in _STEADY_CALLS
                    and not node.keywords):
                return False
        elif not isinstance(node, (gast.Constant, gast.BinOp, gast.UnaryOp, gast.operator,
                                   gast.unaryop, gast.expr_context)):
            return False
    return True


def without_saves(statements, keep=lambda saved: saved is None, placeholders=False):
    """``statements`` (changed in place, nested blocks too) without the saves ``keep``
    rejects: ``keep`` gets the name a push, pop or placeholder saves (``Anno.SAVES``),
    None for any other statement; by default every save goes. With ``placeholders``, the
    placeholders (``h = None``) stay whatever ``keep`` says. A block left empty holds
    ``pass``."""
    kept = []
    for stmt in statements:
        if not keep(anno.get(stmt, Anno.SAVES)) and not (
                placeholders and isinstance(stmt, gast.Assign)
                and isinstance(stmt.value, gast.Constant)):
            continue
        if isinstance(stmt, COMPOUND):
            stmt.body = without_saves(stmt.body, keep, placeholders) or [gast.Pass()]
            stmt.orelse = without_saves(stmt.orelse, keep, placeholders)
        kept.append(stmt)
    return kept


def iterate_saved_values(statements, runtime_alias):
    """Reversed loops that pop one value per iteration iterate over those values instead.

    A reversed loop whose body pops one saved value and touches the tape
    nowhere else, reads no iteration number, and reads or assigns that name
    nowhere before the pop::

        for _iteration in range(trips - 1, -1, -1):        for x in rt.pop_many(tape, trips):
            x = tape.pop()                           ->         dx = dx * (1 - 2 * x)
            dx = dx * (1 - 2 * x)

    ``rt.pop_many`` pops all of the loop's values at once, last first, so the
    loop does what the pops did without a call per iteration. Changes
    ``statements`` in place.
    """
    for stmt in statements:
        if isinstance(stmt, COMPOUND):
            iterate_saved_values(stmt.body, runtime_alias)
            iterate_saved_values(getattr(stmt, "orelse", []), runtime_alias)
        if isinstance(stmt, gast.For) and anno.get(stmt, Anno.REVERSES) is not None:
            _iterate_pops(stmt, runtime_alias)


def _iterate_pops(loop, runtime_alias):
    iteration = loop.target
    if not (isinstance(iteration, gast.Name) and isinstance(loop.iter, gast.Call)
            and len(loop.iter.args) == 3 and isinstance(loop.iter.args[0], gast.BinOp)):
        return
    if any(iteration.id in reads_of(stmt) for stmt in loop.body):
        return
    pops = [i for i, stmt in enumerate(loop.body) if is_pop(stmt)]
    if len(pops) != 1:
        return
    pop = loop.body[pops[0]]
    tape, name = pop.value.func.value.id, pop.targets[0].id
    if sum(tape in reads_of(stmt) for stmt in loop.body) != 1:
        return                           # a nested loop or a subscript write uses the tape too
    for stmt in loop.body[:pops[0]]:
        if any(isinstance(n, gast.Name) and n.id == name for n in walk(stmt)):
            return
    trips = loop.iter.args[0].left                    # range(trips - 1, -1, -1)
    if not isinstance(trips, gast.Name):
        return
    loop.target = store(name)
    loop.iter = gast.Call(gast.Attribute(load(runtime_alias), "pop_many", gast.Load()),
                          [load(tape), clone(trips)], [])
    del loop.body[pops[0]]
    loop.body = loop.body or [gast.Pass()]


def is_pop(stmt):
    """``name = tape.pop()``, as :meth:`ControlFlow._pop` makes it."""
    return (isinstance(stmt, gast.Assign) and anno.get(stmt, Anno.SAVES) is not None
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "pop"
            and not stmt.value.args)

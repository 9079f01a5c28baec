"""Reverse mode through a loop marked ``st.checkpointed``: binomial checkpointing.

Requires: the loop mixin of :mod:`srctrans.differentiate.control` (``_loop_body``,
``_saving``, ``_loop_variable_kept``) and a ``for`` loop annotated
``Anno.CHECKPOINTED`` with the name of its snapshot count
(:mod:`srctrans.normalize.checkpoints`).
Guarantees: :meth:`CheckpointedLoops._checkpointed` returns the loop's forward
and backward statements, such that

* the forward pass runs the steps without saving anything on the tape, and
  keeps the loop's *state* on entry to the steps its plan
  (``rt.checkpoint_plan``, Griewank's revolve) names, in a list of its own;
* the backward pass reverses step ``i`` (from the last down) by restoring the
  latest kept state at a step ``c <= i``, running steps ``c .. i - 1`` again
  (keeping the states the plan names), running step ``i`` once more with its
  saves, then its backward statements, exactly those of an unmarked loop; the
  state kept at ``i`` is then dropped;
* the state is every name the body assigns or changes in place that it reads
  before assigning, or
  that has a value before the loop (code before the loop may read it back);
  a name the body changes in place is kept as a copy, and restored as one;
* the tape saves only the values a step overwrites that it had computed or
  restored itself (the state, and names a step assigns more than once): the
  others are computed again by the step's second run before its backward
  statements read them.

So at most ``snapshots`` states and one step's saved values are alive between
the passes and during the backward pass, and the gradient is the unmarked
loop's: each step runs again on the same values. The plan, the positions and
the kept states are ordinary values, so derivatives of the derivative (an HVP)
run through the same code.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.control import COMPOUND, assigned_names, exposed_reads, without_saves
from srctrans.nodes import (
    RESIZING_METHODS, assign, changed_in_place, clone, load, runtime_call, store)
from srctrans.optimise.dce import targets_of
from srctrans.treewalk import walk

# Methods of lists, dicts and arrays that change their object: a name the body calls
# one of them on is kept as a copy.
_CHANGING_METHODS = RESIZING_METHODS | {"sort", "reverse", "fill", "put"}


class CheckpointedLoops:
    """Mixin of the reverse pass: loops marked ``st.checkpointed``."""

    def _checkpointed(self, stmt, depth):
        origin = self._origin
        target = stmt.target.id
        fresh = self.namer.fresh
        trips, indices, plan, states = fresh("trips"), fresh("_range"), fresh("_plan"), fresh("_states")
        before_loop, body_forward, body_backward, back_edge = self._loop_body(stmt, depth)
        primal = _plain_steps(body_forward)
        changed = _changed_in_place(primal)
        state = self._loop_state(stmt, primal, target, changed)
        unsaved = _assigned_once(primal) - set(state) - changed
        def keep(saved):
            return saved not in unsaved

        body_forward, body_backward = (without_saves(body_forward, keep),
                                       without_saves(body_backward, keep))
        # no placeholder before the loop either, for a name the step always assigns (one a
        # branch assigns may be read, conservatively, as the forward pass left it)
        self.saved -= unsaved & {n for stmt in primal if not isinstance(stmt, COMPOUND)
                                 for n in targets_of(stmt)}
        changed &= set(state)
        keep = _Keeper(self.aliases, plan, states, state, changed)

        setup = [assign(indices, stmt.iter),
                 assign(trips, _call("len", load(indices))),
                 assign(plan, runtime_call(self.aliases, "checkpoint_plan",
                                           [load(trips), load(anno.get(stmt, Anno.CHECKPOINTED))])),
                 assign(states, gast.BinOp(gast.List([gast.Constant(None, None)], gast.Load()),
                                           gast.Mult(), load(trips)))]
        step = fresh("_step")
        forward_loop = gast.For(store(step), _call("range", load(trips)),
                                [assign(target, _item(indices, step)), keep.at(step)] + primal,
                                [], None)

        iteration, start = fresh("_iteration"), fresh("_start")
        again = []                                  # steps start .. iteration - 1, run again
        if state:
            following = fresh("_next")
            again = [gast.For(store(step), _call("range", load(start), load(iteration)),
                              [assign(target, _item(indices, step))] + _plain_steps(body_forward)
                              + [assign(following, gast.BinOp(load(step), gast.Add(),
                                                              gast.Constant(1, None))),
                                 keep.at(following)], [], None)]
        backwards = _call("range", gast.BinOp(load(trips), gast.Sub(), gast.Constant(1, None)),
                          gast.Constant(-1, None), gast.Constant(-1, None))
        reverse_loop = gast.For(store(iteration), backwards,
                                [assign(start, runtime_call(self.aliases, "checkpoint_start",
                                                            [load(plan), load(iteration)]))]
                                + keep.restored(start) + again
                                + [assign(target, _item(indices, iteration))]
                                + body_forward + body_backward
                                + [keep.dropped(iteration)] + back_edge, [], None)
        for node in (forward_loop, reverse_loop):
            anno.copy(stmt, node)
        for node in setup:
            anno.set_(node, Anno.ORIGIN, origin)
        forward, after = self._loop_variable_kept(target)
        for start_stmt in setup:
            saved_forward, saved_backward = self._saving(start_stmt, [], targets_of(start_stmt), depth)
            forward += saved_forward
            after = saved_backward + after
        return forward + [forward_loop], before_loop + [reverse_loop] + after

    def _loop_state(self, loop, primal, target, changed):
        """The names whose values on entry to a step the loop keeps, sorted: those its steps
        (``primal``) assign or change in place (``changed``) and read before assigning, or
        that have a value before the loop."""
        inside = {id(node) for node in walk(loop)}
        outside = set(self.parameters)
        outside.update(node.id for node in walk(self.unit.function)
                       if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)
                       and id(node) not in inside)
        assigned = (assigned_names(primal) | changed) - {target}
        return sorted(assigned & (exposed_reads(primal) | outside))


class _Keeper:
    """The statements that keep, restore and drop the states of one checkpointed loop."""

    def __init__(self, aliases, plan, states, names, changed):
        self.aliases, self.plan, self.states = aliases, plan, states
        self.names, self.changed = names, changed

    def at(self, step):
        """``if rt.checkpoint_keeps(plan, step): states[step] = (h, rt.state_copy(ys))``."""
        values = [runtime_call(self.aliases, "state_copy", [load(n)]) if n in self.changed
                  else load(n) for n in self.names]
        write = gast.Assign([gast.Subscript(load(self.states), load(step), gast.Store())],
                            gast.Tuple(values, gast.Load()), None)
        asked = runtime_call(self.aliases, "checkpoint_keeps", [load(self.plan), load(step)])
        return gast.If(asked, [write], [])

    def restored(self, start):
        """``(h, ys) = states[start]``; ``ys = rt.state_copy(ys)`` for a name changed in place
        (the kept state may be restored again)."""
        if not self.names:
            return []
        unpack = gast.Assign([gast.Tuple([store(n) for n in self.names], gast.Store())],
                             gast.Subscript(load(self.states), load(start), gast.Load()), None)
        copies = [assign(n, runtime_call(self.aliases, "state_copy", [load(n)]))
                  for n in self.names if n in self.changed]
        return [unpack] + copies

    def dropped(self, iteration):
        """``states[iteration] = None``: the state on entry to a reversed step is not read again."""
        return gast.Assign([gast.Subscript(load(self.states), load(iteration), gast.Store())],
                           gast.Constant(None, None), None)


def _plain_steps(statements):
    """A copy of ``statements`` without the tape's pushes and pops: the steps as a plain run
    computes them."""
    return without_saves([clone(stmt) for stmt in statements])


def _assigned_once(statements):
    """Names ``statements`` assign at one place, outside any loop of theirs: a step runs again
    as a whole before its backward statements, so the value they read is the one the step
    computed, and the tape need not save the value it overwrote."""
    counts, in_loops = {}, set()
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
            elif isinstance(node, (gast.For, gast.While)):
                in_loops.update(n.id for n in walk(node)
                                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    return {name for name, count in counts.items() if count == 1} - in_loops


def _changed_in_place(statements):
    """Names ``statements`` write into (``y[i] = v``) or call a changing method on."""
    changed = (changed_in_place(node, _CHANGING_METHODS)
               for stmt in statements for node in walk(stmt))
    return {name for name in changed if name is not None}


def _call(name, *args):
    return gast.Call(gast.Name(name, gast.Load(), None, None), list(args), [])


def _item(sequence, index):
    return gast.Subscript(load(sequence), load(index), gast.Load())

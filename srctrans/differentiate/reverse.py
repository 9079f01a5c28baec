"""Reverse mode: split a normalised function into a forward and a backward pass.

Requires: a function in A-normal form with SSA names, and its active names
(``analyse.activity``).
Guarantees: :func:`reverse` returns two gast FunctionDefs,

  ``NAME_fwd(*params)`` -> ``(output, residuals)``
  ``NAME_bwd(residuals, d<output>)`` -> one cotangent per selected parameter

and the objects the generated code reads through closure names (the runtime,
NumPy, the forward and backward passes of called user functions). The
backward pass walks the statements in reverse; each active statement
contributes to the adjoints of its active operands through the rule registry
(rules users registered, custom-gradient functions and ``with st.grad_of``
blocks: :mod:`srctrans.differentiate.custom`). The first contribution to an
adjoint assigns it, later ones add to it. The
residuals are decided by the pipeline after optimisation, once it is known
which forward values the backward pass reads.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.checkpointing import CheckpointedLoops
from srctrans.differentiate.reverse_calls import ReverseCalls
from srctrans.differentiate.control import ControlFlow
from srctrans.differentiate.calls import Generator
from srctrans.differentiate.custom import CustomGradients, gradient_hooks
from srctrans.errors import UnsupportedSyntaxError
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS
from srctrans.nodes import (
    resolved_runtime_call, runtime_call, popped_from,
    appended_to, assign as _assign, clone, load as _load, parameter_names, store as _store)
from srctrans.parse.resolve import MISSING
from srctrans.rules import ATTRIBUTES, operator_primal
from srctrans.treewalk import walk


class ReverseResult:
    """What :func:`reverse` produces.

    Attributes:
      forward: list of forward-pass statements (the user's, with calls to user
        functions replaced by calls to their forward passes).
      backward: list of backward-pass statements.
      output: the Name (or Constant) the function returns.
      seed: the name of the output's adjoint (the backward pass's parameter).
      gradients: one expression per selected parameter (a Name, or None).
      closure: dict of closure name -> live object the generated code reads.
      prologue: forward statements to run first (the tape and placeholders).
      tape: the name of the tape, or None when nothing is saved.
    """

    def __init__(self):
        self.prologue = []
        self.tape = None
        self.forward = []
        self.backward = []
        self.output = None
        self.seed = None
        self.gradients = []
        self.closure = {}


def reverse(unit):
    """Generate the forward and backward statements of ``unit`` (a :class:`~srctrans.front_end.Unit`)."""
    return _Reverser(unit).run()


class _Reverser(ReverseCalls, ControlFlow, CheckpointedLoops, CustomGradients, Generator):
    def __init__(self, unit):
        self.unit = unit
        self.namer = unit.namer
        self.active = unit.active
        self.result = ReverseResult()
        self.initialised = set()
        self.aliases = {RUNTIME_ALIAS: unit.aliases[RUNTIME_ALIAS],
                        NUMPY_ALIAS: unit.aliases[NUMPY_ALIAS]}
        self._origin = None
        self._tape = None
        self.saved = set()          # names whose overwritten values the tape saves
        self.parameters = frozenset(parameter_names(unit.function))
        self.loop_depth = 0         # loops around the statement being differentiated

    # -- driver --------------------------------------------------------------
    def run(self):
        body = self.unit.function.body
        result = self.result
        for hook in gradient_hooks(self.unit.function):   # the user named these adjoints
            item = hook.items[0]
            self.namer.prefer_adjoint(item.context_expr.args[0].id, item.optional_vars.id)
        returned = body[-1]
        result.output = returned.value
        if isinstance(returned.value, gast.Name):
            result.seed = self.namer.adjoint(returned.value.id)
            if returned.value.id in self.active:
                self.initialised.add(result.seed)
        result.forward, result.backward = self._block(body[:-1], depth=0)
        self._report_missing_rules("reverse")
        result.prologue = self._prologue()
        result.tape = self._tape
        for name in self.unit.wrt:
            adjoint = self.namer.adjoint(name)
            result.gradients.append(adjoint if adjoint in self.initialised else None)
        return result

    # -- emission helpers ----------------------------------------------------
    def _emit(self, stmt):
        """Queue ``stmt`` in the adjoint block of the statement being differentiated."""
        anno.set_(stmt, Anno.ORIGIN, self._origin)
        self._pending.append(stmt)

    def _contribute(self, atom, expression):
        """Add ``expression`` to the adjoint of ``atom`` when ``atom`` is active; a list or
        tuple display gives each of its entries the matching entry of ``expression``."""
        if isinstance(atom, (gast.List, gast.Tuple)):
            if not self._carries_gradient(atom):
                return
            if not isinstance(expression, gast.Name):
                name = self.namer.temporary("d_entries")
                self._emit(_assign(name, expression))
                expression = _load(name)
            for j, element in enumerate(atom.elts):
                self._contribute(element, gast.Subscript(_load(expression.id),
                                                         gast.Constant(j, None), gast.Load()))
            return
        if not (isinstance(atom, gast.Name) and atom.id in self.active):
            return
        adjoint = self.namer.adjoint(atom.id)
        if adjoint in self.initialised:
            if atom.id in self.unit.array_valued:
                expression = gast.BinOp(_load(adjoint), gast.Add(), expression)
            else:                                  # may be a tuple: add entry by entry
                expression = runtime_call(self.aliases, "add", [_load(adjoint), expression])
        self.initialised.add(adjoint)
        self._emit(_assign(adjoint, expression))

    def _contribute_all(self, pairs, expression, what, length=None, shaped=False):
        """Give ``atom`` the ``index``-th entry of the sequence ``expression`` for each pair
        (an atom that is a list or tuple display gets each of its entries' parts).

        When ``expression`` has ``length`` entries, one per pair, all names, and every
        adjoint is fresh, it is unpacked straight into them (``dx, dW = ...``); with
        ``shaped`` (each entry has its atom's shape: a user function's cotangents) the
        assignment says whose cotangents they are (``Anno.COTANGENTS_OF``).
        """
        pairs = [(atom, index) for atom, index in pairs if self._carries_gradient(atom)]
        if not pairs:
            return
        if len(pairs) == length and all(isinstance(atom, gast.Name) for atom, _ in pairs):
            adjoints = [self.namer.adjoint(atom.id) for atom, _ in pairs]
            if len(set(adjoints)) == len(adjoints) and not self.initialised.intersection(adjoints):
                targets = gast.Tuple([_store(name) for name in adjoints], gast.Store())
                unpacking = gast.Assign([targets], expression, None)
                if shaped:
                    anno.set_(unpacking, Anno.COTANGENTS_OF, tuple(atom.id for atom, _ in pairs))
                self._emit(unpacking)
                self.initialised.update(adjoints)
                return
        if not isinstance(expression, gast.Name):
            name = self.namer.temporary(what)
            self._emit(_assign(name, expression))
            expression = _load(name)
        for atom, index in pairs:          # a list display's entry: _contribute splits it
            self._contribute(atom, gast.Subscript(_load(expression.id), gast.Constant(index, None),
                                                  gast.Load()))

    def _prologue(self):
        """Forward statements before everything: the tape, and placeholders for saved names.

        A name first assigned inside a loop has no old value to save on the
        first iteration, and one a branch assigns none when the branch does not
        run; ``None`` stands in for it.
        """
        placeholders = [self._saves(_assign(n, gast.Constant(None, None)), n)
                        for n in sorted(self.saved - self.parameters)]
        if self._tape is None:
            return placeholders
        return [_assign(self._tape, gast.List([], gast.Load()))] + placeholders

    # -- statements ----------------------------------------------------------
    def _simple(self, stmt, depth):
        """(forward statements, backward statements) of one simple statement."""
        self._pending = []
        replacement = None
        quiet = anno.get(stmt, Anno.NO_GRADIENT)        # from a stop_recording block
        if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Name) and stmt.value.id == stmt.targets[0].id):
            return [stmt], []            # x = x changes nothing: its adjoint passes unchanged
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            return self._subscript_write(stmt, quiet)
        appended = appended_to(stmt)
        if appended is not None:
            return self._append(stmt, *appended, quiet)
        if isinstance(stmt, gast.Expr):
            popped = popped_from(stmt.value)
            if popped is not None and popped[0].id in self.active:
                self._popped(None, popped[0].id, popped[1])     # a zero goes back on the list
                return [stmt], self._pending
        if isinstance(stmt, gast.Assign) and not quiet:   # a quiet one assigns a constant
            target = stmt.targets[0]
            popped = popped_from(stmt.value) if isinstance(target, gast.Name) else None
            if popped is not None and popped[0].id in self.active:
                self._popped(target.id, popped[0].id, popped[1])
            elif isinstance(target, gast.Name):
                if target.id in self.active:
                    replacement = self._assignment(target.id, stmt.value, stmt)
            else:
                self._unpacking(target, stmt.value)
        forward_stmt = replacement or self._copied_view(stmt) or stmt
        assigned = [n.id for t in getattr(forward_stmt, "targets", ()) for n in walk(t)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
        for name in assigned:                # an assignment ends the life of what it overwrote
            self.initialised.discard(self.namer.adjoint(name))
        return self._saving(forward_stmt, self._pending, assigned, depth)

    def _copied_view(self, stmt):
        """``t = y[i].copy()`` for ``t = y[i]`` when ``y`` is written into: the backward pass
        reads ``t`` after the write, which would change a view; None for other statements."""
        value = getattr(stmt, "value", None)
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
                and value.value.id in self.unit.written_arrays):
            return None
        # annotated with the helper: dead-code elimination drops the copy when nothing reads it
        copied = resolved_runtime_call(self.aliases, "copied", [clone(value)])
        return anno.copy(stmt, _assign(stmt.targets[0].id, copied))

    def _append(self, stmt, xs, value, quiet=False):
        """``xs.append(v)``: ``v`` gets the last entry of the list's cotangent, which loses it."""
        if xs not in self.unit.fresh_arrays:
            self._refuse_append(stmt, xs)
        adjoint = self.namer.adjoint(xs)
        constant = not self._carries_gradient(value)      # a name, or a display of names
        if adjoint not in self.initialised and xs in self.active:
            # nothing read the list after this append, but a read before it may: that read's
            # cotangent must have the list's length then, so the entry starts at zero and goes
            self._emit(_assign(adjoint, runtime_call(self.aliases, "zeros_like", [_load(xs)])))
            self.initialised.add(adjoint)
            constant = True
        if (quiet or constant) and adjoint in self.initialised:   # v is a constant: drop its entry
            split = runtime_call(self.aliases, "last_and_rest", [_load(adjoint)])
            self._emit(_assign(adjoint, gast.Subscript(split, gast.Constant(1, None), gast.Load())))
        elif adjoint in self.initialised and not constant:
            last = self.namer.temporary("d" + xs + "_last")
            split = runtime_call(self.aliases, "last_and_rest", [_load(adjoint)])
            self._emit(gast.Assign([gast.Tuple([_store(last), _store(adjoint)], gast.Store())],
                                   split, None))
            self._contribute(value, _load(last))
        return [stmt], self._pending

    def _popped(self, target, xs, count):
        """``v = xs.pop()`` (or ``rt.pop_many(xs, n)``): ``dv`` goes back on the end of ``dxs``.

        The appends that filled ``xs`` come earlier, so their adjoints, later in
        the backward pass, take their entries off the end again. A value whose
        adjoint is not there takes a zero, so the entries stay aligned.
        """
        list_adjoint = self.namer.adjoint(xs)
        if target is None:                         # a value popped and dropped: its cotangent is 0
            value = gast.Constant(0.0, None) if count is None else gast.BinOp(
                gast.List([gast.Constant(0.0, None)], gast.Load()), gast.Mult(), clone(count))
        else:
            adjoint = self.namer.adjoint(target)
            value = _load(adjoint) if adjoint in self.initialised else \
                runtime_call(self.aliases, "zeros_like", [_load(target)])
        before = _load(list_adjoint) if list_adjoint in self.initialised else gast.List([], gast.Load())
        pushed = "pushed" if count is None else "pushed_many"
        self._emit(_assign(list_adjoint, runtime_call(self.aliases, pushed, [before, value])))
        self.initialised.add(list_adjoint)

    def _subscript_write(self, stmt, quiet=False):
        """``y[index] = v``: ``v`` gets ``dy[index]``, and the overwritten part of ``y`` none.

        The values overwritten are saved before the write and put back (in a
        copy) after its adjoint, wherever the write is: the backward pass may
        read ``y`` as it was before. A ``quiet`` write (in a stop_recording
        block) gives ``v`` nothing.
        """
        target, value = stmt.targets[0], stmt.value
        array = target.value.id
        if array not in self.unit.fresh_arrays:
            self._fail(stmt, UnsupportedSyntaxError,
                       f"writing into `{array}`, which may be (a view of) an argument",
                       f"write into a copy: {array} = {array}.copy() (or np.zeros_like(...)) first")
        index = self._index(target.slice)
        adjoint = self.namer.adjoint(array)
        is_dict = array in self.unit.dict_valued
        if adjoint in self.initialised:
            if is_dict:
                written = runtime_call(self.aliases, "entry_cotangent",
                                        [_load(adjoint), clone(index), value])
                rest = runtime_call(self.aliases, "without_entry", [_load(adjoint), clone(index)])
                if not quiet:
                    self._contribute(value, written)
            else:
                if _basic_index(target.slice):
                    written = gast.Subscript(_load(adjoint), clone(target.slice), gast.Load())
                else:       # an integer array may repeat a position: NumPy keeps one write
                    written = runtime_call(self.aliases, "written_part", [_load(adjoint), clone(index)])
                rest = runtime_call(self.aliases, "zero_at", [_load(adjoint), clone(index)])
                if not quiet:
                    self._contribute(value, runtime_call(self.aliases, "unbroadcast",
                                                          [written, value]))
            self._emit(_assign(adjoint, rest))
        saving, restoring = ("saved_entry", "restored_entry") if is_dict else ("saved_at", "restored_at")
        save = gast.Expr(gast.Call(gast.Attribute(_load(self.tape), "append", gast.Load()),
                                   [runtime_call(self.aliases, saving, [_load(array), index])], []))
        old = gast.Call(gast.Attribute(_load(self.tape), "pop", gast.Load()), [], [])
        restore = _assign(array, runtime_call(self.aliases, restoring,
                                               [_load(array), clone(index), old]))
        after = [self._saves(restore, array)]
        if not is_dict and adjoint in self.initialised and array not in self.unit.array_valued:
            # a list's entry may change shape with the write: its zero takes the old one's
            after.append(_assign(adjoint, runtime_call(
                self.aliases, "entry_zero_like", [_load(adjoint), clone(index), _load(array)])))
        return [self._saves(save, array), stmt], self._pending + after

    def _assignment(self, target, value, stmt):
        adjoint = self.namer.adjoint(target)
        if adjoint not in self.initialised:
            return None                                   # nothing flows back from here
        g = _load(adjoint)
        ans = _load(target)
        if isinstance(value, gast.Name):
            self._contribute(value, g)
        elif isinstance(value, gast.BinOp):
            self._rule(operator_primal(value.op), [value.left, value.right], {}, g, ans, value)
        elif isinstance(value, gast.UnaryOp):
            self._rule(operator_primal(value.op), [value.operand], {}, g, ans, value)
        elif isinstance(value, gast.Call):
            return self._call(target, value, g, ans, stmt)
        elif isinstance(value, gast.Attribute):
            primal = ATTRIBUTES.get(value.attr, MISSING)
            if primal is MISSING:                         # a field of a named tuple or dataclass
                self._contribute(value.value, runtime_call(
                    self.aliases, "getattr_grad", [g, value.value, gast.Constant(value.attr, None)]))
            else:
                self._rule(primal, [value.value], {}, g, ans, value)
        elif isinstance(value, gast.Subscript):
            self._contribute(value.value, runtime_call(self.aliases, "getitem_grad",
                                                        [g, value.value, self._index(value.slice)]))
            return self._copied_view(stmt)
        elif isinstance(value, (gast.Tuple, gast.List)):
            for index, element in enumerate(value.elts):
                self._contribute(element, gast.Subscript(g, gast.Constant(index, None), gast.Load()))
        elif isinstance(value, gast.Dict):
            for key, element in zip(value.keys, value.values):
                self._contribute(element, gast.Subscript(g, clone(key), gast.Load()))
        return None

    def _unpacking(self, target, source):
        names = [element.id for element in target.elts]
        if not any(self.namer.adjoint(n) in self.initialised for n in names):
            return
        parts = [_load(self.namer.adjoint(n)) if self.namer.adjoint(n) in self.initialised
                 else runtime_call(self.aliases, "zeros_like", [_load(n)]) for n in names]
        self._contribute(source, gast.Tuple(parts, gast.Load()))

    # -- calls ---------------------------------------------------------------
    def _index(self, index):
        """A Load expression equal to the subscript ``index`` (slices via ``np.s_``)."""
        if any(isinstance(n, gast.Slice) for n in walk(index)):
            return gast.Subscript(gast.Attribute(_load(self.aliases[NUMPY_ALIAS]), "s_", gast.Load()),
                                  index, gast.Load())
        return index


def _basic_index(index):
    """Whether ``index`` certainly selects each position once (int constants, slices, ``...``)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return all(_basic_part(part.operand if isinstance(part, gast.UnaryOp) else part)
               for part in parts)


def _basic_part(part):
    return isinstance(part, gast.Slice) or isinstance(part, gast.Constant) and (
        part.value is Ellipsis or part.value is None or type(part.value) is int)

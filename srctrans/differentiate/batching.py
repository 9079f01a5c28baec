"""Batching: a function that runs on a whole batch of its arguments at once (``st.vmap``).

Requires: a function in A-normal form with SSA names (the passes up to
``ssa``), the names of its batched parameters and the per-example ranks of
its array parameters (None where unknown).
Guarantees: :func:`batch` returns the statements of

  ``NAME_vmap(*params)`` -> the output, batched (or not, as ``flags`` says)

where each batched parameter holds its members along axis 0 and every value
computed from one is batched the same way; values that depend on no batched
argument are computed once, as the function computes them. Each operation
becomes its batched form by the rules of ``differentiate.batching_rules``; a call no rule
covers runs once per member (``rt.batch.loop``) and is listed in
``BatchResult.loops`` so that the caller can warn. An ``if`` on a batched value
runs both branches and selects each name it assigns per member; a ``while`` on
one runs until every member is done, the members that are done keeping their
values. A construct whose batching would need control flow per member (a write
into an array or a call for its effect under such an ``if``, a loop over a
batched count, a write at a batched index) raises :class:`Unbatchable`: the
caller then runs the whole function once per member.

Which names are batched (their *flags*) is ``differentiate.batched_names``'s
analysis, their per-example ranks ``differentiate.batched_ranks``'s.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.differentiate.calls import Generator
from srctrans.errors import UnsupportedSyntaxError
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS
from srctrans.runtime.custom import CustomGradient
from srctrans.nodes import (
    assign, clone, int_literal, load, parameter_names, substitute_names)
from srctrans.differentiate.batched_calls import BatchedCalls
from srctrans.differentiate.batched_control import BatchedControl
from srctrans.differentiate.batching_rules import helpers
from srctrans.differentiate import batching_rules as rules
from srctrans.differentiate.batched_names import (
    TYPE_TESTS, Unbatchable, assigned_in, batched_in_turn, batched_names,
    bound_parameters, callee_flags, definitely_assigned, flag_of, truthy)
from srctrans.differentiate.batched_ranks import (
    FILLED, bound_ranks, indexed_rank, rank_of, ranks_of)
from srctrans.differentiate.batching_rules.calls import flag_node
from srctrans.treewalk import walk


class BatchResult:
    """What :func:`batch` produces.

    Attributes:
      body: the statements of the batched function, its return included.
      output_flag: the flag of the returned value.
      closure: closure name -> object the generated code reads (batched callees).
      loops: ``(what, location)`` of each call run once per member.
      selects: whether it (or a batched function it calls) runs both branches of an ``if``
        (or more steps of a ``while``) than some members do, so that code a member never
        runs may raise.
    """

    def __init__(self):
        self.body = []
        self.output_flag = False
        self.closure = {}
        self.loops = []
        self.selects = False


def batch(unit, flags, ranks, build_callee, all_batched=False, callee_flag=None,
          callee_rank=None):
    """The batched statements of ``unit``'s function.

    ``flags``: parameter name -> True for each batched parameter. ``ranks``: parameter ->
    per-example rank. ``build_callee(fn, flags, ranks)`` returns the batched
    function of a called user function (whose outputs are all batched) or raises
    :class:`Unbatchable`. ``all_batched``: the output's arrays are all batched (a callee's).
    """
    for node in walk(unit.function):
        callee = anno.get(node, Anno.CALLEE) if isinstance(node, gast.Call) else None
        if isinstance(getattr(callee, "__self__", None), CustomGradient):
            raise Unbatchable(
                f"a function of st.custom_gradient ({callee.__self__.__name__}), whose backward "
                f"function is a closure made at run time (to have it batched, give the function "
                f"its rule with st.register_vjp and a rule written with `def`)", node)
        if callee is not None and rules.is_random(callee):
            raise UnsupportedSyntaxError(
                f"a random draw ({getattr(callee, '__qualname__', callee)}) under st.vmap",
                unit.parsed.location(node),
                "draw the random numbers outside the function and pass them in as a batched "
                "argument (in_axes=0), so that each member gets its own")
        if callee is runtime.unseen_callee:
            # a call through a value: derivatives learn its kinds run by run; batching does not
            raise Unbatchable("a call through a value (an object or a function passed in)", node)
    names = batched_names(unit.function, flags, callee_flag, unit.dict_valued)
    known = ranks_of(unit.function, ranks, rank_oracle(callee_rank, names))
    return _Batcher(unit, names, known, build_callee, all_batched).run()


def rank_oracle(callee_rank, flags):
    """``(call, ranks) -> rank`` for ``ranks_of``: the output rank ``callee_rank(fn, flags,
    ranks)`` gives for a call of a function batched in turn (None where it cannot tell),
    or None without ``callee_rank``."""
    if callee_rank is None:
        return None

    def rank(call, ranks):
        callee = anno.get(call, Anno.CALLEE)
        if not batched_in_turn(callee):
            return None
        bound = bound_parameters(callee, call.args, {k.arg: k.value for k in call.keywords})
        if bound is None:
            return None
        return callee_rank(callee, callee_flags(bound, lambda node: flag_of(node, flags)),
                           bound_ranks(bound, ranks))
    return rank


# -- the rewriting -----------------------------------------------------------------

class _Batcher(BatchedControl, BatchedCalls, Generator):
    def __init__(self, unit, flags, ranks, build_callee, all_batched):
        self.unit = unit
        self.namer = unit.namer
        self.flags = flags
        self.ranks = ranks
        self.build_callee = build_callee
        self.all_batched = all_batched
        self.aliases = {RUNTIME_ALIAS: unit.aliases[RUNTIME_ALIAS],
                        NUMPY_ALIAS: unit.aliases[NUMPY_ALIAS]}
        self.result = BatchResult()
        self.size = unit.namer.fresh("_batch")
        self.size_used = False
        self.line = None                     # the user's line of the statement being batched
        self.defined = set(parameter_names(unit.function))   # names assigned on every path
        self.maybe = set(self.defined)                       # ... and on some

    def run(self):
        body = self._block(self.unit.function.body)
        if self.size_used:
            body.insert(0, self._size_statement())
        self.result.body = body
        return self.result

    # -- helpers ---------------------------------------------------------------
    def flag(self, node):
        return flag_of(node, self.flags)

    def rank(self, node):
        return rank_of(node, self.ranks)

    def expression(self, text, **nodes):
        """The expression ``text`` with ``np``/``rt`` mapped to the generated module's aliases
        and each capitalised placeholder replaced by a copy of its node."""
        parsed = gast.parse(text, mode="eval").body
        renaming = {"np": load(self.aliases[NUMPY_ALIAS]), "rt": load(self.aliases[RUNTIME_ALIAS])}
        renaming.update(nodes)
        return substitute_names(parsed, renaming)

    def batch_size(self):
        self.size_used = True
        return load(self.size)

    def _size_statement(self):
        params = [p for p in parameter_names(self.unit.function) if truthy(self.flags.get(p))]
        first = params[0]
        if isinstance(self.ranks.get(first), int):
            return assign(self.size, self.expression("X.shape[0]", X=load(first)))
        values = gast.Tuple([load(p) for p in params], gast.Load())
        flags = gast.Tuple([flag_node(self.flags.get(p)) for p in params], gast.Load())
        return assign(self.size, self.expression("rt.batch.size_of(V, F)", V=values, F=flags))

    def conformed(self, value, have, want):
        """``value`` (of flag ``have``) as a value of flag ``want``: unbatched parts spread."""
        if have == want or not truthy(want) or have is True or \
                isinstance(value, gast.Constant) and value.value is None:
            return value                    # (None: a name not assigned yet, in every member)
        if have is False and want is True:
            filled = self._filled(value)
            if filled is not None:
                return filled
            return self.expression("rt.batch.spread(V, B)", V=value, B=self.batch_size())
        if isinstance(value, (gast.Tuple, gast.List)) and isinstance(have, tuple):
            parts = want if isinstance(want, tuple) else (want,) * len(value.elts)
            return type(value)([self.conformed(e, h, w) for e, h, w in
                                zip(value.elts, have, parts)], gast.Load())
        return self.expression("rt.batch.conformed(V, H, W, B)", V=value, H=flag_node(have),
                               W=flag_node(want), B=self.batch_size())

    def _filled(self, value):
        """``np.zeros((B,) + shape)`` for ``np.zeros(shape)`` (and ``ones``, ``empty``,
        ``full``) or a number, spread over the batch: made batched from the start."""
        if isinstance(value, gast.Constant) and type(value.value) in (int, float):
            return self.expression("np.full(B, V)", B=self.batch_size(), V=value)
        callee = anno.get(value, Anno.CALLEE) if isinstance(value, gast.Call) else None
        if callee not in FILLED or not value.args or any(
                k.arg not in ("dtype", "fill_value") for k in value.keywords):
            return None
        shape = value.args[0]
        if isinstance(shape, gast.Tuple):
            sized = gast.Tuple([self.batch_size()] + [clone(e) for e in shape.elts], gast.Load())
        elif int_literal(shape) is not None or rank_of(shape, self.ranks) == 0:
            sized = gast.Tuple([self.batch_size(), clone(shape)], gast.Load())
        else:
            return None
        return gast.Call(clone(value.func), [sized] + [clone(a) for a in value.args[1:]],
                         [clone(k) for k in value.keywords])

    # -- blocks ----------------------------------------------------------------
    def _block(self, statements):
        out = []
        for stmt in statements:
            origin = anno.get(stmt, Anno.ORIGIN)
            self.line = origin.lineno if origin is not None else getattr(stmt, "lineno", None)
            if isinstance(stmt, (gast.If, gast.While)) and truthy(self.flag(stmt.test)):
                out.extend(self._selected(stmt) if isinstance(stmt, gast.If) else
                           self._masked(stmt))
                self.defined.update(assigned_in([stmt]))
                self.maybe.update(assigned_in([stmt]))
                continue
            if isinstance(stmt, gast.If):
                out.append(anno.copy(stmt, gast.If(stmt.test, self._block(stmt.body) or [gast.Pass()],
                                                   self._block(stmt.orelse))))
            elif isinstance(stmt, gast.For):
                out.append(anno.copy(stmt, gast.For(stmt.target, self.batched(stmt.iter),
                                                    self._block(stmt.body) or [gast.Pass()], [], None)))
            elif isinstance(stmt, gast.While):
                out.append(anno.copy(stmt, gast.While(stmt.test, self._block(stmt.body), [])))
            elif isinstance(stmt, gast.Assign):
                out.extend(self._assign(stmt))
            elif isinstance(stmt, gast.Return):
                value = stmt.value
                flag = self.flag(value) if value is not None else False
                if self.all_batched and value is not None:
                    value = self.conformed(self.batched(value), flag, True)
                    flag = True
                elif value is not None:
                    value = self.batched(value)
                self.result.output_flag = flag
                out.append(anno.copy(stmt, gast.Return(value)))
            elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
                out.append(anno.copy(stmt, gast.Expr(self._call_statement(stmt.value))))
            else:
                out.append(stmt)
            self.defined.update(definitely_assigned([stmt]))
            self.maybe.update(assigned_in([stmt]))
        return out

    def _assign(self, stmt):
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, gast.Name):
            have = self.flag(value)
            want = self.flags.get(target.id, False)
            new = self.conformed(self.batched(value), have, want)
            return [anno.copy(stmt, gast.Assign([target], new, None))]
        if isinstance(target, (gast.Tuple, gast.List)):
            have = self.flag(value)
            out = [anno.copy(stmt, gast.Assign([target], self.batched(value), None))]
            for position, element in enumerate(target.elts):
                part = have[position] if isinstance(have, tuple) else truthy(have)
                want = self.flags.get(element.id, False)
                if part != want:
                    out.append(assign(element.id, self.conformed(load(element.id), part, want)))
            return out
        if isinstance(target, gast.Subscript):
            return [anno.copy(stmt, self._write(target, value))]
        return [stmt]

    def _write(self, target, value):
        """``x[key] = value``."""
        array = target.value
        have = self.flag(value)
        if not truthy(self.flag(array)):
            return gast.Assign([target], value, None)
        whole = self.flags.get(array.id) if isinstance(array, gast.Name) else True
        if whole is not True:                            # a container display's entry
            return gast.Assign([target], value, None)
        rank = self.rank(array)
        if rank is not None and static_key(target.slice, self.ranks):
            target_rank = indexed_rank(rank, target.slice, self.ranks)
            value_rank = self.rank(value)
            if truthy(have) and (target_rank is None or value_rank is None):
                return self._helper_write(array, target.slice, value, have)
            if truthy(have):
                value = rules.lift(value, target_rank - value_rank)
            key = _batched_key(target.slice)
            return gast.Assign([gast.Subscript(clone(array), key, gast.Store())], value, None)
        return self._helper_write(array, target.slice, value, have)

    def _helper_write(self, array, key, value, have):
        call = self.expression("rt.batch.setitem(X, K, V, F)", X=array, K=_key_value(key), V=value,
                               F=gast.Constant(truthy(have), None))
        return gast.Expr(call)

    def _call_statement(self, call):
        """An effect: ``xs.append(v)`` (``v`` spread when ``xs`` is batched and it is not)."""
        func = call.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.attr in ("append", "insert") and truthy(self.flags.get(func.value.id)):
            args = list(call.args)
            args[-1] = self.conformed(args[-1], self.flag(args[-1]), True)
            return gast.Call(func, args, call.keywords)
        if anno.get(call, Anno.CALLEE) in helpers.CHECKS:
            return call                     # a check of the dtype or the library: of all at once
        if any(truthy(self.flag(a)) for a in call.args):
            raise Unbatchable("a call made for its effect on batched values", call)
        return call

    # -- expressions ---------------------------------------------------------------
    def batched(self, node):
        """The batched form of the ANF expression ``node``."""
        if isinstance(node, (gast.Name, gast.Constant)):
            return node
        if not any(truthy(self.flags.get(n.id, False)) for n in walk(node)
                   if isinstance(n, gast.Name)):
            return node
        if isinstance(node, gast.Call) and any(anno.get(node, Anno.CALLEE) is t for t in TYPE_TESTS):
            return node                                  # isinstance(x, ...): per member the same
        if isinstance(node, gast.BinOp):
            if isinstance(node.op, gast.MatMult):
                return rules.matmul(self._call_of(np.matmul, None, [node.left, node.right], {}),
                                    node.left, node.right)
            left, right = rules.aligned(self._call_of(None, None, [], {}), [node.left, node.right])
            return gast.BinOp(left, node.op, right)
        if isinstance(node, gast.Compare) and len(node.ops) == 1:
            left, right = rules.aligned(self._call_of(None, None, [], {}),
                                        [node.left, node.comparators[0]])
            if isinstance(node.ops[0], (gast.Is, gast.IsNot, gast.In, gast.NotIn)):
                raise Unbatchable("an identity or membership test of a batched value", node)
            return gast.Compare(left, node.ops, [right])
        if isinstance(node, gast.UnaryOp):
            if isinstance(node.op, gast.Not):
                return self.expression("np.logical_not(X)", X=node.operand)
            return node
        if isinstance(node, gast.BoolOp):          # `a and b` is `b if a else a`, as Python's
            text = "np.where(A, B, A)" if isinstance(node.op, gast.And) else "np.where(A, A, B)"
            out = node.values[0]
            for value in node.values[1:]:
                left, right = rules.aligned(self._call_of(None, None, [], {}), [out, value])
                out = self.expression(text, A=left, B=right)
            return out
        if isinstance(node, gast.IfExp):
            if truthy(self.flag(node.test)):
                parts = rules.aligned(self._call_of(None, None, [], {}),
                                      [node.test, node.body, node.orelse])
                return self.expression("np.where(C, A, B)", C=parts[0], A=parts[1], B=parts[2])
            return node
        if isinstance(node, gast.Attribute):
            return self._attribute(node)
        if isinstance(node, gast.Subscript):
            return self._read(node)
        if isinstance(node, (gast.Tuple, gast.List, gast.Dict)):
            return node
        if isinstance(node, gast.Call):
            return self._call(node)
        raise Unbatchable(f"a `{type(node).__name__}` expression of a batched value", node)

    def _call_of(self, callee, func, args, keywords):
        return rules.Call(callee, func, args, keywords, self.flag, self.rank, self.expression,
                          self.batch_size)

    def _attribute(self, node):
        x = node.value
        if node.attr == "T":
            return rules.transpose(self._call_of(np.transpose, None, [x], {}))
        if node.attr == "shape":
            return self.expression("X.shape[1:]", X=x)
        if node.attr == "ndim":
            return self.expression("X.ndim - 1", X=x)
        if node.attr == "size":
            return self.expression("X.size // X.shape[0]", X=x)
        if node.attr in ("dtype", "itemsize", "real", "imag"):
            return node
        raise Unbatchable(f"the attribute `.{node.attr}` of a batched value", node)

    def _read(self, node):
        x, key = node.value, node.slice
        x_flag, key_flag = self.flag(x), truthy(self.flag(key))
        if isinstance(x_flag, tuple) and (key_flag or int_literal(key) is None) and \
                not isinstance(key, gast.Slice):
            # an entry of a list whose entries differ, at a position not written out: batched
            return self.expression("rt.batch.entry(X, K, F, KF, B)", X=x, K=key,
                                   F=flag_node(x_flag), KF=gast.Constant(key_flag, None),
                                   B=self.batch_size())
        if isinstance(x_flag, tuple) or (x_flag is True and not key_flag
                                         and self._is_container(x)):
            return node                                      # an entry of a container
        if not key_flag:
            if self.rank(x) is not None and static_key(key, self.ranks):
                return gast.Subscript(clone(x), _batched_key(key), gast.Load())
            return self.expression("rt.batch.getitem(X, K)", X=x, K=_key_value(key))
        if isinstance(key, gast.Tuple):
            raise Unbatchable("a subscript with batched indices among several", node)
        return self.expression("rt.batch.take(X, K, F)", X=x, K=key,
                               F=gast.Constant(truthy(x_flag), None))

    def _is_container(self, node):
        return isinstance(node, gast.Name) and node.id in self.unit.dict_valued




def static_key(key, ranks):
    """Whether the batched form of the subscript ``key`` is ``key`` after a ``:``: its parts
    are slices (their bounds are unbatched ints), literal ints, None, Ellipsis, or names of
    ints (a name of unknown value may hold a tuple or an array: not static)."""
    parts = key.elts if isinstance(key, gast.Tuple) else [key]
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and (part.value is None or part.value is Ellipsis
                                                or isinstance(part.value, int)):
            continue
        if isinstance(part, gast.Name) and ranks.get(part.id) == 0:
            continue
        return False
    return True


def _batched_key(key):
    parts = list(key.elts) if isinstance(key, gast.Tuple) else [key]
    return gast.Tuple([gast.Slice(None, None, None)] + [clone(p) for p in parts], gast.Load())


def _key_value(key):
    """A subscript as a value: slices become ``slice(...)`` calls."""
    if isinstance(key, gast.Slice):
        parts = [p if p is not None else gast.Constant(None, None)
                 for p in (key.lower, key.upper, key.step)]
        return gast.Call(gast.Name("slice", gast.Load(), None, None), parts, [])
    if isinstance(key, gast.Tuple):
        return gast.Tuple([_key_value(p) for p in key.elts], gast.Load())
    return key


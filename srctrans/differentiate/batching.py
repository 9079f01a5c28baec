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
``BatchResult.loops`` so that the caller can warn. A construct whose batching
would change the control flow per member (an ``if`` or ``while`` on a batched
value, a loop over a batched count, a write at a batched index) raises
:class:`Unbatchable`: the caller then runs the whole function once per member.

Names: a name's *flag* is False (unbatched), True (batched: an array with the
batch axis first, or a container whose arrays all have it) or a tuple of
flags (a tuple or list display whose entries differ).
"""

import functools
import inspect
import types

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.differentiate.calls import Generator, is_library, resolve_call
from srctrans.errors import UnsupportedSyntaxError
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS
from srctrans.optimise.specialise import REDUCTION_METHODS, RESULT_SHAPE_OF_ARGUMENT
from srctrans.nodes import (
    assign, clone, in_runtime, int_literal, load, parameter_names, substitute_names)
from srctrans.differentiate import batching_helpers as helpers
from srctrans.differentiate import batching_rules as rules
from srctrans.treewalk import walk

_QUERIES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
_TYPE_TESTS = (isinstance, type, callable, id)
_FILLED = (np.zeros, np.ones, np.empty, np.full)
# methods of an array whose batched call is the same call when only the array is batched
_SAME_METHODS = frozenset({"astype", "copy", "conj", "conjugate"})


class Unbatchable(Exception):
    """A construct whose batched form would need control flow per member."""

    def __init__(self, what, node):
        super().__init__(what)
        self.what = what
        self.node = node


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


def batch(unit, flags, ranks, build_callee, all_batched=False, callee_flag=None):
    """The batched statements of ``unit``'s function.

    ``flags``: parameter name -> True for each batched parameter. ``ranks``: parameter ->
    per-example rank. ``build_callee(fn, flags, ranks)`` returns the batched
    function of a called user function (whose outputs are all batched) or raises
    :class:`Unbatchable`. ``all_batched``: the output's arrays are all batched (a callee's).
    """
    for node in walk(unit.function):
        callee = anno.get(node, Anno.CALLEE) if isinstance(node, gast.Call) else None
        if callee is not None and rules.is_random(callee):
            raise UnsupportedSyntaxError(
                f"a random draw ({getattr(callee, '__qualname__', callee)}) under st.vmap",
                unit.parsed.location(node),
                "draw the random numbers outside the function and pass them in as a batched "
                "argument (in_axes=0), so that each member gets its own")
        if callee is runtime.unseen_callee:
            # a call through a value: derivatives learn its kinds run by run; batching does not
            raise Unbatchable("a call through a value (an object or a function passed in)", node)
    names = batched_names(unit.function, flags, callee_flag)
    known = ranks_of(unit.function, ranks)
    return _Batcher(unit, names, known, build_callee, all_batched).run()


# -- which names are batched ------------------------------------------------------

def truthy(flag):
    return flag is True or isinstance(flag, tuple) and any(truthy(f) for f in flag)


def join(a, b):
    if a == b:
        return a
    if a is False:
        return b
    if b is False:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(join(x, y) for x, y in zip(a, b))
    return True


def is_query(node):
    """A read of a value's shape, rank, size or type: per member the same, so unbatched."""
    if isinstance(node, gast.Attribute) and node.attr in _QUERIES:
        return True
    if isinstance(node, gast.Call):
        callee = anno.get(node, Anno.CALLEE)
        if callee in (np.shape, np.ndim, np.size, len) or any(callee is t for t in _TYPE_TESTS):
            return True
        if callee in rules.DTYPE_QUERIES:
            return True
        if callee is getattr and len(node.args) >= 2 and isinstance(node.args[1], gast.Constant) \
                and node.args[1].value in _QUERIES:
            return True
    return False


class Flags(dict):
    """name -> flag, with ``calls``: ``call node -> flag`` of the calls whose output flag the
    called function's own analysis gives (None for the others: batched if any argument is)."""

    calls = None


def flag_of(node, flags):
    """The flag of the value of the expression ``node``."""
    if isinstance(node, gast.Name):
        return flags.get(node.id, False)
    if isinstance(node, gast.Constant) or is_query(node):
        return False
    if isinstance(node, gast.Call) and getattr(flags, "calls", None) is not None:
        found = flags.calls(node, flags)
        if found is not None:
            return found
    if isinstance(node, (gast.Tuple, gast.List)):
        parts = tuple(flag_of(e, flags) for e in node.elts)
        return parts if any(truthy(p) for p in parts) else False
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
        whole = flags.get(node.value.id, False)
        position = int_literal(node.slice)
        if isinstance(whole, tuple) and position is not None and -len(whole) <= position < len(whole):
            return whole[position]
    reads = [n for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]
    return any(truthy(flags.get(n.id, False)) for n in reads)


def batched_names(function, params, callee_flag=None):
    """name -> flag for every name of ``function`` that holds a batched value, from the
    batched parameters ``params``; raises :class:`Unbatchable` for a ``for`` loop over a
    batched value. A fixed point: the loop ends when a pass changes no flag.

    ``callee_flag(fn, flags)``, when given, is the output flag of a function of the user's
    (or a runtime helper without a batching rule) called with parameters batched as
    ``flags`` say, or None when unknown: a helper that returns a value the same for every
    member (a shape, a mode) makes it unbatched, not batched for its batched arguments."""
    flags = Flags(params)
    if callee_flag is not None:
        flags.calls = functools.partial(_callee_flag, callee_flag)

    def note(name, flag):
        joined = join(flags.get(name, False), flag)
        if joined != flags.get(name, False):
            flags[name] = joined
            return True
        return False

    def visit(block):
        changed = False
        for stmt in block:
            if isinstance(stmt, (gast.If, gast.While)):
                changed |= visit(stmt.body) | visit(stmt.orelse)
                if truthy(flag_of(stmt.test, flags)):         # selected per member: batched
                    for name in assigned_in(stmt.body + stmt.orelse):
                        changed |= note(name, True)
            elif isinstance(stmt, gast.For):
                if truthy(flag_of(stmt.iter, flags)):
                    raise Unbatchable("a `for` loop over a batched value", stmt)
                changed |= visit(stmt.body)
            elif isinstance(stmt, gast.Assign):
                changed |= _note_assign(stmt, flags, note)
            elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
                changed |= _note_call_statement(stmt.value, flags, note)
        return changed

    while visit(function.body):
        pass
    return flags


def batched_in_turn(callee):
    """Whether a call of ``callee`` runs its own batched form: a Python function of the
    user's or a runtime helper differentiated through, with no batching rule."""
    if not isinstance(callee, (types.FunctionType, types.MethodType)) or is_library(callee):
        return False
    module = getattr(callee, "__module__", None) or ""
    if module.startswith("srctrans.") and not in_runtime(callee):
        return False                        # st.jvp(g, ...): a derivative's own code, resolved
    return not rules.has_rule(callee) and not helpers.has_rule(callee)


def callee_flags(callee, args, keywords, flag):
    """parameter -> whether it is batched, for a call of ``callee`` (``flag(node)`` of each
    argument), or None when the call does not bind to its signature."""
    try:
        bound = inspect.signature(callee).bind(*args, **keywords).arguments
    except (TypeError, ValueError):
        return None
    if any(isinstance(a, gast.Starred) for a in args):
        return None
    return {name: truthy(flag(node)) for name, node in bound.items() if isinstance(node, gast.AST)}


def _callee_flag(callee_flag, call, flags):
    callee = anno.get(call, Anno.CALLEE)
    if not batched_in_turn(callee):
        return None
    params = callee_flags(callee, call.args, {k.arg: k.value for k in call.keywords},
                          lambda node: flag_of(node, flags))
    return None if params is None else callee_flag(callee, params)


def assigned_in(block):
    """The names the statements of ``block`` assign, in nested blocks too, in order."""
    names = []
    for node in (n for stmt in block for n in walk(stmt)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) \
                and node.id not in names:
            names.append(node.id)
    return names


def _read_before_assigned(block, assigned=frozenset()):
    """The names a pass through ``block`` may read before it assigns them (``assigned``:
    the names assigned already), through nested blocks too."""
    assigned, read = set(assigned), []

    def loads(node):
        return [n.id for n in walk(node) if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Load) and n.id not in assigned]
    for stmt in block:
        if isinstance(stmt, gast.Assign):
            read += loads(stmt.value) + [n for t in stmt.targets if not isinstance(t, gast.Name)
                                         for n in loads(t)]
            assigned.update(assigned_in([stmt]))
        elif isinstance(stmt, gast.If):
            read += loads(stmt.test) + _read_before_assigned(stmt.body, assigned) + \
                _read_before_assigned(stmt.orelse, assigned)
            assigned |= definitely_assigned([stmt])
        elif isinstance(stmt, (gast.For, gast.While)):
            read += loads(stmt.iter if isinstance(stmt, gast.For) else stmt.test)
            read += _read_before_assigned(stmt.body, assigned)
        else:
            read += loads(stmt)
    return read


def definitely_assigned(block):
    """The names ``block`` assigns on every path through it (an ``if``'s: both branches')."""
    names = set()
    for stmt in block:
        if isinstance(stmt, gast.Assign):
            names.update(assigned_in([stmt]))
        elif isinstance(stmt, gast.If):
            names |= definitely_assigned(stmt.body) & definitely_assigned(stmt.orelse)
    return names


def _note_assign(stmt, flags, note):
    target, value = stmt.targets[0], stmt.value
    flag = flag_of(value, flags)
    if isinstance(target, gast.Name):
        return note(target.id, flag)
    if isinstance(target, (gast.Tuple, gast.List)):
        changed = False
        for position, element in enumerate(target.elts):
            part = flag[position] if isinstance(flag, tuple) and position < len(flag) else truthy(flag)
            changed |= note(element.id, part)
        return changed
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
        if truthy(flag_of(target.slice, flags)):
            raise Unbatchable("a write at a batched index", stmt)
        return note(target.value.id, truthy(flag))
    return False


def _note_call_statement(call, flags, note):
    """``xs.append(v)`` makes ``xs`` batched when ``v`` is."""
    if isinstance(call.func, gast.Attribute) and isinstance(call.func.value, gast.Name) \
            and call.func.attr in ("append", "extend", "insert"):
        return note(call.func.value.id, any(truthy(flag_of(a, flags)) for a in call.args))
    return False


# -- per-example ranks ------------------------------------------------------------

_RANK_KEEPING = frozenset({np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy,
                           np.transpose, np.sort, np.cumsum, np.cumprod, np.flip, np.clip,
                           np.real, np.imag, np.conj})


def ranks_of(function, ranks):
    """name -> per-example rank of the array names whose rank follows from the parameters'
    ``ranks`` (a name assigned values of two ranks, or of one unknown, has none).

    Optimistic, then checked: a name assigned at several places (a loop's carried value)
    takes the rank its known assignments agree on, passes repeat while they learn ranks,
    then one pass checks that every assignment of every name found has its rank; names that
    fail are left out for good and the search runs again (so at most once per name)."""
    params = {name: rank for name, rank in ranks.items() if rank is not None}
    counts = {}
    _rank_sites(function.body, {}, counts, ())
    once = {name for name, seen in counts.items() if len(seen) == 1 and name not in params}
    banned = set()
    while True:
        current = dict(params)
        for _ in range(_RANK_PASSES):
            sites = {}
            _rank_sites(function.body, dict(current), sites, once)
            found = dict(params)
            for name, seen in sites.items():
                known = {r for r in seen if r is not None}
                if name not in params and name not in banned and len(known) == 1:
                    found[name] = known.pop()
            if found == current:
                break
            current = found
        sites = {}
        _rank_sites(function.body, dict(current), sites, ())
        wrong = {name for name, rank in current.items()
                 if any(r != rank for r in sites.get(name, ()))}
        if not wrong:
            return current
        banned |= wrong
        params = {name: rank for name, rank in params.items() if name not in wrong}


_RANK_PASSES = 6


def _rank_sites(block, ranks, sites, once):
    """The rank of each value assigned to a name in ``block`` (None: unknown), by name; the
    names of ``once`` (assigned at one place) enter ``ranks`` as they are assigned."""
    def seen(name, rank):
        sites.setdefault(name, []).append(rank)
        if name in once and rank is not None:
            ranks[name] = rank

    for stmt in block:
        if isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name):
            counter = isinstance(stmt.iter, gast.Call) and anno.get(stmt.iter, Anno.CALLEE) is range
            seen(stmt.target.id, 0 if counter else None)
        if isinstance(stmt, (gast.If, gast.While, gast.For)):
            _rank_sites(stmt.body, ranks, sites, once)
            _rank_sites(stmt.orelse, ranks, sites, once)
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            seen(stmt.targets[0].id, _value_rank(stmt.value, ranks))
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], (gast.Tuple, gast.List)):
            whole = ranks.get(stmt.value.id) if isinstance(stmt.value, gast.Name) else None
            for position, node in enumerate(stmt.targets[0].elts):
                if isinstance(node, gast.Name):          # a, b = residuals: each entry's rank
                    part = whole[position] if isinstance(whole, tuple) and \
                        position < len(whole) else None
                    seen(node.id, part)


def _value_rank(node, ranks):
    """:func:`rank_of`, and a tuple's entries' ranks for a name holding one."""
    if isinstance(node, gast.Name):
        return ranks.get(node.id)
    return rank_of(node, ranks)


def rank_of(node, ranks):
    """The per-example rank of an expression's value, or None when unknown or not an array."""
    if isinstance(node, gast.Name):
        rank = ranks.get(node.id)
        return rank if isinstance(rank, int) else None        # (a tuple's entries' ranks)
    if isinstance(node, gast.Constant):
        return 0 if isinstance(node.value, (int, float, complex, bool)) else None
    if isinstance(node, gast.UnaryOp):
        return rank_of(node.operand, ranks)
    if isinstance(node, (gast.BinOp, gast.Compare)):
        left = rank_of(node.left, ranks)
        right = rank_of(node.right if isinstance(node, gast.BinOp) else node.comparators[0], ranks)
        if left is None or right is None:
            return None
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
            return _matmul_rank(left, right)
        return max(left, right)
    if isinstance(node, gast.Attribute) and node.attr in ("T", "real", "imag"):
        return rank_of(node.value, ranks)
    if isinstance(node, gast.Subscript):
        return _indexed_rank(rank_of(node.value, ranks), node.slice, ranks)
    if isinstance(node, gast.Call):
        return _call_rank(node, ranks)
    return None


def _matmul_rank(left, right):
    if left == 0 or right == 0:
        return None
    if left == 1 and right == 1:
        return 0
    if left == 1 or right == 1:
        return max(left, right) - 1
    return max(left, right)


def _indexed_rank(rank, key, ranks):
    if rank is None:
        return None
    parts = key.elts if isinstance(key, gast.Tuple) else [key]
    out = rank
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and part.value is None:
            out += 1
        elif isinstance(part, gast.Constant) and part.value is Ellipsis:
            continue
        elif rank_of(part, ranks) == 0:
            out -= 1
        else:
            return None
    return out


def _call_rank(call, ranks):
    callee = anno.get(call, Anno.CALLEE)
    args = call.args
    if callee is None or not args:
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    first = rank_of(args[0], ranks)
    if rules.is_elementwise(callee):
        found = [rank_of(a, ranks) for a in list(args) + list(keywords.values())]
        return None if None in found else max(found)
    if callee in rules.FLAT_WHEN_NONE and callee in _RANK_KEEPING:
        axis = args[1] if len(args) > 1 else keywords.get("axis")
        if axis is None and callee in (np.cumsum, np.cumprod) or \
                isinstance(axis, gast.Constant) and axis.value is None:
            return 1                                      # the flattened array's
        return first
    if callee in _RANK_KEEPING:
        return first
    if callee in REDUCTION_METHODS:                       # np.sum, np.mean, np.max...
        axis = args[1] if len(args) > 1 else keywords.get("axis")
        keep = keywords.get("keepdims")
        if isinstance(keep, gast.Constant) and keep.value:
            return first
        if axis is None or isinstance(axis, gast.Constant) and axis.value is None:
            return 0
        count = len(axis.elts) if isinstance(axis, gast.Tuple) else 1
        return None if first is None else first - count
    if callee in (np.matmul, np.dot) and len(args) == 2:
        second = rank_of(args[1], ranks)
        if first is None or second is None:
            return None
        if callee is np.dot and (first == 0 or second == 0):
            return max(first, second)
        return _matmul_rank(first, second)
    if callee is np.reshape and len(args) == 2:
        shape = args[1]
        return len(shape.elts) if isinstance(shape, gast.Tuple) else \
            1 if int_literal(shape) is not None else None
    if callee in _FILLED and isinstance(args[0], gast.Tuple):
        return len(args[0].elts)
    if callee in _FILLED:
        return 1 if int_literal(args[0]) is not None or rank_of(args[0], ranks) == 0 else None
    if in_runtime(callee):                  # a derivative helper shaped like an argument
        index = RESULT_SHAPE_OF_ARGUMENT.get(getattr(callee, "__name__", None))
        return rank_of(args[index], ranks) if index is not None and index < len(args) else None
    if callee is np.ravel:
        return 1
    if callee is np.outer:
        return 2
    return None


# -- the rewriting -----------------------------------------------------------------

class _Batcher(Generator):
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
        flags = gast.Tuple([gast.Constant(True, None) for _ in params], gast.Load())
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
        return self.expression("rt.batch.conformed(V, H, W, B)", V=value, H=_flag_node(have),
                               W=_flag_node(want), B=self.batch_size())

    def _filled(self, value):
        """``np.zeros((B,) + shape)`` for ``np.zeros(shape)`` (and ``ones``, ``empty``,
        ``full``) or a number, spread over the batch: made batched from the start."""
        if isinstance(value, gast.Constant) and type(value.value) in (int, float):
            return self.expression("np.full(B, V)", B=self.batch_size(), V=value)
        callee = anno.get(value, Anno.CALLEE) if isinstance(value, gast.Call) else None
        if callee not in _FILLED or not value.args or any(
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

    # -- control flow on batched values: both branches, then a select per member ---------
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
        out = [assign(test, self.batched(stmt.test))]
        out += [assign(before[n], load(n) if n in self.defined else gast.Constant(None, None))
                for n in names]
        out += self._block(stmt.body)
        out += [assign(then[n], load(n)) for n in names]
        out += [assign(n, load(before[n])) for n in names]
        out += self._block(stmt.orelse)
        out += [assign(n, self._select(test, load(then[n]), load(n))) for n in names]
        return out

    def _masked(self, stmt):
        """``while c: A`` for a batched ``c``: A runs while ``c`` holds for any member, and
        each name it assigns keeps its value in the members whose ``c`` no longer holds."""
        _pure_branches(stmt)
        self.result.selects = True
        names = self._live(stmt, assigned_in(stmt.body))
        self._defined_or_never(stmt, names)
        active = self.namer.fresh("_running")
        before = {n: self.namer.fresh(n + "_before") for n in names}
        out = [assign(n, gast.Constant(None, None)) for n in names if n not in self.defined]
        body = [assign(active, self.batched(stmt.test))]
        body += [assign(before[n], load(n)) for n in names]
        self.defined.update(names)
        body += self._block(stmt.body)
        body += [assign(n, self._select(active, load(n), load(before[n]))) for n in names]
        test = self.expression("np.any(C)", C=self.batched(stmt.test))
        return out + [anno.copy(stmt, gast.While(test, body, []))]

    def _live(self, stmt, names):
        """The names among ``names`` (assigned under ``stmt``) whose values matter after it:
        read outside it, or read under it before it assigns them (a loop's carried values,
        the test); the others are temporaries of one branch or one step."""
        inside = {id(n) for n in walk(stmt)}
        outside = {n.id for n in walk(self.unit.function) if isinstance(n, gast.Name)
                   and isinstance(n.ctx, gast.Load) and id(n) not in inside}
        carried = set(_read_before_assigned(stmt.body)) | {
            n.id for n in walk(stmt.test) if isinstance(n, gast.Name)}
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
            target_rank = _indexed_rank(rank, target.slice, self.ranks)
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
        if isinstance(node, gast.Call) and any(anno.get(node, Anno.CALLEE) is t for t in _TYPE_TESTS):
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

    def _call(self, call):
        callee = anno.get(call, Anno.CALLEE)
        if callee is getattr:
            return self._getattr(call)
        if callee is None and isinstance(call.func, gast.Attribute) and \
                call.func.attr in _SAME_METHODS and \
                not any(truthy(self.flag(a)) for a in call.args + [k.value for k in call.keywords]):
            return call                     # x.astype(t), x.copy(): each member's, as they are
        original = call
        callee, call, args, keywords = resolve_call(call, self.unit, _unbatchable)
        func = self._func(call, callee)
        call_of = self._call_of(callee, func, args, keywords)
        found = helpers.runtime_rule(call_of) if in_runtime(callee) else None
        if found is None:
            found = rules.rule(call_of)
        if found is not None:
            return found
        precise = self.flags.calls is not None and batched_in_turn(callee) and \
            callee is anno.get(original, Anno.CALLEE)
        want = self.flag(original) if precise else True      # the analysis' flag of the call
        if isinstance(callee, (types.FunctionType, types.MethodType)) and not is_library(callee):
            build = self._callee(callee, args, keywords, all_batched=not precise)
            if build is not None:           # what it runs per member, the caller runs too
                self.result.selects |= build.selects
                self.result.loops += [loop for loop in build.loops
                                      if loop not in self.result.loops]
            if build is not None and (not precise or build.output_flag == want):
                name = self._closure(callee.__name__ + "_vmap", build.function)
                return self.conformed(gast.Call(load(name), list(call.args), list(call.keywords)),
                                      build.output_flag, want)
        looped = self._loop(call, func, args, keywords, callee)    # every output batched
        if want is True:
            return looped
        return self.expression("rt.batch.unbatched_parts(V, F)", V=looped, F=_flag_node(want))

    def _getattr(self, call):
        x, attribute = call.args[0], call.args[1]
        if isinstance(attribute, gast.Constant) and attribute.value in _QUERIES | {"T"}:
            return self._attribute(gast.Attribute(x, attribute.value, gast.Load()))
        raise Unbatchable("getattr of a batched value", call)

    def _func(self, call, callee):
        """The expression the batched call calls the primal by."""
        if anno.get(call, Anno.CALLEE) is not None:
            return call.func
        for module, prefix in ((np, "np"), (np.linalg, "np.linalg")):
            if getattr(module, getattr(callee, "__name__", ""), None) is callee:
                return self.expression(f"{prefix}.{callee.__name__}")
        return load(self._closure("_" + getattr(callee, "__name__", "f"), callee))

    def _callee(self, callee, args, keywords, all_batched):
        """The batched build of ``callee`` for this call (``build_callee``'s), or None."""
        try:
            bound = inspect.signature(callee).bind(*args, **keywords).arguments
        except (TypeError, ValueError):
            return None
        flags = {name: truthy(self.flag(node)) for name, node in bound.items()
                 if isinstance(node, gast.AST)}
        ranks = {name: self.rank(node) for name, node in bound.items() if isinstance(node, gast.AST)}
        try:
            return self.build_callee(callee, flags, ranks, all_batched)
        except Unbatchable as refusal:
            self.result.loops.append((f"{callee.__qualname__}: {refusal.what}", self._where()))
            return None

    def _loop(self, call, func, args, keywords, callee):
        what = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) \
            or type(callee).__name__
        self.result.loops.append((f"a call of {what}, which has no batching rule", self._where()))
        flags = gast.Tuple([_flag_node(truthy(self.flag(a))) for a in args], gast.Load())
        names = [gast.Constant(k, None) for k in keywords]
        keyword_flags = gast.Dict(names, [_flag_node(truthy(self.flag(v))) for v in keywords.values()])
        return self.expression("rt.batch.loop(F, A, FL, B, K, KF)", F=func,
                               A=gast.Tuple(list(args), gast.Load()), FL=flags, B=self.batch_size(),
                               K=gast.Dict(names, list(keywords.values())), KF=keyword_flags)

    def _where(self):
        return self.unit.parsed.location_of_line(self.line)



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


def _unbatchable(node, error, message, hint):
    raise Unbatchable(message, node)


def _flag_node(flag):
    if isinstance(flag, tuple):
        return gast.Tuple([_flag_node(f) for f in flag], gast.Load())
    return gast.Constant(flag, None)


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


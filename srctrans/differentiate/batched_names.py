"""Which names of a function hold batched values (``st.vmap``): the *flags* of batching.

Requires: a function in A-normal form (the passes up to ``ssa``) and its batched
parameters.
Guarantees: :func:`batched_names` gives each name's flag: False (unbatched), True
(batched: an array with the batch axis first, or a container whose arrays all have
it) or a tuple of flags (a tuple or list display whose entries differ). A value read
from a batched one is batched, except reads of shapes and dtypes (:func:`is_query`);
a name assigned under an ``if`` or ``while`` on a batched value is batched (its value
is selected per member); a call of a function that is batched in turn takes that
function's own output flag when the caller supplies ``callee_flag``. A ``for`` loop
over a batched value raises :class:`Unbatchable`.
"""

import functools
import types

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.batching_rules import helpers
from srctrans.differentiate import batching_rules as rules
from srctrans.differentiate.calls import is_library
from srctrans.nodes import in_runtime, int_literal
from srctrans.treewalk import walk, walk_names

QUERIES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
TYPE_TESTS = (isinstance, type, callable, id)
# methods of an array whose batched call is the same call when only the array is batched
_SAME_METHODS = frozenset({"astype", "copy", "conj", "conjugate"})


class Unbatchable(Exception):
    """A construct whose batched form would need control flow per member."""

    def __init__(self, what, node):
        super().__init__(what)
        self.what = what
        self.node = node


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
    if isinstance(node, gast.Attribute) and node.attr in QUERIES:
        return True
    if isinstance(node, gast.Call):
        callee = anno.get(node, Anno.CALLEE)
        if callee in (np.shape, np.ndim, np.size, len) or any(callee is t for t in TYPE_TESTS):
            return True
        if callee in rules.DTYPE_QUERIES:
            return True
        if callee is getattr and len(node.args) >= 2 and isinstance(node.args[1], gast.Constant) \
                and node.args[1].value in QUERIES:
            return True
    return False


class Flags(dict):
    """name -> flag, with ``calls``: ``call node -> flag`` of the calls whose output flag the
    called function's own analysis gives (None for the others: batched if any argument is),
    and ``dicts``: the names that hold dicts (whose keys are every member's)."""

    calls = None
    dicts: frozenset = frozenset()


_KEY_READS = (list, tuple, sorted, len)      # of a dict: its keys, the same in every member


def reads_keys(node, flags):
    """``list(d)``, ``sorted(d)``, ``len(d)`` of a dict ``d``: per member the same keys."""
    return isinstance(node, gast.Call) and anno.get(node, Anno.CALLEE) in _KEY_READS and \
        len(node.args) == 1 and not node.keywords and isinstance(node.args[0], gast.Name) and \
        node.args[0].id in getattr(flags, "dicts", ())


def flag_of(node, flags):
    """The flag of the value of the expression ``node``."""
    if isinstance(node, gast.Name):
        return flags.get(node.id, False)
    if isinstance(node, gast.Constant) or is_query(node) or reads_keys(node, flags):
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
    reads = [n for n in walk_names(node) if isinstance(n.ctx, gast.Load)]
    return any(truthy(flags.get(n.id, False)) for n in reads)


def batched_names(function, params, callee_flag=None, dicts=frozenset()):
    """name -> flag for every name of ``function`` that holds a batched value, from the
    batched parameters ``params``; raises :class:`Unbatchable` for a ``for`` loop over a
    batched value. A fixed point: the loop ends when a pass changes no flag.

    ``callee_flag(fn, flags)``, when given, is the output flag of a function of the user's
    (or a runtime helper without a batching rule) called with parameters batched as
    ``flags`` say, or None when unknown: a helper that returns a value the same for every
    member (a shape, a mode) makes it unbatched, not batched for its batched arguments."""
    flags = Flags(params)
    flags.dicts = frozenset(dicts)
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
    if is_transform(callee):
        return False                        # st.jvp(g, ...): a derivative's own code, resolved
    return not rules.has_rule(callee) and not helpers.has_rule(callee)


def is_transform(callee):
    """One of srctrans's own functions (``st.jvp``, ``st.hvp``), not a runtime helper."""
    module = getattr(callee, "__module__", None) or ""
    return module.startswith("srctrans.") and not in_runtime(callee)


def bound_parameters(callee, args, keywords):
    """parameter -> the argument node (a tuple of them for ``*args``, a dict for
    ``**kwargs``) of a call of ``callee``, or None when the call does not bind to its
    signature or passes ``*name``."""
    if any(isinstance(a, gast.Starred) for a in args):
        return None
    bound = rules.bound_arguments(callee, args, keywords)
    return None if bound is None else {name: node for name, node in bound.items()
                                        if isinstance(node, (gast.AST, tuple, dict))}


def callee_flags(bound, flag):
    """parameter -> its flag (a tuple's entries' kept, else a bool), for the parameters
    ``bound`` (:func:`bound_parameters`) and ``flag(node)`` of each argument."""
    return {name: _param_flag(_bound_flag(node, flag)) for name, node in bound.items()}


def _bound_flag(node, flag):
    """The flag of what a parameter receives: an argument, or the tuple of the arguments a
    ``*args`` parameter collects (each its own flag), or the dict of ``**kwargs``."""
    if isinstance(node, tuple):
        parts = tuple(flag(n) for n in node)
        return parts if any(truthy(p) for p in parts) else False
    if isinstance(node, dict):
        return any(truthy(flag(n)) for n in node.values())
    return flag(node)


def _param_flag(flag):
    """A parameter's flag from its argument's: a tuple's entries' flags kept (residuals whose
    parameters are not batched stay unbatched), a list's or dict's made one."""
    return tuple(map(_param_flag, flag)) if isinstance(flag, tuple) else bool(flag)


def _callee_flag(callee_flag, call, flags):
    callee = anno.get(call, Anno.CALLEE)
    if not batched_in_turn(callee):
        return None
    bound = bound_parameters(callee, call.args, {k.arg: k.value for k in call.keywords})
    return None if bound is None else \
        callee_flag(callee, callee_flags(bound, lambda node: flag_of(node, flags)))


def assigned_in(block):
    """The names the statements of ``block`` assign, in nested blocks too, in order."""
    names = []
    for node in (n for stmt in block for n in walk(stmt)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) \
                and node.id not in names:
            names.append(node.id)
    return names


def read_before_assigned(block, assigned=frozenset()):
    """The names a pass through ``block`` may read before it assigns them (``assigned``:
    the names assigned already), through nested blocks too."""
    assigned, read = set(assigned), []

    def loads(node):
        return [n.id for n in walk_names(node)
                if isinstance(n.ctx, gast.Load) and n.id not in assigned]
    for stmt in block:
        if isinstance(stmt, gast.Assign):
            read += loads(stmt.value) + [n for t in stmt.targets if not isinstance(t, gast.Name)
                                         for n in loads(t)]
            assigned.update(assigned_in([stmt]))
        elif isinstance(stmt, gast.If):
            read += loads(stmt.test) + read_before_assigned(stmt.body, assigned) + \
                read_before_assigned(stmt.orelse, assigned)
            assigned |= definitely_assigned([stmt])
        elif isinstance(stmt, (gast.For, gast.While)):
            read += loads(stmt.iter if isinstance(stmt, gast.For) else stmt.test)
            read += read_before_assigned(stmt.body, assigned)
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



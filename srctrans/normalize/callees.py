"""Small functions of the same module are inlined where the function being built calls them.

Requires: the parsed function, before any other pass rewrites it (its calls keep the
user's positions, which name the call sites of :mod:`srctrans.runtime.objects`).
Guarantees: each user function the function calls that qualifies (below) is copied into
it as a local ``def`` (without its docstring), and :func:`inlined_callees` returns
``{function: local name}``. The passes that follow see its body as the caller's own: the
A-normal form inlines it where it is called (:mod:`srctrans.normalize.local_functions`),
so the derivative computes the callee's values and cotangents in the caller's own code,
with no call of the callee's forward and backward passes, no tuple of its saved values,
and its arrays' shapes known to the caller's specialisation. What Python computes is
unchanged: a callee qualifies only when

* it is a plain Python function of the caller's module (the same globals, so every name
  it reads denotes what it denotes in the callee), without closure cells, decorators,
  a user rule (``st.register_vjp``, ``st.custom_gradient``, non-differentiable) or a
  checkpoint mark, and not an installed package's;
* it is called by name (``helper(x)``), as a bound method of a module-level object, or
  through a value whose kinds the call site has met (``self.forward(x)``, ``layer(x)``);
* its body is small, ends with its only ``return``, has no ``break``/``continue``,
  ``**kwargs``, nested function or class, ``global``/``nonlocal``, ``yield``,
  ``try``/``with``, no write into an item or attribute (but of an array it makes itself,
  ``out = np.zeros(...)`` bound once: :func:`_fresh_arrays`), no call of an in-place method,
  ``setattr`` or ``out=`` (an effect on an argument the caller may hold), and its
  defaults are constants;
* the names it binds are not names the caller or another inlined callee reads from the
  module, nor the other way round; and it does not reach itself (recursion keeps its
  call, and its error);
* it is called at most :data:`MAX_INLINED_DEPTH` helpers deep: the search stops there,
  and a call further down keeps its call (:func:`inlinable`).

A callee that does not qualify is called as before: built on its own, with its forward
and backward passes called from the caller's.
"""

import collections
import inspect
import types

import gast

from srctrans.analyse.values import makes_fresh
from srctrans.differentiate.calls import is_library
from srctrans.interface import CHECKPOINTED
from srctrans.naming import function_base, identifiers
from srctrans.normalize.auxiliary import has_aux
from srctrans.nodes import local_names, parameter_names
from srctrans.optimise.dce import name_counts
from srctrans.parse.source import parse_function
from srctrans.rules import REGISTRY
from srctrans.runtime.custom import custom_gradient_of
from srctrans.runtime.objects import SITES
from srctrans.treewalk import walk

# the most syntax-tree nodes a callee may have to be inlined, and all of them together
MAX_CALLEE_NODES = 400
MAX_INLINED_NODES = 3000
# the most helpers inlined one inside another: a call further down a chain of helpers keeps
# its call (the callee is built on its own, and inlines its own chain), so building never
# recurses as deep as the program's chain of calls
MAX_INLINED_DEPTH = 12

_REFUSED_NODES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
                  gast.Global, gast.Nonlocal, gast.Yield, gast.YieldFrom, gast.Await,
                  gast.Try, gast.With, gast.AsyncWith, gast.Break, gast.Continue,
                  gast.Import, gast.ImportFrom, gast.Delete)
# methods that change the object they are called on: an effect the callee's caller may see
_IN_PLACE_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
    "sort", "reverse", "fill", "put", "partition", "resize", "itemset", "setfield",
    "setflags", "byteswap", "copyto", "add", "discard", "at", "place", "putmask",
    "fill_diagonal"})
_EFFECT_BUILTINS = frozenset({"setattr", "delattr"})


def inlined_callees(parsed):
    """Copy the qualifying callees of ``parsed`` into its body as local ``def``\\ s (see the
    module); ``{function: local name}``."""
    caller = parsed.fn
    graph, trees, refused = {}, {}, set()
    pending = collections.deque([(None, 0)])       # None: the caller itself; its depth
    while pending:                                 # breadth first: each at its least depth
        fn, depth = pending.popleft()
        tree = parsed.node if fn is None else trees[fn]
        graph[fn] = []
        if depth == MAX_INLINED_DEPTH:             # its calls stay calls (see inlinable)
            continue
        for callee in _called_functions(tree, parsed):
            if callee not in trees and callee is not caller and callee not in refused:
                node = _qualifying_tree(callee, caller)
                if node is None:
                    refused.add(callee)
                    continue
                trees[callee] = node
                pending.append((callee, depth + 1))
            if callee in trees:
                graph[fn].append(callee)
    if not trees:                                  # the common case: no helper qualifies
        return {}
    chosen = _reachable(graph, {fn for fn in trees if _reaches(graph, fn, fn)})
    chosen = _without_scope_clashes(chosen, trees, parsed.node, graph) if chosen else []
    if not chosen:
        return {}
    taken = identifiers(parsed.node)
    for fn in chosen:
        taken |= identifiers(trees[fn])
    names, defs = {}, []
    for fn in chosen:
        name = base = "_" + function_base(fn)
        counter = 1
        while name in taken:
            counter += 1
            name = f"{base}_{counter}"
        taken.add(name)
        node = trees[fn]
        node.name = name
        names[fn] = name
        defs.append(node)
    body = parsed.node.body
    start = 1 if _is_docstring(body[0]) and len(body) > 1 else 0
    body[start:start] = defs
    return names


def inlinable(normalizer, call):
    """Whether the A-normal form may put a helper's body in place of ``call``: the call
    passes each argument by itself (:func:`spelled_out`) and is fewer than
    :data:`MAX_INLINED_DEPTH` helpers deep."""
    return spelled_out(call) and len(normalizer._inlining) < MAX_INLINED_DEPTH


def spelled_out(call):
    """Whether ``call`` passes each argument by itself (no ``*xs``, no ``**d``): a call of an
    inlined function must, to bind its parameters (its own ``*args`` to a tuple of them)."""
    return not any(isinstance(a, gast.Starred) for a in call.args) \
        and all(k.arg is not None for k in call.keywords)


def call_site(call, parsed):
    """The text ``"file:line:column"`` that names ``call``'s site (``runtime.objects``)."""
    return f"{parsed.filename}:{getattr(call, 'lineno', None) or parsed.node.lineno}:" \
           f"{getattr(call, 'col_offset', 0) or 0}"


def _called_functions(tree, parsed):
    """The user functions the calls in ``tree`` may run, as far as they are known now."""
    globals_ = parsed.fn.__globals__
    for node in walk(tree):
        if not isinstance(node, gast.Call):
            continue
        func = node.func
        method = func.attr if isinstance(func, gast.Attribute) else "__call__"
        for how, value in SITES.get(call_site(node, parsed), ()):   # through a value, met so far
            if how == "is":
                yield value
            else:
                attribute = inspect.getattr_static(value, method, None)
                if isinstance(attribute, staticmethod):
                    attribute = attribute.__func__
                if isinstance(attribute, types.FunctionType):
                    yield attribute
        value = _global_value(func, globals_)
        if isinstance(value, types.MethodType):           # net.loss(x) of a module-level net
            value = value.__func__
        if isinstance(value, types.FunctionType):
            yield value


def _global_value(func, globals_):
    """What ``func`` (a name, or attributes of one) denotes in the module, or None."""
    path = []
    while isinstance(func, gast.Attribute):
        path.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name) or func.id not in globals_:
        return None
    value = globals_[func.id]
    for attribute in reversed(path):
        if not isinstance(value, (types.ModuleType, type)) and len(path) > 1:
            return None
        try:
            value = inspect.getattr_static(value, attribute)
        except AttributeError:
            return None
        if isinstance(value, staticmethod):
            value = value.__func__
    return value


def _qualifying_tree(fn, caller):
    """A copy of ``fn``'s ``def`` ready to be a local function of ``caller``, or None when
    ``fn`` does not qualify."""
    if not isinstance(fn, types.FunctionType) or fn.__globals__ is not caller.__globals__ \
            or fn.__closure__ or fn.__code__.co_filename != caller.__code__.co_filename \
            or is_library(fn) or inspect.unwrap(fn) is not fn or getattr(fn, CHECKPOINTED, False) \
            or REGISTRY.lookup(fn) is not None or REGISTRY.is_nondifferentiable(fn) \
            or custom_gradient_of(fn) is not None or has_aux(fn):
        return None
    try:
        node = parse_function(fn).node
    except Exception:                     # no source: the call builds it, and says why
        return None
    if node.decorator_list or not isinstance(node, gast.FunctionDef):
        return None
    arguments = node.args
    if arguments.kwarg is not None or not all(
            _constant(d) for d in arguments.defaults + [d for d in arguments.kw_defaults if d]):
        return None
    body = node.body[1:] if _is_docstring(node.body[0]) else list(node.body)
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return None
    count = 0
    fresh = _fresh_arrays(body, fn.__globals__, set(parameter_names(node)))
    for stmt in body:
        for sub in walk(stmt):
            count += 1
            if isinstance(sub, _REFUSED_NODES) or isinstance(sub, gast.Return) \
                    and sub is not body[-1] or _writes_in_place(sub, fresh):
                return None
    if count > MAX_CALLEE_NODES:
        return None
    node.body = body
    node.returns = None
    for parameter in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + (
            [arguments.vararg] if arguments.vararg is not None else []):
        parameter.annotation = None
    node.count = count
    return node


def _fresh_arrays(body, globals_, parameters):
    """The names ``body`` binds once, to an array it makes (``out = np.zeros(...)``, a function
    of ``analyse.values.makes_fresh``), none a parameter: a write into one changes nothing its
    caller holds."""
    stores, _ = name_counts(body)
    return {node.targets[0].id for stmt in body for node in walk(stmt)
            if isinstance(node, gast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.Call)
            and stores.get(node.targets[0].id) == 1 and node.targets[0].id not in parameters
            and makes_fresh(_global_value(node.value.func, globals_), node.value)}


def _writes_in_place(node, fresh=frozenset()):
    """Whether ``node`` writes into an object the caller may hold: an item or attribute of
    anything but an array of ``fresh`` (:func:`_fresh_arrays`), an in-place method, ``out=``."""
    if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
        return not (isinstance(node.value, gast.Name) and node.value.id in fresh)
    if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store):
        return True
    if isinstance(node, gast.AugAssign) and not isinstance(node.target, gast.Name):
        return not (isinstance(node.target, gast.Subscript)
                    and isinstance(node.target.value, gast.Name) and node.target.value.id in fresh)
    if not isinstance(node, gast.Call):
        return False
    func = node.func
    return (isinstance(func, gast.Attribute) and func.attr in _IN_PLACE_METHODS
            or isinstance(func, gast.Name) and func.id in _EFFECT_BUILTINS
            or any(k.arg == "out" for k in node.keywords))          # np.add(a, b, out=x)


def _constant(node):
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    if isinstance(node, gast.Tuple):
        return all(_constant(e) for e in node.elts)
    return isinstance(node, gast.Constant)


def _is_docstring(stmt):
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def _reaches(graph, start, target):
    """Whether ``target`` is called, directly or not, from ``start``'s body."""
    seen, pending = set(), list(graph.get(start, ()))
    while pending:
        fn = pending.pop()
        if fn is target:
            return True
        if fn not in seen:
            seen.add(fn)
            pending.extend(graph.get(fn, ()))
    return False


def _reachable(graph, excluded):
    """The callees the caller reaches through callees not ``excluded``, in the order first
    met."""
    found, pending = [], list(reversed(graph[None]))
    while pending:
        fn = pending.pop()
        if fn in excluded or fn in found:
            continue
        found.append(fn)
        pending.extend(reversed(graph.get(fn, ())))
    return found


def _without_scope_clashes(chosen, trees, caller_node, graph):
    """``chosen`` less the callees whose bound names some other function of the set reads
    from the module, or whose module names another binds, and those past
    :data:`MAX_INLINED_NODES` in all (until none is left)."""
    caller = _scope(caller_node)
    every = {fn: _scope(tree) for fn, tree in trees.items()}
    while True:
        scopes = {fn: every[fn] for fn in chosen}
        clashing = set()
        for fn, (bound, free) in scopes.items():
            others = [caller] + [scope for other, scope in scopes.items() if other is not fn]
            if any(bound & other_free or free & other_bound
                   for other_bound, other_free in others):
                clashing.add(fn)
        total = 0
        for fn in chosen:
            total += trees[fn].count
            if total > MAX_INLINED_NODES:
                clashing.add(fn)
        if not clashing:
            return chosen
        graph = {fn: [c for c in callees if c not in clashing] for fn, callees in graph.items()}
        chosen = [fn for fn in _reachable(graph, clashing) if fn not in clashing]


def _scope(function):
    """``(bound, free)``: the names ``function`` binds, and those it reads without binding
    them (its module's, and builtins)."""
    bound = local_names(function)
    return bound, {n.id for n in walk(function)
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)} - bound


# how deep writes_of follows the user's functions a function calls
_WRITE_DEPTH = 6
# code object -> (writes_of's answer, the calls it followed: (globals, callee node, value),
# the remembered answers of those callees it used: (code, entry)); its source is fixed, but a
# call's name may be rebound to another function since, and a callee's answer remade
_WRITES: dict = {}
_NO_WRITES: tuple[bool, frozenset[str]] = (False, frozenset())
_ANALYSING: set = set()              # the code of the functions writes_of is reading now


def writes_of(fn, depth=0):
    """``(held, names)``: what calling the user's function ``fn`` may change. ``held``: an
    object its caller holds, written through a parameter or a local name (an item or
    attribute written, but of an array it made; an in-place method; ``setattr``,
    ``delattr``; ``nonlocal``); ``names``: the module globals it may rebind (``global``) or
    write into by name (``LOG.append(v)``). A user's function of its module it calls counts
    as it (followed :data:`_WRITE_DEPTH` deep; deeper counts as ``held``). A bound method is
    its function; a library's function (NumPy's, an installed package's), a class, a builtin
    or a function without source writes nothing."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType) or is_library(fn):
        return _NO_WRITES
    memo = _WRITES.get(fn.__code__)
    if memo is not None and _calls_unchanged(memo):
        return memo[0]
    if depth >= _WRITE_DEPTH:
        return True, frozenset()
    try:
        node = parse_function(fn).node
    except Exception:                     # noqa: BLE001 (no source: a lambda of exec, ...)
        return _NO_WRITES
    outermost = fn.__code__ not in _ANALYSING          # (a recursive function reads itself)
    _ANALYSING.add(fn.__code__)
    try:
        return _writes_found(fn, node, depth)
    finally:
        if outermost:
            _ANALYSING.discard(fn.__code__)


def _writes_found(fn, node, depth):
    """:func:`writes_of` of ``fn`` from its parsed definition ``node``, remembered."""
    body = list(node.body)
    fresh = _fresh_arrays(body, fn.__globals__, set(parameter_names(node)))
    own = local_names(node)
    held, names, calls, used = False, set(), [], []
    for sub in (n for stmt in body for n in walk(stmt)):
        if isinstance(sub, gast.Global):
            names.update(sub.names)
        elif isinstance(sub, gast.Nonlocal):
            held = True
        elif _writes_in_place(sub, fresh):
            root = _written_root(sub)
            if root is not None and root not in own and root in fn.__globals__:
                names.add(root)
            else:
                held = True
        elif isinstance(sub, gast.Call):
            callee = _global_value(sub.func, fn.__globals__)
            calls.append((fn.__globals__, sub.func, callee))
            inner_held, inner_names = writes_of(callee, depth + 1)
            held, names = held or inner_held, names | inner_names
            inner = getattr(callee, "__func__", callee)
            if isinstance(inner, types.FunctionType) and inner.__code__ not in _ANALYSING:
                used.append((inner.__code__, _WRITES.get(inner.__code__)))   # (not a caller's:
                                                                             # recursion)
    found = (held, frozenset(names))
    _WRITES[fn.__code__] = (found, tuple(calls), tuple(used))
    return found


def _calls_unchanged(memo):
    """Whether a remembered answer of :func:`writes_of` still holds: every call it followed
    still denotes the function it did, and every callee's answer it used is still the one
    remembered and holds too (a helper rebound to one that writes is seen at any depth; each
    answer looked at once, without recursion)."""
    pending, seen = [memo], set()
    while pending:
        _, calls, used = pending.pop()
        if any(_global_value(func, globals_) is not callee for globals_, func, callee in calls):
            return False
        for code, entry in used:
            if _WRITES.get(code) is not entry:
                return False
            if entry is not None and id(entry) not in seen:
                seen.add(id(entry))
                pending.append(entry)
    return True


def _written_root(node):
    """The name at the root of what ``node`` (one :func:`_writes_in_place` accepts) writes
    into, or None."""
    if isinstance(node, gast.AugAssign):
        node = node.target
    if isinstance(node, gast.Call):
        func = node.func
        outs = [k.value for k in node.keywords if k.arg == "out"]
        if outs:
            node = outs[0]
        elif isinstance(func, gast.Name):           # setattr(obj, ...), delattr(obj, ...)
            node = node.args[0] if node.args else None
        else:
            node = func.value                       # obj.append(...)
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def names_read_by(globals_, besides=None):
    """Every name the functions of a module (its globals, and its classes' methods) read by
    name or as an attribute (their code's ``co_names``, nested code included), but those of
    the function ``besides``."""
    names = set()
    module = globals_.get("__name__")
    for value in list(globals_.values()):
        if isinstance(value, type) and getattr(value, "__module__", None) == module:
            functions = [getattr(v, "__func__", v) for v in vars(value).values()]
        else:
            functions = [value]
        for function in functions:
            if isinstance(function, types.FunctionType) and function is not besides:
                names |= _code_names(function.__code__)
    return names


def _code_names(code):
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _code_names(constant)
    return names

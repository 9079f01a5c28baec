"""A value a fused gradient computes twice is computed once.

Requires: the body of a fused gradient of specialised code (its forward statements, then its
backward ones), before temporaries are inlined and sums are made in place; the shapes
measured for its names; the names it returns.
Guarantees: where the body computes an expression a statement of its own block already
assigned to a name (``_sqrt_2 = np.sqrt(var + eps)`` after ``_sqrt = np.sqrt(var + eps)``;
a variance's cotangent ``x - x.mean(axis=1, keepdims=True)`` after the forward pass's
``mu = x.mean(axis=1, keepdims=True)`` and ``d = x - mu``), it reads that name instead,
and a statement whose whole value is such an expression is dropped, its name read as the
first one. A sum or product of two numbers or arrays is the same either way round
(``lam * w`` and ``w * lam``). The values are those the body computed: an expression is
shared only when

* every name it reads is assigned at most once in the whole body (a parameter or global
  not at all: a parameter holds its argument first), and no array it reads is changed in
  place, nor any array that may share memory with it (a name assigned a view, or a copy
  of a name, joins that name's group: a write into any changes them all); a call that may
  change its arguments (a user's function, a method not known to keep its object) counts
  as a write into each; no lambda or comprehension is looked into (its names may shadow
  the body's);
* it calls only NumPy's and SciPy's functions with derivative rules of srctrans's own
  (deterministic: not ``np.random``, no user rule, which may belong to a function with
  effects) and array methods that return a new value, of arrays of known shape; it builds
  no list or dict (a new object each time, which a later write may change);
* the first name is assigned once, at the top level of the function (it holds that value
  from there on), and the second, when its statement is dropped, is assigned once too and
  is not returned (two gradients returned as one array would share memory).

The A-normal form names most values, so most shared expressions are whole right-hand
sides; the nested ones are those a specialised helper wrote out (a variance's cotangent).
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import substitute_names
from srctrans.optimise.dce import name_counts, reads_of
from srctrans.optimise.expression_shapes import shape_of
from srctrans.rules import REGISTRY
from srctrans.treewalk import walk, walk_names

# array methods that return a value computed from the array, never the array changed
PURE_METHODS = frozenset({
    "sum", "mean", "prod", "var", "std", "max", "min", "dot", "clip", "reshape", "transpose",
    "ravel", "squeeze", "swapaxes", "conj", "conjugate", "argmax", "argmin", "any", "all",
    "round",
})
# runtime helpers that change their first argument in place (a sum only they hold)
_CHANGING_HELPERS = frozenset({"added_at"})
# builtins that change none of their arguments
PURE_BUILTINS = (len, range, min, max, abs, float, int, bool, tuple, list, dict, zip,
                 enumerate, isinstance, sum, sorted, reversed, round, divmod, pow, complex)
# nodes with names of their own, which may shadow the body's
_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
           gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
# the modules whose functions with srctrans's own rules compute values and nothing else
_PURE_MODULES = ("numpy", "scipy")


def share_common_values(body, shapes, returned, parameters, runtime_alias="rt"):
    """``body`` (changed in place, and returned) reading a value it computed before instead
    of computing it again (see the module); ``returned``: the names the function returns;
    ``parameters``: the function's; ``runtime_alias``: the name of the runtime in it."""
    stores, _ = name_counts(body)
    for name in parameters:                     # a parameter holds its argument first
        stores[name] = stores.get(name, 0) + 1
    unstable = {name for name, count in stores.items() if count > 1} | \
        changed_groups(body, set(stores) | set(parameters), runtime_alias)
    sharing = _Sharing(unstable, shapes)
    renaming = {}
    kept = []
    for stmt in body:
        if renaming:
            substitute_names(stmt, renaming)
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)) \
                or anno.get(stmt, Anno.SAVES) is not None:
            sharing.rewrite_within(stmt)
            kept.append(stmt)
            continue
        target = stmt.targets[0].id
        stable = sharing.is_stable(target)
        if stable and target not in returned and not isinstance(stmt.value, gast.Name):
            stmt.value, key = sharing.shared(stmt.value)
            if isinstance(stmt.value, gast.Name):
                renaming[target] = stmt.value        # the same value under its first name
                continue
        else:                # its parts only: a name assigned again or returned is its own array
            key = sharing.key_of_parts(stmt.value)
        if key is not None and stable and key[0] not in ("N", "C"):
            sharing.table.setdefault(key, target)
        kept.append(stmt)
    body[:] = kept
    return body


class _Sharing:
    """The expressions assigned so far (key -> name) and how to read them again."""

    def __init__(self, unstable, shapes):
        self.unstable, self.shapes = unstable, shapes      # unstable: assigned twice, changed
        self.table = {}

    def is_stable(self, name):
        return name not in self.unstable

    def rewrite_within(self, stmt):
        """Every expression of a statement that is not a plain assignment (a loop, a branch,
        a write into an item) read from the names that hold it already."""
        nodes = list(walk(stmt))
        if any(isinstance(n, _SCOPES) for n in nodes):
            return                        # a name of its own scope may shadow one of the body
        for node in [n for n in nodes if isinstance(n, gast.stmt)]:
            for field, value in gast.iter_fields(node):       # (shared() sees within them)
                if _is_read(value):
                    setattr(node, field, self.shared(value)[0])
                elif isinstance(value, list):
                    value[:] = [self.shared(v)[0] if _is_read(v) else v for v in value]

    def shared(self, node):
        """``(node, key)``: ``node`` with each part already held by a name read from it, and
        its key (None when it may not be shared: see the module)."""
        key = self.key_of_parts(node)
        if key is not None and key in self.table:
            holder = self.table[key]
            return gast.Name(holder, gast.Load(), None, None), ("N", holder)
        return node, key

    def key_of_parts(self, node):
        """``node``'s key (None when it may not be shared), each of its parts already held
        by a name read from it (but not ``node`` itself)."""
        if isinstance(node, _SCOPES):
            return None                   # its names may shadow those of the body
        if isinstance(node, gast.Name):
            return ("N", node.id) if self.is_stable(node.id) else None
        if isinstance(node, gast.Constant):
            return ("C", type(node.value).__name__, repr(node.value))
        parts = []
        for field, value in gast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [self._part(v, parts) for v in value]
            elif isinstance(value, (gast.expr, gast.keyword, gast.slice, gast.operator,
                                    gast.unaryop, gast.cmpop)):
                setattr(node, field, self._part(value, parts))
            elif value is None:
                parts.append(("absent",))             # x[:-1]'s slice has no lower bound
            elif field not in ("ctx", "type_comment", "kind"):
                parts.append(value)
        if None in parts or not self._may_share(node):
            return None
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Mult)) \
                and repr(parts[2]) < repr(parts[0]) and self._numeric(node.left, node.right):
            parts = [parts[2], parts[1], parts[0]]   # a * b is b * a (IEEE), on numbers
        return (type(node).__name__,) + tuple(parts)

    def _numeric(self, *operands):
        """Whether each operand is a number or an array (a known shape: no list, whose ``+``
        concatenates in order)."""
        return all(shape_of(operand, self.shapes) is not None for operand in operands)

    def _part(self, value, parts):
        if isinstance(value, (gast.expr, gast.slice)):      # (a slice is no expr in gast)
            value, key = self.shared(value)
        elif isinstance(value, gast.keyword):
            value.value, key = self.shared(value.value)
            key = None if key is None else (value.arg, key)
        elif isinstance(value, (gast.operator, gast.unaryop, gast.cmpop)):
            key = type(value).__name__
        else:
            key = None
        parts.append(key)
        return value

    def _may_share(self, node):
        if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Subscript,
                             gast.Slice, gast.Attribute)):
            return True
        if isinstance(node, gast.Tuple):
            return isinstance(node.ctx, gast.Load)
        if not isinstance(node, gast.Call):
            return False                           # lists, dicts, lambdas, comprehensions...
        callee = anno.get(node, Anno.CALLEE)
        if callee is None:
            method = node.func
            return (isinstance(method, gast.Attribute) and method.attr in PURE_METHODS
                    and len(shape_of(method.value, self.shapes) or ()) >= 1)
        return has_own_rule(callee)


def _is_read(value):
    """Whether ``value`` is an expression read (not a target assigned or deleted)."""
    return isinstance(value, gast.expr) and not isinstance(getattr(value, "ctx", None),
                                                           (gast.Store, gast.Del))


def _module_of(callee):
    try:
        return getattr(callee, "__module__", None) or ""
    except Exception:                   # noqa: BLE001 (an object whose attributes raise)
        return ""


def _keeps_its_arguments(call, locals_, runtime_alias):
    """Whether ``call`` changes none of its arguments: a NumPy or SciPy function with
    srctrans's own rules, a runtime helper but those of :data:`_CHANGING_HELPERS`, which
    change their first argument (told apart by the caller), an array method of
    :data:`PURE_METHODS`, a builtin of :data:`PURE_BUILTINS`. Anything else (a user's
    function, another method) may change what it is passed."""
    callee, func = anno.get(call, Anno.CALLEE), call.func
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id == runtime_alias and func.value.id not in locals_:
        return True
    if callee is None:
        return isinstance(func, gast.Attribute) and func.attr in PURE_METHODS
    if any(callee is f for f in PURE_BUILTINS):
        return True
    return has_own_rule(callee) or _module_of(callee).startswith("srctrans.runtime")


def has_own_rule(callee):
    """Whether ``callee`` is a NumPy or SciPy function with a derivative rule of srctrans's."""
    if not _module_of(callee).startswith(_PURE_MODULES):
        return False
    rule = REGISTRY.lookup(callee)
    return rule is not None and rule.vjp is not None and rule.custom_vjp is None \
        and not REGISTRY.is_nondifferentiable(callee)


def _operands(value, locals_):
    """The names whose memory ``value`` may share: a name, what a subscript, attribute or
    call reads (a view, a method's receiver, an argument handed back), the entries of a
    display; not the operands of arithmetic, whose result is a new array (as an assignment
    of arithmetic is taken to be, below), nor the globals through which it reaches the
    functions it calls (``np`` of ``np.reshape(a, s)``: a module shares no memory with an
    array). ``locals_``: the parameters and the names the body assigns."""
    found, pending = set(), [value]
    while pending:
        node = pending.pop()
        if isinstance(node, gast.Name):
            found.add(node.id)
        elif isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
            continue                    # a new value (a number, or an array of its own)
        elif isinstance(node, gast.Call):
            pending += node.args + [k.value for k in node.keywords]
            if not (isinstance(node.func, gast.Name) and node.func.id not in locals_):
                pending.append(node.func)            # a method's receiver, a local callee
        elif isinstance(node, gast.Attribute):
            if not (isinstance(node.value, gast.Name) and node.value.id not in locals_):
                pending.append(node.value)           # (np.linalg: a module)
        elif isinstance(node, (gast.Subscript, gast.Starred)):
            pending.append(node.value)
        elif isinstance(node, (gast.Tuple, gast.List)):
            pending += node.elts
        elif isinstance(node, gast.IfExp):
            pending += [node.body, node.orelse]
        else:                           # anything else: all it reads
            found |= {n.id for n in walk_names(node)}
    return found


def changed_groups(body, locals_, runtime_alias):
    """The names whose arrays something in ``body`` changes in place, with every name that
    may share memory with one of them (assigned a view or a copy of it, or it of them)."""
    changed, links = set(), {}
    for node in walk(gast.Module(list(body), [])):
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.ctx, gast.Store):
            changed |= reads_of(node.value)
        elif isinstance(node, gast.AugAssign):
            changed |= {n.id for n in walk_names(node.target)}
        elif isinstance(node, gast.Call):
            if not _keeps_its_arguments(node, locals_, runtime_alias):
                for part in node.args + [k.value for k in node.keywords]:  # (a user function,
                    changed |= reads_of(part)                           # a method: any effect)
                if isinstance(node.func, gast.Attribute):
                    changed |= reads_of(node.func.value) & locals_
            elif isinstance(node.func, gast.Attribute) and node.func.attr in _CHANGING_HELPERS:
                changed |= reads_of(node.args[0])
            for keyword in node.keywords:
                if keyword.arg == "out":
                    changed |= reads_of(keyword.value)
        elif isinstance(node, (gast.Assign, gast.For)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            value = node.value if isinstance(node, gast.Assign) else node.iter
            if not isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare)):   # may be a view
                names = {n.id for t in targets for n in walk_names(t)}
                names |= _operands(value, locals_)
                for name in names:
                    links.setdefault(name, set()).update(names)
    group, frontier = set(changed), list(changed)
    while frontier:
        for linked in links.get(frontier.pop(), ()):
            if linked not in group:
                group.add(linked)
                frontier.append(linked)
    return group

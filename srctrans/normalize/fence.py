"""The fence: one table of the syntax srctrans supports, enforced first.

Requires: a parsed user function.
Guarantees: every node of the function is of a supported kind, or an
:class:`UnsupportedSyntaxError` names the file, line and construct and says
what to do instead. Later passes may assume only supported syntax remains.
"""

import gast

from srctrans.runtime.custom import grad_of, stop_recording
from srctrans.emit.compile import is_generated
from srctrans.errors import UnsupportedSyntaxError
from srctrans.normalize.checkpoints import is_mark
from srctrans.normalize.desugar import is_range
from srctrans.normalize.dict_calls import copied_dict_displays
from srctrans.normalize.releases import releases
from srctrans.nodes import local_names, parameter_names
from srctrans.parse.resolve import Resolver
from srctrans.treewalk import walk, walk_names

RESERVED_PARAMETERS = ("output_gradients",)

# Supported node kinds. Statements and expressions not listed are rejected
# with the message of UNSUPPORTED, or a generic one.
SUPPORTED = frozenset({
    # statements
    gast.FunctionDef, gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return,
    gast.Expr, gast.Pass, gast.Assert, gast.Raise, gast.If, gast.For, gast.While, gast.Break, gast.Continue,
    # expressions
    gast.BinOp, gast.UnaryOp, gast.Compare, gast.Call, gast.Attribute,
    gast.Subscript, gast.Slice, gast.Name, gast.Constant, gast.Tuple, gast.List,
    gast.keyword, gast.JoinedStr, gast.FormattedValue,
    # contexts, operators and other leaves
    gast.Load, gast.Store, gast.arguments, gast.Add, gast.Sub, gast.Mult,
    gast.Div, gast.FloorDiv, gast.Mod, gast.Pow, gast.MatMult, gast.USub,
    gast.UAdd, gast.Not, gast.Eq, gast.NotEq, gast.Lt, gast.LtE, gast.Gt,
    gast.GtE, gast.Is, gast.IsNot, gast.In, gast.NotIn,
    gast.BitAnd, gast.BitOr, gast.BitXor, gast.Invert, gast.LShift, gast.RShift,
    gast.IfExp, gast.BoolOp, gast.And, gast.Or, gast.Dict, gast.ListComp, gast.GeneratorExp,
    gast.DictComp,
    gast.comprehension,
})

# The only `with` statements srctrans accepts (checked by _check_with_blocks):
#   with st.stop_recording():      the block's statements contribute no gradient
#   with st.grad_of(h) as dh:      a block the backward pass runs once dh is complete
WITH_BLOCKS = {stop_recording: "stop_recording", grad_of: "grad_of"}

# construct -> (what it is called, what to do instead)
UNSUPPORTED = {
    gast.Try: ("`try` statement", "move error handling outside the differentiated function"),
    gast.With: ("`with` statement", "srctrans accepts only `with st.stop_recording():` and "
                "`with st.grad_of(name) as dname:`; move other `with` blocks outside the "
                "differentiated function"),
    gast.Yield: ("`yield` (a generator)", "return a value instead of yielding; collect results in a list"),
    gast.YieldFrom: ("`yield from` (a generator)", "return a value instead of yielding"),
    gast.Await: ("`await`", "differentiate a plain (non-async) function"),
    gast.AsyncFunctionDef: ("`async def`", "differentiate a plain (non-async) function"),
    gast.Global: ("`global` statement", "pass the value as an argument and return the new value"),
    gast.Nonlocal: ("`nonlocal` statement", "pass the value as an argument and return the new value"),
    gast.Delete: ("`del` statement", "srctrans accepts `del name` of a name the function "
                  "assigned before, outside any `if` or loop, and never reads after; otherwise "
                  "drop the `del` (leaving the name bound is harmless)"),
    gast.Import: ("`import` inside the function", "import at module level"),
    gast.ImportFrom: ("`import` inside the function", "import at module level"),
    gast.ClassDef: ("class definition inside the function", "define the class at module level"),
    gast.SetComp: ("set comprehension", "sets have no order to differentiate along; use a list or a tuple"),
    gast.Set: ("set display", "sets have no order to differentiate along; use a list or a tuple"),
    gast.Starred: ("starred expression (`*args`) of a length the source does not fix",
                   "pass the arguments one by one, or unpack a tuple display (or a name bound "
                   "once to one: `p = (a, b)` then `f(*p)`); `**d` likewise with a dict display"),
    gast.NamedExpr: ("assignment expression (`:=`)", "assign with a separate `=` statement"),
}


def check(parsed, resolver=None):
    """Raise :class:`UnsupportedSyntaxError` at the first unsupported construct of ``parsed``.

    ``resolver`` (a :class:`Resolver` of the function) finds what a ``with``
    statement calls; one is made when it is not given.
    """
    function = parsed.node
    _check_signature(parsed)
    local_functions = _check_local_functions(parsed)
    key_functions = _key_functions(function)
    if resolver is None:
        resolver = Resolver(parsed.fn, local_names(function))
    accepted = (_check_with_blocks(parsed, resolver) | set(releases(function))
                | set(forwarded_varargs(function)))
    copies = copied_dict_displays(function)      # name = {**source, "key": value}: a copy
    if copies and resolver.lookup_root("dict") is dict:
        accepted |= copies
    for local in local_functions:        # a local function's own *args: its entries, inlined
        if isinstance(local, gast.FunctionDef):
            accepted |= set(forwarded_varargs(local))
    for node in walk(function):
        kind = type(node)
        if node in accepted:
            continue
        if node is not function and kind is gast.FunctionDef and node not in local_functions:
            _reject(parsed, node, "function definition inside a block or another local function",
                    "define it at the top of the function, or at module level")
        if kind is gast.Lambda and node not in local_functions and node not in key_functions:
            _reject(parsed, node, "lambda used other than as `name = lambda ...`",
                    "assign the lambda to a name at the top of the function, or use `def`")
        if kind is gast.Call and isinstance(node.func, gast.Name) and node.func.id == "super" \
                and resolver.resolve(node.func) is super:
            _reject(parsed, node, "`super()`",
                    "call the base class's method by name, with the object first: "
                    "Base.__call__(self, x)")
        if kind is gast.keyword and node.arg is None:
            _reject(parsed, node.value, "`**` unpacking of a dict whose keys the source does not fix",
                    "pass the keywords one by one, or unpack a dict display (or a name bound "
                    "once to one: `opts = {'scale': 2.0}` then `f(**opts)`)")
        if kind in SUPPORTED or kind in (gast.FunctionDef, gast.Lambda):
            _check_targets(parsed, node)
            _check_dict_display(parsed, node)
            continue
        if kind in UNSUPPORTED:
            construct, hint = UNSUPPORTED[kind]
            _reject(parsed, node, construct, hint)
        if isinstance(node, (gast.expr, gast.stmt)):
            _reject(parsed, node, f"`{kind.__name__}`",
                    "rewrite it with supported syntax (see docs/syntax.md)")
    _check_control_flow(parsed, resolver)


def forwarded_varargs(function):
    """The ``*args`` nodes that pass the function's own var-positional parameter on, as the
    last positional argument of a call (``helper(r, *args)``), where ``args`` is never
    rebound: srctrans hands the tuple to a callee whose ``*args`` receives it whole
    (``differentiate.calls.starred_to_varargs``)."""
    vararg = function.args.vararg
    if vararg is None:
        return []
    name = vararg.id
    if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, (gast.Store, gast.Del))
           for n in walk(function)):
        return []
    return [call.args[-1] for call in walk(function) if isinstance(call, gast.Call) and call.args
            and isinstance(call.args[-1], gast.Starred) and isinstance(call.args[-1].value, gast.Name)
            and call.args[-1].value.id == name]


# calls whose key= (or, for the runtime's, second) argument may be a lambda: it only ranks
# the items (a selection, with no derivative), so it runs as Python's own lambda
KEYED_BUILTINS = ("sorted", "max", "min")
KEYED_HELPERS = ("sort_order", "best_index")


def _key_functions(function):
    """The lambdas passed as ``key=`` to ``sorted``, ``max`` or ``min`` (and, in generated
    code, to the runtime's ``sort_order`` and ``best_index``)."""
    keys = set()
    for node in walk(function):
        if not isinstance(node, gast.Call):
            continue
        if isinstance(node.func, gast.Name) and node.func.id in KEYED_BUILTINS:
            keys.update(k.value for k in node.keywords
                        if k.arg == "key" and isinstance(k.value, gast.Lambda))
        elif isinstance(node.func, gast.Attribute) and node.func.attr in KEYED_HELPERS:
            keys.update(a for a in node.args if isinstance(a, gast.Lambda))
    return keys


def _check_local_functions(parsed):
    """The local functions srctrans inlines: top-level ``def``s and ``name = lambda ...``.

    Each must end with its only ``return`` (a lambda does), use no ``break``
    or ``continue`` and no ``**kwargs``.
    """
    found = set()
    for stmt in parsed.node.body:
        if isinstance(stmt, gast.FunctionDef):
            node = stmt
            returns = [n for n in walk(stmt) if isinstance(n, gast.Return)]
            early = sorted((r for r in returns if r is not stmt.body[-1]), key=lambda r: r.lineno)
            if early:
                _reject(parsed, early[0], "`return` before the end of a local function",
                        "not supported yet; assign the result to a name and return it at the end")
            for sub in walk(stmt):
                if isinstance(sub, (gast.Break, gast.Continue)):
                    _reject(parsed, sub, f"`{type(sub).__name__.lower()}` in a local function",
                            "not supported yet; define the function at module level")
        elif (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda)
              and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            node = stmt.value
        else:
            continue
        if node.args.kwarg is not None:
            _reject(parsed, node, "`**kwargs` in a local function",
                    "define the function at module level")
        found.add(node)
    return found


def _check_control_flow(parsed, resolver):
    """``for`` over range(...), a sequence, sorted(...), or zip/enumerate of sequences (marked
    ``st.checkpointed(...)`` or not)."""
    for node in walk(parsed.node):
        if isinstance(node, (gast.For, gast.comprehension)):
            iterator, target = node.iter, node.target
            if isinstance(iterator, gast.Call) and iterator.args and is_mark(iterator, resolver):
                iterator = iterator.args[0]
            call = iterator.func.id if (isinstance(iterator, gast.Call)
                                        and isinstance(iterator.func, gast.Name)) else None
            if (isinstance(iterator, gast.Call) and isinstance(iterator.func, gast.Attribute)
                    and iterator.func.attr in ("items", "values", "keys") and not iterator.args):
                call = "items"
            if _walks_saved_values_back(parsed, iterator):
                call = "reversed"              # a loop's own saved values (optimise/step_lists.py)
            if call == "reversed" and _reverses(parsed, node, iterator):
                call = "range" if is_range(iterator.args[0]) else "sorted"
            if call == "items" or _pops_saved_values(parsed, iterator):
                pass                   # d.items(), d.values(), d.keys(); a generated backward loop
            elif call in ("zip", "enumerate"):
                if not (isinstance(target, gast.Tuple) and _names_only(target)):
                    _reject(parsed, node, f"`for` over {call}(...) without a tuple of names",
                            f"write for a, b in {call}(...)")
            elif call == "range":
                if not isinstance(target, gast.Name):
                    _reject(parsed, node, "`for` loop over range(...) unpacking each item",
                            "loop with one name")
            elif call == "sorted" or isinstance(
                    iterator, (gast.Name, gast.Attribute, gast.Subscript, gast.List, gast.Tuple)):
                if not _names_only(target):
                    _reject(parsed, node, "`for` loop unpacking each item into something "
                            "other than names", "loop with one name and assign inside the loop")
            else:
                _reject(parsed, node, "`for` loop over this kind of iterable",
                        "not supported yet; loop over range(...), an array, a list, sorted(...), "
                        "reversed(...), zip(...) or enumerate(...)")
            if call != "range" or not isinstance(target, gast.Name) or not isinstance(node, gast.For):
                continue
            for inner in node.body:
                for sub in walk(inner):
                    if (isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store)
                            and sub.id == node.target.id):
                        _reject(parsed, sub, f"assignment to the loop variable `{sub.id}` inside its loop",
                                "use another name for the new value")


def _reverses(parsed, loop, iterator):
    """``reversed(seq)`` of a sequence or a ``range(...)`` (refused with a reason otherwise)."""
    if len(iterator.args) != 1 or iterator.keywords:
        _reject(parsed, loop, "`reversed(...)` without exactly one argument", "pass one sequence")
    inner = iterator.args[0]
    sorts = (isinstance(inner, gast.Call) and isinstance(inner.func, gast.Name)
             and inner.func.id == "sorted")
    if is_range(inner) or sorts or isinstance(
            inner, (gast.Name, gast.Attribute, gast.Subscript, gast.List, gast.Tuple)):
        return True
    _reject(parsed, loop, "`for` loop over reversed(...) of this kind of iterable",
            "reverse a list, a tuple, an array, sorted(...) or range(...)")


def _names_only(target):
    """A name, or a tuple or list of them, nested (``i, (u, v)``)."""
    if isinstance(target, (gast.Tuple, gast.List)):
        return all(_names_only(t) for t in target.elts)
    return isinstance(target, gast.Name)


def _pops_saved_values(parsed, iterator):
    """``rt.pop_many(tape, n)`` in a derivative srctrans generated (desugar makes it pops)."""
    return (isinstance(iterator, gast.Call) and isinstance(iterator.func, gast.Attribute)
            and iterator.func.attr == "pop_many" and len(iterator.args) == 2
            and is_generated(parsed.fn))


def _walks_saved_values_back(parsed, iterator):
    """``rt.reversed(steps)`` in a derivative srctrans generated (desugar reads ``reversed``)."""
    return (isinstance(iterator, gast.Call) and isinstance(iterator.func, gast.Attribute)
            and iterator.func.attr == "reversed" and isinstance(iterator.func.value, gast.Name)
            and is_generated(parsed.fn))


def _check_signature(parsed):
    args = parsed.node.args
    for param in args.posonlyargs + args.args + args.kwonlyargs:
        if param.id in RESERVED_PARAMETERS:
            _reject(parsed, param, f"parameter named `{param.id}`",
                    f"rename it: srctrans reserves the keyword `{param.id}` for the cotangent")


def _check_dict_display(parsed, node):
    if isinstance(node, gast.Dict) and None in node.keys:
        _reject(parsed, node, "`**` inside a dict display other than `name = {**d, \"key\": value}`",
                "assign a copy with constant keys added as a statement, `q = {**p, \"k\": v}` "
                "or `q = dict(p, k=v)`, or build the dict with explicit keys")


def _check_targets(parsed, node):
    if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        for target in targets:
            for sub in walk(target):
                if isinstance(sub, gast.Subscript) and isinstance(sub.ctx, gast.Store) and not (
                        target is sub and _subscripts_of_a_name(sub)
                        and not isinstance(node, gast.AnnAssign)
                        and (isinstance(node, gast.AugAssign) or len(node.targets) == 1)):
                    _reject(parsed, sub, "this assignment to a subscript",
                            "write into one named array at a time: y[i] = value")
                if isinstance(sub, gast.Attribute) and isinstance(sub.ctx, gast.Store):
                    _reject(parsed, sub, "assignment to an attribute (`obj.a = ...`)",
                            "keep the value in a local variable")


def _subscripts_of_a_name(target):
    """``name[i]``, or a chain ``name[i][j]...`` (normalize.chained_writes splits it)."""
    node = target.value
    while isinstance(node, gast.Subscript):
        node = node.value
    return isinstance(node, gast.Name)


def with_block_kind(node, resolver):
    """``"stop_recording"``, ``"grad_of"`` or None: which srctrans block a ``with`` statement opens."""
    if len(node.items) != 1 or not isinstance(node.items[0].context_expr, gast.Call):
        return None
    opened = resolver.resolve(node.items[0].context_expr.func)
    try:
        return WITH_BLOCKS.get(opened)
    except TypeError:                               # an unhashable object
        return None


def _check_with_blocks(parsed, resolver):
    """The ``with`` statements and items srctrans accepts; any other ``with`` is rejected.

    ``with st.stop_recording():`` takes no arguments and no ``as``.
    ``with st.grad_of(h) as dh:`` takes one name; its block runs in the
    backward pass, so it may assign ``dh`` and names of its own (used nowhere
    else), writes into no array and holds no other ``with``. Neither block may
    ``return``, nor ``break`` or ``continue`` a loop around it.
    """
    function = parsed.node
    accepted = set()
    hooks = []
    for node in walk(function):
        if not isinstance(node, gast.With):
            continue
        kind = with_block_kind(node, resolver)
        if kind is None:
            construct, hint = UNSUPPORTED[gast.With]
            _reject(parsed, node, construct, hint)
        item = node.items[0]
        call = item.context_expr
        if kind == "stop_recording":
            if call.args or call.keywords or item.optional_vars is not None:
                _reject(parsed, node, "`with st.stop_recording(...) as ...`",
                        "write `with st.stop_recording():` (no arguments, no `as`)")
        else:
            if (len(call.args) != 1 or call.keywords or not isinstance(call.args[0], gast.Name)
                    or not isinstance(item.optional_vars, gast.Name)
                    or item.optional_vars.id == call.args[0].id):
                _reject(parsed, node, "this form of `with st.grad_of(...)`",
                        "write `with st.grad_of(h) as dh:` with the name of one variable `h` "
                        "and a new name `dh` for its gradient")
            hooks.append(node)
        _check_jumps_out(parsed, node)
        accepted.update((node, item))
    for stmt in function.body:
        if isinstance(stmt, gast.FunctionDef):
            for sub in walk(stmt):
                if isinstance(sub, gast.With):
                    _reject(parsed, sub, "`with` inside a local function",
                            "put the block in the differentiated function's own body")
    if hooks:
        _check_gradient_hooks(parsed, hooks)
    return accepted


def _check_jumps_out(parsed, block):
    """No ``return`` in a ``with`` block, and no ``break``/``continue`` of a loop around it."""
    def visit(statements, in_loop):
        for stmt in statements:
            if isinstance(stmt, gast.Return) or (
                    isinstance(stmt, (gast.Break, gast.Continue)) and not in_loop):
                _reject(parsed, stmt, f"`{type(stmt).__name__.lower()}` inside a `with` block",
                        "end the block normally; move the jump after it")
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    visit(inner, in_loop or isinstance(stmt, (gast.For, gast.While)))
    visit(block.body, False)


def _check_gradient_hooks(parsed, hooks):
    """Each ``with st.grad_of(h) as dh:`` block keeps to its own names and sees ``dh`` complete."""
    function = parsed.node
    hook_nodes = {id(n) for hook in hooks for n in walk(hook)}
    outside = set(parameter_names(function))
    for node in walk(function):
        if isinstance(node, gast.Name) and id(node) not in hook_nodes:
            outside.add(node.id)
    for hook in hooks:
        target = hook.items[0].optional_vars.id
        if target in outside:
            _error(parsed, hook, f"the gradient's name `{target}` is also used outside its "
                   f"`with st.grad_of(...)` block",
                   "give the gradient a name used only inside the block")
        for node in walk(hook):
            if node is not hook and isinstance(node, gast.With):
                _reject(parsed, node, "`with` inside a `with st.grad_of(...)` block",
                        "use one block per gradient, one after the other")
            if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.ctx, gast.Store):
                _reject(parsed, node, "writing into an array or attribute inside `with st.grad_of(...)`",
                        f"assign a new value instead, e.g. {target} = np.where(mask, 0.0, {target})")
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id in outside:
                _error(parsed, node, f"`{node.id}` is assigned inside `with st.grad_of(...)`, "
                       f"which runs in the backward pass, and used outside it",
                       "give the values the block computes names of their own")
    for statements, top in _statement_lists(function.body, True):
        for position, stmt in enumerate(statements):
            if isinstance(stmt, gast.With) and stmt in hooks:
                _check_hook_position(parsed, stmt, statements[:position], top, hooks)


def _check_hook_position(parsed, hook, before, top, hooks):
    """``with st.grad_of(h)`` follows the assignment of ``h`` in its block, and no read of ``h``
    comes in between: a read there would add to ``dh`` after the block ran."""
    name = hook.items[0].context_expr.args[0].id
    for stmt in reversed(before):
        if stmt in hooks:
            continue                                  # several blocks on one value are fine
        names = [n for n in walk_names(stmt) if n.id == name]
        if any(isinstance(n.ctx, gast.Store) for n in names):
            return
        if names:
            _error(parsed, names[0], f"`{name}` is used between its assignment and "
                   f"`with st.grad_of({name})`, so its gradient would not be complete when "
                   f"the block runs", f"move the block up, right after the assignment of `{name}`")
    if not (top and name in parameter_names(parsed.node)):
        _error(parsed, hook, f"`with st.grad_of({name})` must follow an assignment of `{name}` "
               f"in the same block", f"put the block right after the statement that assigns "
               f"`{name}` (or, for a parameter, at the start of the function)")


def _statement_lists(statements, top):
    """Every list of statements in ``statements`` and its nested blocks, with whether it is the
    function's own body."""
    yield statements, top
    for stmt in statements:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt) \
                    and not isinstance(stmt, gast.FunctionDef):
                yield from _statement_lists(inner, False)


def _reject(parsed, node, construct, hint):
    _error(parsed, node, f"{construct} is not supported", hint)


def _error(parsed, node, message, hint):
    raise UnsupportedSyntaxError(message, parsed.location(node), hint)

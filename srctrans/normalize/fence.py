"""The fence: one table of the syntax srctrans supports, enforced first.

Requires: a parsed user function.
Guarantees: every node of the function is of a supported kind, or an
:class:`UnsupportedSyntaxError` names the file, line and construct and says
what to do instead. Later passes may assume only supported syntax remains.
"""

import gast

from srctrans.errors import UnsupportedSyntaxError

RESERVED_PARAMETERS = ("output_gradients",)

# Supported node kinds. Statements and expressions not listed are rejected
# with the message of UNSUPPORTED, or a generic one.
SUPPORTED = frozenset({
    # statements
    gast.FunctionDef, gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return,
    gast.Expr, gast.Pass, gast.Assert, gast.If, gast.For, gast.While, gast.Break, gast.Continue,
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

# construct -> (what it is called, what to do instead)
UNSUPPORTED = {
    gast.Try: ("`try` statement", "move error handling outside the differentiated function"),
    gast.With: ("`with` statement", "move the `with` block outside the differentiated function"),
    gast.Yield: ("`yield` (a generator)", "return a value instead of yielding; collect results in a list"),
    gast.YieldFrom: ("`yield from` (a generator)", "return a value instead of yielding"),
    gast.Await: ("`await`", "differentiate a plain (non-async) function"),
    gast.AsyncFunctionDef: ("`async def`", "differentiate a plain (non-async) function"),
    gast.Global: ("`global` statement", "pass the value as an argument and return the new value"),
    gast.Nonlocal: ("`nonlocal` statement", "pass the value as an argument and return the new value"),
    gast.Delete: ("`del` statement", "drop the `del`; leaving the name bound is harmless"),
    gast.Import: ("`import` inside the function", "import at module level"),
    gast.ImportFrom: ("`import` inside the function", "import at module level"),
    gast.ClassDef: ("class definition inside the function", "define the class at module level"),
    gast.Raise: ("`raise` statement", "validate the inputs before calling the differentiated function"),
    gast.SetComp: ("set comprehension", "sets have no order to differentiate along; use a list or a tuple"),
    gast.Set: ("set display", "sets have no order to differentiate along; use a list or a tuple"),
    gast.Starred: ("starred expression (`*args`)", "pass the arguments one by one"),
    gast.NamedExpr: ("assignment expression (`:=`)", "assign with a separate `=` statement"),
}


def check(parsed):
    """Raise :class:`UnsupportedSyntaxError` at the first unsupported construct of ``parsed``."""
    function = parsed.node
    _check_signature(parsed)
    local_functions = _check_local_functions(parsed)
    for node in gast.walk(function):
        kind = type(node)
        if node is not function and kind is gast.FunctionDef and node not in local_functions:
            _reject(parsed, node, "function definition inside a block or another local function",
                    "define it at the top of the function, or at module level")
        if kind is gast.Lambda and node not in local_functions:
            _reject(parsed, node, "lambda used other than as `name = lambda ...`",
                    "assign the lambda to a name at the top of the function, or use `def`")
        if kind in SUPPORTED or kind in (gast.FunctionDef, gast.Lambda):
            _check_targets(parsed, node)
            _check_dict_display(parsed, node)
            continue
        if kind in UNSUPPORTED:
            construct, hint = UNSUPPORTED[kind]
            _reject(parsed, node, construct, hint)
        if isinstance(node, (gast.expr, gast.stmt)):
            _reject(parsed, node, f"`{kind.__name__}`", "rewrite it with supported syntax (see docs/syntax.md)")
    _check_control_flow(parsed)


def _check_local_functions(parsed):
    """The local functions srctrans inlines: top-level ``def``s and ``name = lambda ...``.

    Each must end with its only ``return`` (a lambda does), use no ``break``
    or ``continue`` and no ``*args``/``**kwargs``.
    """
    found = set()
    for stmt in parsed.node.body:
        if isinstance(stmt, gast.FunctionDef):
            node = stmt
            returns = [n for n in gast.walk(stmt) if isinstance(n, gast.Return)]
            if returns and returns != [stmt.body[-1]]:
                _reject(parsed, returns[0], "`return` before the end of a local function",
                        "not supported yet; assign the result to a name and return it at the end")
            for sub in gast.walk(stmt):
                if isinstance(sub, (gast.Break, gast.Continue)):
                    _reject(parsed, sub, f"`{type(sub).__name__.lower()}` in a local function",
                            "not supported yet; define the function at module level")
        elif (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda)
              and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            node = stmt.value
        else:
            continue
        if node.args.vararg is not None or node.args.kwarg is not None:
            _reject(parsed, node, "`*args` or `**kwargs` in a local function",
                    "define the function at module level")
        found.add(node)
    return found


def _check_control_flow(parsed):
    """``for`` over range(...), a sequence, or zip/enumerate of sequences."""
    for node in gast.walk(parsed.node):
        if isinstance(node, (gast.For, gast.comprehension)):
            iterator, target = node.iter, node.target
            call = iterator.func.id if (isinstance(iterator, gast.Call)
                                        and isinstance(iterator.func, gast.Name)) else None
            if (isinstance(iterator, gast.Call) and isinstance(iterator.func, gast.Attribute)
                    and iterator.func.attr in ("items", "values", "keys") and not iterator.args):
                call = "items"
            if call == "items":
                pass                                  # d.items(), d.values(), d.keys()
            elif call in ("zip", "enumerate"):
                if not (isinstance(target, gast.Tuple) and all(isinstance(t, gast.Name) for t in target.elts)):
                    _reject(parsed, node, f"`for` over {call}(...) without a tuple of names",
                            f"write for a, b in {call}(...)")
            elif call == "range" or isinstance(iterator, (gast.Name, gast.Attribute, gast.Subscript,
                                                          gast.List, gast.Tuple)):
                if not isinstance(target, gast.Name):
                    _reject(parsed, node, "`for` loop unpacking each item",
                            "loop with one name and unpack inside the loop")
            else:
                _reject(parsed, node, "`for` loop over this kind of iterable",
                        "not supported yet; loop over range(...), an array, a list, zip(...) or "
                        "enumerate(...)")
            if call != "range" or not isinstance(target, gast.Name) or not isinstance(node, gast.For):
                continue
            for inner in node.body:
                for sub in gast.walk(inner):
                    if (isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store)
                            and sub.id == node.target.id):
                        _reject(parsed, sub, f"assignment to the loop variable `{sub.id}` inside its loop",
                                "use another name for the new value")
        if (isinstance(node, (gast.For, gast.While)) and node.orelse):
            _reject(parsed, node, "`else` clause of a loop",
                    "not supported yet; set a flag before `break` and test it after the loop")


def _check_signature(parsed):
    args = parsed.node.args
    for param in args.posonlyargs + args.args + args.kwonlyargs:
        if param.id in RESERVED_PARAMETERS:
            _reject(parsed, param, f"parameter named `{param.id}`",
                    f"rename it: srctrans reserves the keyword `{param.id}` for the cotangent")


def _check_dict_display(parsed, node):
    if isinstance(node, gast.Dict) and None in node.keys:
        _reject(parsed, node, "`**` inside a dict display",
                "not supported yet; build the dict with explicit keys")


def _check_targets(parsed, node):
    if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        for target in targets:
            for sub in gast.walk(target):
                if isinstance(sub, gast.Subscript) and isinstance(sub.ctx, gast.Store) and not (
                        target is sub and isinstance(sub.value, gast.Name)
                        and not isinstance(node, gast.AnnAssign)
                        and (isinstance(node, gast.AugAssign) or len(node.targets) == 1)):
                    _reject(parsed, sub, "this assignment to a subscript",
                            "write into one named array at a time: y[i] = value")
                if isinstance(sub, gast.Attribute) and isinstance(sub.ctx, gast.Store):
                    _reject(parsed, sub, "assignment to an attribute (`obj.a = ...`)",
                            "keep the value in a local variable")


def _reject(parsed, node, construct, hint):
    raise UnsupportedSyntaxError(f"{construct} is not supported", parsed.location(node), hint)

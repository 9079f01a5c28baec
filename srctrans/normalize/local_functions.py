r"""Functions defined inside the function being differentiated, inlined where it calls them.

Requires: the A-normal form's normaliser (:mod:`srctrans.normalize.anf`), which collects
the local ``def``\ s and lambdas assigned to names as it meets them.
Guarantees: a call of a local function becomes its body, in the caller's normal form,
its parameters bound to the call's arguments (or their defaults) and its locals renamed
apart; a parameter the body never assigns reads the argument's name itself, where the
argument is one, and ``*args`` is the tuple of the other positional arguments. Its
``return`` value is a temporary. The names it reads from the enclosing
function are read where it is called, as Python would. A local function called
recursively, called without a value for a parameter, with ``*xs`` or ``**d``, or passed
as a value, is refused at the user's line.
"""

import gast

from srctrans.emit.printer import unparse
from srctrans.errors import UnsupportedSyntaxError
from srctrans.nodes import assign, clone
from srctrans.normalize.callees import spelled_out
from srctrans.treewalk import replace_children, walk


class LocalFunctions:
    """The local functions' part of the A-normal form's normaliser, which it is mixed into:
    the host provides ``parsed``, ``namer``, ``local_functions`` (name -> FunctionDef or
    Lambda), ``_inlining`` (the names being inlined), ``_flat``, ``_atom``, ``_assign``,
    ``_statement`` and ``_placed``."""

    def _names_local_function(self, node):
        return isinstance(node, gast.Lambda) or isinstance(node, gast.Name) \
            and node.id in self.local_functions

    def _refuse_local_function_values(self, call):
        """A local function is inlined where it is called; passed as a value (to st.grad,
        st.jvp, or any function) it has no value to pass."""
        for argument in list(call.args) + [k.value for k in call.keywords]:
            if isinstance(argument, gast.Name) and argument.id in self.local_functions:
                raise UnsupportedSyntaxError(
                    f"`{argument.id}`, a function defined inside the function being "
                    f"differentiated, passed to `{unparse(call.func)}`", self.parsed.location(call),
                    f"define `{argument.id}` at module level, passing what it reads from here "
                    "as arguments")

    def _known_entries(self, stmt, name, entries):
        """``stmt`` reading the entries of ``*args`` (the tuple ``name`` of ``entries``) by
        constant positions as those entries, its ``len(...)`` as the number it is, and
        passing it on (``g(a, *args)``) as the entries one by one: the passes after see
        which value each position holds, a test of the count is a constant, and a call
        passing it on is spelled out."""
        def known(node):
            position = _entry_read(node, name, len(entries))
            if position is not None:
                return clone(entries[position])
            if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
                    and isinstance(node.args[0], gast.Name) and node.args[0].id == name \
                    and isinstance(node.func, gast.Name) and self.resolver.resolve(node.func) is len:
                return gast.Constant(len(entries), None)
            return node
        def spread(node):                   # f(a, *args): f(a, its entries)
            if isinstance(node, gast.Starred) and isinstance(node.value, gast.Name) \
                    and node.value.id == name:
                return [clone(e) for e in entries]
            return known(node)

        return replace_children(stmt, spread)

    def _refuse_unbindable(self, name, positional, rest, call):
        """A call whose arguments the parameters cannot take one by one is refused at its line:
        ``*xs`` or ``**d`` in it, or more positional arguments than there are parameters."""
        if not spelled_out(call):
            raise UnsupportedSyntaxError(
                f"`*` or `**` in the call of the local function `{name}`",
                self.parsed.location(call), "pass each argument by itself")
        if rest is None and len(call.args) > len(positional):
            raise UnsupportedSyntaxError(
                f"the call of `{name}` passes {len(call.args)} positional arguments, and it "
                f"takes {len(positional)}", self.parsed.location(call), "fix the call's arguments")

    def _inline(self, name, call, out):
        """The body of the local function ``name``, with its arguments bound, in ``out``.

        Its parameters and locals get fresh names; the names it reads from the
        enclosing function are read where it is called, as Python would.
        """
        function = self.local_functions[name]
        if name in self._inlining:
            raise UnsupportedSyntaxError(
                f"recursive call of the local function `{name}`",
                self.parsed.location(call), "compute the result without the function calling itself")
        arguments = function.args
        positional = [p.id for p in arguments.posonlyargs + arguments.args]
        keyword_only = [p.id for p in arguments.kwonlyargs]
        rest = arguments.vararg.id if arguments.vararg is not None else None
        self._refuse_unbindable(name, positional, rest, call)
        values = dict(zip(positional, call.args))
        values.update({k.arg: k.value for k in call.keywords})
        defaults = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
        defaults.update({p: d for p, d in zip(keyword_only, arguments.kw_defaults) if d is not None})
        locals_ = set(positional + keyword_only + ([rest] if rest else []))
        body = function.body if isinstance(function, gast.FunctionDef) else \
            [gast.copy_location(gast.Return(function.body), function.body)]
        for stmt in body:
            locals_ |= {n.id for n in walk(stmt)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        reassigned = {n.id for stmt in body for n in walk(stmt)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        renamed = {local: self.namer.fresh(local) for local in sorted(locals_)}
        for parameter in positional + keyword_only:
            if parameter not in values and parameter not in defaults:
                raise UnsupportedSyntaxError(f"the call of `{name}` gives no value for `{parameter}`",
                                             self.parsed.location(call), "pass every argument")
            value = self._flat(clone(values.get(parameter, defaults.get(parameter))), out)
            if isinstance(value, gast.Name) and parameter not in reassigned:
                renamed[parameter] = value.id        # read the argument's own name: no copy
            else:
                out.append(assign(renamed[parameter], value))
        entries = None
        if rest is not None:                      # *args: the tuple of the other positionals
            entries = [self._atom(clone(a), out) for a in call.args[len(positional):]]
            out.append(assign(renamed[rest], gast.Tuple(entries, gast.Load())))
        result = self.namer.temporary(name.lstrip("_"))
        self._inlining.append(name)
        try:
            for stmt in body:                 # each at its own line (errors, comments)
                stmt = renamed_apart(clone(stmt), renamed)
                if entries is not None and rest not in reassigned:
                    stmt = self._known_entries(stmt, renamed[rest], entries)
                produced = []
                if isinstance(stmt, gast.Return):
                    value = stmt.value if stmt.value is not None else gast.Constant(None, None)
                    self._assign([gast.Name(result, gast.Store(), None, None)], value, produced)
                else:
                    self._statement(stmt, produced)
                out.extend(self._placed(produced, stmt))
        finally:
            self._inlining.pop()
        return gast.Name(result, gast.Load(), None, None)


def _entry_read(node, name, count):
    """The position ``node`` reads of the tuple ``name`` of ``count`` entries (``name[1]``,
    ``name[-1]``), or None."""
    if not (isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load)
            and isinstance(node.value, gast.Name) and node.value.id == name):
        return None
    index, sign = node.slice, 1
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub):   # args[-1]
        index, sign = index.operand, -1
    if isinstance(index, gast.Constant) and type(index.value) is int \
            and -count <= sign * index.value < count:
        return sign * index.value % count
    return None


def renamed_apart(tree, renamed):
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id in renamed:
            node.id = renamed[node.id]
    return tree

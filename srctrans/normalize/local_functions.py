r"""Functions defined inside the function being differentiated, inlined where it calls them.

Requires: the A-normal form's normaliser (:mod:`srctrans.normalize.anf`), which collects
the local ``def``\ s and lambdas assigned to names as it meets them.
Guarantees: a call of a local function becomes its body, in the caller's normal form,
its parameters bound to the call's arguments (or their defaults) and its locals renamed
apart; a parameter the body never assigns reads the argument's name itself, where the
argument is one. Its ``return`` value is a temporary. The names it reads from the enclosing
function are read where it is called, as Python would. A local function called
recursively, called without a value for a parameter, or passed as a value, is refused
at the user's line.
"""

import gast

from srctrans.emit.printer import unparse
from srctrans.errors import UnsupportedSyntaxError
from srctrans.nodes import assign, clone
from srctrans.treewalk import walk


class LocalFunctions:
    """The local functions' part of the A-normal form's normaliser, which it is mixed into:
    the host provides ``parsed``, ``namer``, ``local_functions`` (name -> FunctionDef or
    Lambda), ``_inlining`` (the names being inlined), ``_flat``, ``_assign``,
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
        values = dict(zip(positional, call.args))
        values.update({k.arg: k.value for k in call.keywords})
        defaults = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
        defaults.update({p: d for p, d in zip(keyword_only, arguments.kw_defaults) if d is not None})
        locals_ = set(positional + keyword_only)
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
        result = self.namer.temporary(name.lstrip("_"))
        self._inlining.append(name)
        try:
            for stmt in body:                 # each at its own line (errors, comments)
                stmt = renamed_apart(clone(stmt), renamed)
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


def renamed_apart(tree, renamed):
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id in renamed:
            node.id = renamed[node.id]
    return tree

"""In-place effects: rewritten into writes srctrans models, or refused.

Requires: a function after the fence and desugar (loops over ranges, jumps as
flags), before A-normal form: augmented assignments are still visible.
Guarantees, after :func:`model_effects`:
  * the in-place NumPy calls srctrans models are whole-array writes
    ``y[...] = value`` (so the reverse pass saves and restores ``y`` as for
    any write): ``np.copyto(y, v)``, ``y.fill(c)``, ``y.sort(axis)``,
    ``np.add.at(y, i, v)``, ``np.put(y, i, v)``, ``np.put_along_axis(y, i, v,
    axis)`` and ``y.put(i, v)``;
  * a parameter the function writes into (``x[i] = v``) is copied first
    (``x = rt.argument_copy(x)``, or ``rt.dict_copy(x)`` for one the function
    uses as a dict): its derivative is with respect to its value on entry, and
    the caller's array is left as it was;
  * any other call that can only act by changing its arguments raises
    :class:`UnsupportedSyntaxError` at the user's line: a NumPy call whose
    result is unused, another in-place array method, ``out=``, and a call of
    a user function that writes into one of its parameters;
  * no array is changed in place while another name that may share its
    memory, bound before the change, is read after it
    (:func:`~srctrans.normalize.aliases.check_aliases`).
"""

import gast
import numpy as np

from srctrans import runtime
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.compile import is_generated
from srctrans.errors import NoSourceError, UnsupportedSyntaxError
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS
from srctrans.normalize.aliases import (check_aliases, is_numpy, makes_new_value, root_of,
                                       used_as_dicts)
from srctrans.nodes import (assign, clone, load, local_names, module_of, parameter_names,
                            resolved_runtime_call)
from srctrans.parse.resolve import MISSING, Resolver
from srctrans.parse.source import parse_function
from srctrans.places import is_installed
from srctrans.rules import REGISTRY
from srctrans.treewalk import own_nodes, walk

# Array methods that change the array; their result (None) is not the point.
_IN_PLACE_METHODS = frozenset({"fill", "sort", "put", "partition", "resize", "itemset",
                               "setfield", "setflags", "byteswap"})
def model_effects(parsed, resolver, aliases):
    """Rewrite the modelled in-place calls of ``parsed.node`` and refuse the other effects.

    ``aliases`` maps the runtime's reserved name to the name generated code
    uses for it (the rewritten calls call the runtime).
    """
    _Rewriter(parsed, resolver, aliases).block(parsed.node.body)
    if is_generated(parsed.fn):
        return        # a derivative srctrans generated: it copies what a later write would change
    _copy_written_arguments(parsed.node, aliases)
    _check_user_calls(parsed, resolver)
    check_aliases(parsed, resolver)


class _Rewriter:
    def __init__(self, parsed, resolver, aliases):
        self.parsed = parsed
        self.resolver = resolver
        self.aliases = aliases

    def block(self, statements):
        for position, stmt in enumerate(statements):
            for node in own_nodes(stmt):          # (the nested blocks are visited below)
                if isinstance(node, gast.Call):
                    self._check_out(node)
            if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
                replaced = self._statement_call(stmt, stmt.value)
                if replaced is not None:
                    statements[position] = gast.copy_location(replaced, stmt)
                    for node in walk(replaced):
                        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
                            gast.copy_location(node, stmt)
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                    self.block(inner)

    def _fail(self, node, construct, hint):
        raise UnsupportedSyntaxError(f"{construct} is not supported", self.parsed.location(node),
                                     hint)

    def _check_out(self, call):
        if self.resolver.resolve(call.func) is np.ndarray and (
                len(call.args) >= 3 or any(k.arg == "buffer" for k in call.keywords)):
            self._fail(call, "`np.ndarray(...)` over a buffer (an array viewing another's memory)",
                       "make the array from the values instead: `np.asarray(values).reshape(shape)`")
        if any(k.arg == "out" for k in call.keywords) and is_numpy(self.resolver.resolve(call.func)):
            self._fail(call, "`out=` (writing a NumPy result into an existing array)",
                       "assign the result instead: `y = np.sin(x)`, or `y[...] = np.sin(x)` to "
                       "keep writing into y")

    def _statement_call(self, stmt, call):
        """The write replacing the in-place call ``call`` (a statement), or None to keep it."""
        func = call.func
        callee = self.resolver.resolve(func)
        if callee is np.copyto and len(call.args) == 2 and not call.keywords:
            return _write_all(call.args[0], call.args[1])
        if callee == np.add.at and len(call.args) == 3 and not call.keywords:
            return _write_all(call.args[0], self._runtime("add_at", call.args))
        if callee is np.put and 3 <= len(call.args) + len(call.keywords) <= 4:
            return _write_all(call.args[0], self._runtime("put", call.args, call.keywords))
        if callee is np.put_along_axis and len(call.args) + len(call.keywords) == 4:
            return _write_all(call.args[0], self._runtime("put_along", call.args, call.keywords))
        if is_numpy(callee):
            what = getattr(callee, "__name__", "this NumPy function")
            self._fail(call, f"calling `{what}` for its effect on an argument (its result is unused)",
                       "srctrans models np.copyto, np.add.at, np.put, np.put_along_axis and the "
                       "methods fill, sort "
                       "and put; compute the new array and assign it instead")
        if isinstance(func, gast.Attribute) and func.attr in _IN_PLACE_METHODS \
                and callee is MISSING:
            array = func.value
            if func.attr == "fill" and len(call.args) == 1 and not call.keywords:
                return _write_all(array, call.args[0])
            if func.attr == "put" and 2 <= len(call.args) + len(call.keywords) <= 3:
                return _write_all(array, self._runtime("put", [array] + call.args, call.keywords))
            if func.attr == "sort" and _holds_a_list(self.parsed.node, root_of(array)):
                self._fail(call, "sorting a list in place (`xs.sort()`)",
                           "sort a copy as an array instead: xs = np.sort(np.array(xs))")
            if func.attr == "sort" and len(call.args) <= 2 and all(
                    k.arg in ("axis", "kind") for k in call.keywords):
                options = dict(zip(("axis", "kind"), call.args))
                options.update((k.arg, k.value) for k in call.keywords)
                numpy = gast.Name(self.aliases[NUMPY_ALIAS], gast.Load(), None, None)
                sort = gast.Call(gast.Attribute(numpy, "sort", gast.Load()),
                                 [_load_copy(array), options.get("axis", gast.Constant(-1, None))],
                                 [gast.keyword("kind", options["kind"])] if "kind" in options else [])
                anno.set_(sort, Anno.CALLEE, np.sort)
                return _write_all(array, sort)
            self._fail(call, f"the in-place array method `.{func.attr}(...)` in this form",
                       "srctrans models y.fill(c), y.sort(axis) and y.put(ind, v); compute the "
                       "new array and assign it instead")
        return None

    def _runtime(self, name, args, keywords=()):
        func = gast.Attribute(gast.Name(self.aliases[RUNTIME_ALIAS], gast.Load(), None, None),
                              name, gast.Load())
        call = gast.Call(func, [_load_copy(a) for a in args],
                         [gast.keyword(k.arg, k.value) for k in keywords])
        anno.set_(call, Anno.CALLEE, getattr(runtime, name))
        return call


def _holds_a_list(function, name):
    """Whether ``name`` is ever bound to a list display, a comprehension or ``list(...)``."""
    for node in walk(function):
        if isinstance(node, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == name for t in node.targets):
            value = node.value
            if isinstance(value, (gast.List, gast.ListComp)) or (
                    isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                    and value.func.id in ("list", "sorted")):
                return True
    return False


def _load_copy(node):
    copied = clone(node)
    for sub in walk(copied):
        if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
            sub.ctx = gast.Load()
    return copied


def _write_all(array, value):
    """``array[...] = value`` (``array`` a name: the fence accepts no other write target)."""
    target = gast.Subscript(_load_copy(array), gast.Constant(Ellipsis, None), gast.Store())
    return gast.Assign([target], value, None)


# -- user functions that write into their arguments -----------------------------

def _check_user_calls(parsed, resolver):
    written_by = {}                  # id(callee) -> (parsed callee, what it writes), read once each
    for node in walk(parsed.node):
        if not isinstance(node, gast.Call):
            continue
        callee = resolver.resolve(node.func)
        code = getattr(callee, "__code__", None)
        if code is None or callee is parsed.fn or is_numpy(callee) \
                or module_of(callee).split(".")[0] == "srctrans":
            continue
        if is_installed(callee) and not REGISTRY.differentiated_through(callee):
            continue      # an installed package's function: a primitive, by rule, never by source
        if id(callee) not in written_by:
            try:
                called = parse_function(callee)
                written_by[id(callee)] = called, _written_parameter(
                    called.node, Resolver(callee, local_names(called.node)))
            except (NoSourceError, OSError, TypeError, SyntaxError):
                written_by[id(callee)] = None, None
        called, found = written_by[id(callee)]
        if found is not None:
            written, where = found
            name = getattr(callee, "__name__", "the function")
            raise UnsupportedSyntaxError(
                f"writing into `{written}`, which may be (a view of) an argument: `{name}` "
                f"(called at line {getattr(node, 'lineno', '?')}) would change its caller's array",
                called.location(where),
                f"write into a copy: {written} = {written}.copy() first, or return the new array "
                f"and assign it at the call")


def _copy_written_arguments(function, aliases):
    """``x = rt.argument_copy(x)`` first, for each parameter ``x`` the function writes into
    (``x[i] = v``, ``x[i] += v``): the derivative is with respect to the value the argument
    had on entry, and computing it leaves the caller's array as it was. (A caller that
    differentiates through a function writing into its parameter is refused: there the
    change would be seen, see :func:`_check_user_calls`.)"""
    parameters = parameter_names(function)
    written, first_write = {}, {}
    for position, stmt in enumerate(function.body):
        for node in walk(stmt):
            targets = node.targets if isinstance(node, gast.Assign) else \
                [node.target] if isinstance(node, gast.AugAssign) else []
            for target in targets:
                base = target
                while isinstance(base, gast.Subscript):
                    base = base.value
                if base is not target and isinstance(base, gast.Name) and base.id in parameters:
                    written.setdefault(base.id, node)
                    first_write.setdefault(base.id, position)
    # x = dict(x) first, in the body itself: the writes go to the function's own copy
    rebound_first = {name for position, stmt in enumerate(function.body)
                     for name in _plainly_bound(stmt) if position < first_write.get(name, -1)}
    dicts = used_as_dicts(function)
    function.body[:0] = [
        gast.copy_location(assign(name, resolved_runtime_call(
            aliases, "dict_copy" if name in dicts else "argument_copy", [load(name)])),
            written[name])
        for name in parameters if name in written and name not in rebound_first]


def _plainly_bound(stmt):
    """The names a top-level ``name = ...`` statement binds (whatever else it does)."""
    if isinstance(stmt, gast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, gast.Name)]
    return []


def _written_parameter(function, resolver):
    """``(parameter, node)``: the first parameter of ``function`` that it writes into
    (``p[i] = v``, ``p[i] += v``, ``np.copyto(p, v)``, ``p.fill(c)``...) and where; or None.
    A parameter its body rebinds first, at its top level, to a new array (``p = p.copy()``,
    ``p = p * 1.0``, ``p = np.array(p)``) is the function's own from there on."""
    params = set(parameter_names(function))
    for stmt in function.body:
        found = _write_into(stmt, params)
        if found is not None:
            return found
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in params
                and makes_new_value(stmt.value, resolver)):
            params.discard(stmt.targets[0].id)
    return None


def _write_into(stmt, params):
    """``(parameter, node)`` of the first write into one of ``params`` in ``stmt``, or None."""
    for node in walk(stmt):
        targets = []
        if isinstance(node, gast.Assign):
            targets = node.targets
        elif isinstance(node, gast.AugAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, gast.Subscript) and root_of(target) in params:
                return root_of(target), node
        if isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Attribute) and func.attr in _IN_PLACE_METHODS \
                    and root_of(func.value) in params:
                return root_of(func.value), node
            if any(k.arg == "out" for k in node.keywords):
                out = next(k.value for k in node.keywords if k.arg == "out")
                if root_of(out) in params:
                    return root_of(out), node
            if isinstance(func, gast.Attribute) and func.attr in ("copyto", "put", "at") \
                    and node.args and root_of(node.args[0]) in params:
                return root_of(node.args[0]), node
    return None

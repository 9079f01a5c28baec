"""Calls of Python's builtins on containers, read as what srctrans differentiates.

Requires: a call of the function being normalised (:mod:`srctrans.normalize.anf`), whose
names the normaliser resolves.
Guarantees: ``dict(...)``, ``sorted(...)``, ``max``/``min`` with ``key=``, ``getattr(obj,
"name")``, a record's constructor and ``d.get``, ``d.keys()``, ``d.values()``,
``d.items()`` of a local value become displays, comprehensions and subscripts that pick the
same entries, in the same order; what picks them is a constant (``rt.sort_order``,
``rt.best_index``, ``rt.has_key``):

    sorted(xs, key=f)     ->  [items[_position] for _position in rt.sort_order(items, f, False)]
    max(xs, key=f)        ->  items[rt.best_index(items, f, True)]
    d.get(k, v)           ->  d[k] if rt.has_key(d, k) else v
    dict(zip(ks, vs))     ->  {_key: _value for _key, _value in zip(ks, vs)}
    dict(d)               ->  rt.dict_copy(d)
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.errors import UnsupportedSyntaxError
from srctrans.naming import RUNTIME_ALIAS
from srctrans.nodes import clone, load, resolved_runtime_call, store
from srctrans.normalize.records import record_fields
from srctrans.treewalk import walk


class ContainerCalls:
    """The container builtins' part of the A-normal form's normaliser, which it is mixed
    into: the host provides ``parsed``, ``resolver``, ``namer``, ``runtime_name``,
    ``_atom(expr, out, prefer=None)`` and ``_reads_local(expr)``."""

    def _container_call(self, call, out):
        """``dict(...)``, ``sorted(...)``, ``max``/``min`` with ``key=``, ``getattr(obj,
        "name")`` (the attribute ``obj.name``), and ``d.get``, ``d.keys()``,
        ``d.values()``, ``d.items()`` of a local value, rewritten into what srctrans
        differentiates: the entries they pick are read by subscripts (the
        selection itself is a constant: ``rt.sort_order``, ``rt.best_index``). None for
        any other call."""
        func = call.func
        if isinstance(func, gast.Name) and func.id not in self.resolver.local_names:
            callee = self.resolver.resolve(func)
            if callee is dict:
                return self._dict_call(call, out)
            if callee is sorted:
                return self._sorted_call(call, out)
            if (callee is max or callee is min) and any(k.arg == "key" for k in call.keywords):
                return self._keyed_extremum(call, out, callee is max)
            found = record_fields(callee, call)
            if found is not None:                    # Params(w, b=x): rt.record(Params, [w, x])
                fields, attributes = found
                return self._runtime_call("record", [func, gast.List(fields, gast.Load()),
                                                     gast.Constant(attributes, None)])
            if callee is getattr and len(call.args) == 2 and not call.keywords and isinstance(
                    call.args[1], gast.Constant) and isinstance(call.args[1].value, str) \
                    and call.args[1].value.isidentifier():
                return gast.Attribute(call.args[0], call.args[1].value, gast.Load())  # m.W
            return None
        if isinstance(func, gast.Attribute) and func.attr in ("get", "keys", "values", "items") \
                and self._reads_local(func.value):
            return self._dict_method(call, out)
        return None

    def _dict_call(self, call, out):
        location = self.parsed.location(call)
        if len(call.args) > 1 or call.args and call.keywords or any(k.arg is None for k in call.keywords):
            raise UnsupportedSyntaxError(
                "`dict(...)` with pairs and keywords together, or with `**`", location,
                "build it in steps: d = dict(pairs), then d[name] = value")
        if not call.args:
            return gast.Dict([gast.Constant(k.arg, None) for k in call.keywords],
                             [k.value for k in call.keywords])
        source = call.args[0]
        if isinstance(source, (gast.List, gast.Tuple)) and all(
                isinstance(e, gast.Tuple) and len(e.elts) == 2 for e in source.elts):
            return gast.Dict([e.elts[0] for e in source.elts], [e.elts[1] for e in source.elts])
        if _is_pairs(source):                   # dict(zip(ks, vs)), dict(d.items())
            key, value = self.namer.fresh("_key"), self.namer.fresh("_value")
            target = gast.Tuple([store(key), store(value)],
                                gast.Store())
            return gast.DictComp(load(key), load(value),
                                 [gast.comprehension(target, source, [], 0)])
        mapping = self._atom(source, out)        # a copy of a dict (whose cotangent passes)
        return self._runtime_call("dict_copy", [mapping])

    def _dict_method(self, call, out):
        attr = call.func.attr
        mapping = self._atom(call.func.value, out)
        if attr == "get":
            if call.keywords or not 1 <= len(call.args) <= 2:
                return None
            key = self._atom(call.args[0], out)
            default = call.args[1] if len(call.args) == 2 else gast.Constant(None, None)
            found = gast.Subscript(clone(mapping), clone(key), gast.Load())
            return gast.IfExp(self._runtime_call("has_key", [mapping, key]), found, default)
        if call.args or call.keywords:
            return None
        keys = self._runtime_call("keys_of", [mapping])
        if attr == "keys":
            return keys
        key = self.namer.fresh("_key")
        entry = gast.Subscript(clone(mapping), load(key), gast.Load())
        element = entry if attr == "values" else gast.Tuple([load(key), entry], gast.Load())
        return gast.ListComp(element, [gast.comprehension(store(key), keys, [], 0)])

    def _sorted_call(self, call, out):
        options = {k.arg: k.value for k in call.keywords}
        if len(call.args) != 1 or set(options) - {"key", "reverse"}:
            return None
        items = self._atom(_as_list(call.args[0]) or self._builtin_call(list, call.args), out,
                           prefer="items")
        order = self._runtime_call("sort_order", [
            items, options.get("key", gast.Constant(None, None)),
            options.get("reverse", gast.Constant(False, None))])
        position = self.namer.fresh("_position")
        return gast.ListComp(gast.Subscript(clone(items), load(position), gast.Load()),
                             [gast.comprehension(store(position), order, [], 0)])

    def _keyed_extremum(self, call, out, largest):
        if any(k.arg != "key" for k in call.keywords) or not call.args:
            raise UnsupportedSyntaxError(
                f"`{call.func.id}(...)` with `default=`", self.parsed.location(call),
                "test for an empty sequence before the call")
        key = next(k.value for k in call.keywords if k.arg == "key")
        items = self._atom(gast.List(list(call.args), gast.Load()) if len(call.args) > 1 else
                           _as_list(call.args[0]) or self._builtin_call(list, call.args), out,
                           prefer="items")
        position = self._runtime_call("best_index", [items, key, gast.Constant(largest, None)])
        return gast.Subscript(clone(items), position, gast.Load())

    def _runtime_call(self, helper, args):
        return resolved_runtime_call({RUNTIME_ALIAS: self.runtime_name}, helper, args)

    def _builtin_call(self, builtin, args):
        call = gast.Call(load(builtin.__name__), list(args), [])
        anno.set_(call, Anno.CALLEE, builtin)   # the builtin even if the module rebinds the name
        return call

    def _key_lambda(self, function):
        """A lambda passed to rank items (``key=``), its parameters renamed apart: it runs
        as written and is never differentiated."""
        function = clone(function)
        renamed = {a.id: self.namer.fresh("_" + a.id) for a in function.args.args}
        for node in walk(function):
            if isinstance(node, gast.Name) and node.id in renamed:
                node.id = renamed[node.id]
        return function


def _is_pairs(source):
    """``zip(a, b)`` or ``d.items()``: an iterable of (key, value) pairs."""
    if isinstance(source, gast.Call) and isinstance(source.func, gast.Name):
        return source.func.id == "zip" and len(source.args) == 2 and not source.keywords
    return (isinstance(source, gast.Call) and isinstance(source.func, gast.Attribute)
            and source.func.attr == "items" and not source.args and not source.keywords)


def _as_list(node):
    """A list display for a list or tuple display (already the items), else None."""
    if isinstance(node, (gast.List, gast.Tuple)):
        return gast.List(list(node.elts), gast.Load())
    return None

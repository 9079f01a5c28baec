"""A-normal form: every operation on local values gets its own statement.

Requires: a fenced function (only supported syntax).
Guarantees: the body is a list of statements of these shapes, each annotated
with the :class:`Origin` of the user statement it came from:

  name = atom | op(atom, ...) | call(atom, ..., key=atom) | atom.attr | atom[index]
         | (atom, ...) | [atom, ...]
  name, name, ... = atom                      (tuple unpacking)
  name[index] = atom                          (a subscript write)
  return atom                                 (the last statement only)
  call(atom, ...)                             (an expression statement)
  assert ...                                  (kept as written)
  if atom: block else: block
  for name in range(atom, ...): block
  while name: block                           (the block ends by recomputing name)
  with grad_of(name) as name: block           (run by the backward pass only)

The statements of a ``with st.stop_recording():`` block take its place,
annotated ``Anno.NO_GRADIENT``.

An *atom* is a Name, a Constant, or a static expression: one that reads no
local variable and calls nothing (``np.pi``, ``-1``, ``(0, 1)``), which can
carry no derivative and so stays inline where the user wrote it. A list or
tuple literal of atoms may appear as a call argument (``np.stack([a, b])``).
Every Call node carries ``Anno.CALLEE`` (the resolved live object, or MISSING)
unless it calls a method of a local value.
"""

import types

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno, Origin
from srctrans.emit.printer import unparse
from srctrans.errors import UnsupportedSyntaxError
from srctrans.interface import API
from srctrans.naming import RUNTIME_ALIAS, operator_name
from srctrans.parse.resolve import MISSING
from srctrans.nodes import clone, load, resolved_runtime_call, store
from srctrans.normalize.dispatch import (bound_name, is_call_through_value, switch,
                                         user_method_of)
from srctrans.normalize.lifting import lifted_derivative_call, lifted_jvp_call
from srctrans.normalize.desugar import is_range as _is_range, to_index_loop
from srctrans.normalize.fence import with_block_kind
from srctrans.normalize.records import record_fields
from srctrans.rules.constants import casts_to_integers
from srctrans.rules.registry import REGISTRY
from srctrans.treewalk import walk


def normalize(parsed, resolver, namer, runtime_name="rt"):
    """Rewrite ``parsed.node``'s body into A-normal form, in place.

    ``runtime_name`` is the name generated code uses for the runtime package
    (``np.r_[a, b]`` becomes a call of ``rt.r_concat``).
    """
    _Normalizer(parsed, resolver, namer, runtime_name).run()


# the index tricks NumPy spells as subscripts, and the runtime functions that compute them
_INDEX_TRICKS = {id(np.r_): "r_concat", id(np.c_): "c_concat"}


class _Normalizer:
    def __init__(self, parsed, resolver, namer, runtime_name="rt"):
        self.parsed = parsed
        self.resolver = resolver
        self.namer = namer
        self.runtime_name = runtime_name

    def run(self):
        function = self.parsed.node
        self._depth = -1
        self.local_functions = {}                 # name -> FunctionDef or Lambda, inlined at calls
        self._built = set()                        # the temporaries comprehensions build
        self._inlining = []
        function.body = self._block(function.body)

    def _block(self, statements):
        """The normal form of a list of statements (nested blocks included)."""
        self._depth += 1
        out = []
        self._statements(statements, out)
        self._depth -= 1
        return out

    def _statements(self, statements, out):
        """The normal forms of ``statements``, each annotated with its origin, into ``out``."""
        for stmt in statements:
            origin = Origin(stmt.lineno, self._statement_text(stmt))
            produced = []
            self._statement(stmt, produced)
            for new in produced:
                for node in walk(new):        # errors about any part name the user's line
                    if getattr(node, "lineno", None) is None and "lineno" in node._attributes:
                        node.lineno = stmt.lineno
                    if isinstance(node, gast.stmt) and anno.get(node, Anno.ORIGIN) is None:
                        anno.set_(node, Anno.ORIGIN, origin)
            out.extend(produced)

    def _statement_text(self, stmt):
        text = self.parsed.line_text(stmt.lineno)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            return text                                 # the header line says what it is
        if getattr(stmt, "end_lineno", stmt.lineno) != stmt.lineno:
            text += " ..."
        return text

    # -- statements ----------------------------------------------------------
    def _statement(self, stmt, out):
        if isinstance(stmt, gast.FunctionDef):
            self.local_functions[stmt.name] = stmt
            return
        if (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda)
                and isinstance(stmt.targets[0], gast.Name)):
            self.local_functions[stmt.targets[0].id] = stmt.value
            return
        if isinstance(stmt, gast.Assign):
            self._assign(stmt.targets, stmt.value, out)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self._assign([stmt.target], stmt.value, out)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            # y[i] += v  ->  y[i] = y[i] + v, with the index computed once
            index = self._index(stmt.target.slice, out)
            array = gast.Name(stmt.target.value.id, gast.Load(), None, None)
            old = self._atom(gast.Subscript(array, index, gast.Load()), out)
            value = self._atom(gast.BinOp(old, stmt.op, stmt.value), out)
            out.append(self._write(stmt.target.value.id, clone(index), value))
        elif isinstance(stmt, gast.AugAssign):
            target = gast.Name(stmt.target.id, gast.Load(), None, None)
            value = gast.BinOp(target, stmt.op, stmt.value)
            self._assign([stmt.target], value, out)
        elif isinstance(stmt, gast.Return):
            value = stmt.value if stmt.value is not None else gast.Constant(None, None)
            out.append(gast.Return(self._atom(value, out, prefer="out")))
        elif isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return                                  # a docstring or a bare constant
            out.append(gast.Expr(self._flat(stmt.value, out)))
        elif isinstance(stmt, gast.Pass):
            return
        elif isinstance(stmt, gast.If):
            test = self._atom(stmt.test, out, prefer="cond")
            new = gast.If(test, self._block(stmt.body), self._block(stmt.orelse))
            out.append(self._with_origin(new, stmt))
        elif isinstance(stmt, gast.For):
            iterator = gast.Call(stmt.iter.func, [self._atom(a, out) for a in stmt.iter.args], [])
            anno.set_(iterator, Anno.CALLEE, self.resolver.resolve(stmt.iter.func))
            new = gast.For(gast.Name(stmt.target.id, gast.Store(), None, None), iterator,
                           self._block(stmt.body), [], None)
            if anno.get(stmt, Anno.CHECKPOINTED) is not None:
                anno.set_(new, Anno.CHECKPOINTED, anno.get(stmt, Anno.CHECKPOINTED))
            out.append(self._with_origin(new, stmt))
        elif isinstance(stmt, gast.While):
            # while c: body  ->  _cond = c; while _cond: body; _cond = c
            condition = self.namer.temporary("cond")
            out.append(self._with_origin(_assign_name(condition, self._flat(stmt.test, out)), stmt))
            again = []
            again.append(_assign_name(condition, self._flat(clone(stmt.test), again)))
            for new in again:
                self._with_origin(new, stmt)
            body = self._block(stmt.body) + again
            new = gast.While(gast.Name(condition, gast.Load(), None, None), body, [])
            out.append(self._with_origin(new, stmt))
        elif isinstance(stmt, gast.With):
            self._with(stmt, out)
        else:                                           # assert: kept as written
            out.append(stmt)

    def _with(self, stmt, out):
        """``with st.stop_recording():`` -> its statements, in place, marked ``Anno.NO_GRADIENT``;
        ``with st.grad_of(h) as dh:`` -> kept, with its block in normal form (the fence
        accepts no other ``with``)."""
        call = stmt.items[0].context_expr
        if with_block_kind(stmt, self.resolver) == "stop_recording":
            inner = []
            self._statements(stmt.body, inner)
            for new in inner:
                for node in walk(new):
                    if isinstance(node, gast.stmt):
                        anno.set_(node, Anno.NO_GRADIENT, True)
            out.extend(inner)
            return
        opened = gast.Call(call.func, [gast.Name(call.args[0].id, gast.Load(), None, None)], [])
        anno.set_(opened, Anno.CALLEE, self.resolver.resolve(call.func))
        target = gast.Name(stmt.items[0].optional_vars.id, gast.Store(), None, None)
        new = gast.With([gast.withitem(opened, target)], self._block(stmt.body), None)
        out.append(self._with_origin(new, stmt))

    def _write(self, array, index, value):
        """``array[index] = value``."""
        target = gast.Subscript(gast.Name(array, gast.Load(), None, None), index, gast.Store())
        return gast.Assign([target], value, None)

    def _assign(self, targets, value, out):
        if len(targets) == 1 and isinstance(targets[0], gast.Subscript):
            value = self._atom(value, out)
            index = self._index(targets[0].slice, out)
            out.append(self._write(targets[0].value.id, index, value))
            return
        if len(targets) == 1 and isinstance(targets[0], gast.Name):
            name = targets[0].id
            start = len(out)
            flat = self._flat(value, out)
            if isinstance(flat, gast.Name) and flat.id in self._built and not any(
                    isinstance(n, gast.Name) and n.id == name for stmt in out[start:]
                    for n in walk(stmt)):
                # d = {k: ... for ...}, d = dict(e): build d itself, not a temporary that d
                # would alias (a later d[k] = v would change the temporary the loop saved)
                for stmt in out[start:]:
                    _rename(stmt, {flat.id: name})
                return
            if self._depth > 0 and not isinstance(flat, gast.Name) and any(
                    isinstance(n, gast.Name) and n.id == name for n in walk(flat)):
                # x = f(x) inside a block (SSA renames it outside): compute into a
                # temporary first, so that the new x and the old x have different
                # names for the reverse pass (y = y * x in a loop)
                temporary = self.namer.temporary(_describe(flat))
                out.append(_assign_name(temporary, flat))
                flat = gast.Name(temporary, gast.Load(), None, None)
            out.append(_assign_name(name, flat))
            return
        if len(targets) == 1 and _parallel(targets[0], value):
            self._assign_in_parallel(targets[0].elts, value.elts, out)
            return
        source = self._atom(value, out)
        for target in targets:
            if isinstance(target, gast.Name):
                out.append(_assign_name(target.id, source))
            else:
                self._unpack(target, source, out)

    def _assign_in_parallel(self, targets, values, out):
        """``a, b = e1, e2`` as ``a = e1`` and ``b = e2`` (no tuple whose cotangent the reverse
        pass would pack and pick apart). Python evaluates every value before it assigns a
        target, so a target a later value reads is assigned, through a temporary, last."""
        late = []
        for position, (target, value) in enumerate(zip(targets, values)):
            later_reads = {n.id for v in values[position + 1:] for n in walk(v)
                           if isinstance(n, gast.Name)}
            if later_reads.isdisjoint(_stored_names(target)):
                self._assign([target], value, out)
            else:
                temporary = self.namer.temporary("value")
                out.append(_assign_name(temporary, self._flat(value, out)))
                late.append((target, gast.Name(temporary, gast.Load(), None, None)))
        for target, temporary in late:
            self._assign([target], temporary, out)

    def _unpack(self, target, source, out):
        """``a, (b, c) = source`` becomes flat unpackings of names."""
        names, nested = [], []
        for element in target.elts:
            if isinstance(element, gast.Name):
                names.append(element.id)
            else:
                temporary = self.namer.temporary("unpacked")
                names.append(temporary)
                nested.append((element, temporary))
        stores = [gast.Name(n, gast.Store(), None, None) for n in names]
        out.append(gast.Assign([gast.Tuple(stores, gast.Store())], _load(source), None))
        for element, temporary in nested:
            self._unpack(element, gast.Name(temporary, gast.Load(), None, None), out)

    # -- expressions ---------------------------------------------------------
    def _atom(self, expr, out, prefer=None):
        """An atom equal to ``expr``, lifting the computation into ``out``."""
        if self._is_atom(expr):
            return expr
        flat = self._flat(expr, out)
        name = self.namer.temporary(prefer or _describe(flat))
        out.append(_assign_name(name, flat))
        return gast.Name(name, gast.Load(), None, None)

    def _is_atom(self, expr):
        return isinstance(expr, (gast.Name, gast.Constant)) or self.resolver.is_static(expr)

    def _flat(self, expr, out):
        """``expr`` with every operand an atom (the right-hand side of one statement)."""
        if self._is_atom(expr):
            return expr
        if isinstance(expr, gast.BinOp):
            return gast.BinOp(self._atom(expr.left, out), expr.op, self._atom(expr.right, out))
        if isinstance(expr, gast.UnaryOp):
            return gast.UnaryOp(expr.op, self._atom(expr.operand, out))
        if isinstance(expr, gast.Compare):
            return gast.Compare(self._atom(expr.left, out), expr.ops,
                                [self._atom(c, out) for c in expr.comparators])
        if isinstance(expr, gast.Call):
            return self._call(expr, out)
        if isinstance(expr, gast.Attribute):
            return gast.Attribute(self._atom(expr.value, out), expr.attr, gast.Load())
        if isinstance(expr, gast.Subscript):
            trick = _INDEX_TRICKS.get(id(self.resolver.resolve(expr.value)))
            if trick is not None:
                return self._call(self._index_trick(trick, expr), out)
            return gast.Subscript(self._atom(expr.value, out), self._index(expr.slice, out),
                                  gast.Load())
        if isinstance(expr, (gast.Tuple, gast.List)):
            return type(expr)([self._atom(e, out) for e in expr.elts], gast.Load())
        if isinstance(expr, gast.Dict) and None not in expr.keys:
            return gast.Dict([self._atom(k, out) for k in expr.keys],
                             [self._atom(v, out) for v in expr.values])
        if isinstance(expr, gast.JoinedStr):
            return expr
        if isinstance(expr, gast.IfExp):
            return self._choice(expr.test, expr.body, expr.orelse, out)
        if isinstance(expr, (gast.ListComp, gast.GeneratorExp, gast.DictComp)):
            return self._comprehension(expr, out)
        if isinstance(expr, gast.BoolOp):
            # a and b -> b if a else a;  a or b -> a if a else b  (b evaluated only when needed)
            value = self._atom(expr.values[0], out)
            for operand in expr.values[1:]:
                if isinstance(expr.op, gast.And):
                    value = self._atom(gast.IfExp(value, operand, value), out, prefer="and")
                else:
                    value = self._atom(gast.IfExp(value, value, operand), out, prefer="or")
            return value
        raise AssertionError(f"the fence let through {type(expr).__name__}")

    def _index_trick(self, helper, expr):
        """``np.r_[a, b]`` -> ``rt.r_concat((a, b))`` (``np.c_`` likewise), for parts that are
        values; slices and string directives are refused."""
        parts = expr.slice.elts if isinstance(expr.slice, gast.Tuple) else [expr.slice]
        for part in parts:
            if isinstance(part, gast.Slice) or isinstance(part, gast.Constant) \
                    and isinstance(part.value, str):
                raise UnsupportedSyntaxError(
                    f"`{'np.r_' if helper == 'r_concat' else 'np.c_'}` with a slice or a string "
                    f"directive", self.parsed.location(expr),
                    "build the pieces with np.arange or np.linspace and join them with "
                    "np.concatenate or np.column_stack")
        return self._runtime_call(helper, [gast.Tuple(list(parts), gast.Load())])

    def _comprehension(self, expr, out):
        """``[elt for t in xs if c]`` -> a list built by ``append`` in a loop (nested ``for``s too);
        ``{k: v for ...}`` -> a dict built by item writes."""
        if isinstance(expr, gast.DictComp):
            name = self.namer.temporary("dict")
            self._built.add(name)
            out.append(_assign_name(name, gast.Dict([], [])))
            item = gast.Subscript(gast.Name(name, gast.Load(), None, None), expr.key, gast.Store())
            body = [gast.Assign([item], expr.value, None)]
        else:
            name = self.namer.temporary("list")
            self._built.add(name)
            out.append(_assign_name(name, gast.List([], gast.Load())))
            append = gast.Attribute(gast.Name(name, gast.Load(), None, None), "append", gast.Load())
            body = [gast.Expr(gast.Call(append, [expr.elt], []))]
        for generator in reversed(expr.generators):
            for condition in reversed(generator.ifs):
                body = [gast.If(condition, body, [])]
            loop = gast.For(generator.target, generator.iter, body, [], None)
            before = [] if _is_range(generator.iter) else to_index_loop(loop, self.namer)
            body = before + [loop]
        for stmt in body:
            for node in walk(stmt):
                if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
                    node.lineno = getattr(expr, "lineno", None)
            self._statement(stmt, out)
        return gast.Name(name, gast.Load(), None, None)

    def _choice(self, test, body, orelse, out):
        """``body if test else orelse`` as an ``if`` statement assigning one temporary."""
        condition = self._atom(test, out, prefer="cond")
        name = self.namer.temporary("choice")
        branches = []
        for expression in (body, orelse):
            block = []
            block.append(_assign_name(name, self._flat(expression, block)))
            branches.append(block)
        out.append(gast.If(condition, branches[0], branches[1]))
        return gast.Name(name, gast.Load(), None, None)

    def _call(self, call, out):
        func = call.func
        if isinstance(func, gast.Call) and func.args and self._names_local_function(func.args[0]) \
                and API.is_grad(self.resolver.resolve(func.func)):
            return lifted_derivative_call(self, call, out)    # st.grad(h)(x), h a closure
        if len(call.args) == 3 and self._names_local_function(call.args[0]) \
                and isinstance(call.args[1], gast.Tuple) and isinstance(call.args[2], gast.Tuple) \
                and API.is_jvp(self.resolver.resolve(func)):
            return self._call(lifted_jvp_call(self, call), out)   # st.jvp(h, (x,), (v,))
        for made in (call, func) if isinstance(func, gast.Call) else (call,):   # st.grad(g)(x)
            self._refuse_local_function_values(made)
        if not call.args and not call.keywords and isinstance(func, gast.Name):
            empty = {list: gast.List([], gast.Load()), dict: gast.Dict([], [])}
            callee = self.resolver.resolve(func)
            for kind, display in empty.items():
                if callee is kind:
                    return display                   # list() is [], a list the function made
        if isinstance(func, gast.Name) and func.id in self.local_functions:
            return self._inline(func.id, call, out)
        rewritten = self._container_call(call, out)
        if rewritten is not None:
            for node in walk(rewritten):        # at the user's line, for errors and comments
                if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
                    gast.copy_location(node, call)
            return self._flat(rewritten, out)
        if is_call_through_value(call, self):        # model(x), self.forward(x), act(x)
            return switch(call, self, out)
        if call.args and self.resolver.resolve(func) is np.einsum:
            call = gast.Call(func, einsum_with_subscripts(call.args), call.keywords)
        is_method = (isinstance(func, gast.Attribute) and not self._is_atom(func.value)
                     or isinstance(func, gast.Attribute) and self._reads_local(func.value))
        if is_method:
            func = gast.Attribute(self._atom(func.value, out), func.attr, gast.Load())
        args = [self.argument(a, out) for a in call.args]
        keywords = [gast.keyword(k.arg, self.argument(k.value, out)) for k in call.keywords]
        new = gast.Call(func, args, keywords)
        if isinstance(func, gast.Call):                  # st.grad(g)(x)
            anno.set_(new, Anno.CALLEE, self._made_derivative(func))
        elif not is_method:
            callee = anno.get(call, Anno.CALLEE)          # set already on a call srctrans wrote
            callee = self.resolver.resolve(func) if callee is None else callee
            callee = REGISTRY.computed_as(callee)         # np.gradient: runtime/stencils.py
            method = user_method_of(callee)
            if method is not None:
                # net.loss(x), model(x) of an object the function does not own: Net.loss(net, x)
                receiver = func.value if isinstance(callee, types.MethodType) else func
                new = gast.Call(bound_name(self, method), [receiver] + args, keywords)
                callee = method
            anno.set_(new, Anno.CALLEE, callee)
        elif func.attr == "astype" and self._casts_to_integers(call):
            anno.set_(new, Anno.CONSTANT, True)
        return new

    # -- the builtins and dict methods of containers, as subscripts, displays and comprehensions

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
        key, value = self.namer.fresh("_key"), self.namer.fresh("_value")
        if _is_pairs(source):                   # dict(zip(ks, vs)), dict(d.items())
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

    def _casts_to_integers(self, call):
        """Whether ``x.astype(dtype)`` casts to an integer or boolean dtype written statically."""
        dtype = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "dtype"), None)
        if dtype is None or not self._is_atom(dtype) or isinstance(dtype, gast.Name) \
                and dtype.id in self.resolver.local_names:
            return False
        value = dtype.value if isinstance(dtype, gast.Constant) else self.resolver.resolve(dtype)
        return casts_to_integers(value)
    def _made_derivative(self, call):
        """The object ``st.grad(g, ...)`` makes when every argument is static, else MISSING.

        It is made once, here: the derivative pass calls its generated code instead.
        """
        if not API.is_grad(self.resolver.resolve(call.func)):
            return MISSING
        values = [self.static_value(a) for a in call.args]
        keywords = {k.arg: self.static_value(k.value) for k in call.keywords}
        if MISSING in values or MISSING in keywords.values() or None in keywords:
            return MISSING
        return API.grad(*values, **keywords)

    def static_value(self, node):
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Tuple):
            values = tuple(self.static_value(e) for e in node.elts)
            return MISSING if MISSING in values else values
        if self._is_atom(node):
            return self.resolver.resolve(node)
        return MISSING

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
        body = function.body if isinstance(function, gast.FunctionDef) else [gast.Return(function.body)]
        for stmt in body:
            locals_ |= {n.id for n in walk(stmt)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        renamed = {local: self.namer.fresh(local) for local in sorted(locals_)}
        for parameter in positional + keyword_only:
            if parameter not in values and parameter not in defaults:
                raise UnsupportedSyntaxError(f"the call of `{name}` gives no value for `{parameter}`",
                                             self.parsed.location(call), "pass every argument")
            value = values.get(parameter, defaults.get(parameter))
            out.append(_assign_name(renamed[parameter], self._flat(clone(value), out)))
        result = self.namer.temporary(name)
        self._inlining.append(name)
        try:
            for stmt in body:
                stmt = _rename(clone(stmt), renamed)
                if isinstance(stmt, gast.Return):
                    value = stmt.value if stmt.value is not None else gast.Constant(None, None)
                    self._assign([gast.Name(result, gast.Store(), None, None)], value, out)
                else:
                    self._statement(stmt, out)
        finally:
            self._inlining.pop()
        return gast.Name(result, gast.Load(), None, None)

    def _reads_local(self, expr):
        return any(isinstance(n, gast.Name) and (n.id in self.resolver.local_names
                                                 or n.id in self.resolver.generated)
                   for n in walk(expr))

    def argument(self, expr, out):
        """Call arguments may be list or tuple literals of atoms (``np.stack([a, b])``), and a
        lambda that ranks items (the fence lets one through only as ``key=``)."""
        if isinstance(expr, gast.Lambda):
            return self._key_lambda(expr)
        if isinstance(expr, gast.Starred):             # helper(r, *args): the own *args passed on
            return gast.Starred(self._atom(expr.value, out), gast.Load())
        if isinstance(expr, (gast.List, gast.Tuple)) and not self._is_atom(expr):
            return type(expr)([self._atom(e, out) for e in expr.elts], gast.Load())
        return self._atom(expr, out)

    def _index(self, index, out):
        if isinstance(index, gast.Slice):
            return gast.Slice(*(None if part is None else self._atom(part, out)
                                for part in (index.lower, index.upper, index.step)))
        if isinstance(index, gast.Tuple):
            return gast.Tuple([self._index(e, out) for e in index.elts], gast.Load())
        return self._atom(index, out)


    def _with_origin(self, node, stmt):
        anno.set_(node, Anno.ORIGIN, Origin(stmt.lineno, self._statement_text(stmt)))
        node.lineno = stmt.lineno
        return node


def _rename(tree, renamed):
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id in renamed:
            node.id = renamed[node.id]
    return tree


def _describe(flat):
    """A word for what a flat expression computes, used to name its temporary."""
    if isinstance(flat, (gast.BinOp, gast.UnaryOp)):
        return operator_name(flat.op)
    if isinstance(flat, gast.Call):
        func = flat.func
        if isinstance(func, gast.Attribute):
            return func.attr
        if isinstance(func, gast.Name):
            return func.id
        return "call"
    if isinstance(flat, gast.Attribute):
        return flat.attr
    if isinstance(flat, gast.Subscript):
        return "item"
    if isinstance(flat, gast.Compare):
        return "cmp"
    if isinstance(flat, (gast.Tuple, gast.List)):
        return "tuple"
    if isinstance(flat, gast.Dict):
        return "dict"
    return "t"


def _parallel(target, value):
    """Whether ``target = value`` is ``a, (b, c) = e1, (e2, e3)``: literal sequences of one
    length, without ``*``, storing into distinct names."""
    if not (isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple, gast.List))
            and len(target.elts) == len(value.elts)):
        return False
    if any(isinstance(e, gast.Starred) for e in target.elts + value.elts):
        return False
    stored = [n for n in walk(target) if not isinstance(n, (gast.Tuple, gast.List, gast.expr_context))]
    return all(isinstance(n, gast.Name) for n in stored) and len({n.id for n in stored}) == len(stored)


def _stored_names(target):
    return {n.id for n in walk(target) if isinstance(n, gast.Name)}


def _assign_name(name, value):
    return gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)


def _load(node):
    if isinstance(node, gast.Name):
        return gast.Name(node.id, gast.Load(), None, None)
    return node


def einsum_with_subscripts(args):
    """``np.einsum``'s arguments in the subscripts form when they are in the interleaved one
    with literal lists of axes (``a, [0, 1], b, [1, 2]`` -> ``'ab,bc', a, b``); else ``args``."""
    if isinstance(args[0], gast.Constant) or len(args) < 2:
        return args
    operands, sublists = args[0::2], [_axes_literal(a) for a in args[1::2]]
    output = None
    if len(args) % 2:                         # the last argument is the output's axes
        output, operands = _axes_literal(args[-1]), operands[:-1]
        if output is None:
            return args
    if None in sublists:
        return args                           # not literal: the derivative pass refuses it
    text = ",".join(map(_letters, sublists)) + ("" if output is None else "->" + _letters(output))
    return [gast.Constant(text, None)] + operands


def _axes_literal(node):
    """The axes of a literal list or tuple of ints and ``...``, or None."""
    if not isinstance(node, (gast.List, gast.Tuple)):
        return None
    axes = [e.value for e in node.elts if isinstance(e, gast.Constant)]
    if len(axes) != len(node.elts) or not all(
            a is Ellipsis or type(a) is int and 0 <= a < 52 for a in axes):
        return None
    return axes


def _letters(axes):
    return "".join("..." if a is Ellipsis else "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[a]
                   for a in axes)


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

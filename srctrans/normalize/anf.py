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
from srctrans.errors import UnsupportedSyntaxError
from srctrans.interface import API
from srctrans.naming import temporary_word
from srctrans.parse.resolve import MISSING
from srctrans.nodes import assign, clone, literal_truth
from srctrans.normalize.callees import inlinable
from srctrans.normalize.dispatch import (bound_name, is_call_through_value, switch,
                                         user_method_of)
from srctrans.normalize.lifting import lifted_derivative_call, lifted_jvp_call
from srctrans.normalize.assignments import Assignments
from srctrans.normalize.container_calls import ContainerCalls
from srctrans.normalize.desugar import is_range as _is_range, to_index_loop
from srctrans.normalize.einsum_form import einsum_with_subscripts
from srctrans.normalize.local_functions import LocalFunctions
from srctrans.normalize.fence import with_block_kind
from srctrans.normalize.written_out import consumed_generators, summed, written_out
from srctrans.rules.constants import casts_to_integers
from srctrans.rules.registry import REGISTRY
from srctrans.treewalk import walk


def normalize(parsed, resolver, namer, runtime_name="rt"):
    """Rewrite ``parsed.node``'s body into A-normal form, in place.

    ``runtime_name`` is the name generated code uses for the runtime package
    (``np.r_[a, b]`` becomes a call of ``rt.r_concat``).
    """
    _Normalizer(parsed, resolver, namer, runtime_name).run()


def normalize_statements(parsed, resolver, namer, statements, runtime_name="rt"):
    """The A-normal form of ``statements`` a pass made for ``parsed``'s function (each with
    a line number), with their calls resolved as :func:`normalize` resolves them."""
    normalizer = _Normalizer(parsed, resolver, namer, runtime_name)
    return normalizer._block(statements)


# the index tricks NumPy spells as subscripts, and the runtime functions that compute them
_INDEX_TRICKS = {id(np.r_): "r_concat", id(np.c_): "c_concat"}


class _Normalizer(Assignments, ContainerCalls, LocalFunctions):
    def __init__(self, parsed, resolver, namer, runtime_name="rt"):
        self.parsed = parsed
        self.resolver = resolver
        self.namer = namer
        self.runtime_name = runtime_name
        self._depth = -1
        self.local_functions = {}                 # name -> FunctionDef or Lambda, inlined at calls
        self._built = set()                        # the temporaries comprehensions build
        self._inlining = []

    def run(self):
        function = self.parsed.node
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
            produced = []
            self._statement(stmt, produced)
            out.extend(self._placed(produced, stmt))

    def _placed(self, produced, stmt):
        """``produced`` (the normal form of ``stmt``), each part without a line given
        ``stmt``'s, and each statement without an origin ``stmt``'s."""
        origin = Origin(stmt.lineno, self._statement_text(stmt))
        for new in produced:
            for node in walk(new):        # errors about any part name the user's line
                if getattr(node, "lineno", None) is None and "lineno" in node._attributes:
                    node.lineno = stmt.lineno
                if isinstance(node, gast.stmt) and anno.get(node, Anno.ORIGIN) is None:
                    anno.set_(node, Anno.ORIGIN, origin)
        return produced

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
            out.append(self._with_origin(assign(condition, self._flat(stmt.test, out)), stmt))
            again = []
            again.append(assign(condition, self._flat(clone(stmt.test), again)))
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

    # -- expressions ---------------------------------------------------------
    def _atom(self, expr, out, prefer=None):
        """An atom equal to ``expr``, lifting the computation into ``out``."""
        expr = _chosen(expr)
        if self._is_atom(expr):
            return expr
        flat = self._flat(expr, out)
        name = self.namer.temporary(prefer or temporary_word(flat))
        out.append(assign(name, flat))
        return gast.Name(name, gast.Load(), None, None)

    def _is_atom(self, expr):
        return isinstance(expr, (gast.Name, gast.Constant)) or self.resolver.is_static(expr)

    def _flat(self, expr, out):
        """``expr`` with every operand an atom (the right-hand side of one statement)."""
        expr = _chosen(expr)
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
        """``[elt for t in xs if c]`` -> a list built by ``append`` in a loop (nested ``for``s too),
        or its display over a display of names (``normalize/written_out.py``); ``{k: v for
        ...}`` -> a dict built by item writes."""
        if isinstance(expr, gast.ListComp) and (display := written_out(expr)) is not None:
            return self._atom(gast.copy_location(display, expr), out)
        if isinstance(expr, gast.DictComp):
            name = self.namer.temporary("dict")
            self._built.add(name)
            out.append(assign(name, gast.Dict([], [])))
            item = gast.Subscript(gast.Name(name, gast.Load(), None, None), expr.key, gast.Store())
            body = [gast.Assign([item], expr.value, None)]
        else:
            name = self.namer.temporary("list")
            self._built.add(name)
            out.append(assign(name, gast.List([], gast.Load())))
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
        """``body if test else orelse`` as an ``if`` statement assigning one temporary; the
        branch itself when the test compares literals (``1 > 1``, which an inlined helper's
        ``len(args) > 1`` becomes: the other branch may read past its entries)."""
        known = literal_truth(test)
        if known is not None:
            return self._flat(body if known else orelse, out)
        condition = self._atom(test, out, prefer="cond")
        name = self.namer.temporary("choice")
        branches = []
        for expression in (body, orelse):
            block = []
            block.append(assign(name, self._flat(expression, block)))
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
        if isinstance(func, gast.Name) and func.id not in self.resolver.local_names:
            call = consumed_generators(call, self.resolver.resolve)   # sum(f(w) for w in (a, b))
            total = summed(call, self.resolver.resolve)
            if total is not None:
                return self._flat(total, out)
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
                self.resolver.note_method(callee, method,       # (its class may rebind it)
                                          func.attr if isinstance(func, gast.Attribute) else None)
                callee = method
            if isinstance(callee, types.FunctionType) and callee in self.parsed.inlined \
                    and inlinable(self, new):
                # a small helper of the module: its body, here
                return self._inline(self.parsed.inlined[callee], new, out)
            anno.set_(new, Anno.CALLEE, callee)
        elif func.attr == "astype" and self._casts_to_integers(call):
            anno.set_(new, Anno.CONSTANT, True)
        return new

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


def _chosen(expr):
    """``expr``, or the branch it takes when it is a choice on literals: an inlined helper's
    ``args[1] if len(args) > 1 else 1.0`` is ``2.0 if 2 > 1 else 1.0``, a static value that
    would otherwise stay in the code as written (see :meth:`_Normalizer._choice`)."""
    while isinstance(expr, gast.IfExp):
        known = literal_truth(expr.test)
        if known is None:
            break
        expr = expr.body if known else expr.orelse
    return expr

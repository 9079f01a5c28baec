"""Forward mode: a function that computes its output and the output's tangent.

Requires: a function in A-normal form with SSA names, and its active names
(``analyse.activity``).
Guarantees: :func:`forward` returns the statements of

  ``NAME_jvp(*params, *, d<p>...)`` -> ``(output, d<output>)``

where each ``d<p>`` is the tangent of a selected parameter ``p``. Control
flow keeps its shape: every active statement is followed by the statement
computing its tangent from the tangents of its operands (the rule registry's
JVP templates), so loops and branches need no tape. Every definition of an
active name defines its tangent, with zeros when its value does not depend on
the selected inputs (``acc = 0.0`` before a loop that adds to it), so a tangent
is defined wherever its primal is.
"""

import collections
import inspect
import types

import gast

from srctrans.runtime.custom import CustomGradient
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.calls import (STARRED_REFUSAL, Generator, describe, is_library,
                                         resolve_call, starred_to_varargs)
from srctrans.differentiate.templates import tangent_of_call
from srctrans.errors import MissingRuleError, UnsupportedSyntaxError
from srctrans.naming import function_base, NUMPY_ALIAS, RUNTIME_ALIAS
from srctrans.optimise.dce import targets_of
from srctrans.nodes import (
    appended_to, assign, clone, load, parameter_names, popped_from, resolved_runtime_call,
    runtime_call, store)
from srctrans.parse.resolve import MISSING
from srctrans.rules import ATTRIBUTES, REGISTRY, operator_primal
from srctrans.treewalk import walk


class ForwardResult:
    """What :func:`forward` produces.

    Attributes:
      body: the statements of the JVP function, up to (not including) its return.
      output: the node the function returns.
      tangent: the expression of the output's tangent.
      tangents: selected parameter name -> its tangent parameter name.
      closure: closure name -> live object the generated code reads (JVPs of callees).
      tangent_statements: the statements srctrans added (the rest are the user's).
    """

    def __init__(self):
        self.body = []
        self.output = None
        self.tangent = None
        self.tangents = {}
        self.closure = {}
        self.tangent_statements = []


def forward(unit):
    """Generate the JVP statements of ``unit`` (a :class:`~srctrans.front_end.Unit`)."""
    return _Tangents(unit).run()


class _Tangents(Generator):
    def __init__(self, unit):
        self.unit = unit
        self.namer = unit.namer
        self.active = unit.active
        self.aliases = {RUNTIME_ALIAS: unit.aliases[RUNTIME_ALIAS],
                        NUMPY_ALIAS: unit.aliases[NUMPY_ALIAS]}
        self.result = ForwardResult()
        self._origin = None
        # names assigned at one place (not parameters, never changed in place): a tangent that
        # statement defines as zeros is zero wherever the name is read, so products with it
        # are left out (the JVP of a gradient: the tangent of its seed)
        self.assigned_once = _assigned_once(unit.function) - \
            set(parameter_names(unit.function)) - set(unit.written_arrays)
        self.zero_tangents = set()

    def run(self):
        body = self.unit.function.body
        result = self.result
        for name in self.unit.wrt:
            result.tangents[name] = self.tangent_name(name)
        prologue = []
        for name in parameter_names(self.unit.function):   # reassigned later, read first
            if name in self.active and name not in self.unit.wrt:
                prologue.append(self._zero(name))
        result.body = prologue + self._block(body[:-1])
        self._report_missing_rules("forward")
        result.output = body[-1].value
        result.tangent = self.tangent(result.output)
        if result.tangent is None:              # the output does not depend on the inputs
            result.tangent = self._zeros_like(result.output)
        return result

    def tangent_name(self, name):
        return self.namer.adjoint(name)

    def tangent(self, atom):
        """The tangent of an atom (a Name read), or None when it is a constant (or zero)."""
        if isinstance(atom, gast.Name) and atom.id in self.zero_tangents:
            return None
        if isinstance(atom, gast.Name) and atom.id in self.active:
            return load(self.tangent_name(atom.id))
        if isinstance(atom, (gast.List, gast.Tuple)):
            parts = [self.tangent(e) for e in atom.elts]
            if all(p is None for p in parts):
                return None
            elements = [p if p is not None else self._zeros_like(e) for p, e in zip(parts, atom.elts)]
            return type(atom)(elements, gast.Load())
        return None

    # -- blocks -----------------------------------------------------------------
    def _block(self, statements):
        out = []
        for stmt in statements:
            self._origin = anno.get(stmt, Anno.ORIGIN)
            if isinstance(stmt, gast.If):
                out.append(anno.copy(stmt, gast.If(stmt.test, self._block(stmt.body) or [gast.Pass()],
                                                   self._block(stmt.orelse))))
            elif isinstance(stmt, gast.For):
                body = self._block(stmt.body)
                if isinstance(stmt.target, gast.Name) and stmt.target.id in self.active:
                    # the counter of a loop over range: an int, whose tangent is zero (a
                    # tangent of the same name from before the loop must not leak in)
                    body.insert(0, self._zero(stmt.target.id, gast.Constant(0, None)))
                out.append(anno.copy(stmt, gast.For(stmt.target, stmt.iter, body, [], None)))
            elif isinstance(stmt, gast.While):
                out.append(anno.copy(stmt, gast.While(stmt.test, self._block(stmt.body), [])))
            elif isinstance(stmt, gast.With):         # st.grad_of: code of the backward pass only
                continue
            elif anno.get(stmt, Anno.NO_GRADIENT):    # from a stop_recording block: constants
                out.append(stmt)
                out.extend(self._zero(name) for name in targets_of(stmt) if name in self.active)
            else:
                out.extend(self._simple(stmt))
        return out

    def _emit(self, stmt):
        """A tangent statement (the optimiser may simplify it; the user's own are left as written)."""
        anno.set_(stmt, Anno.ORIGIN, self._origin)
        self.result.tangent_statements.append(stmt)
        return stmt

    def _define(self, name, expression, value=None):
        """``d<name> = expression``; zeros when the expression is None (like ``value`` if given)."""
        if expression is None:
            return self._zero(name, value)
        if name in self.unit.written_arrays and not isinstance(expression, (gast.Dict, gast.List)):
            # written into later: its tangent must be an array (or list) of its own
            expression = self._runtime("writable_copy", [expression])
        return self._emit(assign(self.tangent_name(name), expression))

    def _zero(self, name, value=None):
        """``d<name> = zeros``: ``0.0`` for a number literal, ``[]`` for an empty list."""
        if isinstance(value, gast.List) and not value.elts:
            zero = gast.List([], gast.Load())
        elif isinstance(value, gast.Constant) and type(value.value) in (int, float):
            zero = gast.Constant(0.0, None)
        else:
            zero = self._zeros_like(load(name))
        if name in self.assigned_once:
            self.zero_tangents.add(name)
        return self._emit(assign(self.tangent_name(name), zero))

    def _zeros_like(self, node):
        if isinstance(node, gast.Constant) and type(node.value) in (int, float):
            return gast.Constant(0.0, None)
        # (resolved: dead code elimination drops a zero tangent nothing reads)
        return resolved_runtime_call(self.aliases, "zeros_like", [clone(node)])

    def _runtime(self, function, args):
        return runtime_call(self.aliases, function, args)

    # -- statements -------------------------------------------------------------
    def _simple(self, stmt):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            return self._subscript_write(stmt)
        appended = appended_to(stmt)
        if appended is not None:
            xs, value = appended
            if xs not in self.unit.fresh_arrays:        # as reverse mode: the caller's list
                self._refuse_append(stmt, xs)
            if xs not in self.active:
                return [stmt]
            tangent = self.tangent(value) or self._zeros_like(value)
            extend = gast.Call(gast.Attribute(load(self.tangent_name(xs)), "append", gast.Load()),
                               [tangent], [])
            return [stmt, self._emit(gast.Expr(extend))]
        if isinstance(stmt, gast.Expr):
            popped = popped_from(stmt.value)
            if popped is not None and popped[0].id in self.active:
                return [stmt, self._emit(gast.Expr(self._tangent_pop(popped)))]  # stay aligned
        if not isinstance(stmt, gast.Assign):
            return [stmt]
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            popped = popped_from(stmt.value)
            if target.id not in self.active and popped is not None and popped[0].id in self.active:
                # a constant popped from a tape of tangents too: pop its tangent, to stay aligned
                return [stmt, self._emit(gast.Expr(self._tangent_pop(popped)))]
            if target.id not in self.active:
                return [stmt]
            return self._assignment(target.id, stmt.value, stmt)
        names = [e.id for e in target.elts]                     # a, b = value
        if not any(n in self.active for n in names):
            return [stmt]
        source = self.tangent(stmt.value)
        if source is None:
            return [stmt] + [self._zero(n) for n in names if n in self.active]
        whole = self.namer.temporary("d" + "_".join(names))
        out = [stmt, self._emit(assign(whole, source))]
        for position, name in enumerate(names):
            if name in self.active:
                part = gast.Subscript(load(whole), gast.Constant(position, None), gast.Load())
                out.append(self._define(name, part))
        return out

    def _subscript_write(self, stmt):
        """``y[index] = v``: ``dy[index] = dv`` (zeros when ``v`` is a constant)."""
        target = stmt.targets[0]
        array = target.value.id
        if array not in self.active:
            return [stmt]
        if array not in self.unit.fresh_arrays:
            self._fail(stmt, UnsupportedSyntaxError,
                       f"writing into `{array}`, which may be (a view of) an argument",
                       f"write into a copy: {array} = {array}.copy() (or np.zeros_like(...)) first")
        value = self.tangent(stmt.value)
        if value is None:
            value = self._zeros_like(stmt.value)
        write = gast.Assign([gast.Subscript(load(self.tangent_name(array)), clone(target.slice),
                                            gast.Store())], value, None)
        # the tangent first: it may read a view of the part of y the write overwrites
        return [self._emit(write), stmt]

    def _tangent_pop(self, popped):
        """The pop of the tangents beside a tape, for a pop of the tape (``popped_from``)."""
        tape, count = popped
        tangents = load(self.tangent_name(tape.id))
        if count is None:
            return gast.Call(gast.Attribute(tangents, "pop", gast.Load()), [], [])
        return self._runtime("pop_many", [tangents, clone(count)])

    def _assignment(self, target, value, stmt):
        tangent = None
        if isinstance(value, gast.Name):
            tangent = self.tangent(value)
        elif isinstance(value, gast.BinOp):
            tangent = self._rule(operator_primal(value.op), [value.left, value.right], {},
                                 load(target), value)
        elif isinstance(value, gast.UnaryOp):
            tangent = self._rule(operator_primal(value.op), [value.operand], {}, load(target), value)
        elif isinstance(value, gast.Call):
            return self._call(target, value, stmt)
        elif isinstance(value, gast.Attribute):
            source = self.tangent(value.value)
            primal = ATTRIBUTES.get(value.attr, MISSING)
            if source is not None and primal is MISSING:          # a field of an object
                tangent = runtime_call(self.aliases, "attribute_tangent", [
                    source, clone(value.value), gast.Constant(value.attr, None)])
            elif source is not None and primal is not None:
                tangent = gast.Attribute(source, value.attr, gast.Load())   # x.T, x.real
        elif isinstance(value, gast.Subscript):
            source = self.tangent(value.value)
            if source is not None:
                tangent = gast.Subscript(source, clone(value.slice), gast.Load())
        elif isinstance(value, (gast.Tuple, gast.List)):
            tangent = self.tangent(value)
        elif isinstance(value, gast.Dict):       # a dict display's tangent is one too
            tangents = [self.tangent(v) for v in value.values]
            tangent = gast.Dict([clone(k) for k in value.keys],
                                [t if t is not None else self._zeros_like(v)
                                 for t, v in zip(tangents, value.values)])
        return [stmt, self._define(target, tangent, value)]

    # -- calls ------------------------------------------------------------------
    def _call(self, target, call, stmt):
        callee = anno.get(call, Anno.CALLEE)
        popped = popped_from(call)
        if popped is not None:                              # a tape of generated code
            tape, count = popped
            if tape.id not in self.active:
                return [stmt, self._zero(target)]
            tangents = load(self.tangent_name(tape.id))
            if count is None:
                value = gast.Call(gast.Attribute(tangents, "pop", gast.Load()), [], [])
            else:
                value = self._runtime("pop_many", [tangents, clone(count)])
            return [stmt, self._define(target, value)]
        callee, call, args, keywords = resolve_call(call, self.unit, self._fail)
        if anno.get(call, Anno.CONSTANT):                    # x.astype(int)
            return [stmt, self._zero(target)]
        if isinstance(callee, CustomGradient):
            self._fail(call, MissingRuleError,
                       f"{describe(callee)} is a custom_gradient function: it gives a gradient for "
                       f"reverse mode only", "register a JVP with st.register_jvp(f, rule) for "
                       "forward mode, or use reverse mode")
        rule = REGISTRY.lookup(callee)
        if rule is not None and (rule.has_jvp or rule.has_vjp):
            if not rule.has_jvp:
                self._missing_rule(call, callee)     # reported with the others after the pass
                return [stmt, self._zero(target)]
            return [stmt, self._define(target, self._rule(callee, args, keywords, load(target), call))]
        if REGISTRY.is_nondifferentiable(callee):
            return [stmt, self._zero(target)]
        if isinstance(callee, (types.FunctionType, types.MethodType)) and not is_library(callee):
            return self._user_call(target, callee, call, stmt)
        self._missing_rule(call, callee)
        return [stmt, self._zero(target)]

    def _rule(self, primal, args, keywords, ans, node):
        """The tangent of ``primal(*args, **keywords)`` whose value is ``ans``."""
        if REGISTRY.is_nondifferentiable(primal):
            return None                         # `not c`, a comparison: piecewise constant
        rule = REGISTRY.lookup(primal)
        if rule is None or not rule.has_jvp:
            self._missing_rule(node, primal)     # reported with the others after the pass
            return None
        self._reject_output_arguments(primal, keywords, node, args)
        if rule.custom_jvp is not None:
            rule_name = self._closure(_plain_name(primal) + "_jvp_rule", rule.custom_jvp)
            tangents = gast.Tuple([self.tangent(a) or self._zeros_like(a) for a in args], gast.Load())
            return gast.Call(load(rule_name), [tangents, ans] + [clone(a) for a in args],
                             [gast.keyword(k, clone(v)) for k, v in keywords.items()])
        if rule.linear:
            if rule.vjp is not None:        # accept exactly the calls reverse mode accepts
                self._bind(rule.template, args, keywords, primal, node)
            first = self.tangent(args[0])
            if first is None:
                return None
            if isinstance(node, gast.Call):
                call = clone(node)
                if anno.get(node, Anno.CALLEE) is None:         # a method: call it on the tangent
                    call.func.value = first
                else:
                    call.args[0] = first
                return call
            return gast.UnaryOp(clone(node.op), first) if isinstance(node, gast.UnaryOp) else first
        pairs = self._bind(rule.jvp_template, args, keywords, primal, node)
        tangent = tangent_of_call(rule.jvp_template, pairs, self.tangent, ans, self.aliases,
                                  self._zeros_like)
        if tangent is not None and rule.elementwise and _is_bare(tangent) and \
                sum(not isinstance(a, gast.Constant) for _, a in pairs) > 1:
            tangent = self._runtime("broadcast_like", [tangent, ans])   # dx + 0 may be smaller than x + y
        return tangent

    def _user_call(self, target, callee, call, stmt):
        """``y = g(a, b)`` with active arguments: ``y, dy = g_jvp(a, b, da=..., db=...)``."""
        signature = inspect.signature(callee)
        try:
            bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError as error:
            self._fail(call, UnsupportedSyntaxError, f"the call of {callee.__qualname__} does not "
                       f"match its signature ({error})", "fix the call's arguments")
        selected, tangents = [], []
        forwarded = starred_to_varargs(signature, bound, call.args, lambda: self._fail(
            call, UnsupportedSyntaxError, *STARRED_REFUSAL))
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL and forwarded is not None:
                tangent = self.tangent(forwarded)          # the whole tuple's tangent
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                parts = [self.tangent(v) for v in value]
                if any(p is not None for p in parts):
                    tangent = gast.Tuple([p if p is not None else self._zeros_like(v)
                                          for p, v in zip(parts, value)], gast.Load())
                else:
                    tangent = None
            elif kind is inspect.Parameter.VAR_KEYWORD:
                parts = {k: self.tangent(v) for k, v in value.items()}
                if any(p is not None for p in parts.values()):
                    tangent = gast.Dict([gast.Constant(k, None) for k in parts],
                                        [p if p is not None else self._zeros_like(value[k])
                                         for k, p in parts.items()])
                else:
                    tangent = None
            else:
                tangent = self.tangent(value)
            if tangent is not None:
                selected.append(name)
                tangents.append(tangent)
        if not selected:
            return [stmt, self._zero(target)]
        location = self.unit.parsed.location(call)
        jvp_fn, tangent_names = self.unit.build_callee(callee, tuple(selected), location)
        name = self._closure(function_base(callee) + "_jvp", jvp_fn)
        keywords = list(call.keywords) + [gast.keyword(tangent_names[p], t)
                                          for p, t in zip(selected, tangents)]
        replacement = gast.Assign(
            [gast.Tuple([store(target), store(self.tangent_name(target))], gast.Store())],
            gast.Call(load(name), list(call.args), keywords), None)
        return [anno.copy(stmt, replacement)]


def _is_bare(tangent):
    """A tangent that is only some argument's tangent (possibly negated): it may be smaller
    than the broadcast result."""
    if isinstance(tangent, gast.UnaryOp):
        tangent = tangent.operand
    return isinstance(tangent, gast.Name)


def _plain_name(obj):
    return getattr(obj, "__name__", None) or type(obj).__name__


def _assigned_once(function):
    """The names ``function`` assigns at one place and never changes in place (no method
    called on them, no write into them), in one walk."""
    stores, changed = collections.Counter(), set()
    for node in walk(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] += 1
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and isinstance(node.func.value, gast.Name):
            changed.add(node.func.value.id)                            # xs.append(v)
        elif isinstance(node, (gast.Subscript, gast.Attribute)) and \
                isinstance(node.ctx, gast.Store) and isinstance(node.value, gast.Name):
            changed.add(node.value.id)                                 # x[i] = v, o.a = v
    return {name for name, count in stores.items() if count == 1} - changed

"""Reverse mode's calls: a rule's cotangents, a user function's passes, and what else a call is.

Requires: the reverse pass (:mod:`srctrans.differentiate.reverse`), whose ``_Reverser``
mixes this class in: ``self.unit``, ``self.aliases``, ``self.namer``, ``self._emit``,
``self._contribute`` and ``self._contribute_all``, and the rule helpers of
:class:`~srctrans.differentiate.calls.Generator`.
Guarantees: ``_call`` differentiates the call a statement assigns to ``target``: by the
user's rule or srctrans's (``_rule``: each operand's cotangent from the rule's template,
unbroadcast where an elementwise rule's operands may broadcast), as a custom gradient, or
through a user function with source (``_user_call``: its forward pass called in the
caller's, which keeps its residuals under a name of their own, and its backward pass in
the caller's backward pass; a callee with a spread gradient is noted in
``Unit.spread_grads``, each call's output name in ``Unit.callee_outputs``). A call with no
rule is noted and reported with the others after the pass. Returns the statement that
replaces the call in the forward pass, or None to keep it.
"""

import inspect
import types

import gast
import numpy as np

from srctrans import runtime
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.runtime.custom import CustomGradient
from srctrans.differentiate.calls import (STARRED_REFUSAL, is_library, resolve_call,
                                         starred_to_varargs)
from srctrans.differentiate.templates import cotangents
from srctrans.errors import UnsupportedSyntaxError
from srctrans.interface import CHECKPOINTED
from srctrans.naming import function_base
from srctrans.nodes import runtime_call, assign as _assign, clone, load as _load, store as _store
from srctrans.rules import REGISTRY


class ReverseCalls:
    """The reverse pass's handling of calls (see the module)."""

    def _call(self, target, call, g, ans, stmt):
        callee = anno.get(call, Anno.CALLEE)
        if callee is None and call.func.attr == "pop" or callee is runtime.pop_many:
            return None         # from a list that carries no derivative: a constant here
        callee, call, args, keywords = resolve_call(call, self.unit, self._fail)
        rule = REGISTRY.lookup(callee)
        if rule is not None and rule.has_vjp:               # the user's rule first, in _rule
            self._rule(callee, args, keywords, g, ans, call)
            return None
        if REGISTRY.is_nondifferentiable(callee):
            return None            # a fresh buffer (np.zeros) that later writes make active
        if isinstance(callee, CustomGradient):
            return self._custom_gradient_call(target, callee, call, args, keywords, g, stmt)
        if isinstance(callee, (types.FunctionType, types.MethodType)) and not is_library(callee):
            return self._user_call(target, callee, call, args, keywords, g, stmt)
        self._missing_rule(call, callee)          # reported with the others after the pass
        return None

    def _rule(self, primal, args, keywords, g, ans, node):
        if REGISTRY.is_nondifferentiable(primal):
            return                              # `not c`, a comparison: piecewise constant
        rule = REGISTRY.lookup(primal)
        if rule is not None and rule.custom_vjp is not None:   # the user's, over srctrans's own
            return self._custom_rule(primal, rule.custom_vjp, args, keywords, g, ans, node)
        if rule is None or rule.vjp is None:
            self._missing_rule(node, primal)
            return
        self._reject_output_arguments(primal, keywords, node, args)
        pairs = self._bind(rule.template, args, keywords, primal, node)
        for name, argument in pairs:
            if name == "out" and not (isinstance(argument, gast.Constant) and argument.value is None):
                self._fail(node, UnsupportedSyntaxError, "`out=` arguments (writing into an existing array)",
                           "assign the result to a new name instead")
        bindings, whole = cotangents(rule.template, pairs, g, ans, self.aliases)
        stars = [i for i, e in enumerate(getattr(whole, "elts", ())) if isinstance(e, gast.Starred)]
        if isinstance(whole, gast.Tuple) and len(stars) == 1:
            # (a, *grads, b): a and b directly, the arguments between from grads: generated
            # code reads no starred expression (srctrans could not differentiate it again)
            start = stars[0]
            after = len(whole.elts) - start - 1
            arguments = [argument for _, argument in pairs]
            middle = arguments[start:len(arguments) - after]
            for argument, entry in zip(arguments[:start] + arguments[len(arguments) - after:],
                                       whole.elts[:start] + whole.elts[start + 1:]):
                if not (isinstance(entry, gast.Constant) and entry.value is None):
                    self._contribute(argument, entry)
            rest = [(argument, i) for i, argument in enumerate(middle)]
            self._contribute_all(rest, whole.elts[start].value, "grads")
            return
        if whole is not None:
            self._contribute_all([(argument, i) for i, (_, argument) in enumerate(pairs)], whole, "grads")
            return
        # a constant leaves the other operand's shape alone; a complex one changes its type,
        # and rt.unbroadcast takes a real operand's part of the cotangent
        constants = [isinstance(b.argument, gast.Constant) and not isinstance(b.argument.value, complex)
                     for b in bindings]
        for position, binding in enumerate(bindings):
            if binding.cotangent is None:
                continue
            if binding.sequence:
                pairs_ = [(element, i) for i, element in enumerate(binding.argument.elts)]
                self._contribute_all(pairs_, binding.cotangent, "grads")
                continue
            cotangent = binding.cotangent
            others_constant = all(c for i, c in enumerate(constants) if i != position)
            if rule.elementwise and (not others_constant or self._may_repeat(primal, bindings, binding)):
                cotangent = runtime_call(self.aliases, "unbroadcast", [cotangent, binding.argument])
            self._contribute(binding.argument, cotangent)

    def _may_repeat(self, primal, bindings, binding):
        """``xs * 3`` where ``xs`` may be a list (a parameter, say): Python repeats it, so its
        cotangent goes through ``rt.unbroadcast``, which refuses a list rather than guess."""
        return (primal is np.multiply and isinstance(binding.argument, gast.Name)
                and binding.argument.id not in self.unit.array_valued
                and any(isinstance(b.argument, gast.Constant) and type(b.argument.value) is int
                        for b in bindings if b is not binding))

    def _user_call(self, target, callee, call, args, keywords, g, stmt):
        """Differentiate through a call of a user function with source."""
        signature = inspect.signature(callee)
        try:
            bound = signature.bind(*args, **keywords)
        except TypeError as error:
            self._fail(call, UnsupportedSyntaxError, f"the call of {callee.__qualname__} does not match "
                       f"its signature ({error})", "fix the call's arguments")
        is_active = self._carries_gradient        # a name, or a list or tuple display of them

        # (parameter, [(argument node, key within the parameter's cotangent or None)])
        active = []
        forwarded = starred_to_varargs(signature, bound, args, lambda: self._fail(
            call, UnsupportedSyntaxError, *STARRED_REFUSAL))
        for name, bound_value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL and forwarded is not None:
                parts = [(forwarded, None)] if is_active(forwarded) else []   # the whole tuple
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                parts = [(node, k) for k, node in enumerate(bound_value) if is_active(node)]
            elif kind is inspect.Parameter.VAR_KEYWORD:
                parts = [(node, k) for k, node in bound_value.items() if is_active(node)]
            else:
                parts = [(bound_value, None)] if is_active(bound_value) else []
            if parts:
                active.append((name, parts))
        if not active:
            return None
        location = self.unit.parsed.location(call)
        base = function_base(callee)
        residuals = self.namer.fresh(base + "_residuals")
        fwd, bwd, spread = self.unit.build_callee(callee, tuple(name for name, _ in active),
                                                  location, residuals)
        fwd_name = self._closure(base + "_fwd", fwd)
        bwd_name = self._closure(base + "_bwd", bwd)
        if spread is not None:
            self.unit.spread_grads[fwd_name] = (
                bwd_name, self._closure(base + "_spread_grad", spread[0]), spread[1])
        forward_call = gast.Call(_load(fwd_name), call.args, call.keywords)
        if getattr(inspect.unwrap(callee), CHECKPOINTED, False):
            # @st.checkpoint: the forward pass calls the function itself and keeps only its
            # arguments; the backward pass runs its forward pass again for what it saves
            replacement = None
            self._emit(_assign(residuals, gast.Subscript(
                clone(forward_call), gast.Constant(1, None), gast.Load())))
        else:
            self.unit.callee_outputs[residuals] = target
            replacement = gast.Assign([gast.Tuple([_store(target), _store(residuals)],
                                                  gast.Store())], forward_call, None)
            anno.copy(stmt, replacement)
        backward_call = gast.Call(_load(bwd_name), [_load(residuals), g], [])
        if all(key is None for _, parts in active for _, key in parts):
            self._contribute_all([(parts[0][0], i) for i, (_, parts) in enumerate(active)],
                                 backward_call, base + "_grads", length=len(active), shaped=True)
            return replacement
        grads = self.namer.temporary(base + "_grads")                 # *args / **kwargs
        self._emit(_assign(grads, backward_call))
        for position, (_, parts) in enumerate(active):
            entry = gast.Subscript(_load(grads), gast.Constant(position, None), gast.Load())
            for node, key in parts:
                part = entry if key is None else gast.Subscript(clone(entry), gast.Constant(key, None),
                                                                gast.Load())
                self._contribute(node, part)
        return replacement

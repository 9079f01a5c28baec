"""Batching a call: a batching rule, the batched build of a user function, or the call run
once per member.

Requires: the batching pass (:mod:`srctrans.differentiate.batching`) to provide ``unit``,
``flags``, ``result``, ``build_callee``, ``line``, ``flag``, ``batch_size``, ``conformed``,
``expression``, ``_attribute``, ``_call_of`` and ``_closure``.
Guarantees: :meth:`BatchedCalls._call` returns the batched form of an ANF call: NumPy's and
the runtime's by their rules (:mod:`srctrans.differentiate.batching_rules`), a user
function's by its own batched build (what that build runs per member noted in
``result.loops``), a derivative transform's by its batched form; any other call runs once
per member (``rt.batch.loop``) and is noted in ``result.loops`` with its line, so the
caller can warn.
"""

import types

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate import batching_rules as rules
from srctrans.differentiate.batched_names import (
    QUERIES, Unbatchable, batched_in_turn, bound_parameters, callee_flags, is_transform,
    reads_keys, truthy)
from srctrans.differentiate.batched_ranks import bound_ranks
from srctrans.differentiate.batching_rules import helpers
from srctrans.differentiate.batching_rules.calls import flag_node
from srctrans.differentiate.calls import is_library, resolve_call
from srctrans.errors import UnsupportedSyntaxError
from srctrans.interface import API
from srctrans.nodes import in_runtime, load

# methods that give each member's value as it is: a batched array's are the batch's
_SAME_METHODS = frozenset({"astype", "copy", "conj", "conjugate"})


class BatchedCalls:
    """Mixin of the batching pass: calls."""

    def _call(self, call):
        callee = anno.get(call, Anno.CALLEE)
        if callee is getattr:
            return self._getattr(call)
        if reads_keys(call, self.flags):
            return call                     # a dict's keys: every member's

        if callee is None and isinstance(call.func, gast.Attribute) and \
                call.func.attr in _SAME_METHODS and \
                not any(truthy(self.flag(a)) for a in call.args + [k.value for k in call.keywords]):
            return call                     # x.astype(t), x.copy(): each member's, as they are
        original = call
        if is_transform(callee) and not API.is_jvp(callee) and \
                API.plain_function(callee) is None:
            form = API.batched_forms.get(callee)
            if form is not None and not call.keywords and truthy(self.flag(call)) and \
                    not any(isinstance(a, gast.Starred) for a in call.args):
                name = self._closure(f"_batched_{callee.__name__}", form)   # st.hvp(f, (x,), (v,))
                flags = gast.Tuple([flag_node(self.flag(a)) for a in call.args], gast.Load())
                return self.expression("F(A, FL, B)", F=load(name),
                                       A=gast.Tuple(list(call.args), gast.Load()), FL=flags,
                                       B=self.batch_size())
            return self._loop(call, self._func(call, callee), list(call.args),
                              {k.arg: k.value for k in call.keywords}, callee)
        try:
            callee, call, args, keywords = resolve_call(call, self.unit, _unbatchable)
        except UnsupportedSyntaxError:       # a derivative call with no code to batch: per member
            return self._loop(call, self._func(call, callee), list(call.args),
                              {k.arg: k.value for k in call.keywords}, callee)
        func = self._func(call, callee)
        call_of = self._call_of(callee, func, args, keywords)
        found = helpers.runtime_rule(call_of) if in_runtime(callee) else None
        if found is None:
            found = rules.rule(call_of)
        if found is not None:
            return found
        precise = self.flags.calls is not None and batched_in_turn(callee) and \
            callee is anno.get(original, Anno.CALLEE)
        want = self.flag(original) if precise else True      # the analysis' flag of the call
        why = None
        if isinstance(callee, (types.FunctionType, types.MethodType)) and not is_library(callee):
            build, why = self._callee(callee, args, keywords, all_batched=not precise)
            if build is not None:           # what it runs per member, the caller runs too
                self.result.selects |= build.selects
                self.result.loops += [loop for loop in build.loops
                                      if loop not in self.result.loops]
            if build is not None and (not precise or build.output_flag == want):
                name = self._closure(callee.__name__ + "_vmap", build.function)
                return self.conformed(gast.Call(load(name), list(call.args), list(call.keywords)),
                                      build.output_flag, want)
        looped = self._loop(call, func, args, keywords, callee, why)   # every output batched
        if want is True:
            return looped
        return self.expression("rt.batch.unbatched_parts(V, F)", V=looped, F=flag_node(want))

    def _getattr(self, call):
        x, attribute = call.args[0], call.args[1]
        if isinstance(attribute, gast.Constant) and attribute.value in QUERIES | {"T"}:
            return self._attribute(gast.Attribute(x, attribute.value, gast.Load()))
        raise Unbatchable("getattr of a batched value", call)

    def _func(self, call, callee):
        """The expression the batched call calls the primal by."""
        if anno.get(call, Anno.CALLEE) is not None:
            return call.func
        for module, prefix in ((np, "np"), (np.linalg, "np.linalg")):
            if getattr(module, getattr(callee, "__name__", ""), None) is callee:
                return self.expression(f"{prefix}.{callee.__name__}")
        return load(self._closure("_" + getattr(callee, "__name__", "f"), callee))

    def _callee(self, callee, args, keywords, all_batched):
        """``(build, None)``: the batched build of ``callee`` for this call (``build_callee``'s),
        or ``(None, why)`` when there is none (``why`` None: the call does not bind)."""
        bound = bound_parameters(callee, args, keywords)
        if bound is None:
            return None, None
        try:
            return self.build_callee(callee, callee_flags(bound, self.flag),
                                     bound_ranks(bound, self.ranks), all_batched), None
        except Unbatchable as refusal:
            return None, refusal.what

    def _loop(self, call, func, args, keywords, callee, why=None):
        """The call run once per member (``why``: the reason its function has no batched
        form; else it has no batching rule), noted for the warning."""
        what = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) \
            or type(callee).__name__
        reason = "which has no batching rule" if why is None else f"because {why}"
        self.result.loops.append((f"a call of {what}, {reason}", self._where()))
        flags = gast.Tuple([self._argument_flag(a) for a in args], gast.Load())
        names = [gast.Constant(k, None) for k in keywords]
        keyword_flags = gast.Dict(names, [flag_node(truthy(self.flag(v))) for v in keywords.values()])
        return self.expression("rt.batch.loop(F, A, FL, B, K, KF)", F=func,
                               A=gast.Tuple(list(args), gast.Load()), FL=flags, B=self.batch_size(),
                               K=gast.Dict(names, list(keywords.values())), KF=keyword_flags)

    def _argument_flag(self, node):
        """The flag of an argument of a call run per member: for ``*rest``, one per entry
        of the tuple it passes (each entry's, or the whole tuple's for each)."""
        if not isinstance(node, gast.Starred):
            return flag_node(truthy(self.flag(node)))
        flag = self.flag(node.value)
        if isinstance(flag, tuple):
            return gast.Starred(gast.Tuple([flag_node(truthy(f)) for f in flag], gast.Load()),
                                gast.Load())
        return gast.Starred(self.expression("(F,) * len(V)", F=flag_node(truthy(flag)),
                                            V=node.value), gast.Load())

    def _where(self):
        return self.unit.parsed.location_of_line(self.line)



def _unbatchable(node, error, message, hint):
    raise Unbatchable(message, node)

"""The front end: the passes every transform shares, from the source to activity.

A function's source is parsed, its small same-module helpers inlined, unsupported syntax
refused (the fence), loops and jumps desugared, dicts of states by step made names, effects
modelled, statements put in A-normal and SSA form, dict entries read back at constant keys
forwarded, and the names that carry derivatives found. :func:`front_end` returns the
:class:`Unit` the reverse (``pipeline.build_reverse``), forward (``pipeline.build_forward``)
and batching (``batch_pipeline``) transforms continue from; the order of the passes and why
is ``srctrans.pipeline``'s docstring.

Set the environment variable ``SRCTRANS_TRACE=1`` to print, on stderr, the function after
ANF and SSA, the active names, and what the transforms print after their own stages.
"""

import os
import sys

import numpy

from srctrans import runtime
from srctrans.analyse.activity import active_names
from srctrans.analyse.invariance import softmax_offsets
from srctrans.analyse.values import maybe_not_float
from srctrans.differentiate.custom import differentiate_as_call
from srctrans.differentiate.nested import refuse_unnestable_calls
from srctrans.emit.printer import block_lines, function_lines
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS, Namer, identifiers
from srctrans.nodes import local_names
from srctrans.normalize import fence
from srctrans.normalize.anf import normalize, normalize_statements
from srctrans.normalize.auxiliary import has_aux, split_aux_returns
from srctrans.normalize.callees import inlined_callees
from srctrans.normalize.chained_writes import split_chained_writes
from srctrans.normalize.checkpoints import mark_checkpointed_loops
from srctrans.normalize.constant_keys import forward_constant_keys
from srctrans.normalize.folds import fold_loops
from srctrans.normalize.softmax_logs import log_softmax_calls
from srctrans.normalize.softplus_terms import softplus_terms
from srctrans.normalize.cholesky_terms import cholesky_terms
from srctrans.optimise.float_lists import keep_array_loops
from srctrans.normalize.packed_tuples import forward_packed_tuples
from srctrans.normalize.counted_loops import count_while_loops
from srctrans.normalize.desugar import desugar
from srctrans.normalize.dict_calls import split_dict_calls
from srctrans.normalize.effects import model_effects
from srctrans.normalize.imports import hoist_imports
from srctrans.normalize.namespaces import inline_module_aliases
from srctrans.normalize.positions import pin_positions
from srctrans.normalize.releases import drop_releases
from srctrans.normalize.sequences import split_sequence_arithmetic
from srctrans.normalize.ssa import rename_reassignments
from srctrans.normalize.starred import expand_static_unpacking
from srctrans.normalize.step_dicts import replace_step_dicts
from srctrans.parse.resolve import Resolver
from srctrans.parse.source import parse_function
from srctrans.shape_facts import nonlocal_data


class Unit:
    """One function being compiled, with everything the passes share.

    Attributes:
      parsed: the :class:`~srctrans.parse.source.ParsedFunction`.
      function: its gast FunctionDef (rewritten in place by the passes).
      wrt: the names of the selected parameters.
      namer, resolver: naming and name resolution for this function.
      aliases: the names generated code uses for the runtime and NumPy.
      active: the active names (after activity analysis).
      nonsingular: names never zero at finite inputs (``analyse.invariance``,
        ``analyse.signs``).
      never_negative: names never negative nor NaN at finite inputs (``analyse.signs``).
      bounded: names finite at finite inputs, whatever they read (``analyse.signs``).
      divisors: numbers the call that specialised the build found neither 0 nor NaN, which
        its fused gradient divides by unguarded (``optimise.divisors``).
      array_valued: names that certainly hold arrays or numbers (analyse.values).
      build_callee: ``(fn, wrt, location, residuals) -> (fwd, bwd, spread)`` for a called
        user function whose saved values the caller keeps in the name ``residuals``;
        ``spread`` is ``(NAME_spread_grad, its number parameter's name)`` or None.
      spread_grads: closure name of a callee's ``fwd`` -> ``(bwd, spread_grad, number
        parameter)`` closure names, for the callees that have one (``optimise.callee_spreads``).
      callee_outputs: the residuals name of each call of a user function -> the name its
        output is assigned (the reverse pass fills it).
    """

    def __init__(self, parsed, wrt, build_callee):
        self.parsed = parsed
        self.function = parsed.node
        self.wrt = tuple(wrt)
        self.build_callee = build_callee
        self.spread_grads = {}
        self.callee_outputs = {}
        self.namer = Namer(identifiers(parsed.node))
        self.resolver = Resolver(parsed.fn, local_names(parsed.node), self.namer.generated)
        self.aliases = {RUNTIME_ALIAS: self._alias(RUNTIME_ALIAS, runtime),
                        NUMPY_ALIAS: self._alias(NUMPY_ALIAS, numpy)}
        self.active = set()
        self.nonsingular = frozenset()
        self.never_negative = frozenset()
        self.bounded = frozenset()
        self.array_valued = set()
        self.fresh_arrays = set()
        self.written_arrays = set()
        self.dict_valued = set()
        self.not_float = frozenset()
        self.divisors = frozenset()

    def _alias(self, name, module):
        """``name`` unless the user's function uses it for something other than ``module``."""
        if name not in self.namer.taken:
            self.namer.taken.add(name)
            return name
        if name not in self.resolver.local_names and self.resolver.lookup_root(name) is module:
            return name
        return self.namer.fresh(name)


def front_end(fn, wrt, build_callee, mode):
    """The passes every transform shares, parse to activity: ``(unit, itself, data_names)``.

    ``itself`` names the function for the closure when a user rule of this
    ``mode`` replaces its body by a call of itself; ``data_names`` are the
    non-local names it reads as values (read before desugaring adds names).
    """
    parsed = parse_function(fn)
    keep_array_loops(parsed.node, parsed.fn)        # generated code: a loop's array form
    itself = differentiate_as_call(parsed, mode)     # a function with a user rule: one call of itself
    if not itself:                                    # small helpers of its module: its own code
        parsed.inlined = inlined_callees(parsed)
    expand_static_unpacking(parsed.node, parsed.fn.__globals__)    # f(*(a, b)), f(**opts)
    imported = hoist_imports(parsed.node, parsed.fn.__globals__.get("__package__"))
    fence.check(parsed)
    drop_releases(parsed.node)                  # `del name` only releases a value
    unit = Unit(parsed, wrt, build_callee)
    unit.resolver.synthetic.update(imported)          # `import math` inside: math is the module
    if has_aux(fn):                                   # return (output, aux): aux not differentiated
        split_aux_returns(parsed, unit.namer, unit.aliases)
    inline_module_aliases(unit.function, unit.resolver)     # xp = np: xp.sum is np.sum
    split_dict_calls(unit.function, unit.namer, unit.resolver)   # dict(p, k=v): copy, then write
    if mode != "batch":                    # (st.vmap runs such a call once per member)
        refuse_unnestable_calls(parsed, unit.resolver)      # st.vjp(g, x) inside
    data_names = nonlocal_data(parsed.node, unit.resolver)
    mark_checkpointed_loops(parsed, unit.resolver, unit.namer, mode)
    count_while_loops(unit.function, parsed.fn.__globals__, unit.aliases[RUNTIME_ALIAS])
    desugar(unit.function, unit.namer, unit.aliases[RUNTIME_ALIAS])
    replace_step_dicts(unit.function, unit.namer)     # hs[t], hs[t - 1]: names, not entries
    unit.resolver.local_names = frozenset(local_names(unit.function))
    model_effects(parsed, unit.resolver, unit.aliases)
    split_chained_writes(unit.function, unit.namer, unit.aliases[RUNTIME_ALIAS])
    pin_positions(unit.function, unit.aliases)
    split_sequence_arithmetic(unit.function, unit.aliases)
    normalize(parsed, unit.resolver, unit.namer, unit.aliases[RUNTIME_ALIAS])
    trace("anf", lambda: function_text(unit.function))
    fold_loops(unit.function, unit.aliases)     # acc = np.logaddexp(acc, x[:, j]) in a loop
    rename_reassignments(unit.function, unit.namer)
    forward_packed_tuples(unit.function)         # t = (a, b); x, y = t: x = a; y = b
    forward_constant_keys(unit.function, unit.aliases[RUNTIME_ALIAS])   # d["k"]: what was written
    log_softmax_calls(unit.function, unit.aliases)   # np.log(e / e.sum(...)): a log-softmax
    softplus_terms(unit.function, unit.aliases)      # max(z, 0) + log1p(exp(-|z|)): a softplus
    if mode == "reverse":                  # solve(L.T, solve(L, b)), log(diag(L)): for a
        cholesky_terms(unit.function, unit.aliases)      # (L = cholesky(a))
    trace("ssa", lambda: function_text(unit.function))
    find_activity(unit)
    return unit, itself, data_names


def normal_form(unit):
    """``statements -> their A-normal form`` for passes that write new primal statements."""
    aliases = unit.aliases
    unit.resolver.synthetic.setdefault(aliases[NUMPY_ALIAS], numpy)
    unit.resolver.synthetic.setdefault(aliases[RUNTIME_ALIAS], runtime)
    return lambda statements: normalize_statements(unit.parsed, unit.resolver, unit.namer,
                                                   statements, aliases[RUNTIME_ALIAS])


def find_activity(unit):
    """Which names of ``unit``'s function carry derivatives, and which may not be floats."""
    unit.active = active_names(unit.function, unit.wrt, softmax_offsets(unit.function))
    unit.not_float = maybe_not_float(unit.function, unit.wrt)
    trace("activity", lambda: "active: " + ", ".join(sorted(unit.active)))


def block_text(statements):
    return "\n".join(block_lines(statements, 0))


def function_text(function):
    return "\n".join(function_lines(function))


def trace(stage, text):
    """Print ``text()`` after ``stage`` when SRCTRANS_TRACE=1 (text is computed only then)."""
    if os.environ.get("SRCTRANS_TRACE") == "1":
        print(f"--- srctrans: after {stage} ---\n{text()}", file=sys.stderr)

"""The passes of batching (``st.vmap``), in order: those reverse and forward mode share up to
SSA (``front_end.front_end``), then which names are batched and their per-example ranks, the
batched statements (``differentiate.batching``), single-use temporaries folded back, emit.
"""

import gast
import numpy

from srctrans import runtime
from srctrans.analyse.values import dict_valued
from srctrans.differentiate.batched_names import Unbatchable, batched_names, flag_of, truthy
from srctrans.differentiate.batched_ranks import ranks_of, value_rank
from srctrans.differentiate.batching import batch, rank_oracle
from srctrans.errors import SrcTransError
from srctrans.emit.compile import compile_functions
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS, function_base
from srctrans.nodes import clone
from srctrans.optimise.dce import reads_of
from srctrans.optimise.inline import inline_temporaries
from srctrans.generated_functions import function_def, is_pure
from srctrans.front_end import front_end, trace


class BatchBuild:
    """A compiled batched function.

    Attributes:
      function: the generated function: the original's parameters, batched ones with their
        members along axis 0.
      source: its text (what ``st.source`` shows).
      output_flag: which parts of its output are batched (``differentiate.batching``).
      loops: ``(what, location)`` of each call it runs once per member.
      selects: whether it runs code that some members do not (both branches of an ``if`` on
        a batched value), which may raise where those members would not.
    """

    def __init__(self, function, source, output_flag, loops, selects=False, fn=None,
                 compiled=None):
        self.function = function
        self.source = source
        self.output_flag = output_flag
        self.loops = loops
        self.selects = selects
        self.fn = fn                    # the function batched, and the compiled module
        self.compiled = compiled        # (what st.export reads)


def _analysed(fn, flags, callee_flag, units):
    """``(value returned, names' flags)`` of ``fn``'s front end for parameters batched as
    ``flags`` say, kept in ``units`` (the caller's, for ``fn``), or None when it cannot be
    analysed. The analyses below only read the unit; a build makes its own, which it
    rewrites."""
    batched = tuple(n for n, f in flags.items() if truthy(f))
    key = tuple(sorted(flags.items()))
    if key not in units:
        try:
            if batched not in units:
                unit, _, _ = front_end(fn, batched, None, "batch")
                units[batched] = unit, dict_valued(unit.function)
            unit, dicts = units[batched]
            names = batched_names(unit.function, {n: flags[n] for n in batched}, callee_flag,
                                  dicts)
        except (SrcTransError, Unbatchable):
            units[key] = None
        else:
            returned = unit.function.body[-1]
            units[key] = None if not isinstance(returned, gast.Return) or \
                returned.value is None else (returned.value, unit, names)
    return units[key]


def output_flag(fn, flags, callee_flag, units):
    """The flag of ``fn``'s output when its parameters are batched as ``flags`` say (the
    analysis :func:`build_batched` runs first, alone), or None when it cannot tell."""
    found = _analysed(fn, flags, callee_flag, units)
    return None if found is None else flag_of(found[0], found[2])


def output_ranks(fn, flags, ranks, callee_flag, callee_rank, units):
    """The per-example rank of ``fn``'s output (a tuple's entries' for a tuple) when its
    parameters are batched as ``flags`` say and have ``ranks``, or None when unknown."""
    found = _analysed(fn, flags, callee_flag, units)
    if found is None:
        return None
    value, unit, names = found
    return value_rank(value, ranks_of(unit.function, ranks, rank_oracle(callee_rank, names)))


def build_batched(fn, flags, ranks, build_callee, all_batched=False, callee_flag=None,
                  callee_rank=None):
    """Compile the batched form of ``fn``.

    ``flags``: parameter name -> whether it is batched; ``ranks``: parameter name -> the
    per-example rank of an array argument (None where unknown); ``build_callee(fn, flags,
    ranks)`` batches a called function of the user's; ``all_batched`` makes every
    array of the output batched (unbatched ones spread). Raises
    ``differentiate.batching.Unbatchable`` for a construct that needs a loop over members.
    """
    batched = tuple(name for name, flag in flags.items() if truthy(flag))
    unit, itself, _ = front_end(fn, batched, None, "batch")
    unit.dict_valued = dict_valued(unit.function)
    result = batch(unit, {name: flags[name] for name in batched}, ranks, build_callee, all_batched,
                   callee_flag, callee_rank)
    body, returned = result.body[:-1], result.body[-1]
    body = inline_temporaries(body, unit.namer.temporaries, reads_of(returned), is_pure)
    name = unit.namer.fresh(function_base(unit.parsed.fn) + "_vmap")
    doc = gast.Expr(gast.Constant(
        f"{fn.__name__} of each member of a batch: {', '.join(batched) or 'no argument'} "
        f"batched along axis 0.", None))
    function = function_def(name, clone(unit.function.args), [doc] + body + [returned])
    closure = {unit.aliases[NUMPY_ALIAS]: numpy, unit.aliases[RUNTIME_ALIAS]: runtime}
    closure.update(result.closure)
    closure.update(itself)
    closure.update(unit.resolver.synthetic)
    compiled = compile_functions([function], closure, fn, f"{fn.__qualname__} vmap")
    trace("generated", lambda: compiled.source)
    (generated,) = compiled.instantiate(fn)
    generated.__defaults__ = fn.__defaults__            # (compiled with None for each: the
    generated.__kwdefaults__ = fn.__kwdefaults__        # user's own defaults, as Instance does)
    return BatchBuild(generated, compiled.source, result.output_flag, result.loops,
                      result.selects, fn, compiled)

"""The whole compiler in one place: the passes, in order, and why in that order.

    parse      read the source, parse it with gast        (parse.source)
    callees    small helpers of the same module become     (normalize.callees)
               local functions, inlined where called
    starred    f(*t) and f(**d) of displays the source    (normalize.starred)
               fixes pass their entries one by one
    fence      reject unsupported syntax before anything   (normalize.fence)
               else, so later passes never see it
    namespaces a local name for a module is the module      (normalize.namespaces)
               (xp = np), so its calls meet their rules
    marks      a loop marked st.checkpointed keeps the     (normalize.checkpoints)
               mark as an annotation
    counted    a while loop counting an int to a bound     (normalize.counted_loops)
               becomes a for loop over a range
    desugar    loops over sequences become index loops,    (normalize.desugar)
               jumps become flags and guarded blocks
    steps      a dict of states by step (hs[t], hs[t-1])   (normalize.step_dicts)
               becomes a name per step and the step before
    effects    in-place calls srctrans models become       (normalize.effects)
               writes; other effects, and changes an alias
               would see, are refused
    chained    xs[t][i] = v becomes a write into one      (normalize.chained_writes)
               named value at a time (the effects pass
               has refused what an alias would see)
    anf        one operation per statement, so every       (normalize.anf)
               rule sees atoms and every value has a name
    ssa        rename reassignments, so the forward pass   (normalize.ssa)
               keeps every value the backward pass reads
    tuples     a tuple packed and only unpacked again      (normalize.packed_tuples)
               binds its targets to its entries
    keys       an entry a made dict's key was written,     (normalize.constant_keys)
               read back at a constant key, is the value
    logs       the log of a softmax's probabilities is     (normalize.softmax_logs)
               one call, differentiated as a log-softmax
    softplus   max(z, 0) + log1p(exp(-|z|)) in one sum     (normalize.softplus_terms)
               sends its derivative, a sigmoid, through
               its tail
    cholesky   solve(L.T, solve(L, b)) and log(diag(L))    (normalize.cholesky_terms)
               of L = cholesky(a) send their derivatives
               to a, none to L (reverse mode)
    activity   which names carry derivatives: only they    (analyse.activity,
               get adjoints; the max subtracted before a    analyse.invariance)
               softmax carries none
    values     which names certainly hold arrays, so     (analyse.values)
               their cotangents add with a plain `+`
    reverse    forward and backward statements             (differentiate.reverse)
    optimise   fold constants, specialise on shapes when   (optimise.*)
               they are known, propagate copies, drop
               dead code, recompute cheap loop scalars
               rather than save them, fold contributions
               and negations, sum a container's cotangent
               entry by entry (an array's picks in
               place), then specialise again (the
               sums and copies those passes made); drop
               restores and zeroings no read can see;
               drop unneeded saves and decide the
               residuals, so only values the backward pass
               still reads are kept alive; in a fused
               gradient, skip a log-sum-exp read only for
               its shares, fill a sum's seed over what
               only its shape needed, compute once what
               it computes twice, then fold single-use
               temporaries back into expressions, and
               multiply products' literals together
    emit       print, compile, register with linecache     (emit.*)

The passes up to activity are the front end every transform shares
(:func:`srctrans.front_end.front_end`). Set the environment variable
``SRCTRANS_TRACE=1`` to print, on stderr, the function after ANF and SSA, the
active names, the backward pass before and after optimisation, and the generated
source.
"""

import gast
import numpy

from srctrans import runtime
from srctrans import annotations as anno
from srctrans.analyse.signs import bounded_names, never_negative_names, positive_names
from srctrans.builds import Build, ForwardBuild
from srctrans.analyse.invariance import softmax_normalisers
from srctrans.analyse.values import (
    array_valued, dict_valued, fresh_arrays, natural_ranges, written_arrays)
from srctrans.annotations import Anno
from srctrans.differentiate.control import (
    drop_empty_blocks, drop_unneeded_saves, iterate_saved_values)
from srctrans.differentiate.forward import forward
from srctrans.differentiate.custom import hooked_shapes
from srctrans.differentiate.reverse import reverse
from srctrans.emit.effect_notes import note_effects
from srctrans.emit.compile import compile_functions, is_generated
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS, function_base
from srctrans.normalize.auxiliary import has_aux
from srctrans.normalize.ssa import rename_reassignments
from srctrans.optimise.accumulate import fold_accumulations
from srctrans.optimise.dce import eliminate_dead_code, propagate_copies, targets_of
from srctrans.optimise.keyed_branches import drop_settled_expectations, fold_keyed_branches
from srctrans.optimise.row_loops import batch_row_loops
from srctrans.optimise.softmax_ratios import plain_softmax_ratios
from srctrans.optimise.tuple_picks import fold_tuple_picks, split_tuple_assignments
from srctrans.optimise.restores import drop_unread_restores
from srctrans.optimise.container_cotangents import sum_chains_in_blocks, write_container_cotangents
from srctrans.optimise.inline import inline_temporaries
from srctrans.optimise.negation import sink_negations, sink_negations_in_loops
from srctrans.optimise.selections import merge_complementary_selections
from srctrans.optimise.copied_dicts import dicts_copied, merge_copied_dict_cotangents
from srctrans.optimise.remat import rematerialise
from srctrans.optimise.picked_sums import add_picks_in_place, add_picks_into_made
from srctrans.optimise.sparse_dicts import keep_dict_cotangents_sparse
from srctrans.optimise.zeroings import drop_dead_zeroings, drop_zero_stores
from srctrans.optimise.simplify import simplify
from srctrans.optimise.loop_invariants import hoist_loop_invariants
from srctrans.optimise.float_lists import float_list_loops
from srctrans.optimise.carried_entries import carry_entries
from srctrans.optimise.linalg_kernels import call_linalg_kernels
from srctrans.optimise.loop_checks import hoist_loop_checks
from srctrans.optimise.vector_norms import norms_as_sums
from srctrans.optimise.inner_products import inner_products
from srctrans.optimise.expression_shapes import infer_shapes, one_valued
from srctrans.optimise.specialise import (
    factor_out_of_sums, read_entries_uncopied, specialise, specialise_tangents, use_array_methods)
from srctrans.nodes import (appended_to, assign, clone, load, runtime_call)
from srctrans.shape_facts import ShapeFacts
from srctrans.treewalk import walk
from srctrans.front_end import (
    block_text, find_activity, front_end, normal_form, trace)
from srctrans.generated_functions import (
    backward_function, forward_function, function_def, gradient_function, is_not_saving,
    is_pure, name_nodes, reads_all, renamed, residual_names, summed_in_place)



def _note_dispatch(build, resolver):
    """What ``build`` compiled calls through values to (``resolver.sites``: each site's kinds)
    and the methods those and a global object's calls run (``resolver.methods``), which the
    cache checks before reusing it."""
    build.sites = dict(resolver.sites)
    build.methods = tuple((kind, name, f) for (kind, name), f in resolver.methods.items())


def build_reverse(fn, wrt, build_callee, optimize=True, unconnected_zero=False, shapes=None,
                  gradient=None, tests=None, checked=frozenset(), floats=frozenset(),
                  divisors=frozenset()):
    """Compile the forward and backward passes of ``fn`` with respect to ``wrt``.

    ``shapes`` (name -> shape of the forward values the backward pass reads,
    measured on a call of this same build without ``shapes``) specialises the
    backward pass on them; ``tests`` (name -> bool, measured alike) are the values of the
    tests the shape key decides, whose ``if`` statements become the branch they took
    (``optimise.keyed_branches``), and of those ``checked`` as the code runs; ``floats``
    (measured alike) names the values that hold floats, which ``1.0 *`` leaves as they are
    (a parameter not differentiated, a value read from one: else they may be ints);
    ``divisors`` (measured alike, with guesses) the numbers that were neither 0 nor NaN,
    which the fused gradient divides by unguarded, checking each (``optimise.divisors``).

    ``gradient`` ``"tuple"`` or ``"single"`` also emits ``NAME_grad``, the
    gradient of the output's sum as one plain function (a tuple of gradients,
    or the only one), for any output shape: srctrans differentiates it again
    for derivatives of derivatives.
    """
    unit, itself, data_names = front_end(fn, wrt, build_callee, "reverse")
    facts = ShapeFacts(unit, optimize and shapes is None)
    # an argument the generic code connects to the output, through a branch folded away
    # here, has a zero gradient (the generic code's), not an unconnected one
    connected = {name for name in unit.wrt if name in unit.active} if tests else set()
    if tests:                             # specialised: the branches the shape key decides
        fold_keyed_branches(unit.function, tests, checked, unit.aliases)
        # a branch's names may be reassigned in it (a block's are: the reverse pass saves what
        # they overwrite); in the function's own block now, they are renamed as SSA does there,
        # and the shape measured of a name is its last version's (the value the run ended with)
        last = rename_reassignments(unit.function, unit.namer)
        if shapes:
            shapes = dict(shapes)
            for name, version in last.items():
                if version != name and name in shapes:
                    shapes[version] = shapes.pop(name)
        floats = {last.get(name, name) for name in floats}
        divisors = {last.get(name, name) for name in divisors}
        find_activity(unit)
    unit.divisors = frozenset(divisors)
    batched = batch_row_loops(unit, shapes, normal_form(unit)) if optimize and shapes else []
    if batched:                       # sums over rows: one batched step each
        rename_reassignments(unit.function, unit.namer)
        find_activity(unit)
    # the shapes measured hold for every call with the key, but where a loop's trip count
    # may depend on values (the loops over rows count rows: shapes)
    shapes_hold = not any(isinstance(n, (gast.For, gast.While)) and not any(n is b for b in batched)
                          for n in walk(unit.function))
    unit.never_negative = never_negative_names(unit.function)
    positive = positive_names(unit.function, unit.never_negative)
    unit.nonsingular = frozenset(softmax_normalisers(unit.function) | positive)
    unit.bounded = bounded_names(unit.function, positive)
    unit.array_valued = array_valued(unit.function)
    unit.written_arrays = written_arrays(unit.function)
    unit.fresh_arrays = _writable(unit, fresh_arrays(unit.function))
    unit.dict_valued = dict_valued(unit.function)
    result = reverse(unit)
    facts.find_paths(result.prologue + result.forward)     # what the cache's measuring reads
    if optimize and shapes:
        statements = result.prologue + result.forward
        shapes = one_valued(shapes, statements, facts.parameters, facts.has_loops)
        # a name holding one value (the measured one's kind) where the run measured a float
        floats = {name for name in floats if name in shapes}
        unit.not_float -= floats
        shapes = infer_shapes(statements, shapes, facts.parameters)   # what the probe missed
        use_array_methods(result.forward, shapes)
        norms_as_sums(result.forward, shapes, floats, unit.aliases[NUMPY_ALIAS])
        read_entries_uncopied(result.forward, shapes)
        plain_softmax_ratios(result.forward)
    gradients = [_gradient_expression(unit, name, adjoint, unconnected_zero or name in connected)
                 for name, adjoint in zip(unit.wrt, result.gradients)]
    backward = result.backward
    trace("reverse", lambda: block_text(backward))
    if optimize:
        simplify(backward, unit.nonsingular, unit.not_float, unit.never_negative, unit.bounded)
        backward, renaming = propagate_copies(backward)    # (d_f = d_t; d_f[0]: t's picks)
        gradients = [renamed(g, renaming) for g in gradients]
        fold_tuple_picks(backward)
        if shapes:
            if isinstance(result.output, gast.Name) and result.output.id in shapes:
                shapes = {result.seed: shapes[result.output.id], **shapes}   # dy is shaped like y
            shapes = {**hooked_shapes(unit, shapes), **shapes}
            backward = specialise(backward, shapes, unit.aliases[NUMPY_ALIAS],
                                  reads_all(gradients),
                                  result.prologue + result.forward)
            fold_tuple_picks(backward)        # (an einsum's cotangents, now a tuple display)
        backward, renaming = propagate_copies(backward)
        gradients = [renamed(g, renaming) for g in gradients]
        backward = eliminate_dead_code(backward, reads_all(gradients), is_not_saving)
        if shapes:        # before the saves are dropped: it leaves saves unread
            # arrays no write can reach: every array written into is one the function made
            unchanged = frozenset() if unit.written_arrays - unit.fresh_arrays else \
                frozenset(shapes) - unit.written_arrays
            rematerialise(backward, shapes, unit.namer, unchanged)
        backward = fold_accumulations(backward)      # after specialise: rt.add became +
        if shapes:        # the shapes tell where NumPy would reuse a temporary anyway
            backward = sink_negations(backward, reads_all(gradients), shapes)
            backward = sink_negations_in_loops(backward, reads_all(gradients), shapes)
            backward = write_container_cotangents(backward, unit.aliases[RUNTIME_ALIAS],
                                                  unit.namer.fresh, frozenset(shapes))
            backward = sum_chains_in_blocks(backward, unit.aliases[RUNTIME_ALIAS],
                                            unit.namer.fresh, frozenset(shapes))
            backward = keep_dict_cotangents_sparse(backward, unit.aliases[RUNTIME_ALIAS],
                                                   unit.dict_valued, reads_all(gradients))
            backward = add_picks_in_place(backward, unit.aliases[RUNTIME_ALIAS], shapes)
            backward = add_picks_into_made(backward, unit.aliases[RUNTIME_ALIAS], shapes)
            backward, renaming = propagate_copies(backward)    # (d_exp = d_sub, which the
            gradients = [renamed(g, renaming) for g in gradients]   # negations' sink left)
            backward = merge_copied_dict_cotangents(
                backward, dicts_copied(result.prologue + result.forward,
                                       unit.aliases[RUNTIME_ALIAS]),
                reads_all(gradients), unit.aliases[RUNTIME_ALIAS])
            backward = merge_complementary_selections(backward, reads_all(gradients),
                                                      unit.aliases[NUMPY_ALIAS])
            # the entries' sums: rt.add of arrays is +, a spread only multiplied is dropped (the
            # selections' products too)
            backward = specialise(backward, shapes, unit.aliases[NUMPY_ALIAS],
                                  reads_all(gradients),
                                  result.prologue + result.forward)
            result.forward, backward = drop_unread_restores(
                result.forward, backward, result.tape, set(shapes), unit.aliases[RUNTIME_ALIAS])
            if facts.has_loops:
                backward = drop_dead_zeroings(
                    backward, natural_ranges(result.prologue + result.forward), gradients,
                    unit.aliases[RUNTIME_ALIAS])
        trace("optimise", lambda: block_text(backward))
    forward = split_tuple_assignments(result.prologue + result.forward)
    for _ in range(2):        # dropping saves can empty a branch, whose test then needs no save
        backward = drop_empty_blocks(backward)
        forward, backward = drop_unneeded_saves(forward, backward,
                                                reads_all(backward + gradients))
    if result.tape is not None and result.tape not in reads_all(backward):
        forward = [s for s in forward if targets_of(s) != [result.tape]]   # nothing was saved
    if optimize and gradient is None:     # once the pops left are final; not in code that
        iterate_saved_values(backward, unit.aliases[RUNTIME_ALIAS])   # is differentiated again
    residuals = residual_names(unit, forward, backward, gradients)
    scalar_output = bool(shapes) and result.seed is not None and shapes.get(result.seed) == ()
    # a callee's (unconnected_zero: a caller's build asks) specialised on an array output
    spread_seeded = (optimize and unconnected_zero and gradient is None and bool(shapes)
                     and result.seed is not None and bool(shapes.get(result.seed))
                     and isinstance(result.output, gast.Name))
    if scalar_output or gradient is not None or spread_seeded:   # fused gradients start here
        untouched_forward = [clone(s) for s in forward]
    if optimize:
        live = set(residuals) | reads_all([result.output])
        forward = eliminate_dead_code(forward, live, is_pure)
        forward = inline_temporaries(forward, unit.namer.temporaries, live, is_pure)
        forward = drop_settled_expectations(forward)
        backward = inline_temporaries(backward, unit.namer.temporaries, reads_all(gradients),
                                      lambda s: True)
    seed = result.seed or unit.namer.fresh("dout")
    own_backward = backward
    # a specialised backward pass (not differentiated again) sums in place; without a loop
    # each gradient sums a few terms only, and the copy of the pass would cost more
    if optimize and gradient is None and shapes and facts.has_loops:
        own_backward = summed_in_place(unit, backward, gradients, residuals, shapes)
    if optimize and shapes:        # specialised code: run, never differentiated again
        for statements in (forward, own_backward):
            call_linalg_kernels(statements, unit.aliases[NUMPY_ALIAS], unit.aliases[RUNTIME_ALIAS])
            hoist_loop_checks(statements, unit.aliases[RUNTIME_ALIAS])
    functions = [forward_function(unit, forward, result.output, residuals),
                 backward_function(unit, own_backward, seed, residuals, gradients,
                                    result.tape if result.tape in residuals else None)]
    if scalar_output:
        functions.append(gradient_function(unit, untouched_forward, backward, seed, gradients,
                                            shapes=shapes, specialised=True,
                                            shapes_hold=shapes_hold))
    elif spread_seeded:
        number = unit.namer.fresh("seed")
        functions.append(_spread_gradient(unit, untouched_forward, backward, result, gradients,
                                          shapes, shapes_hold, number))
    elif gradient is not None:
        seeding = runtime_call(unit.aliases, "seed_sum",
                               [clone(result.output), gast.Constant(has_aux(fn), None)])
        aux = None
        if has_aux(fn):           # (output, aux): the gradient function returns the aux too
            aux = gast.Subscript(clone(result.output), gast.Constant(1, None), gast.Load())
        functions.append(gradient_function(unit, untouched_forward, backward, seed, gradients,
                                            seeding, single=gradient == "single", aux=aux))
    compiled, noted = _compiled(unit, result, itself, functions, fn, "reverse")
    build = Build(compiled, unit.wrt, dict(unit.resolver.assumptions))
    build.notes_effects = noted
    _note_dispatch(build, unit.resolver)
    build.residuals, build.seed = tuple(residuals), seed
    build.spread_seed = number if spread_seeded else None
    build.callee_outputs = tuple(sorted(unit.callee_outputs.items()))
    build.tape_index = residuals.index(result.tape) if result.tape in residuals else None
    if isinstance(result.output, gast.Name):         # the output's cotangent: the output's shape
        facts.same_shape(seed, result.output.id)
    facts.record(build, data_names)
    return build


def _compiled(unit, result, itself, functions, fn, mode):
    """``(the compiled module, whether it counts effects)`` of a derivative's generated
    ``functions`` of ``fn`` (``mode``: "reverse" or "forward"), each call of a user's function
    that may write counted first (``emit/effect_notes.py``: the API runs a call again only
    when none ran)."""
    closure = {unit.aliases[NUMPY_ALIAS]: numpy, unit.aliases[RUNTIME_ALIAS]: runtime}
    closure.update(result.closure)
    closure.update(itself)
    closure.update(unit.resolver.synthetic)
    noted = note_effects(functions, unit.aliases, fn)
    compiled = compile_functions(functions, closure, fn, f"{fn.__qualname__} {mode}")
    trace("generated", lambda: compiled.source)
    return compiled, noted


def _spread_gradient(unit, forward, backward, result, gradients, shapes, shapes_hold, number):
    """``NAME_spread_grad(*params, number=...)``: the gradient of a number times the sum of the
    (array) output, the seed ``rt.unreduce(number, output, None, False)``: what a caller's
    backward pass gives the callee for ``np.sum(f(x))``, fused into one function whose seed
    is dropped where a number reads as the spread does (``optimise.spreads``), and then
    the output itself is not computed (``optimise.callee_spreads``)."""
    start = assign(result.seed, runtime_call(unit.aliases, "unreduce", [
        load(number), clone(result.output), gast.Constant(None, None), gast.Constant(False, None)]))
    known = {**shapes, result.output.id: shapes[result.seed], number: ()}
    backward = specialise([start] + [clone(stmt) for stmt in backward], known,
                          unit.aliases[NUMPY_ALIAS], reads_all(gradients))
    return gradient_function(unit, forward, backward, result.seed, gradients, shapes=known,
                             specialised=True, shapes_hold=shapes_hold, seed_parameter=number)


def build_forward(fn, wrt, build_callee, optimize=True, tangent_only=False, shapes=None,
                  floats=frozenset()):
    """Compile the JVP of ``fn`` with respect to ``wrt`` (forward mode).

    ``tangent_only`` returns the output's tangent alone (the output's own
    statements are dropped where the tangent does not need them: an HVP
    needs the gradient's tangent, not the gradient). ``tangent_only="gradient"``
    (one selected parameter, a number) makes ``NAME_grad(*params)`` returning
    ``(tangent,)``: the tangent is the number 1.0, folded into the tangent
    statements, so a scalar output's tangent is its derivative with respect to
    that number, the gradient a reverse pass would give (``srctrans.scalar_gradients``).

    ``shapes`` (name -> shape of the JVP's values, measured on a call of
    this same build without ``shapes``) specialises the JVP on them: a
    tangent already of its output's shape is not broadcast again,
    reductions of arrays are called as their methods, ``1.0 * x`` is ``x``
    where the measuring call had ``x`` hold real floats alone (``floats``), and
    a loop's invariant arithmetic of numbers is computed before it.

    The passes up to activity are those of :func:`build_reverse`; then every
    active statement gets its tangent statement, and the result is optimised
    like a backward pass (constants folded, copies propagated, dead code
    dropped, single-use temporaries folded back).
    """
    unit, itself, data_names = front_end(fn, wrt, build_callee, "forward")
    facts = ShapeFacts(unit, optimize and shapes is None)
    unit.written_arrays = written_arrays(unit.function)
    unit.fresh_arrays = _writable(unit, fresh_arrays(unit.function))
    result = forward(unit)
    seeded = tangent_only == "gradient"
    if seeded:                  # the one parameter's tangent is 1.0: simplify folds it in
        seeds = [assign(result.tangents[name], gast.Constant(1.0, None)) for name in unit.wrt]
        result.body[:0] = seeds
        result.tangent_statements[:0] = seeds
    body = result.body
    facts.find_paths(body)                                  # what the cache's measuring reads
    returned = [result.tangent] if tangent_only else [result.output, result.tangent]
    if optimize:
        if shapes:
            unit.not_float -= floats
        # not the user's statements: x * 1.0 there makes a copy
        simplify(result.tangent_statements, not_float=unit.not_float)
        if shapes:
            shapes = one_valued(shapes, body, facts.parameters, facts.has_loops)
            known = infer_shapes(body, shapes, facts.parameters)
            specialise_tangents(body, known)
            norms_as_sums(body, known, {name for name in floats if name in shapes},
                          unit.aliases[NUMPY_ALIAS])
        body, renaming = propagate_copies(body)
        returned = [renamed(r, renaming) for r in returned]
        body = eliminate_dead_code(body, reads_all(returned), is_pure)
        temporaries = unit.namer.temporaries | {unit.namer.adjoint(t) for t in unit.namer.temporaries
                                                if t in unit.active}
        body = inline_temporaries(body, temporaries, reads_all(returned), is_pure)
        body = drop_settled_expectations(body)
        if shapes:
            tangents = {t for s in result.tangent_statements for t in targets_of(s)}
            factor_out_of_sums(body, tangents)
            body = inner_products(body, tangents - _assigned(body, result.tangent_statements),
                                  known, unit.not_float, unit.aliases[NUMPY_ALIAS])
            body = hoist_loop_invariants(body, {name for name, shape in known.items()
                                                if shape == ()}, facts.parameters,
                                         unit.namer.fresh)
            body = drop_zero_stores(body, known, unit.aliases[RUNTIME_ALIAS])
            body, renaming = propagate_copies(body)       # (a hoisted value's copy)
            returned = [renamed(r, renaming) for r in returned]
            body = eliminate_dead_code(body, reads_all(returned), is_pure)
            if seeded:          # (a JVP may be batched: its loops keep their arrays)
                vectors = {name: shape[0] for name, shape in known.items()
                           if len(shape) == 1 and type(shape[0]) is int}
                body = float_list_loops(body, vectors, reads_all(returned), facts.parameters,
                                        unit.aliases[RUNTIME_ALIAS], unit.aliases[NUMPY_ALIAS],
                                        unit.namer.fresh)
                body = carry_entries(body, known, reads_all(returned),
                                     unit.aliases[RUNTIME_ALIAS], unit.namer.fresh)
                call_linalg_kernels(body, unit.aliases[NUMPY_ALIAS], unit.aliases[RUNTIME_ALIAS])
                hoist_loop_checks(body, unit.aliases[RUNTIME_ALIAS])
    args = clone(unit.function.args)
    if seeded:
        name = unit.namer.fresh(function_base(unit.parsed.fn) + "_grad")
        doc = gast.Expr(gast.Constant(
            f"The gradient with respect to the number {unit.wrt[0]}: the output's tangent "
            f"along {result.tangents[unit.wrt[0]]} = 1.0 (forward mode).", None))
        ret = gast.Return(gast.Tuple(returned, gast.Load()))
    else:
        name = unit.namer.fresh(function_base(unit.parsed.fn) + "_jvp")
        args.kwonlyargs = list(args.kwonlyargs) + name_nodes(
            [result.tangents[n] for n in unit.wrt], gast.Param)
        args.kw_defaults = list(args.kw_defaults) + [None] * len(unit.wrt)
        doc = gast.Expr(gast.Constant(
            f"Forward mode: the output and its tangent, given the tangents "
            f"{', '.join(result.tangents[n] for n in unit.wrt)} of {', '.join(unit.wrt)}.", None))
        ret = gast.Return(returned[0] if tangent_only else gast.Tuple(returned, gast.Load()))
    anno.set_(ret, Anno.ORIGIN, None)
    function = function_def(name, args, [doc] + body + [ret])
    compiled, noted = _compiled(unit, result, itself, [function], fn, "forward")
    build = ForwardBuild(compiled, unit.wrt, dict(result.tangents), dict(unit.resolver.assumptions))
    build.notes_effects = noted
    _note_dispatch(build, unit.resolver)
    # a `with st.grad_of(h)` block: code of a backward pass, which forward mode leaves out
    build.backward_code = any(isinstance(node, gast.With) for node in walk(unit.function))
    facts.record(build, data_names)
    return build


def _assigned(body, excluded):
    """The names the statements of ``body`` (nested ones too) other than ``excluded`` assign."""
    skip = {id(stmt) for stmt in excluded}
    return {t for top in body for stmt in walk(top)
            if isinstance(stmt, gast.stmt) and id(stmt) not in skip for t in targets_of(stmt)}


def _writable(unit, fresh):
    """The arrays ``unit``'s function may write into: those it made (``fresh``), and in a
    derivative srctrans generated every array it writes (built from user code that passed)."""
    if is_generated(unit.parsed.fn):
        appended = {found[0] for found in map(appended_to, walk(unit.function)) if found}
        return set(fresh) | set(unit.written_arrays) | appended
    return fresh


def _gradient_expression(unit, name, adjoint, unconnected_zero):
    if adjoint is not None:
        return gast.Name(adjoint, gast.Load(), None, None)
    if unconnected_zero:
        zeros = gast.Attribute(gast.Name(unit.aliases[RUNTIME_ALIAS], gast.Load(), None, None),
                               "zeros_like", gast.Load())
        return gast.Call(zeros, [gast.Name(name, gast.Load(), None, None)], [])
    return gast.Constant(None, None)

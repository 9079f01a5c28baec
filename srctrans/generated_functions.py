"""The functions a build emits: its forward pass, its backward pass, and the fused gradient.

Requires: the optimised statements of :func:`srctrans.pipeline.build_reverse` (and of the
batching pipeline, which reuses :func:`function_def` and :func:`is_pure`).
Guarantees: ``NAME_fwd(*params)`` returns ``(output, residuals)``; ``NAME_bwd(residuals,
seed)`` returns the cotangents of the parameters differentiated, popping what the forward
pass pushed from a copy of its tape; ``NAME_grad(*params)`` computes a scalar output's
gradient in one go (the forward statements the gradient needs, then the backward ones,
specialised further where the build is: see :func:`gradient_function`).
"""

import copy

import gast

from srctrans import runtime
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.control import assigned_names, exposed_reads
from srctrans.naming import NUMPY_ALIAS, RESIDUALS, RUNTIME_ALIAS, function_base
from srctrans.optimise.callee_spreads import call_spread_gradients
from srctrans.optimise.cholesky_solves import share_cholesky_inverses
from srctrans.optimise.guarded_sums import sum_guarded_products
from srctrans.optimise.fold_derivatives import skip_derivative_only_folds
from srctrans.optimise.symmetric_clips import symmetric_clip_masks
from srctrans.optimise.common_values import share_common_values
from srctrans.optimise.constant_factors import multiply_constant_factors
from srctrans.optimise.expression_shapes import infer_shapes
from srctrans.optimise.dce import eliminate_dead_code, propagate_copies, reads_of, targets_of
from srctrans.optimise.row_loops import differentiated_values
from srctrans.optimise.filled_products import broadcast_filled_products
from srctrans.optimise.filled_spreads import fill_spreads
from srctrans.optimise.float_lists import float_list_loops
from srctrans.optimise.carried_entries import carry_entries
from srctrans.optimise.linalg_kernels import call_linalg_kernels
from srctrans.optimise.loop_checks import hoist_loop_checks
from srctrans.optimise.last_steps import skip_last_steps
from srctrans.optimise.release import release_dead_arrays
from srctrans.optimise.step_lists import save_steps_in_lists
from srctrans.optimise.entry_cotangents import write_entry_cotangents
from srctrans.optimise.in_place import accumulate_in_place
from srctrans.optimise.placed_writes import assign_placed_parts
from srctrans.optimise.split_slices import slice_splits
from srctrans.optimise.negation import negations_into_updates
from srctrans.optimise.loop_invariants import hoist_loop_invariants
from srctrans.optimise.traces import sum_traces
from srctrans.optimise.derivative_only import derivative_only_names
from srctrans.optimise.inner_products import inner_products
from srctrans.optimise.negated_names import absorb_negated_names
from srctrans.optimise.reciprocals import divide_by_reciprocals
from srctrans.optimise.hyperbolic_ratios import tanh_ratios
from srctrans.optimise.symmetric_solves import solve_symmetric_cotangents
from srctrans.optimise.norm_ratios import divide_norms_cotangents
from srctrans.optimise.kept_axes import sum_kept_axes_away
from srctrans.optimise.divisors import divide_by_checked
from srctrans.optimise.inline import inline_temporaries
from srctrans.optimise.keyed_branches import drop_settled_expectations
from srctrans.optimise.masked_picks import select_masked_picks
from srctrans.optimise.shares import share_softmax
from srctrans.optimise.simplify import simplify
from srctrans.optimise.specialise import fold_shape_counts
from srctrans import nodes
from srctrans.nodes import clone, parameter_names, rename_reads, substitute_names
from srctrans.parse.resolve import MISSING
from srctrans.rules import METHODS, REGISTRY
from srctrans.treewalk import walk, walk_names


def renamed(expression, renaming):
    """``expression`` reading each name ``renaming`` maps under its new name (a copy if any
    changes: a returned tangent such as ``rt.zeros_like(_out)`` reads a renamed output)."""
    if expression is None or not reads_of(expression) & renaming.keys():
        return expression
    expression = clone(expression)
    rename_reads(expression, renaming)
    return expression


def reads_all(expressions):
    names = set()
    for expression in expressions:
        if expression is not None:
            names |= reads_of(expression)
    return names


def is_not_saving(stmt):
    """A backward statement that may be dropped when its result is unused (not a tape pop)."""
    return anno.get(stmt, Anno.SAVES) is None


def is_pure(stmt):
    """A forward statement that may be dropped when its result is unused."""
    if anno.get(stmt, Anno.SAVES) is not None:
        return False
    calls = [n for n in walk(stmt) if isinstance(n, gast.Call)]
    for call in calls:
        callee = anno.get(call, Anno.CALLEE)
        if callee is None and isinstance(call.func, gast.Attribute) and call.func.attr in METHODS:
            continue
        if callee is MISSING or callee is None or callee is runtime.unseen_callee:
            return False           # (a call through a value meeting a new callee must raise)
        rule = REGISTRY.lookup(callee)              # user rules may belong to impure functions
        if (rule is None or rule.vjp is None) and not REGISTRY.is_nondifferentiable(callee):
            return False
    return True


def reads_of_live_code(forward, backward, kept):
    """The names read by the statements of a fused gradient that dead code elimination keeps
    (``kept``: the expressions it returns)."""
    backward = eliminate_dead_code([clone(s) for s in backward], reads_all(kept),
                                   is_not_saving)
    forward = eliminate_dead_code([clone(s) for s in forward], reads_all(backward + kept),
                                  is_pure)
    return reads_all(forward + backward + kept)


def _arrays(shapes):
    """The names ``shapes`` (name -> shape, or None) gives a shape of at least one axis."""
    return {name for name, shape in shapes.items() if shape}


def _numbers(shapes):
    """The names ``shapes`` (name -> shape, or None) gives the shape ``()``."""
    return {name for name, shape in shapes.items() if shape == ()}


def name_nodes(names, ctx):
    return [gast.Name(n, ctx(), None, None) for n in names]


def forward_function(unit, forward, output, residuals):
    saved = gast.Tuple(name_nodes(residuals, gast.Load), gast.Load())
    returned = gast.Return(gast.Tuple([copy.deepcopy(output), saved], gast.Load()))
    anno.set_(returned, Anno.ORIGIN, None)
    name = unit.namer.fresh(function_base(unit.parsed.fn) + "_fwd")
    doc = gast.Expr(gast.Constant("Forward pass: returns (output, residuals for the backward pass).", None))
    return function_def(name, copy.deepcopy(unit.function.args), [doc] + forward + [returned])


def summed_in_place(unit, backward, gradients, residuals, shapes):
    """A copy of a specialised backward pass (of a function with loops, where gradients sum
    a term a step) whose gradients add their terms in place
    (``optimise.in_place``): a cotangent made from a residual array's zeros (``dx =
    rt.zeros_of(x)``; the residuals are unpacked once, before it runs) or from a term,
    then only summed into, is the pass's own array."""
    arrays, numbers = _arrays(shapes), _numbers(shapes)
    body = [clone(stmt) for stmt in backward]
    owned = (set(residuals) & arrays) - assigned_names(body)
    named = {g.id: p for g, p in zip(gradients, unit.wrt) if isinstance(g, gast.Name)}
    returned = gast.Return(gast.Tuple([clone(g) for g in gradients], gast.Load()))
    return accumulate_in_place(body + [returned], owned, unit.aliases[RUNTIME_ALIAS], named,
                               numbers, arrays, shapes)[:-1]


def backward_function(unit, backward, seed, residuals, gradients, tape=None):
    """The backward pass; it pops the values the forward pass pushed on ``tape`` from a
    copy of it, so that the residuals can be used again (a pullback called once per
    row of a Jacobian, a callee's residuals inside its caller's)."""
    name = unit.namer.fresh(function_base(unit.parsed.fn) + "_bwd")
    residuals_name = unit.namer.fresh(RESIDUALS)
    args = gast.arguments(name_nodes([residuals_name, seed], gast.Param), [], None, [], [], None, [])
    body = [gast.Expr(gast.Constant(
        f"Backward pass: the cotangents of {', '.join(unit.wrt)} given the output's cotangent {seed}.",
        None))]
    if residuals:
        unpack = gast.Assign([gast.Tuple(name_nodes(residuals, gast.Store), gast.Store())],
                             gast.Name(residuals_name, gast.Load(), None, None), None)
        body.append(unpack)
    if tape is not None:
        body.append(nodes.assign(tape, gast.Call(nodes.load("list"), [nodes.load(tape)], [])))
    body.extend(backward)
    body.append(gast.Return(gast.Tuple(list(gradients), gast.Load())))
    return function_def(name, args, body)


def function_def(name, args, body):
    return gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


def gradient_function(unit, forward, backward, seed, gradients, seeding=None, single=False,
                       shapes=None, specialised=False, aux=None, shapes_hold=False,
                       seed_parameter=None):
    """``NAME_grad(*params)``: the gradient of a scalar output, forward and backward in one.

    The output's cotangent is the constant 1.0 (a Python float, so it keeps
    float32 results float32), folded away where it multiplies; the forward statements
    that only computed the output's value are dropped. A ``seeding`` expression
    (ones shaped like an output of unknown shape) replaces the constant; ``single``
    returns the one gradient rather than a tuple. In ``specialised`` code (``shapes``:
    name -> the shape measured) each array is released after its last use
    (``optimise.release``), a number spread over an expression computed only for its
    shape is filled (``optimise.filled_spreads``; in its shape written out where
    ``shapes_hold``, the function having no loop), a loop keeps its saved values in
    lists of its own (``optimise.step_lists``), a
    loop over a list writes the list's cotangent entry by entry (``optimise.entry_cotangents``) and
    a parameter's gradient that only sums terms adds them in place (``optimise.in_place``).
    A log-sum-exp read only for its shares is not computed (``optimise.shares``).
    An ``aux`` expression (a has-aux function's ``output[1]``) is returned beside the
    gradients, ``(gradients, aux)``, read from the same forward statements.
    A ``seed_parameter`` names a keyword-only parameter the function takes beside its own,
    ``NAME_spread_grad``: the backward pass assigns the seed itself, from that parameter.
    """
    if seed_parameter is None and seeding is None and not any(
            isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == seed
            for stmt in backward for n in walk(stmt)):
        one = {seed: gast.Constant(1.0, None)}
        backward = [substitute_names(clone(stmt), one) for stmt in backward]
        gradients = [substitute_names(clone(g), one) for g in gradients]
    else:       # the seed is a parameter's spread, not a constant, or also a loop's adjoint
        start = [] if seed_parameter is not None else \
            [nodes.assign(seed, seeding or gast.Constant(1.0, None))]
        backward = start + [clone(stmt) for stmt in backward]
        gradients = [clone(g) for g in gradients]
    simplify(backward, unit.nonsingular, unit.not_float, unit.never_negative, unit.bounded)
    backward, renaming = propagate_copies(backward)
    gradients = [renamed(g, renaming) for g in gradients]
    backward = share_softmax(forward, backward, unit.aliases[RUNTIME_ALIAS],
                             gradients + ([aux] if aux is not None else []), reads_of_live_code)
    backward = eliminate_dead_code(backward, reads_all(gradients), is_not_saving)
    kept = gradients + ([aux] if aux is not None else [])     # what the function returns
    needed = reads_all(backward + kept)
    forward = [clone(s) for s in forward]
    if aux is None:                  # no value returned: the batched sums of loops will do
        forward = [differentiated_values(s) for s in forward]
    forward = eliminate_dead_code(forward, needed, is_pure)
    derivatives = assigned_names(backward) - assigned_names(forward)      # (not a restore's)
    body = forward + backward
    shapes = shapes or {}
    if specialised:
        body = fold_shape_counts(body, shapes)
        body = call_spread_gradients(body, unit.spread_grads, _numbers(shapes),
                                     unit.namer.fresh)
        body = fill_spreads(body, shapes, unit.aliases[NUMPY_ALIAS], unit.aliases[RUNTIME_ALIAS],
                            shapes_hold)
        body = broadcast_filled_products(body, shapes, unit.aliases[NUMPY_ALIAS])
        body = eliminate_dead_code(body, reads_all(kept), is_pure)
        body = share_common_values(body, shapes, reads_all(kept),
                                   parameter_names(unit.function), unit.aliases[RUNTIME_ALIAS])
    body = inline_temporaries(body, unit.namer.temporaries, reads_all(kept), is_pure)
    body = drop_settled_expectations(body)          # (a test inlining made a literal)
    if specialised:           # (after the inlining: a product's literals are in one expression)
        body = slice_splits(body, shapes)
        body = share_cholesky_inverses(body, unit.aliases[RUNTIME_ALIAS],
                                       unit.aliases[NUMPY_ALIAS], unit.namer.fresh,
                                       shapes if aux is None else None)
        body = sum_guarded_products(body, unit.aliases[RUNTIME_ALIAS])
        body = skip_derivative_only_folds(body, unit.aliases[RUNTIME_ALIAS])
        body = symmetric_clip_masks(body, unit.aliases[NUMPY_ALIAS])
        body = select_masked_picks(body, shapes, unit.not_float, unit.aliases[NUMPY_ALIAS],
                                   unit.aliases[RUNTIME_ALIAS])
        known = infer_shapes(body, shapes, parameter_names(unit.function))
        numbers = _numbers(known)
        body, ratios = divide_by_checked(body, unit.divisors & numbers,
                                         unit.divisors & _arrays(known),
                                         set(parameter_names(unit.function)), unit.aliases)
        if ratios:                    # (a norm's x / s, which the forward pass may hold)
            body = share_common_values(body, shapes, reads_all(kept),
                                       parameter_names(unit.function),
                                       unit.aliases[RUNTIME_ALIAS])
        body = multiply_constant_factors(body, reads_all(kept),
                                         {name for name in shapes if name not in unit.not_float},
                                         numbers)
        body = hoist_loop_invariants(body, numbers, parameter_names(unit.function),
                                     unit.namer.fresh)
        body = sum_traces(body, derivatives, known, unit.not_float, unit.aliases[NUMPY_ALIAS])
        body = inner_products(body, derivatives | derivative_only_names(
            body, derivatives, reads_all(kept), unit.aliases[NUMPY_ALIAS]), known,
            unit.not_float, unit.aliases[NUMPY_ALIAS])
        body = divide_by_reciprocals(body, derivatives, reads_all(kept))
        body = tanh_ratios(body, reads_all(kept), unit.aliases[NUMPY_ALIAS])
        body, shared = solve_symmetric_cotangents(body, derivatives, unit.aliases[RUNTIME_ALIAS])
        if shared:                             # (a right-hand side computed for nothing now)
            body = eliminate_dead_code(body, reads_all(kept), is_pure)
        # (the names the passes since ``known`` made have no shape there: left alone)
        body = divide_norms_cotangents(body, known, unit.aliases[RUNTIME_ALIAS])
        body = sum_kept_axes_away(body, reads_all(kept))
    arrays, numbers = _arrays(shapes), _numbers(shapes)
    if arrays:
        body = release_dead_arrays(body, arrays,
                                   reads_all(kept) | set(parameter_names(unit.function)))
    returned = gradients[0] if single else gast.Tuple(list(gradients), gast.Load())
    returned = gast.Return(returned if aux is None else gast.Tuple([returned, aux], gast.Load()))
    if specialised:
        body = save_steps_in_lists(body, unit.namer, unit.aliases[RUNTIME_ALIAS])
        body = write_entry_cotangents(body, unit.aliases[RUNTIME_ALIAS])
        parameter_arrays = (set(parameter_names(unit.function)) & arrays) - assigned_names(body)
        named = {g.id: p for g, p in zip(gradients, unit.wrt) if isinstance(g, gast.Name)}
        body = accumulate_in_place(body + [returned], parameter_arrays,
                                   unit.aliases[RUNTIME_ALIAS], named, numbers, arrays,
                                   shapes)[:-1]
    body = negations_into_updates(body)             # x[k] += -d: x[k] -= d
    if specialised:
        body = absorb_negated_names(body, reads_all(kept))      # d = -T read as T, signs in
        body = assign_placed_parts(body, known, parameter_names(unit.function),
                                   unit.aliases[NUMPY_ALIAS], unit.aliases[RUNTIME_ALIAS])
        vectors = {name: shape[0] for name, shape in known.items()
                   if len(shape) == 1 and type(shape[0]) is int}
        body = float_list_loops(body, vectors, reads_all(kept), parameter_names(unit.function),
                                unit.aliases[RUNTIME_ALIAS],
                                unit.aliases[NUMPY_ALIAS], unit.namer.fresh)
        body = carry_entries(body, known, reads_all(kept), unit.aliases[RUNTIME_ALIAS],
                             unit.namer.fresh)
        body = call_linalg_kernels(body, unit.aliases[NUMPY_ALIAS], unit.aliases[RUNTIME_ALIAS])
        body = hoist_loop_checks(body, unit.aliases[RUNTIME_ALIAS])
    body = skip_last_steps(body, reads_all(kept), lambda stmt: is_pure(stmt) or (
        is_not_saving(stmt) and stmt.targets[0].id in derivatives))   # (a backward statement)
    arguments = clone(unit.function.args)
    if seed_parameter is None:
        name = unit.namer.fresh(function_base(unit.parsed.fn) + "_grad")
        of = "of a scalar output" if seeding is None else "of the sum of the output"
    else:
        name = unit.namer.fresh(function_base(unit.parsed.fn) + "_spread_grad")
        of = f"of the output's sum times the number {seed_parameter}"
        arguments.kwonlyargs.append(gast.Name(seed_parameter, gast.Param(), None, None))
        arguments.kw_defaults.append(None)
    doc = gast.Expr(gast.Constant(
        f"The gradient with respect to {', '.join(unit.wrt)} ({of}; no value).", None))
    return function_def(name, arguments, [doc] + body + [returned])


def residual_names(unit, forward, backward, gradients):
    """The forward values the backward pass reads, in order of first use."""
    forward_names = set(parameter_names(unit.function))
    for stmt in forward:                        # a loop's or a branch's names too
        forward_names.update(n.id for n in walk(stmt)
                             if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    residuals = {}                              # an ordered set
    assigned = set()
    for node in backward + gradients:
        # a block that assigns a name before it reads it does not read the forward value
        exposed = exposed_reads([node]) if isinstance(node, gast.stmt) else None
        for name in _ordered_reads(node):
            if name in forward_names and name not in assigned and (exposed is None or name in exposed):
                residuals.setdefault(name)
        assigned.update(targets_of(node))
    return list(residuals)


def _ordered_reads(node):
    return [n.id for n in walk_names(node) if isinstance(n.ctx, gast.Load)]

"""Derivative rules of the runtime helpers that generated code calls.

srctrans reaches higher derivatives (Hessians, grad of grad, jvp of grad,
grad of jvp) by differentiating the code it generated, and that code calls
the runtime: ``rt.unbroadcast``, ``rt.matmul_lhs``, ``rt.prod_grad``... So
each helper needs rules like any NumPy function: a VJP and a JVP template,
``linear`` when its JVP is the same call on its first argument's tangent, or
``nondifferentiable`` for masks and weights, which are piecewise constant.

Most helpers are linear in the cotangent they take first. Their VJP in it is
the transpose of that linear map, often the primal operation itself: the
transpose of ``v -> matmul_lhs(v, a, b)`` is ``c -> c @ b``. The products'
helpers are bilinear: ``matmul_lhs(v, a, b)`` is linear in ``v`` and in
``b``, and ``a`` only supplies a shape; in general, for a product ``P``,
``<c, lhs(v, a, b)> = <v, P(c, b)>``, which gives both derivatives.

The helpers of forward-mode code (``prod_jvp``, ``einsum_jvp``,
``choice_tangent``...) are linear in the tangent they take first, and their
transpose in it is mostly the matching gradient helper: the transpose of
``t -> prod_jvp(t, prod, x)`` is ``c -> prod_grad(c, prod, x)``.

The templates call the helpers' first parameter ``v`` (``c`` for a
transpose's, ``t`` for a tangent helper's), because ``g`` and ``ans`` are the
template's own cotangent and output, and name a helper's ``ans`` after what
it is (``prod``, ``std``, ``power``). A helper that takes the forward result
of the function it differentiates is differentiated in that result too, as
an independent input. Derivatives that need more than a line call
``runtime/higher.py``.

The rules of the products' helpers are in ``product_helpers.py``, those of the transposes
of scans, differences and uniform-grid gradients in ``scan_helpers.py``, those of the
helpers of parts of values in ``container_helpers.py``. Every runtime export is accounted
for in tests/test_runtime_helper_rules.py, which lists the helpers left without rules and why.
"""

import numpy as np

from srctrans import runtime as rt
from srctrans.runtime import decompositions
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


# -- broadcasting --------------------------------------------------------------

@vjp(rt.unbroadcast)
def unbroadcast(g, ans, v, x):
    return rt.unbroadcast_transpose(g, v)

@vjp(rt.unbroadcast_transpose)
def unbroadcast_transpose(g, ans, c, v):
    return rt.unbroadcast(g, c)

linear(rt.unbroadcast, rt.unbroadcast_transpose)

@vjp(rt.broadcast_like)
def broadcast_like(g, ans, tangent, like):
    return rt.unbroadcast(g, tangent)

linear(rt.broadcast_like)


@vjp(rt.ratio_or_zero, elementwise=True)
def ratio_or_zero(g, ans, a, b):
    return rt.ratio_or_zero(g, b), -rt.ratio_or_zero(g * ans, b)

@jvp(rt.ratio_or_zero)
def ratio_or_zero_jvp(da, db, ans, a, b):
    return rt.ratio_or_zero(da, b), -rt.ratio_or_zero(ans * db, b)

@vjp(rt.ratio_or_zero_times, elementwise=True)
def ratio_or_zero_times(g, ans, a, b):
    return rt.ratio_or_zero_times(g, b), -rt.ratio_or_zero(g * ans, b)

@jvp(rt.ratio_or_zero_times)
def ratio_or_zero_times_jvp(da, db, ans, a, b):
    return rt.ratio_or_zero_times(da, b), -rt.ratio_or_zero(ans * db, b)


# -- reductions ----------------------------------------------------------------
# Each helper spreads ``v`` (shaped like the reduction's result) over ``x``,
# times a factor; its transpose in ``v`` sums the cotangent times that factor
# back over the reduced axes.

@vjp(rt.unreduce)
def unreduce(g, ans, v, x, axis=None, keepdims=False):
    return np.sum(g, axis=axis, keepdims=keepdims)

@vjp(rt.mean_grad)
def mean_grad(g, ans, v, x, axis=None, keepdims=False):
    return np.mean(g, axis=axis, keepdims=keepdims)

@vjp(rt.extremum_grad)
def extremum_grad(g, ans, v, extremum, x, axis=None, keepdims=False):
    """Which elements tie for the extremum is piecewise constant in ``extremum`` and ``x``."""
    return np.sum(g * rt.extremum_grad(np.ones_like(v), extremum, x, axis, keepdims),
                  axis=axis, keepdims=keepdims)

linear(rt.unreduce, rt.mean_grad, rt.extremum_grad)


@vjp(rt.prod_grad)
def prod_grad(g, ans, v, prod, x, axis=None, keepdims=False):
    return (np.sum(g * rt.prod_grad(np.ones_like(v), prod, x, axis, keepdims), axis=axis, keepdims=keepdims),
            rt.prod_grad_dprod_transpose(g, v, x, axis, keepdims),
            rt.prod_grad_dx(g, v, prod, x, axis, keepdims))

@jvp(rt.prod_grad)
def prod_grad_jvp(dv, dprod, dx, ans, v, prod, x, axis=None, keepdims=False):
    return (rt.prod_grad(dv, prod, x, axis, keepdims),
            rt.prod_grad_dprod(dprod, v, x, axis, keepdims),
            rt.prod_grad_dx(dx, v, prod, x, axis, keepdims))


# var_grad is v * (x - mean(x)) * 2 / dof: linear in v and in x. As a map of
# x it is symmetric (the factor is constant along the reduced axes, and
# centering is a symmetric projection), so it is its own transpose.
@vjp(rt.var_grad)
def var_grad(g, ans, v, x, axis=None, ddof=0, keepdims=False):
    return (rt.real_for(np.sum(g * rt.var_grad(np.ones_like(v), x, axis, ddof, keepdims), axis=axis,
                               keepdims=keepdims), v),
            rt.var_grad(v, g, axis, ddof, keepdims))

@jvp(rt.var_grad)
def var_grad_jvp(dv, dx, ans, v, x, axis=None, ddof=0, keepdims=False):
    return rt.var_grad(dv, x, axis, ddof, keepdims), rt.var_grad(v, dx, axis, ddof, keepdims)


# std_grad is v * (x - mean(x)) / (dof * std), zero where std == 0: linear in
# v, symmetric-linear in x like var_grad, and ``-ans / std`` in std.
@vjp(rt.std_grad)
def std_grad(g, ans, v, std, x, axis=None, ddof=0, keepdims=False):
    return (rt.real_for(np.sum(g * rt.std_grad(np.ones_like(v), std, x, axis, ddof, keepdims),
                               axis=axis, keepdims=keepdims), v),
            -rt.ratio_or_zero(rt.real_for(np.sum(g * ans, axis=axis, keepdims=keepdims), std), std),
            rt.std_grad(v, std, g, axis, ddof, keepdims))

@jvp(rt.std_grad)
def std_grad_jvp(dv, dstd, dx, ans, v, std, x, axis=None, ddof=0, keepdims=False):
    return (rt.std_grad(dv, std, x, axis, ddof, keepdims),
            -rt.std_grad(v * rt.ratio_or_zero(dstd, std), std, x, axis, ddof, keepdims),
            rt.std_grad(v, std, dx, axis, ddof, keepdims))


# The tangents of reductions: each is linear in ``t`` (shaped like x), and its
# transpose in t is the reduction's gradient helper.

@vjp(rt.extremum_jvp)
def extremum_jvp(g, ans, t, extremum, x, axis=None, keepdims=False):
    """Which elements tie for the extremum is piecewise constant in ``extremum`` and ``x``."""
    return rt.extremum_grad(g, extremum, x, axis, keepdims)

linear(rt.extremum_jvp)


# prod_jvp is sum(t * partials) over the reduced axes, the partials as in
# prod_grad: in prod it is prod_grad_dprod summed against t, and in x the
# slice's product Hessian (prod_grad_dx with v = 1) summed against t, which
# is symmetric, so the VJP in x is prod_grad_dx of t itself.
@vjp(rt.prod_jvp)
def prod_jvp(g, ans, t, prod, x, axis=None, keepdims=False):
    return (rt.prod_grad(g, prod, x, axis, keepdims),
            rt.prod_grad_dprod_transpose(t, g, x, axis, keepdims),
            rt.prod_grad_dx(t, g, prod, x, axis, keepdims))

@jvp(rt.prod_jvp)
def prod_jvp_jvp(dt, dprod, dx, ans, t, prod, x, axis=None, keepdims=False):
    return (rt.prod_jvp(dt, prod, x, axis, keepdims),
            rt.prod_grad_dprod_transpose(t, dprod, x, axis, keepdims),
            np.sum(t * rt.prod_grad_dx(dx, np.ones_like(prod), prod, x, axis, keepdims),
                   axis=axis, keepdims=keepdims))


# var_jvp is 2 sum((x - mean(x)) t) / dof: bilinear in t and x, and symmetric
# in them (centering is a symmetric projection), so its derivative in x is
# var_jvp with the two swapped.
@vjp(rt.var_jvp)
def var_jvp(g, ans, t, x, axis=None, ddof=0, keepdims=False):
    return rt.var_grad(g, x, axis, ddof, keepdims), rt.var_grad(g, t, axis, ddof, keepdims)

@jvp(rt.var_jvp)
def var_jvp_jvp(dt, dx, ans, t, x, axis=None, ddof=0, keepdims=False):
    return rt.var_jvp(dt, x, axis, ddof, keepdims), rt.var_jvp(t, dx, axis, ddof, keepdims)


# std_jvp is var_jvp's form divided by 2 std (zero where std == 0): the same
# in t and x, and ``-ans / std`` in std.
@vjp(rt.std_jvp)
def std_jvp(g, ans, t, std, x, axis=None, ddof=0, keepdims=False):
    return (rt.std_grad(g, std, x, axis, ddof, keepdims),
            -rt.ratio_or_zero(g * ans, std),
            rt.std_grad(g, std, t, axis, ddof, keepdims))

@jvp(rt.std_jvp)
def std_jvp_jvp(dt, dstd, dx, ans, t, std, x, axis=None, ddof=0, keepdims=False):
    return (rt.std_jvp(dt, std, x, axis, ddof, keepdims),
            -rt.ratio_or_zero(ans * dstd, std),
            rt.std_jvp(t, std, dx, axis, ddof, keepdims))


# -- joins: split v into pieces; the transpose joins the pieces' cotangents ------

@vjp(rt.concatenate_grads)
def concatenate_grads(g, ans, v, arrays, axis=0):
    return np.concatenate(g, axis)

@vjp(rt.block_grads)
def block_grads(g, ans, v, arrays):
    return rt.block_of(g), None

@vjp(rt.stack_grads)
def stack_grads(g, ans, v, arrays, axis=0):
    return np.stack(g, axis)

@vjp(rt.hstack_grads)
def hstack_grads(g, ans, v, arrays):
    return np.hstack(g)

@vjp(rt.vstack_grads)
def vstack_grads(g, ans, v, arrays):
    return np.vstack(g)

@vjp(rt.array_grads)
def array_grads(g, ans, v, arrays):
    return np.stack(g)

# np.r_[a, b] and np.c_[a, b] (ANF writes them as calls of these)
@vjp(rt.r_concat)
def r_concat(g, ans, parts):
    return rt.r_concat_grads(g, parts)

@vjp(rt.c_concat)
def c_concat(g, ans, parts):
    return rt.c_concat_grads(g, parts)

linear(rt.r_concat, rt.c_concat)

@vjp(rt.r_concat_grads)
def r_concat_grads(g, ans, v, parts):
    return rt.r_concat(g)

@vjp(rt.c_concat_grads)
def c_concat_grads(g, ans, v, parts):
    return rt.c_concat(g)

@vjp(rt.linspace_grads)
def linspace_grads(g, ans, v, start, stop, num=50, endpoint=True, axis=0):
    return rt.linspace_grads_transpose(g, v, start, stop, num, endpoint, axis)

@vjp(rt.linspace_grads_transpose)
def linspace_grads_transpose(g, ans, c, v, start, stop, num=50, endpoint=True, axis=0):
    return rt.linspace_grads(g, start, stop, num, endpoint, axis)

@vjp(rt.arange_grads)
def arange_grads(g, ans, v, start, stop=None, step=None):
    return rt.arange_tangent(g[0], g[1], g[2], v, start, stop, step), None, None, None

@vjp(rt.arange_tangent)
def arange_tangent(g, ans, dstart, dstop, dstep, like, start, stop=None, step=None):
    return (*rt.arange_grads(g, start, stop, step), None, None, None, None)

@jvp(rt.arange_tangent)
def arange_tangent_jvp(ddstart, ddstop, ddstep, ans, dstart, dstop, dstep, like, start, stop=None,
                       step=None):
    return rt.arange_tangent(ddstart, ddstop, ddstep, like, start, stop, step)

linear(rt.r_concat_grads, rt.c_concat_grads, rt.linspace_grads, rt.linspace_grads_transpose,
       rt.arange_grads)

linear(rt.concatenate_grads, rt.block_grads, rt.stack_grads, rt.hstack_grads, rt.vstack_grads, rt.array_grads)


# -- elementwise factors -------------------------------------------------------

REGISTRY.nondifferentiable(rt.clip_mask, rt.tie_weight, rt.nan_tie_weight)

# power_base_factor(x, y) = y * x ** (y - 1): its derivative in y is
# x ** (y - 1) + y * x ** (y - 1) * log(x), and the second term is
# power_exponent_factor of the factor itself (``ans``).
@vjp(rt.power_base_factor, elementwise=True)
def power_base_factor(g, ans, x, y):
    return (g * rt.power_base_second_factor(x, y),
            g * (np.power(x, y - 1) + rt.power_exponent_factor(ans, x)))

@jvp(rt.power_base_factor)
def power_base_factor_jvp(dx, dy, ans, x, y):
    return (dx * rt.power_base_second_factor(x, y),
            dy * (np.power(x, y - 1) + rt.power_exponent_factor(ans, x)))

# power_base_second_factor(x, y) = y (y - 1) x ** (y - 2): its derivative in x is
# y times the same factor at y - 1 (0 where the factor is constant in x), in y
# (2y - 1) x ** (y - 2) plus the factor times log(x).
@vjp(rt.power_base_second_factor, elementwise=True)
def power_base_second_factor(g, ans, x, y):
    return (g * y * rt.power_base_second_factor(x, y - 1),
            g * ((2 * y - 1) * np.power(x, y - 2) + rt.power_exponent_factor(ans, x)))

@jvp(rt.power_base_second_factor)
def power_base_second_factor_jvp(dx, dy, ans, x, y):
    return (dx * y * rt.power_base_second_factor(x, y - 1),
            dy * ((2 * y - 1) * np.power(x, y - 2) + rt.power_exponent_factor(ans, x)))

# power_exponent_factor(power, x) = power * log(x), and 0 where x == 0.
@vjp(rt.power_exponent_factor, elementwise=True)
def power_exponent_factor(g, ans, power, x):
    return rt.power_exponent_factor(g, x), rt.ratio_or_zero(g * power, x)

@jvp(rt.power_exponent_factor)
def power_exponent_factor_jvp(dpower, dx, ans, power, x):
    return rt.power_exponent_factor(dpower, x), rt.ratio_or_zero(power * dx, x)


# -- accumulation and seeding ----------------------------------------------------

REGISTRY.nondifferentiable(rt.zeros_like, rt.zeros_of)
REGISTRY.nondifferentiable(rt.position, rt.slice_position)     # positions in a list: integers
# what the builtins of containers select: keys, a test, positions (constants)
REGISTRY.nondifferentiable(rt.keys_of, rt.has_key, rt.sort_order, rt.best_index,
                           rt.sequence_length)
# calls through values
REGISTRY.nondifferentiable(rt.has_class, rt.has_method, rt.holds_own, rt.is_same, rt.unseen_callee)
REGISTRY.nondifferentiable(rt.expect_branch)          # a branch specialised code took as measured
REGISTRY.nondifferentiable(rt.expect_divisor)         # a number it divides by unguarded
REGISTRY.nondifferentiable(rt.expect_positive)        # an array it divides by unguarded
REGISTRY.nondifferentiable(rt.note_effect)     # a call of a user's function that may write
REGISTRY.nondifferentiable(rt.runs_on_float_lists)        # which form of a loop runs: a test of values
REGISTRY.nondifferentiable(rt.checkpoint_plan, rt.checkpoint_keeps,   # which steps a checkpointed
                           rt.checkpoint_start)                        # loop keeps, restores
REGISTRY.nondifferentiable(rt.range_stop, rt.counted)    # a counted while loop's ints

# add broadcasts like ``+``, so each side's cotangent is summed to its shape.
@vjp(rt.add)
def add(g, ans, a, b):
    return rt.unbroadcast_tree(g, a), rt.unbroadcast_tree(g, b)

@jvp(rt.add)
def add_jvp(da, db, ans, a, b):
    return rt.add(da, db)

# unbroadcast_tree sums a cotangent down to a value's shapes; its transpose
# broadcasts back up to the cotangent's.
@vjp(rt.unbroadcast_tree)
def unbroadcast_tree(g, ans, c, like):
    return rt.broadcast_tree(g, c)

@vjp(rt.broadcast_tree)
def broadcast_tree(g, ans, c, like):
    return rt.unbroadcast_tree(g, c)

linear(rt.unbroadcast_tree, rt.broadcast_tree)

@vjp(rt.spread_grads)
def spread_grads(g, ans, v, items):
    return rt.spread_grads_transpose(g, v)

@vjp(rt.spread_grads_transpose)
def spread_grads_transpose(g, ans, c, v):
    return rt.spread_grads(g, c)

@vjp(rt.choice_grads)
def choice_grads(g, ans, v, choice, args):
    """Which arguments tie for the choice is piecewise constant in ``choice`` and ``args``."""
    return rt.choice_grads_transpose(g, v, choice, args)

@vjp(rt.choice_grads_transpose)
def choice_grads_transpose(g, ans, c, v, choice, args):
    return rt.choice_grads(g, choice, args)

linear(rt.spread_grads, rt.spread_grads_transpose, rt.choice_grads, rt.choice_grads_transpose)


# The tangents of the builtins sum and max/min: a sum of the items' tangents
# (``ans`` gives only its shape), and the tied arguments' mean.
@vjp(rt.sum_tangents)
def sum_tangents(g, ans, tangents, total):
    return rt.sum_tangents_transpose(g, tangents)

@vjp(rt.sum_tangents_transpose)
def sum_tangents_transpose(g, ans, c, tangents):
    return rt.sum_tangents(g, c)

@vjp(rt.choice_tangent)
def choice_tangent(g, ans, t, choice, args):
    """Which arguments tie for the choice is piecewise constant in ``choice`` and ``args``."""
    return rt.choice_tangent_transpose(g, choice, args)

@vjp(rt.choice_tangent_transpose)
def choice_tangent_transpose(g, ans, c, choice, args):
    return rt.choice_tangent(g, choice, args)

linear(rt.sum_tangents, rt.sum_tangents_transpose, rt.choice_tangent, rt.choice_tangent_transpose)


# The seed is ones (a constant) without output gradients, and those gradients,
# cast, when given: linear in them.
@vjp(rt.seed_cotangent)
def seed_cotangent(g, ans, output, output_gradients):
    """(``output``, not ``out``: srctrans reads ``out=`` as NumPy's output-array argument)"""
    return None, g

@jvp(rt.seed_cotangent)
def seed_cotangent_jvp(doutput_gradients, ans, output, output_gradients):
    return rt.seed_cotangent(output, doutput_gradients)


# -- user-written cotangents -------------------------------------------------------
# custom_cotangents checks what a registered VJP rule returned and passes it
# on, one entry per argument, with constant zeros for None: linear in it.
# (The other exports of runtime/custom.py are never called by generated code.)

@vjp(rt.custom_cotangents)
def custom_cotangents(g, ans, cotangents, args, rule, single=False):
    return rt.custom_cotangents_transpose(g, cotangents, args, single)

@jvp(rt.custom_cotangents)
def custom_cotangents_jvp(dcotangents, ans, cotangents, args, rule, single=False):
    """Not ``linear``: a None entry's tangent is a scalar zero, which the check would reject."""
    return rt.custom_cotangents_tangent(dcotangents, cotangents, args, single)

@vjp(rt.custom_cotangents_tangent)
def custom_cotangents_tangent(g, ans, t, cotangents, args, single=False):
    return rt.custom_cotangents_transpose(g, cotangents, args, single)

@vjp(rt.custom_cotangents_transpose)
def custom_cotangents_transpose(g, ans, c, cotangents, args, single=False):
    return rt.custom_cotangents_tangent(g, cotangents, args, single)

linear(rt.custom_cotangents_tangent, rt.custom_cotangents_transpose)


# -- np.linalg.solve's helpers ------------------------------------------------------
@vjp(rt.solve_column)
def solve_column(g, ans, v, a, b):
    return rt.solve_uncolumn(g, a, b)

@vjp(rt.solve_uncolumn)
def solve_uncolumn(g, ans, v, a, b):
    return rt.solve_column(g, a, b)

linear(rt.solve_column, rt.solve_uncolumn)

@vjp(rt.solve_grads)
def solve_grads(g, ans, v, x, a, b):
    return (*rt.solve_grads_vjp(g, v, x, a, b), None)

@jvp(rt.solve_grads)
def solve_grads_jvp(dv, dx, da, ans, v, x, a, b):
    return rt.solve_grads_jvp(dv, dx, da, v, x, a, b)

# np.linalg.cholesky's masks: each is its own transpose
@vjp(rt.tril_halved)
def tril_halved(g, ans, x):
    return rt.tril_halved(g)

@vjp(rt.symmetric_sum)
def symmetric_sum(g, ans, x):
    return rt.symmetric_sum(g)

linear(rt.tril_halved, rt.symmetric_sum)


# The cofactor matrix through the SVD (det's derivative at a singular or nearly singular
# matrix): the SVD's pieces are not smooth where a singular value is zero, though their
# product is, so differentiating it again would be wrong; refused instead.
@vjp(decompositions._cofactor)
def cofactor(g, ans, a):
    return rt.decompositions.refuse_cofactor_derivative()

@jvp(decompositions._cofactor)
def cofactor_jvp(da, ans, a):
    return rt.decompositions.refuse_cofactor_derivative()


# -- complex numbers -------------------------------------------------------------

@vjp(rt.real_only)                 # a check that passes its value through
def real_only(g, ans, a, what, subject="a complex matrix", hint=None):
    return g, None, None, None

@jvp(rt.real_only)
def real_only_jvp(da, ans, a, what, subject="a complex matrix", hint=None):
    return da

"""The derivative rules of the runtime helpers (srctrans/rules/runtime_helpers.py and
container_helpers.py).

Generated code calls the runtime, so derivatives of derivatives differentiate
those calls. Each rule is checked here by calling its templates directly as
Python functions, for every row of ``CASES`` (a helper, its arguments, and
which arguments are perturbed):

  * ``test_vjp``: ``<u, J t>`` by central differences along a random
    direction ``t`` of the perturbed arguments equals ``<VJP(u), t>``;
  * ``test_jvp``: the JVP (the template's contributions summed, or for a
    ``linear`` rule the helper called on the tangent) equals the central
    difference ``J t`` entry by entry;
  * ``test_vjp_jvp_transposed``: ``<u, JVP(t)> == <VJP(u), t>`` to rounding;
  * ``test_float32_stays_float32``: float32 inputs give float32 derivatives
    wherever the helper itself computes in float32.

Arguments that only supply a shape are perturbed too, so the differences also
check that they have no derivative. Values may be containers (tuples, lists,
dicts, named tuples); inner products run over their entries. A few rules are
also run through srctrans itself (``st.check_grads`` of functions that call
helpers the way generated code does). ``test_every_export_is_accounted_for``
lists the runtime's exports that have no rules, each with its reason.
Randomness comes from seeded ``np.random.default_rng`` only.
"""

import collections
import inspect
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

from srctrans import runtime
from srctrans import runtime as rt
import srctrans as st
from srctrans.runtime.containers import is_container, leaves, map_leaves
from srctrans.rules import REGISTRY
from srctrans.rules import (
    cholesky_helpers, container_helpers, control_helpers, fold_helpers, product_helpers,
    runtime_helpers, scan_helpers, softmax_log_helpers, softplus_helpers)

HELPER_RULE_FILES = {runtime_helpers.__name__, product_helpers.__name__, scan_helpers.__name__,
                     container_helpers.__name__, control_helpers.__name__, fold_helpers.__name__,
                     softmax_log_helpers.__name__, softplus_helpers.__name__,
                     cholesky_helpers.__name__}
from srctrans.rules.registry import JvpTemplate, Template

STEP = 1e-6

Pair = collections.namedtuple("Pair", ["W", "b"])


class Stored:
    """A class whose __init__ only stores its parameters (a record when made inside)."""

    def __init__(self, W, b):
        self.W, self.b = W, b


# -- values that may be containers ----------------------------------------------

def _random_like(rng, value):
    def draw(leaf):
        if isinstance(leaf, float):
            return float(rng.standard_normal())
        return rng.standard_normal(np.shape(leaf))
    return map_leaves(draw, value)


def _axpy(scale, direction, value):
    """``value + scale * direction``, entry by entry."""
    return map_leaves(lambda v, d: v + scale * d, value, direction)


def _inner(a, b):
    """``<a, b>`` over the entries of ``a``; a missing or None entry of ``b`` is zero."""
    products = map_leaves(lambda x, y: 0.0 if x is None or y is None
                          else float(np.sum(np.asarray(x, float) * np.asarray(y, float))), a, b)
    return sum(leaves(products))


def _difference(plus, minus):
    return map_leaves(lambda p, m: (np.asarray(p, float) - np.asarray(m, float)) / (2 * STEP),
                      plus, minus)


def _assert_entries_close(actual, expected, what):
    def check(e, a):
        a = np.zeros_like(np.asarray(e, float)) if a is None else a
        assert np.shape(a) == np.shape(e), f"{what}: shape {np.shape(a)}, expected {np.shape(e)}"
        np.testing.assert_allclose(np.asarray(a, float), e, rtol=1e-5, atol=1e-6, err_msg=what)
    map_leaves(check, expected, actual)


# -- the case table ---------------------------------------------------------------

class Case:
    """``helper(*args)`` with the arguments at ``perturbed`` differentiated.

    ``build(rng)`` returns the arguments; ``perturbed`` defaults to every
    argument that holds floats (arrays, Python floats, containers of them).
    """

    def __init__(self, id, helper, build, perturbed=None):
        self.id = id
        self.helper = helper
        self.build = build
        self.perturbed = perturbed

    def arguments(self, seed=0):
        rng = np.random.default_rng(seed)
        args = list(self.build(rng))
        perturbed = self.perturbed
        if perturbed is None:
            perturbed = [i for i, a in enumerate(args) if _holds_floats(a)]
        return rng, args, perturbed


def _holds_floats(value):
    if value is None or isinstance(value, (str, slice, bool, int)):
        return False
    found = leaves(value) if is_container(value) else [value]
    return bool(found) and all(isinstance(v, float) or (isinstance(v, np.ndarray) and v.dtype.kind == "f")
                               for v in found)


def normal(rng, *shape):
    return rng.standard_normal(shape)


def positive(rng, *shape):
    return rng.uniform(0.5, 2.0, shape)


def nonzero(rng, *shape):
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _product_shape(forward, *shapes):
    return np.shape(forward(*(np.zeros(s) for s in shapes)))


def _bilinear_cases(name, lhs, rhs, forward, shape_pairs, *extra):
    """Cases of ``lhs(v, a, b, *extra)`` and ``rhs(...)`` for each pair of operand shapes."""
    cases = []
    for a_shape, b_shape in shape_pairs:
        out_shape = np.shape(forward(np.zeros(a_shape), np.zeros(b_shape), *extra))
        def build(rng, a_shape=a_shape, b_shape=b_shape, out_shape=out_shape):
            return (normal(rng, *out_shape), normal(rng, *a_shape), normal(rng, *b_shape), *extra)
        label = f"{a_shape}x{b_shape}"
        cases.append(Case(f"{name}_lhs-{label}", lhs, build))
        cases.append(Case(f"{name}_rhs-{label}", rhs, build))
    return cases


MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)),
                 ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((1, 3, 4), (5, 4, 2)),
                 ((4,), (2, 4, 5)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (1, 6, 4, 2))]
DOT_SHAPES = [((), ()), ((), (3,)), ((3, 4), ()), ((4,), (4,)), ((3, 4), (4,)),
              ((4,), (4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (5, 4, 6))]
INNER_SHAPES = [((3,), (3,)), ((2, 3), (4, 3)), ((), (3,)), ((2, 3), (3,))]
OUTER_SHAPES = [((3,), (4,)), ((2, 2), (3,)), ((), (2,))]


def _reduction_cases(name, helper, x_maker, variants, needs_result=None, extra=(), perturbed=None,
                     tangent=False):
    """Cases of ``helper(v, [result,] x, axis, [*extra,] keepdims)`` for (x shape, axis, keepdims).

    ``v`` is shaped like the reduction's result (a gradient helper's), or
    like ``x`` when ``tangent`` (a tangent helper's).
    """
    cases = []
    for x_shape, axis, keepdims in variants:
        out_shape = np.shape(np.sum(np.zeros(x_shape), axis=axis, keepdims=keepdims))
        v_shape = x_shape if tangent else out_shape
        def build(rng, x_shape=x_shape, axis=axis, keepdims=keepdims, v_shape=v_shape):
            x = x_maker(rng, *x_shape)
            v = normal(rng, *v_shape) if v_shape else float(rng.standard_normal())
            head = (v,) if needs_result is None else (v, needs_result(rng, x, axis, keepdims))
            return (*head, x, axis, *extra, keepdims)
        cases.append(Case(f"{name}-{x_shape}-axis{axis}-keep{keepdims}", helper, build, perturbed))
    return cases


REDUCTIONS = [((2, 3), 1, False), ((2, 3), None, False), ((2, 3), 0, True),
              ((2, 3, 4), (0, 2), False), ((2, 3, 4), -1, True)]


def _random_result(rng, x, axis, keepdims):
    """An independent positive value shaped like the reduction's result."""
    return rng.uniform(0.5, 2.0, np.shape(np.sum(x, axis=axis, keepdims=keepdims)))


def _max_of(rng, x, axis, keepdims):
    return np.max(x, axis=axis, keepdims=keepdims)


CASES = [
    # broadcasting
    Case("unbroadcast-sum-leading", rt.unbroadcast, lambda r: (normal(r, 2, 3), normal(r, 3))),
    Case("unbroadcast-sum-kept", rt.unbroadcast, lambda r: (normal(r, 2, 3), normal(r, 1, 3))),
    Case("unbroadcast-to-float", rt.unbroadcast, lambda r: (normal(r, 2, 3), 0.5)),
    Case("unbroadcast-broadcast-up", rt.unbroadcast, lambda r: (normal(r, 1), normal(r, 2, 3))),
    Case("unbroadcast-mixed", rt.unbroadcast, lambda r: (normal(r, 4, 1, 3), normal(r, 2, 3))),
    Case("unbroadcast-same", rt.unbroadcast, lambda r: (normal(r, 2, 3), normal(r, 2, 3))),
    Case("unbroadcast_transpose-sum", rt.unbroadcast_transpose, lambda r: (normal(r, 3), normal(r, 2, 3))),
    Case("unbroadcast_transpose-mixed", rt.unbroadcast_transpose,
         lambda r: (normal(r, 2, 3), normal(r, 4, 1, 3))),
    Case("unbroadcast_transpose-float", rt.unbroadcast_transpose, lambda r: (normal(r, 2, 3), 0.5)),
    Case("broadcast_like-up", rt.broadcast_like, lambda r: (normal(r, 3), normal(r, 2, 3))),
    Case("broadcast_like-same", rt.broadcast_like, lambda r: (normal(r, 2, 3), normal(r, 2, 3))),
    Case("ratio_or_zero-broadcast", rt.ratio_or_zero, lambda r: (normal(r, 2, 3), nonzero(r, 3))),
    Case("ratio_or_zero-float", rt.ratio_or_zero, lambda r: (normal(r, 3), -1.5)),
    Case("ratio_or_zero_times-broadcast", rt.ratio_or_zero_times,
         lambda r: (normal(r, 2, 3), nonzero(r, 3))),
    Case("ratio_or_zero_times-float", rt.ratio_or_zero_times, lambda r: (normal(r, 3), -1.5)),
    # a loop folding np.logaddexp over slices (normalize/folds.py): along an axis, from a
    # number, with an index that wraps round, with no step, into a wider accumulator
    Case("logaddexp_fold-columns", rt.logaddexp_fold, lambda r: (normal(r, 3), normal(r, 3, 4), 1, 1, 4)),
    Case("logaddexp_fold-number", rt.logaddexp_fold, lambda r: (-0.5, normal(r, 4, 3), 0, 0, 4)),
    Case("logaddexp_fold-wraps", rt.logaddexp_fold, lambda r: (normal(r, 3), normal(r, 3, 4), 1, -1, 3)),
    Case("logaddexp_fold-no-step", rt.logaddexp_fold, lambda r: (normal(r, 3), normal(r, 3, 4), 1, 2, 2)),
    Case("logaddexp_fold-wider", rt.logaddexp_fold, lambda r: (normal(r, 2, 3), normal(r, 4, 3), 0, 1, 4)),
    # from a slice of the array: every column, rows, some of them, no step
    Case("logaddexp_fold_from-columns", rt.logaddexp_fold_from, lambda r: (normal(r, 3, 4), 1, 1, 4)),
    Case("logaddexp_fold_from-rows", rt.logaddexp_fold_from, lambda r: (normal(r, 4, 3), 0, 1, 4)),
    Case("logaddexp_fold_from-some", rt.logaddexp_fold_from, lambda r: (normal(r, 3, 5), 1, 2, 4)),
    Case("logaddexp_fold_from-no-step", rt.logaddexp_fold_from, lambda r: (normal(r, 3, 4), 1, 1, 1)),
    # reductions
    *_reduction_cases("unreduce", rt.unreduce, normal, REDUCTIONS),
    *_reduction_cases("mean_grad", rt.mean_grad, normal, REDUCTIONS),
    # moving x alone would break its ties with the extremum (see test_extremum_grad_moving_x)
    *_reduction_cases("extremum_grad", rt.extremum_grad, normal, REDUCTIONS, _max_of, perturbed=[0]),
    Case("extremum_grad-ties", rt.extremum_grad,
         lambda r: (normal(r, 2), np.array([3.0, 2.0]), np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]), 1, False),
         perturbed=[0]),
    *_reduction_cases("prod_grad", rt.prod_grad, nonzero, REDUCTIONS, _random_result),
    *_reduction_cases("var_grad", rt.var_grad, normal, REDUCTIONS, extra=(0,)),
    *_reduction_cases("var_grad-ddof", rt.var_grad, normal, REDUCTIONS[:2], extra=(1,)),
    *_reduction_cases("std_grad", rt.std_grad, normal, REDUCTIONS, _random_result, extra=(0,)),
    *_reduction_cases("std_grad-ddof", rt.std_grad, normal, REDUCTIONS[:2], _random_result, extra=(1,)),
    Case("std_grad-constant-slice", rt.std_grad,
         lambda r: (normal(r, 2), np.array([0.0, 1.3]), normal(r, 2, 3), 1, 0, False), perturbed=[0, 2]),
    # the tangents of reductions (forward-mode code): the first argument is shaped like x
    *_reduction_cases("extremum_jvp", rt.extremum_jvp, normal, REDUCTIONS, _max_of, perturbed=[0],
                      tangent=True),
    Case("extremum_jvp-ties", rt.extremum_jvp,
         lambda r: (normal(r, 2, 3), np.array([3.0, 2.0]), np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]), 1, False),
         perturbed=[0]),
    Case("extremum_jvp-nan", rt.extremum_jvp,
         lambda r: (normal(r, 2, 2), np.array([np.nan, 2.0]), np.array([[np.nan, 1.0], [2.0, 0.5]]), 1, False),
         perturbed=[0]),
    *_reduction_cases("prod_jvp", rt.prod_jvp, nonzero, REDUCTIONS, _random_result, tangent=True),
    *_reduction_cases("var_jvp", rt.var_jvp, normal, REDUCTIONS, extra=(0,), tangent=True),
    *_reduction_cases("var_jvp-ddof", rt.var_jvp, normal, REDUCTIONS[:2], extra=(1,), tangent=True),
    *_reduction_cases("std_jvp", rt.std_jvp, normal, REDUCTIONS, _random_result, extra=(0,), tangent=True),
    *_reduction_cases("std_jvp-ddof", rt.std_jvp, normal, REDUCTIONS[:2], _random_result, extra=(1,),
                      tangent=True),
    Case("std_jvp-constant-slice", rt.std_jvp,
         lambda r: (normal(r, 2, 3), np.array([0.0, 1.3]), normal(r, 2, 3), 1, 0, False), perturbed=[0, 2]),
    # products
    *_bilinear_cases("matmul", rt.matmul_lhs, rt.matmul_rhs, np.matmul, MATMUL_SHAPES),
    *_bilinear_cases("dot", rt.dot_lhs, rt.dot_rhs, np.dot, DOT_SHAPES),
    *_bilinear_cases("inner", rt.inner_lhs, rt.inner_rhs, np.inner, INNER_SHAPES),
    *_bilinear_cases("outer", rt.outer_lhs, rt.outer_rhs, np.outer, OUTER_SHAPES),
    *_bilinear_cases("tensordot2", rt.tensordot_lhs, rt.tensordot_rhs, np.tensordot,
                     [((2, 3, 4), (3, 4, 5))], 2),
    *_bilinear_cases("tensordot1", rt.tensordot_lhs, rt.tensordot_rhs, np.tensordot,
                     [((3, 4), (4, 5))], 1),
    *_bilinear_cases("tensordot-pairs", rt.tensordot_lhs, rt.tensordot_rhs, np.tensordot,
                     [((2, 3), (3, 2))], ([0, 1], [1, 0])),
    Case("einsum_grads-matmul", rt.einsum_grads,
         lambda r: (normal(r, 2, 4), "ij,jk->ik", (normal(r, 2, 3), normal(r, 3, 4)))),
    Case("einsum_grads-three", rt.einsum_grads,
         lambda r: (normal(r, 2), "ij,jk,k->i", (normal(r, 2, 3), normal(r, 3, 4), normal(r, 4)))),
    Case("einsum_grads-implicit", rt.einsum_grads, lambda r: (float(r.standard_normal()), "i,i",
                                                               (normal(r, 3), normal(r, 3)))),
    Case("einsum_grads-diagonal", rt.einsum_grads, lambda r: (normal(r, 3), "ii->i", (normal(r, 3, 3),))),
    Case("einsum_grads-ellipsis", rt.einsum_grads,
         lambda r: (normal(r, 2, 5), "...i,i->...", (normal(r, 2, 5, 3), normal(r, 3)))),
    Case("einsum_grads-broadcast", rt.einsum_grads,
         lambda r: (normal(r, 4, 2), "bi,bj->ij", (normal(r, 1, 4), normal(r, 3, 2)))),
    # einsum_jvp(tangents, product, subscripts, operands): product only gives a zero's shape
    Case("einsum_jvp-matmul", rt.einsum_jvp,
         lambda r: ((normal(r, 2, 3), normal(r, 3, 4)), normal(r, 2, 4), "ij,jk->ik",
                    (normal(r, 2, 3), normal(r, 3, 4)))),
    Case("einsum_jvp-three", rt.einsum_jvp,
         lambda r: ((normal(r, 2, 3), normal(r, 3, 4), normal(r, 4)), normal(r, 2), "ij,jk,k->i",
                    (normal(r, 2, 3), normal(r, 3, 4), normal(r, 4)))),
    Case("einsum_jvp-implicit", rt.einsum_jvp,
         lambda r: ((normal(r, 3), normal(r, 3)), float(r.standard_normal()), "i,i",
                    (normal(r, 3), normal(r, 3)))),
    Case("einsum_jvp-diagonal", rt.einsum_jvp,
         lambda r: ((normal(r, 3, 3),), normal(r, 3), "ii->i", (normal(r, 3, 3),))),
    Case("einsum_jvp-ellipsis", rt.einsum_jvp,
         lambda r: ((normal(r, 2, 5, 3), normal(r, 3)), normal(r, 2, 5), "...i,i->...",
                    (normal(r, 2, 5, 3), normal(r, 3)))),
    Case("einsum_jvp-broadcast", rt.einsum_jvp,
         lambda r: ((normal(r, 1, 4), normal(r, 3, 2)), normal(r, 4, 2), "bi,bj->ij",
                    (normal(r, 1, 4), normal(r, 3, 2)))),
    # joins
    Case("concatenate_grads", rt.concatenate_grads,
         lambda r: (normal(r, 5, 2), [normal(r, 2, 2), normal(r, 3, 2)], 0)),
    Case("concatenate_grads-axis1", rt.concatenate_grads,
         lambda r: (normal(r, 2, 5), [normal(r, 2, 1), normal(r, 2, 4)], 1)),
    Case("concatenate_grads-flat", rt.concatenate_grads,
         lambda r: (normal(r, 5), [normal(r, 2), normal(r, 1, 3)], None)),
    Case("stack_grads", rt.stack_grads, lambda r: (normal(r, 2, 3), [normal(r, 3), normal(r, 3)], 0)),
    Case("block_grads", rt.block_grads,
         lambda r: (normal(r, 3, 4), [[normal(r, 2, 3), normal(r, 2, 1)], [normal(r, 1, 4)]])),
    Case("stack_grads-axis1", rt.stack_grads,
         lambda r: (normal(r, 3, 2), (normal(r, 3), normal(r, 3)), 1)),
    Case("hstack_grads-1d", rt.hstack_grads, lambda r: (normal(r, 5), [normal(r, 2), normal(r, 3)])),
    Case("hstack_grads-2d", rt.hstack_grads, lambda r: (normal(r, 2, 4), [normal(r, 2, 1), normal(r, 2, 3)])),
    Case("hstack_grads-0d", rt.hstack_grads, lambda r: (normal(r, 2), [0.5, 1.5])),
    Case("vstack_grads-1d", rt.vstack_grads, lambda r: (normal(r, 2, 3), [normal(r, 3), normal(r, 3)])),
    Case("vstack_grads-2d", rt.vstack_grads, lambda r: (normal(r, 3, 3), [normal(r, 1, 3), normal(r, 2, 3)])),
    Case("array_grads", rt.array_grads, lambda r: (normal(r, 2, 3), [normal(r, 3), normal(r, 3)])),
    Case("array_grads-floats", rt.array_grads, lambda r: (normal(r, 3), [0.5, 1.0, 2.0])),
    # elementwise factors (power at y == 0 and y == 1, where the conventions apply)
    Case("power_base_factor", rt.power_base_factor, lambda r: (positive(r, 2, 3), r.uniform(-1, 3, 3))),
    Case("power_base_factor-integers", rt.power_base_factor,
         lambda r: (positive(r, 2, 4), np.array([0.0, 1.0, 2.0, 3.0]))),
    Case("power_base_factor-float", rt.power_base_factor, lambda r: (positive(r, 3), 2.5)),
    Case("power_base_factor-float-base", rt.power_base_factor, lambda r: (1.5, r.uniform(-1, 3, 3))),
    Case("power_exponent_factor", rt.power_exponent_factor, lambda r: (normal(r, 2, 3), positive(r, 3))),
    Case("power_exponent_factor-float", rt.power_exponent_factor, lambda r: (normal(r, 3), 1.7)),
    # accumulation and seeding
    Case("add-arrays", rt.add, lambda r: (normal(r, 2, 3), normal(r, 3))),
    Case("add-floats", rt.add, lambda r: (0.5, normal(r, 2))),
    Case("add-tuples", rt.add, lambda r: ((normal(r, 2), normal(r, 3)), (normal(r, 2), normal(r, 3)))),
    Case("add-dicts", rt.add, lambda r: ({"W": normal(r, 2), "b": normal(r, 3)},
                                         {"W": normal(r, 2), "c": normal(r, 1)})),
    Case("add-none", rt.add, lambda r: (None, normal(r, 3))),
    Case("spread_grads", rt.spread_grads, lambda r: (normal(r, 2, 3), [normal(r, 3), normal(r, 2, 3), 0.5])),
    Case("spread_grads-tuple", rt.spread_grads, lambda r: (normal(r, 3), (normal(r, 3), normal(r, 1)))),
    Case("spread_grads_transpose", rt.spread_grads_transpose,
         lambda r: ([normal(r, 3), normal(r, 2, 3), 0.5], normal(r, 2, 3))),
    # moving the choice or the arguments alone would break which ones equal it
    Case("choice_grads-floats", rt.choice_grads, lambda r: (0.7, 3.0, (1.0, 3.0, 2.0)), perturbed=[0]),
    Case("choice_grads-ties", rt.choice_grads, lambda r: (0.7, 3.0, (3.0, 3.0, 2.0)), perturbed=[0]),
    Case("choice_grads-sequence", rt.choice_grads, lambda r: (0.7, 3.0, ([1.0, 3.0, 2.0],)),
         perturbed=[0]),
    Case("choice_grads-arrays", rt.choice_grads,
         lambda r: (normal(r, 3), np.array([2.0, 1.0, 4.0]),
                    (np.array([2.0, 0.0, 4.0]), np.array([1.0, 1.0, 4.0]))), perturbed=[0]),
    Case("choice_grads_transpose", rt.choice_grads_transpose,
         lambda r: ((normal(r, 3), normal(r, 3)), normal(r, 3), np.array([2.0, 1.0, 4.0]),
                    (np.array([2.0, 0.0, 4.0]), np.array([1.0, 1.0, 4.0]))), perturbed=[0, 1]),
    Case("choice_grads_transpose-sequence", rt.choice_grads_transpose,
         lambda r: (([0.3, -1.0, 2.0],), 0.7, 3.0, ([1.0, 3.0, 2.0],)), perturbed=[0, 1]),
    # the tangents of the builtins sum, max and min (ans gives sum_tangents only a shape)
    Case("sum_tangents-list", rt.sum_tangents,
         lambda r: ([normal(r, 3), normal(r, 2, 3), 0.5], normal(r, 2, 3))),
    Case("sum_tangents-tuple", rt.sum_tangents, lambda r: ((0.5, -1.5), 0.3)),
    Case("sum_tangents-array", rt.sum_tangents, lambda r: (normal(r, 4, 3), normal(r, 3))),
    Case("sum_tangents-array-1d", rt.sum_tangents, lambda r: (normal(r, 4), 0.3)),
    Case("sum_tangents_transpose-list", rt.sum_tangents_transpose,
         lambda r: (normal(r, 2, 3), [normal(r, 3), normal(r, 2, 3), 0.5])),
    Case("sum_tangents_transpose-array", rt.sum_tangents_transpose,
         lambda r: (normal(r, 3), normal(r, 4, 3))),
    # moving the choice or the arguments alone would break which ones equal it
    Case("choice_tangent-floats", rt.choice_tangent,
         lambda r: ((0.3, -1.0, 2.0), 3.0, (1.0, 3.0, 2.0)), perturbed=[0]),
    Case("choice_tangent-ties", rt.choice_tangent,
         lambda r: ((0.3, -1.0, 2.0), 3.0, (3.0, 3.0, 2.0)), perturbed=[0]),
    Case("choice_tangent-sequence", rt.choice_tangent,
         lambda r: (([0.3, -1.0, 2.0],), 3.0, ([1.0, 3.0, 3.0],)), perturbed=[0]),
    Case("choice_tangent-1d-array", rt.choice_tangent,
         lambda r: ((normal(r, 3),), 3.0, (np.array([3.0, 1.0, 3.0]),)), perturbed=[0]),
    Case("choice_tangent-arrays", rt.choice_tangent,
         lambda r: ((normal(r, 3), normal(r, 3)), np.array([2.0, 1.0, 4.0]),
                    (np.array([2.0, 0.0, 4.0]), np.array([1.0, 1.0, 4.0]))), perturbed=[0]),
    Case("choice_tangent_transpose-floats", rt.choice_tangent_transpose,
         lambda r: (0.7, 3.0, (3.0, 1.0, 3.0)), perturbed=[0]),
    Case("choice_tangent_transpose-sequence", rt.choice_tangent_transpose,
         lambda r: (0.7, 3.0, ([1.0, 3.0, 2.0],)), perturbed=[0]),
    Case("choice_tangent_transpose-0d", rt.choice_tangent_transpose,
         lambda r: (np.array(0.7), np.array(2.0), (np.array(2.0), np.array(1.0), np.array(2.0))),
         perturbed=[0]),
    Case("seed_cotangent", rt.seed_cotangent, lambda r: (normal(r, 2, 3), normal(r, 2, 3))),
    Case("seed_cotangent-tuple", rt.seed_cotangent,
         lambda r: ((normal(r, 2), normal(r, 3)), (normal(r, 2), normal(r, 3)))),
    # what a registered VJP rule returned (the arguments give only shapes)
    Case("custom_cotangents-tuple", rt.custom_cotangents,
         lambda r: ((normal(r, 2), normal(r, 3)), (normal(r, 2), normal(r, 3)), "f")),
    Case("custom_cotangents-list", rt.custom_cotangents,
         lambda r: ([normal(r, 2), 0.5], (normal(r, 2), 1.5), "f")),
    Case("custom_cotangents-bare", rt.custom_cotangents, lambda r: (normal(r, 2), (normal(r, 2),), "f")),
    Case("custom_cotangents-single", rt.custom_cotangents,
         lambda r: (normal(r, 2), (normal(r, 2),), "f", True)),
    Case("custom_cotangents-named-tuple", rt.custom_cotangents,
         lambda r: (Pair(normal(r, 2, 3), normal(r, 3)), (Pair(normal(r, 2, 3), normal(r, 3)),), "f")),
    Case("custom_cotangents-inactive-argument", rt.custom_cotangents,
         lambda r: ((normal(r, 2), normal(r, 3)), (None, normal(r, 3)), "f")),
    Case("custom_cotangents_tangent", rt.custom_cotangents_tangent,
         lambda r: ((normal(r, 2), normal(r, 3)), (normal(r, 2), normal(r, 3)), (normal(r, 2), normal(r, 3)))),
    Case("custom_cotangents_tangent-none-entry", rt.custom_cotangents_tangent,
         lambda r: ((0.0, normal(r, 3)), (None, normal(r, 3)), (normal(r, 2), normal(r, 3)))),
    Case("custom_cotangents_transpose", rt.custom_cotangents_transpose,
         lambda r: ((normal(r, 2), normal(r, 3)), [normal(r, 2), normal(r, 3)], (normal(r, 2), normal(r, 3)))),
    Case("custom_cotangents_transpose-single", rt.custom_cotangents_transpose,
         lambda r: ((normal(r, 2),), normal(r, 2), (normal(r, 2),), True)),
    # subscripts, attributes, containers
    Case("getitem_grad-basic", rt.getitem_grad, lambda r: (normal(r, 2), normal(r, 4, 3), (1, slice(0, 2)))),
    Case("getitem_grad-repeated", rt.getitem_grad,
         lambda r: (normal(r, 3, 3), normal(r, 4, 3), np.array([0, 2, 0]))),
    Case("getitem_grad-tuple", rt.getitem_grad, lambda r: (normal(r, 3), (normal(r, 2), normal(r, 3)), -1)),
    Case("getitem_grad-dict", rt.getitem_grad,
         lambda r: (normal(r, 2), {"W": normal(r, 2), "b": normal(r, 3)}, "W")),
    Case("getattr_grad-named-tuple", rt.getattr_grad,
         lambda r: (normal(r, 3), Pair(normal(r, 2, 3), normal(r, 3)), "b")),
    Case("getattr_grad-object", rt.getattr_grad,
         lambda r: (normal(r, 2), types.SimpleNamespace(W=normal(r, 2)), "W"), perturbed=[0]),
    Case("getattr_grad_transpose", rt.getattr_grad_transpose,
         lambda r: (Pair(normal(r, 2, 3), normal(r, 3)), Pair(normal(r, 2, 3), normal(r, 3)), "W")),
    Case("attribute_tangent-named-tuple", rt.attribute_tangent,
         lambda r: (Pair(normal(r, 2, 3), normal(r, 3)), Pair(normal(r, 2, 3), normal(r, 3)), "W")),
    Case("attribute_tangent-object", rt.attribute_tangent,
         lambda r: ({"W": normal(r, 2)}, types.SimpleNamespace(W=normal(r, 2)), "W"), perturbed=[0]),
    Case("sequence_grad", rt.sequence_grad,
         lambda r: ([normal(r, 2), normal(r, 3)], [normal(r, 2), normal(r, 3)]), perturbed=[0]),
    Case("sequence_grad_transpose", rt.sequence_grad_transpose,
         lambda r: ([normal(r, 2), normal(r, 3)], (normal(r, 2), normal(r, 3))), perturbed=[0]),
    Case("unbroadcast_tree", rt.unbroadcast_tree, lambda r: (normal(r, 4, 3), normal(r, 3)),
         perturbed=(0,)),
    Case("unbroadcast_tree-list", rt.unbroadcast_tree,
         lambda r: ([normal(r, 2, 3), normal(r, 2)], [normal(r, 3), normal(r, 2)]), perturbed=(0,)),
    Case("broadcast_tree", rt.broadcast_tree, lambda r: (normal(r, 3), normal(r, 4, 3)),
         perturbed=(0,)),
    Case("power_base_second_factor", rt.power_base_second_factor,
         lambda r: (np.abs(normal(r, 3)) + 0.5, 3.5)),
    Case("power_base_second_factor-arrays", rt.power_base_second_factor,
         lambda r: (np.abs(normal(r, 2, 3)) + 0.5, np.abs(normal(r, 3)) + 2.5)),
    Case("copied", rt.copied, lambda r: (normal(r, 3, 2),)),
    Case("copied-float", rt.copied, lambda r: (0.5,)),
    Case("zero_at", rt.zero_at, lambda r: (normal(r, 4, 3), (slice(1, 3),))),
    Case("zero_at-int", rt.zero_at, lambda r: (normal(r, 4, 3), 2)),
    Case("transpose_grad", rt.transpose_grad, lambda r: (normal(r, 2, 3, 4), (2, 0, 1))),
    Case("transpose_grad-negative", rt.transpose_grad, lambda r: (normal(r, 2, 3, 4), (-1, 0, 1))),
    Case("transpose_grad-none", rt.transpose_grad, lambda r: (normal(r, 2, 3), None)),
    Case("as_array", rt.as_array, lambda r: (normal(r, 2, 3),)),
    Case("as_array-list", rt.as_array, lambda r: ([normal(r, 3), normal(r, 3)],)),
    Case("reshape_like", rt.reshape_like, lambda r: (normal(r, 6), normal(r, 2, 3))),
    Case("reshape_like-fortran", rt.reshape_like, lambda r: (normal(r, 2, 3), normal(r, 3, 2), "F")),
    Case("asarray_grad-list", rt.asarray_grad, lambda r: (normal(r, 2, 3), [normal(r, 3), normal(r, 3)])),
    Case("asarray_grad-array", rt.asarray_grad, lambda r: (normal(r, 2, 3), normal(r, 2, 3))),
    Case("pushed", rt.pushed, lambda r: ([normal(r, 2), normal(r, 2)], normal(r, 2))),
    Case("pushed_many", rt.pushed_many, lambda r: ([normal(r, 2)], [normal(r, 2), normal(r, 2)])),
    Case("pushed_many_transpose", rt.pushed_many_transpose,
         lambda r: ([normal(r, 2), normal(r, 2), normal(r, 2)], [normal(r, 2), normal(r, 2)]),
         perturbed=(0,)),
    Case("last_and_rest-list", rt.last_and_rest, lambda r: ([normal(r, 2), normal(r, 2), normal(r, 2)],)),
    Case("last_and_rest-array", rt.last_and_rest, lambda r: (normal(r, 4, 2),)),
    Case("last_and_rest_transpose", rt.last_and_rest_transpose,
         lambda r: ((normal(r, 2), [normal(r, 2), normal(r, 2)]),)),
    Case("sequence_cotangent", rt.sequence_cotangent,
         lambda r: ([normal(r, 2), normal(r, 1), normal(r, 2, 3)],
                    [normal(r, 2), normal(r, 2), normal(r, 2, 3)]), perturbed=(0,)),
    Case("sequence_cotangent-tuple", rt.sequence_cotangent,
         lambda r: ((normal(r, 3), normal(r, 3)), (normal(r, 3), normal(r, 3))), perturbed=(0,)),
    Case("sequence_cotangent_transpose", rt.sequence_cotangent_transpose,
         lambda r: ([normal(r, 2), normal(r, 2)], [normal(r, 2), normal(r, 1)],
                    [normal(r, 2), normal(r, 2)]), perturbed=(0,)),
    # a container's (or an object's) cotangent made from some of its entries' by key
    Case("container_cotangent-dict", rt.container_cotangent,
         lambda r: ({"W": normal(r, 2, 3), "b": normal(r, 1)},
                    {"W": normal(r, 2, 3), "b": normal(r, 3), "c": normal(r, 2)}), perturbed=(0,)),
    Case("container_cotangent-list", rt.container_cotangent,
         lambda r: ({0: normal(r, 2), 2: normal(r, 3)}, [normal(r, 2), normal(r, 2), normal(r, 3)]),
         perturbed=(0,)),
    Case("container_cotangent-array", rt.container_cotangent,     # read by constant keys too
         lambda r: ({0: normal(r, 3), 2: normal(r, 3)}, normal(r, 4, 3)), perturbed=(0,)),
    Case("container_cotangent_transpose-array", rt.container_cotangent_transpose,
         lambda r: (normal(r, 4, 3), {0: normal(r, 3), 2: normal(r, 3)}, normal(r, 4, 3)),
         perturbed=(0,)),
    Case("container_cotangent-named-tuple", rt.container_cotangent,
         lambda r: ({"W": normal(r, 2, 3), 1: normal(r, 3)}, Pair(normal(r, 2, 3), normal(r, 3))),
         perturbed=(0,)),
    Case("container_cotangent_transpose", rt.container_cotangent_transpose,
         lambda r: ({"W": normal(r, 2, 3), "b": normal(r, 3), "c": normal(r, 2)},
                    {"W": normal(r, 2, 3), "b": normal(r, 1)},
                    {"W": normal(r, 2, 3), "b": normal(r, 3), "c": normal(r, 2)}), perturbed=(0,)),
    # ... and by any index a list takes: from the end, slices, two indices of one entry
    Case("picks_cotangent-list", rt.picks_cotangent,
         lambda r: ((normal(r, 3), [normal(r, 2), normal(r, 2, 3)], normal(r, 2)),
                    (-1, slice(None, -1), 0), [normal(r, 2), normal(r, 2, 3), normal(r, 3)]),
         perturbed=(0,)),
    Case("picks_cotangent-tuple-step", rt.picks_cotangent,
         lambda r: (((normal(r, 3), normal(r, 2)), normal(r, 3)), (slice(None, None, -2), -1),
                    (normal(r, 2), normal(r, 1), normal(r, 3))), perturbed=(0,)),
    Case("picks_cotangent-dict", rt.picks_cotangent,
         lambda r: ((normal(r, 2), normal(r, 3)), (-1, "b"), {-1: normal(r, 2), "b": normal(r, 3)}),
         perturbed=(0,)),
    Case("picks_cotangent_transpose", rt.picks_cotangent_transpose,
         lambda r: ([normal(r, 2), normal(r, 2, 3), normal(r, 3)],
                    (normal(r, 3), [normal(r, 2), normal(r, 2, 3)]), (-1, slice(None, -1)),
                    [normal(r, 2), normal(r, 2, 3), normal(r, 3)]), perturbed=(0,)),
    Case("attributes_cotangent-object", rt.attributes_cotangent,
         lambda r: ({"W": normal(r, 2), "b": normal(r, 1)},
                    types.SimpleNamespace(W=normal(r, 2), b=normal(r, 3), n=3)), perturbed=(0,)),
    Case("attributes_cotangent-named-tuple", rt.attributes_cotangent,
         lambda r: ({"b": normal(r, 3)}, Pair(normal(r, 2, 3), normal(r, 3))), perturbed=(0,)),
    Case("attributes_cotangent_transpose", rt.attributes_cotangent_transpose,
         lambda r: ({"W": normal(r, 2), "b": normal(r, 1)}, {"W": normal(r, 2), "b": normal(r, 1)},
                    types.SimpleNamespace(W=normal(r, 2), b=normal(r, 3), n=3)), perturbed=(0,)),
    Case("saved_at", rt.saved_at, lambda r: (normal(r, 4, 3), (slice(1, 3),))),
    Case("restored_at", rt.restored_at, lambda r: (normal(r, 4, 3), (slice(1, 3),), normal(r, 2, 3))),
    Case("restored_at-broadcast", rt.restored_at, lambda r: (normal(r, 4, 3), (slice(1, 3),), normal(r, 3))),
    # a list's entry replaced by `xs[i] = v` (entries of different shapes)
    Case("zero_at-list", rt.zero_at, lambda r: ([normal(r, 2), normal(r, 3)], 1)),
    Case("entry_zero_like-list", rt.entry_zero_like,
         lambda r: ([normal(r, 2), normal(r, 3)], 1, [normal(r, 2), normal(r, 3, 1)]), perturbed=[0]),
    Case("entry_zero_like-array", rt.entry_zero_like, lambda r: (normal(r, 3), 1, normal(r, 3)),
         perturbed=[0]),
    Case("saved_at-list", rt.saved_at, lambda r: ([normal(r, 2), normal(r, 3)], 0)),
    Case("restored_at-list", rt.restored_at, lambda r: ([normal(r, 2), normal(r, 3)], 1, normal(r, 3))),
    # lists as a call read them, tangents' own copies, concatenation and repetition
    Case("snapshot", rt.snapshot, lambda r: ([normal(r, 2), normal(r, 3)],)),
    Case("writable_copy-list", rt.writable_copy, lambda r: ([normal(r, 2), normal(r, 3)],)),
    Case("writable_copy-array", rt.writable_copy, lambda r: (normal(r, 2, 3),)),
    Case("argument_copy-list", rt.argument_copy, lambda r: ([normal(r, 2), normal(r, 3)],)),
    Case("argument_copy-array", rt.argument_copy, lambda r: (normal(r, 2, 3),)),
    Case("entry_copy-list", rt.entry_copy, lambda r: ([normal(r, 2), normal(r, 3)],)),
    Case("entry_copy-array", rt.entry_copy, lambda r: (normal(r, 2, 3),)),
    Case("dict_copy", rt.dict_copy, lambda r: ({"a": normal(r, 2), "b": normal(r, 3)},)),
    # a checkpointed loop's kept state: a list, a dict, an array, a number
    Case("state_copy-list", rt.state_copy, lambda r: ([normal(r, 2), normal(r, 3)],)),
    Case("state_copy-dict", rt.state_copy, lambda r: ({"a": normal(r, 2), "b": normal(r, 3)},)),
    Case("state_copy-array", rt.state_copy, lambda r: (normal(r, 2, 3),)),
    Case("state_copy-float", rt.state_copy, lambda r: (0.5,)),
    Case("concat-lists", rt.concat, lambda r: ([normal(r, 2)], [normal(r, 3), 0.5])),
    Case("concat-tuples", rt.concat, lambda r: ((normal(r, 2), normal(r, 2)), (normal(r, 1),))),
    Case("concat_grads", rt.concat_grads,
         lambda r: ([normal(r, 2), normal(r, 3), normal(r, 1)], [normal(r, 2)], [normal(r, 3), normal(r, 1)]),
         perturbed=[0]),
    Case("repeated", rt.repeated, lambda r: ([normal(r, 2), normal(r, 3)], 3)),
    Case("repeated-tuple", rt.repeated, lambda r: ((normal(r, 2),), 2)),
    Case("repeated_grads", rt.repeated_grads,
         lambda r: ([normal(r, 2), normal(r, 3)] * 2, [normal(r, 2), normal(r, 3)], 2), perturbed=[0]),
    Case("tuple_like", rt.tuple_like, lambda r: (np.linalg.eigh(np.eye(2)), (normal(r, 2), normal(r, 2, 2))),
         perturbed=[1]),
    Case("restored_at-repeated", rt.restored_at,
         lambda r: (normal(r, 4, 3), (np.array([1, 2, 1]),), normal(r, 3, 3))),
    Case("r_concat", rt.r_concat, lambda r: ((normal(r, 2), 0.5, normal(r, 3, 2)[:, 0]),)),
    Case("c_concat", rt.c_concat, lambda r: ((normal(r, 3), normal(r, 3, 2)),)),
    Case("r_concat_grads", rt.r_concat_grads,
         lambda r: (normal(r, 5), (normal(r, 2), 0.5, normal(r, 2))), perturbed=(0,)),
    Case("c_concat_grads", rt.c_concat_grads,
         lambda r: (normal(r, 3, 3), (normal(r, 3), normal(r, 3, 2))), perturbed=(0,)),
    Case("linspace_grads", rt.linspace_grads,
         lambda r: (normal(r, 4, 3), normal(r, 3), 0.5, 4), perturbed=(0,)),
    Case("linspace_grads_transpose", rt.linspace_grads_transpose,
         lambda r: ((normal(r, 3), normal(r)), normal(r, 4, 3), normal(r, 3), 0.5, 4), perturbed=(0,)),
    Case("arange_grads", rt.arange_grads, lambda r: (normal(r, 4), 0.5, 4.3, 1.0), perturbed=(0,)),
    Case("arange_tangent", rt.arange_tangent,
         lambda r: (normal(r), 0.0, normal(r), np.arange(0.5, 4.3, 1.0), 0.5, 4.3, 1.0),
         perturbed=(0, 2)),
    Case("written_part", rt.written_part, lambda r: (normal(r, 5, 2), (np.array([3, 0, 3, 3]),))),
    Case("written_part-basic", rt.written_part, lambda r: (normal(r, 5, 2), (slice(1, 4),))),
    Case("written_part_transpose", rt.written_part_transpose,
         lambda r: (normal(r, 4, 2), normal(r, 5, 2), (np.array([3, 0, 3, 3]),)), perturbed=(0, 1)),
    Case("add_at", rt.add_at, lambda r: (normal(r, 4, 2), np.array([0, 2, 0]), normal(r, 3, 2))),
    Case("add_at-broadcast", rt.add_at, lambda r: (normal(r, 4, 2), np.array([1, 1]), normal(r, 2))),
    Case("put", rt.put, lambda r: (normal(r, 3, 2), np.array([0, 4, 0]), normal(r, 3))),
    Case("put-cycled", rt.put, lambda r: (normal(r, 6), np.array([1, 2, 5, 3]), normal(r, 2))),
    Case("put-wrap", rt.put, lambda r: (normal(r, 5), np.array([7, -1]), normal(r, 2), "wrap")),
    Case("put_along", rt.put_along, lambda r: (normal(r, 2, 3), np.array([[0], [2]]),
                                               normal(r, 2, 1), 1)),
    Case("put_along-repeated", rt.put_along,
         lambda r: (normal(r, 2, 3), np.array([[1, 1, 0], [2, 0, 2]]), normal(r, 2, 3), 1)),
    Case("put_along_values_grad", rt.put_along_values_grad,
         lambda r: (normal(r, 2, 3), normal(r, 2, 3), np.array([[1, 1, 0], [2, 0, 2]]),
                    normal(r, 1, 3), 1)),
    Case("put_along_values_grad_transpose", rt.put_along_values_grad_transpose,
         lambda r: (normal(r, 1, 3), normal(r, 2, 3), np.array([[1, 1, 0], [2, 0, 2]]),
                    normal(r, 1, 3), 1)),
    Case("put_values_grad", rt.put_values_grad,
         lambda r: (normal(r, 6), normal(r, 6), np.array([1, 2, 1, 3]), normal(r, 2)), perturbed=(0,)),
    Case("put_values_grad_transpose", rt.put_values_grad_transpose,
         lambda r: (normal(r, 2), normal(r, 6), np.array([1, 2, 1, 3]), normal(r, 2)), perturbed=(0,)),
    Case("sort_grad", rt.sort_grad, lambda r: (normal(r, 3, 4), normal(r, 3, 4), 0), perturbed=(0,)),
    Case("sort_grad-flat", rt.sort_grad, lambda r: (normal(r, 12), normal(r, 3, 4), None), perturbed=(0,)),
    Case("sort_tangent", rt.sort_tangent, lambda r: (normal(r, 3, 4), normal(r, 3, 4)), perturbed=(0,)),
    Case("entry_cotangent", rt.entry_cotangent,
         lambda r: ({"W": normal(r, 2), "b": normal(r, 3)}, "W", normal(r, 2))),
    Case("entry_cotangent-missing", rt.entry_cotangent, lambda r: ({"b": normal(r, 3)}, "W", normal(r, 2))),
    Case("entry_cotangent_transpose", rt.entry_cotangent_transpose,
         lambda r: (normal(r, 2), {"W": normal(r, 2), "b": normal(r, 3)}, "W")),
    Case("without_entry", rt.without_entry, lambda r: ({"W": normal(r, 2), "b": normal(r, 3)}, "W")),
    Case("without_entry_transpose", rt.without_entry_transpose,
         lambda r: ({"b": normal(r, 3)}, {"W": normal(r, 2), "b": normal(r, 3)}, "W")),
    Case("saved_entry", rt.saved_entry, lambda r: ({"W": normal(r, 2), "b": normal(r, 3)}, "W")),
    # a dataclass or named tuple made inside the function, and its fields' cotangents
    Case("record-named-tuple", rt.record, lambda r: (Pair, [normal(r, 2, 3), normal(r, 3)]), [1]),
    Case("record_fields", rt.record_fields,
         lambda r: (Pair(normal(r, 2, 3), normal(r, 3)), Pair(normal(r, 2, 3), normal(r, 3))), [0]),
    Case("record_fields-none-read", rt.record_fields,
         lambda r: ({"W": normal(r, 2, 3)}, Pair(normal(r, 2, 3), normal(r, 3))), [0]),
    Case("record_fields-object", rt.record_fields,
         lambda r: ({"W": normal(r, 2, 3)}, Stored(normal(r, 2, 3), normal(r, 3)), ("W", "b")), [0]),
    Case("record_fields_transpose-object", rt.record_fields_transpose,
         lambda r: ([normal(r, 2, 3), normal(r, 3)], Stored(normal(r, 2, 3), normal(r, 3)),
                    ("W", "b")), [0]),
    Case("record_fields_transpose", rt.record_fields_transpose,
         lambda r: ([normal(r, 2, 3), normal(r, 3)], Pair(normal(r, 2, 3), normal(r, 3))), [0]),
    Case("restored_entry", rt.restored_entry,
         lambda r: ({"W": normal(r, 2), "b": normal(r, 3)}, "W", normal(r, 2))),
    Case("restored_entry-new-key", rt.restored_entry,
         lambda r: ({"W": normal(r, 2), "b": normal(r, 3)}, "c", normal(r, 4))),
    # scans and diagonals (the second argument gives only a shape)
    Case("cumsum_grad-flat", rt.cumsum_grad, lambda r: (normal(r, 6), normal(r, 2, 3)), [0]),
    Case("cumsum_grad-axis", rt.cumsum_grad, lambda r: (normal(r, 2, 3), normal(r, 2, 3), 0), [0]),
    Case("diff_grad", rt.diff_grad, lambda r: (normal(r, 3, 3), normal(r, 3, 4)), [0]),
    Case("diff_grad-n-axis", rt.diff_grad, lambda r: (normal(r, 1, 3), normal(r, 3, 3), 2, 0), [0]),
    # np.gradient along one axis of a uniform grid, and its transpose: linear in the array,
    # and in the spacing's reciprocal (both edge orders, an inner axis, a spacing of 0.5 + u)
    Case("uniform_gradient", rt.uniform_gradient,
         lambda r: (normal(r, 6), 0.5 + r.random(), 0, 1), [0, 1]),
    Case("uniform_gradient-edges-axis", rt.uniform_gradient,
         lambda r: (normal(r, 2, 5), 0.5 + r.random(), 1, 2), [0, 1]),
    Case("uniform_gradient_grad", rt.uniform_gradient_grad,
         lambda r: (normal(r, 6), 0.5 + r.random(), 0, 1), [0, 1]),
    Case("uniform_gradient_grad-edges-axis", rt.uniform_gradient_grad,
         lambda r: (normal(r, 3, 4), 0.5 + r.random(), 0, 2), [0, 1]),
    Case("diagonal_grad", rt.diagonal_grad, lambda r: (normal(r, 3), normal(r, 3, 4)), [0]),
    Case("diagonal_grad-offset-axes", rt.diagonal_grad,
         lambda r: (normal(r, 3, 1), normal(r, 2, 3, 4), 1, 2, 0), [0]),
    Case("trace_grad", rt.trace_grad, lambda r: (normal(r), normal(r, 3, 4)), [0]),
    Case("trace_grad-batch", rt.trace_grad, lambda r: (normal(r, 2), normal(r, 2, 3, 4), -1, 2, 1),
         [0]),
    Case("take_grad-flat", rt.take_grad, lambda r: (normal(r, 3), normal(r, 2, 3), [4, 0, 4]), [0]),
    Case("take_grad-axis", rt.take_grad,
         lambda r: (normal(r, 2, 2, 2, 4), normal(r, 2, 3, 4), [[0, 2], [1, 1]], 1), [0]),
    Case("take_along_axis_grad", rt.take_along_axis_grad,
         lambda r: (normal(r, 3, 2), normal(r, 3, 4), np.array([[0, 3], [1, 1], [2, 0]]), 1), [0]),
    Case("pad_grad-reflect", rt.pad_grad,
         lambda r: (normal(r, 6, 7), normal(r, 2, 3), 2, "reflect"), [0]),
    Case("pad_grad-constant", rt.pad_grad, lambda r: (normal(r, 5), normal(r, 2), (1, 2)), [0]),
    Case("polygamma-1", rt.polygamma, lambda r: (1, np.abs(normal(r, 2, 3)) + 0.5), [1]),
    Case("polygamma-3", rt.polygamma, lambda r: (3, np.abs(normal(r, 4)) + 0.5), [1]),
    Case("pad_tangent-wrap", rt.pad_tangent, lambda r: (normal(r, 2, 3), (3, 1), "wrap"), [0]),
    Case("tile_grad", rt.tile_grad, lambda r: (normal(r, 2, 2, 6), normal(r, 2, 3), (2, 1, 2)), [0]),
    Case("repeat_grad", rt.repeat_grad, lambda r: (normal(r, 12), normal(r, 2, 3), 2), [0]),
    Case("repeat_grad-axis", rt.repeat_grad,
         lambda r: (normal(r, 2, 4), normal(r, 2, 3), [1, 0, 3], 1), [0]),
    # np.linalg.solve (the matrices and b give shapes to the column helpers)
    Case("solve_column-vector", rt.solve_column,
         lambda r: (normal(r, 2, 3), _matrices(r, 2, 3, 3), normal(r, 3)), [0]),
    Case("solve_uncolumn-vector", rt.solve_uncolumn,
         lambda r: (normal(r, 2, 3, 1), _matrices(r, 2, 3, 3), normal(r, 3)), [0]),
    Case("solve_column-matrix", rt.solve_column,
         lambda r: (normal(r, 3, 2), _matrices(r, 3, 3), normal(r, 3, 2)), [0]),
    Case("solve_grads-vector", rt.solve_grads,
         lambda r: (normal(r, 2, 3), normal(r, 2, 3), _matrices(r, 2, 3, 3), normal(r, 3)), [0, 1, 2]),
    Case("solve_grads-broadcast", rt.solve_grads,
         lambda r: (normal(r, 2, 3, 2), normal(r, 2, 3, 2), _matrices(r, 1, 3, 3), normal(r, 2, 3, 2)),
         [0, 1, 2]),
    Case("tril_halved", rt.tril_halved, lambda r: (normal(r, 2, 3, 3),)),
    Case("symmetric_sum", rt.symmetric_sum, lambda r: (normal(r, 2, 3, 3),)),
    Case("real_only", rt.real_only, lambda r: (normal(r, 2, 3, 3), "np.linalg.cholesky"), [0]),
]


def _matrices(rng, *shape):
    """Stacked square matrices far from singular."""
    return rng.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


# -- calling the templates ------------------------------------------------------------

def _rule(case):
    rule = REGISTRY.lookup(case.helper)
    assert rule is not None and rule.vjp is not None, f"{case.id}: no VJP rule"
    return rule


def _vjp(case, rule, u, ans, args):
    """One cotangent per argument (None for none), as the generator would use them."""
    result = rule.vjp(u, ans, *args)
    if not Template(rule.vjp).is_tuple:
        result = (result,)
    result = list(result) + [None] * (len(args) - len(result))
    if rule.elementwise:                                   # the generator sums these back
        result = [None if c is None else rt.unbroadcast(c, a) for c, a in zip(result, args)]
    return result


def _jvp(case, rule, tangents, ans, args):
    """The output's tangent for the tangents of the perturbed arguments (None elsewhere)."""
    if rule.jvp is None:
        assert rule.linear, f"{case.id}: neither a JVP template nor linear"
        return case.helper(tangents[0], *args[1:]) if tangents[0] is not None else None
    template = JvpTemplate(rule.jvp)
    names = list(template.signature.parameters)
    given = [tangents[names.index(primal)] for primal in template.tangents]
    if template.per_argument:
        # one contribution per active argument; the generator does not compute
        # the others, so what they get here is only a placeholder
        placeholders = [rt.zeros_like(args[names.index(primal)]) if t is None else t
                        for primal, t in zip(template.tangents, given)]
        parts = rule.jvp(*placeholders, ans, *args)
        total = None
        for part, tangent in zip(parts, given):
            if tangent is not None:
                total = rt.add(total, part)
        return total
    # one expression for the whole tangent: inactive arguments get zero tangents
    given = [rt.zeros_like(args[names.index(primal)]) if t is None else t
             for primal, t in zip(template.tangents, given)]
    return rule.jvp(*given, ans, *args)


def _setup(case):
    rng, args, perturbed = case.arguments()
    ans = case.helper(*args)
    u = _random_like(rng, ans)
    directions = [_random_like(rng, a) if i in perturbed else None for i, a in enumerate(args)]

    def moved(scale):
        return case.helper(*(a if d is None else _axpy(scale, d, a) for a, d in zip(args, directions)))

    numeric = _difference(moved(STEP), moved(-STEP))
    return args, ans, u, directions, numeric


# -- the checks --------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_vjp(case):
    args, ans, u, directions, numeric = _setup(case)
    cotangents = _vjp(case, _rule(case), u, ans, args)
    for c, a, d in zip(cotangents, args, directions):
        if c is not None and d is not None:      # each entry of a container's too: a zero of
            def same_shape(x, g):                # the wrong shape broadcasts where it is added
                assert g is None or np.shape(g) == np.shape(x), \
                    f"{case.id}: cotangent shape {np.shape(g)} != {np.shape(x)}"
            map_leaves(same_shape, a, c)
    expected = _inner(u, numeric)
    actual = sum(_inner(d, c) for c, d in zip(cotangents, directions) if d is not None)
    assert np.isclose(actual, expected, rtol=1e-6, atol=1e-7), \
        f"{case.id}: <VJP(u), t> = {actual} but <u, J t> = {expected}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_jvp(case):
    args, ans, u, directions, numeric = _setup(case)
    tangent = _jvp(case, _rule(case), directions, ans, args)
    _assert_entries_close(tangent, numeric, f"{case.id}: JVP against central differences")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_vjp_jvp_transposed(case):
    args, ans, u, directions, _ = _setup(case)
    rule = _rule(case)
    tangent = _jvp(case, rule, directions, ans, args)
    cotangents = _vjp(case, rule, u, ans, args)
    forward = _inner(u, tangent)
    backward = sum(_inner(d, c) for c, d in zip(cotangents, directions) if d is not None)
    assert np.isclose(forward, backward, rtol=1e-10, atol=1e-10), \
        f"{case.id}: <u, JVP(t)> = {forward} but <VJP(u), t> = {backward}"


def _as_float32(value):
    return map_leaves(lambda v: np.float32(v) if isinstance(v, float) else
                      v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == np.float64 else v,
                      value)


def _has_float64(value):
    return any(isinstance(v, (np.ndarray, np.generic)) and v.dtype == np.float64
               for v in (leaves(value) if value is not None else []))


def _keeps_float32(case):
    """Whether the helper itself computes in float32 from float32 arguments (one that computes
    in float64 has no float32 to keep: not generated)."""
    _, args, _ = case.arguments()
    return not _has_float64(case.helper(*[_as_float32(a) for a in args]))


FLOAT32_CASES = [case for case in CASES if _keeps_float32(case)]


@pytest.mark.parametrize("case", FLOAT32_CASES, ids=lambda c: c.id)
def test_float32_stays_float32(case):
    """With float32 inputs the derivatives are float32 wherever the helper's own result is."""
    rng, args, perturbed = case.arguments()
    args = [_as_float32(a) for a in args]
    ans = case.helper(*args)
    rule = _rule(case)
    u = _as_float32(_random_like(rng, ans))
    directions = [_as_float32(_random_like(rng, a)) if i in perturbed else None for i, a in enumerate(args)]
    assert not _has_float64(_vjp(case, rule, u, ans, args)), f"{case.id}: VJP detours through float64"
    assert not _has_float64(_jvp(case, rule, directions, ans, args)), f"{case.id}: JVP detours through float64"


# -- prod_grad where x has zeros ---------------------------------------------------
# prod_grad switches formulas when x has a zero, so moving x off a zero jumps
# between them unless ``prod`` moves with it. On prod = np.prod(x) both
# formulas agree and the result is a polynomial in x: its derivative is the
# rule's x part plus its prod part carried through prod's own VJP.

def _prod_on_manifold(v, x, axis, keepdims):
    return rt.prod_grad(v, np.prod(x, axis=axis, keepdims=keepdims), x, axis, keepdims)


@pytest.mark.parametrize("x", [
    [[1.5, 0.0, -2.0, 0.5], [0.7, 1.2, -0.4, 2.0]],            # one zero in one slice
    [[0.0, 1.5, 0.0, 3.0], [0.5, 0.0, 0.0, 2.0]],              # two zeros in each slice
    [[0.0, 0.0, 0.0, 3.0], [0.5, 1.1, 0.0, 2.0]],              # three zeros, and one
    [[0.0, 1.5, 0.5, 3.0], [1.5, 0.8, -1.2, 2.0]],             # a zero, and none
], ids=["one", "two", "three", "mixed"])
@pytest.mark.parametrize("axis, keepdims", [(1, False), (None, False), (1, True)])
def test_prod_grad_with_zeros(x, axis, keepdims):
    rng = np.random.default_rng(7)
    x = np.array(x)
    prod = np.prod(x, axis=axis, keepdims=keepdims)
    v = rng.standard_normal(np.shape(prod))
    dv, dx = rng.standard_normal(np.shape(v)), rng.standard_normal(x.shape)
    u = rng.standard_normal(x.shape)
    numeric = (_prod_on_manifold(v + STEP * dv, x + STEP * dx, axis, keepdims)
               - _prod_on_manifold(v - STEP * dv, x - STEP * dx, axis, keepdims)) / (2 * STEP)
    rule = REGISTRY.lookup(rt.prod_grad)
    ans = rt.prod_grad(v, prod, x, axis, keepdims)
    dprod = np.sum(rt.prod_grad(np.ones_like(prod), prod, x, axis, keepdims) * dx,
                   axis=axis, keepdims=keepdims)
    tangent = sum(rule.jvp(dv, dprod, dx, ans, v, prod, x, axis, keepdims))
    np.testing.assert_allclose(tangent, numeric, rtol=1e-6, atol=1e-8)
    v_bar, prod_bar, x_bar = rule.vjp(u, ans, v, prod, x, axis, keepdims)
    x_bar = x_bar + rt.prod_grad(prod_bar, prod, x, axis, keepdims)   # through prod = np.prod(x)
    assert np.isclose(np.sum(v_bar * dv) + np.sum(x_bar * dx), np.sum(u * numeric), rtol=1e-6)


@pytest.mark.parametrize("x", [
    [[1.5, 0.0, -2.0, 0.5], [0.7, 1.2, -0.4, 2.0]],
    [[0.0, 1.5, 0.0, 3.0], [0.5, 0.0, 0.0, 2.0]],
    [[0.0, 0.0, 0.0, 3.0], [0.5, 1.1, 0.0, 2.0]],
], ids=["one", "two", "three"])
@pytest.mark.parametrize("axis, keepdims", [(1, False), (None, False), (0, True)])
def test_prod_jvp_with_zeros(x, axis, keepdims):
    """prod_jvp(t, np.prod(x), x) is a polynomial in x, as prod_grad is (see above)."""
    rng = np.random.default_rng(9)
    x = np.array(x)
    prod = np.prod(x, axis=axis, keepdims=keepdims)
    t, dt, dx = (rng.standard_normal(x.shape) for _ in range(3))
    u = rng.standard_normal(np.shape(prod))

    def on_manifold(t, x):
        return rt.prod_jvp(t, np.prod(x, axis=axis, keepdims=keepdims), x, axis, keepdims)

    numeric = (on_manifold(t + STEP * dt, x + STEP * dx) - on_manifold(t - STEP * dt, x - STEP * dx)) / (2 * STEP)
    rule = REGISTRY.lookup(rt.prod_jvp)
    ans = rt.prod_jvp(t, prod, x, axis, keepdims)
    dprod = rt.prod_jvp(dx, prod, x, axis, keepdims)
    tangent = sum(rule.jvp(dt, dprod, dx, ans, t, prod, x, axis, keepdims))
    np.testing.assert_allclose(tangent, numeric, rtol=1e-6, atol=1e-8)
    t_bar, prod_bar, x_bar = rule.vjp(u, ans, t, prod, x, axis, keepdims)
    x_bar = x_bar + rt.prod_grad(prod_bar, prod, x, axis, keepdims)   # through prod = np.prod(x)
    assert np.isclose(np.sum(t_bar * dt) + np.sum(x_bar * dx), np.sum(u * numeric), rtol=1e-6)


def test_extremum_grad_moving_x():
    """With the extremum moving along with x, extremum_grad depends on x not at all."""
    rng = np.random.default_rng(8)
    x, dx = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    v = rng.standard_normal(2)

    def moved(step):
        y = x + step * dx
        return rt.extremum_grad(v, np.max(y, axis=1), y, 1)

    np.testing.assert_array_equal(moved(STEP), moved(-STEP))
    rule = REGISTRY.lookup(rt.extremum_grad)
    assert rule.linear and Template(rule.vjp).is_tuple is False


# -- exact values at the conventions' points ----------------------------------------

def test_ratio_or_zero_is_zero_where_the_denominator_is():
    rule = REGISTRY.lookup(rt.ratio_or_zero)
    a, b = np.array([1.0, 2.0]), np.array([2.0, 0.0])
    ans = rt.ratio_or_zero(a, b)
    da, db = rule.vjp(np.ones(2), ans, a, b)
    np.testing.assert_array_equal(da, [0.5, 0.0])
    np.testing.assert_array_equal(db, [-0.25, 0.0])
    assert rt.ratio_or_zero(np.ones(2), 0.0).tolist() == [0.0, 0.0]


def test_ratio_or_zero_times_is_the_product_s_factor_where_the_denominator_is_zero():
    """``g * 0`` there: 0 for a finite ``g`` (its slice of ``x`` is zeros), NaN otherwise,
    as ``g * rt.ratio_or_zero(x, n)`` gives."""
    g, n = np.array([1.0, 2.0, np.inf, np.nan]), np.array([2.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(rt.ratio_or_zero_times(g, n), [0.5, 0.0, np.nan, np.nan])
    np.testing.assert_array_equal(rt.ratio_or_zero_times(g, 0.0), [0.0, 0.0, np.nan, np.nan])
    assert rt.ratio_or_zero_times(3.0, 2.0) == 1.5
    rule = REGISTRY.lookup(rt.ratio_or_zero_times)
    dg, dn = rule.vjp(np.ones(2), rt.ratio_or_zero_times(g[:2], n[:2]), g[:2], n[:2])
    np.testing.assert_array_equal(dg, [0.5, 0.0])
    np.testing.assert_array_equal(dn, [-0.25, 0.0])


def test_power_factors_at_zero_have_finite_derivatives():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 0.0])
    np.testing.assert_array_equal(rt.power_base_second_factor(x, y), [0.0, 0.0, 0.0])
    assert rt.power_base_second_factor(np.array([0.0, 2.0]), 1).tolist() == [0.0, 0.0]
    rule = REGISTRY.lookup(rt.power_exponent_factor)
    power = np.array([0.0, 1.0])
    d_power, d_x = rule.vjp(np.ones(2), rt.power_exponent_factor(power, np.array([0.0, 1.0])),
                            power, np.array([0.0, 1.0]))
    assert np.all(np.isfinite(d_power)) and np.all(np.isfinite(d_x))


def test_entries_without_a_tangent_get_no_cotangent():
    """None entries (items, operands or rule results without a derivative) stay None backwards."""
    rule = REGISTRY.lookup(rt.sum_tangents)
    items = rule.vjp(np.ones(3), None, [None, np.ones(3), 2.0], np.zeros(3))
    assert items[0] is None and items[1].tolist() == [1.0, 1.0, 1.0] and items[2] == 3.0
    einsum = REGISTRY.lookup(rt.einsum_jvp)
    a, b, da = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4), np.ones((2, 3))
    product = np.einsum("ij,jk->ik", a, b)
    db = np.full((3, 4), 0.5)
    parts = einsum.jvp((np.ones((2, 3)), None), (None, db), None, (da, None), product, "ij,jk->ik", (a, b))
    np.testing.assert_array_equal(parts[0], np.ones((2, 3)) @ b)
    np.testing.assert_array_equal(parts[1], da @ db)          # the operand without a tangent moved
    np.testing.assert_array_equal(rt.einsum_jvp_doperands((None, db), (None, None), product, "ij,jk->ik",
                                                          (a, b)), np.zeros((2, 4)))


def test_custom_cotangents_of_none_entries():
    """A rule's None becomes a constant zero: its cotangent is None, its tangent zeros."""
    x, y = np.ones(2), np.ones(3)
    rule = REGISTRY.lookup(rt.custom_cotangents)
    ans = rt.custom_cotangents((None, 2 * y), (x, y), "f")
    back = rule.vjp((np.ones(2), np.ones(3)), ans, (None, 2 * y), (x, y), "f")
    assert back[0] is None and back[1].tolist() == [1.0, 1.0, 1.0]
    # forward-mode code gives the None entry the tangent 0.0, which the check would reject
    tangent = rule.jvp((0.0, np.ones(3)), ans, (None, 2 * y), (x, y), "f")
    assert tangent[0].tolist() == [0.0, 0.0] and tangent[1].tolist() == [1.0, 1.0, 1.0]
    # an argument without a gradient (None) passes its entry through unread
    assert rule.vjp((None, np.ones(3)), ans, [7.0, 2 * y], (None, y), "f")[0] is None
    assert rule.jvp([7.0, np.ones(3)], ans, [7.0, 2 * y], (None, y), "f")[0] == 7.0


def test_saved_entry_of_a_new_key_has_no_cotangent():
    mapping = {"W": np.ones(2)}
    old = rt.saved_entry(mapping, "c")
    rule = REGISTRY.lookup(rt.saved_entry)
    cotangent = rule.vjp({}, old, mapping, "c")
    np.testing.assert_array_equal(cotangent["W"], np.zeros(2))
    restored = REGISTRY.lookup(rt.restored_entry)
    new = {"W": np.ones(2), "c": np.ones(3)}
    assert rt.restored_entry(new, "c", old) == {"W": new["W"]}
    tangent = restored.jvp({"W": np.ones(2), "c": np.ones(3)}, rt.zeros_like(old), None, new, "c", old)
    assert list(tangent) == ["W"]


# -- through srctrans: calls as generated code makes them ---------------------------

def backward_of_dense(x, W, b):
    dy = np.tanh(x @ W + b)
    dW = rt.matmul_rhs(dy, x, W)
    db = rt.unbroadcast(dy, b)
    return np.sum(dW * dW) + np.sum(db * rt.unbroadcast(dy * dy, b))


def backward_of_reductions(x, v):
    p = np.prod(x, axis=1)
    s = np.std(x, axis=0)
    return (np.sum(rt.prod_grad(v, p, x, 1, False) ** 2)
            + np.sum(rt.std_grad(np.sin(x[0]), s, x, 0, 0, False) * x)
            + np.sum(rt.extremum_grad(v, np.max(x, axis=1), x, 1, False) * x))


def backward_of_power(x, y):
    ans = x ** y
    return np.sum(rt.power_base_factor(x, y) * rt.power_exponent_factor(ans, x))


def backward_of_joins(a, b):
    grads = rt.concatenate_grads(np.sin(np.concatenate([a, b])), [a, b], 0)
    first = grads[0]
    second = grads[1]
    return np.sum(first * a) + np.sum(second * second)


def backward_of_subscripts(x):
    d = rt.getitem_grad(np.cos(x[1:3]), x, np.s_[1:3])
    z = rt.zero_at(d * x, 0)
    return np.sum(z * z)


def backward_of_einsum(a, b):
    grads = rt.einsum_grads(np.sin(np.einsum("ij,jk->ik", a, b)), "ij,jk->ik", (a, b))
    da = grads[0]
    db = grads[1]
    return np.sum(da * da) + np.sum(db * b)


@pytest.mark.parametrize("fn, shapes", [
    (backward_of_dense, [(4, 3), (3, 2), (2,)]),
    (backward_of_reductions, [(3, 4), (3,)]),
    (backward_of_joins, [(2,), (3,)]),
    (backward_of_subscripts, [(4,)]),
    (backward_of_einsum, [(2, 3), (3, 2)]),
], ids=lambda p: getattr(p, "__name__", ""))
def test_check_grads_through_srctrans(fn, shapes):
    rng = np.random.default_rng(3)
    args = [rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], s) for s in shapes]
    st.check_grads(fn, args)


# As forward-mode code calls the tangent helpers (srctrans/rules/{reductions,linalg,builtins}.py).
def tangent_of_reductions(x, t):
    p = np.prod(x, axis=1)
    s = np.std(x, axis=0)
    return (np.sum(rt.prod_jvp(t, p, x, 1, False) ** 2)
            + np.sum(rt.std_jvp(np.sin(t), s, x, 0, 0, False) * s)
            + np.sum(rt.var_jvp(t * x, x, None, 1, True))
            + np.sum(rt.extremum_jvp(t, np.max(x, axis=1), x, 1, False) * p))


def tangent_of_einsum(a, b, da, db):
    y = np.einsum("ij,jk->ik", a, b)
    dy = rt.einsum_jvp((da, db), y, "ij,jk->ik", (a, b))
    dy_a = rt.einsum_jvp((np.sin(da), rt.zeros_like(b)), y, "ij,jk->ik", (a, b))   # b constant
    return np.sum(dy * dy) + np.sum(dy_a * y)


def tangent_of_builtins(a, b, t):
    total = sum([a * b, b, t])
    dtotal = rt.sum_tangents([t * b, a * t, t * t], total)
    chosen = max(a, b * t)
    dchosen = rt.choice_tangent((t * a, b * b), chosen, (a, b * t))
    return dtotal * dchosen + rt.sum_tangents(np.array([a, b, t]) * t, total)


@pytest.mark.parametrize("fn, shapes", [
    (tangent_of_reductions, [(3, 4), (3, 4)]),
    (tangent_of_einsum, [(2, 3), (3, 2), (2, 3), (3, 2)]),
    (tangent_of_builtins, [(), (), ()]),
], ids=lambda p: getattr(p, "__name__", ""))
def test_check_grads_of_tangents_through_srctrans(fn, shapes):
    rng = np.random.default_rng(5)
    args = [rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], s) for s in shapes]
    st.check_grads(fn, [float(a) if not s else a for a, s in zip(args, shapes)])


def signed_sine(x, y):
    return np.sin(x) * np.sign(y)


def signed_sine_vjp(g, ans, x, y):
    return g * np.cos(x) * np.sign(y), None        # None: y moves nothing (almost everywhere)


def signed_sine_jvp(tangents, ans, x, y):
    return tangents[0] * np.cos(x) * np.sign(y)


def uses_signed_sine(x, y):
    return np.sum(signed_sine(x, y) * x * y)


def test_second_derivatives_through_a_registered_rule():
    """The gradient calls rt.custom_cotangents on the rule's result: its derivatives, in both modes."""
    saved = REGISTRY.user_rules()
    try:
        st.register_vjp(signed_sine, signed_sine_vjp)
        st.register_jvp(signed_sine, signed_sine_jvp)
        rng = np.random.default_rng(6)
        st.check_grads(uses_signed_sine, [rng.standard_normal(3), rng.uniform(0.5, 1.5, 3)], order=2)
    finally:
        REGISTRY.restore_user_rules(saved)
        st.clear_cache()


def test_check_grads_through_srctrans_power():
    rng = np.random.default_rng(4)
    st.check_grads(backward_of_power, [rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(-1.0, 3.0, (3,))])


def reads_a_list_twice(a, b):
    y = list((a, b))
    return y[0] * y[1] + y[0]


def test_cotangents_of_list_results_add_entry_by_entry():
    """``list(...)`` has a rule but returns a list: its cotangents must not be concatenated."""
    assert st.grad(reads_a_list_twice, wrt=(0, 1))(2.0, 3.0) == (4.0, 2.0)


def uses_helper_without_rule(x):
    return np.sum(rt.conform_gradient(x * 2.0, x))


def test_a_helper_without_rule_is_a_missing_rule_error():
    with pytest.raises(st.MissingRuleError, match="conform_gradient"):
        st.grad(uses_helper_without_rule)(np.ones(3))


# -- coverage ---------------------------------------------------------------------

# Runtime exports deliberately left without rules. Each is called only by the
# API, or only by the derivatives of other helpers (third derivatives would
# need them), or by no generated code at all.
WITHOUT_RULES = {
    # the API conforms finished gradients to their inputs; generated code never calls it
    "conform_gradient": "called by srctrans.api only",
    # what the rules below call: derivatives of order three would need their rules
    "restored_entry_tangent": "in the JVP of rt.restored_entry",
    "prod_grad_dprod": "in the JVP of rt.prod_grad",
    "prod_grad_dprod_transpose": "in the VJP of rt.prod_grad",
    "prod_grad_dx": "in the VJP and JVP of rt.prod_grad",
    "einsum_grads_transpose": "in the VJP of rt.einsum_grads",
    "einsum_grads_doperands": "in the JVP of rt.einsum_grads",
    "einsum_grads_doperands_transpose": "in the VJP of rt.einsum_grads",
    "einsum_jvp_doperands": "in the JVP of rt.einsum_jvp",
    "solve_grads_vjp": "in the VJP of rt.solve_grads",
    "solve_grads_jvp": "in the JVP of rt.solve_grads",
    "block_of": "in the VJP of rt.block_grads",
    # specialised code's picks (optimise/picked_cotangents.py): never differentiated again
    "interp_values_grad": "np.interp's values' cotangent alone, in specialised code",
    # gradient control: the fence and ANF take `with` blocks apart, and forward
    # passes call the .forward method of a custom_gradient object, never the class
    "stop_recording": "marks a `with` block; generated code never calls it",
    "grad_of": "marks a `with` block; generated code never calls it",
    "CustomGradient": "the class of custom_gradient objects; generated code never calls it",
    # the tape of a reversed loop: forward mode pops tangents beside it
    # (differentiate/forward.py); reverse mode through it is an UnsupportedSyntaxError
    "pop_many": "pops a reversed loop's saved values; forward mode handles it as a pop",
    # optimise/step_lists.py: a fused gradient's loop over its own saved values; the fence
    # and desugar read it as `reversed(steps)` when that gradient is differentiated again
    "reversed": "walks a loop's own saved values backwards in a fused gradient",
    # has_aux: the API splits what a has-aux function returned (generated code checks the
    # pair with the non-differentiable rt.not_an_aux_pair)
    "split_aux_pair": "called by srctrans.api and srctrans.composed only",
    # optimise/sparse_dicts.py: specialised backward passes only, which are never
    # differentiated again (a gradient built to be differentiated is generic: cache.py)
    "added_at_key": "a dict's cotangent kept sparse, in specialised backward passes only",
    "added_at": "an array's picks summed in place, in specialised backward passes only",
}

# Helpers whose rules live with the NumPy rules: rt.identity (x.copy(),
# x.astype()) has its VJP in srctrans/rules/shapes.py, and its JVP belongs
# with the JVPs of those rules.
RULES_ELSEWHERE = {"identity"}


def _exports():
    """The runtime's public callables (LN2 and LN10 are constants, not functions)."""
    exports = {name: getattr(runtime, name) for name in dir(runtime)}     # binds them all
    return {name: value for name, value in exports.items()
            if not name.startswith("_") and callable(value) and not inspect.ismodule(value)}


def test_each_export_is_its_modules_however_the_modules_were_imported():
    """``rt.NAME`` binds its module's exports when first read; importing a module first binds
    the module's own name in the package, so an export named as its module (``rt.float_lists``
    was) read the module in a process whose compiler had imported it directly."""
    check = textwrap.dedent("""
        import importlib
        from srctrans import runtime
        homes = dict(runtime._HOMES)
        for module in set(homes.values()):      # before any rt.NAME is read
            importlib.import_module(f"{runtime.__name__}.{module}")
        bound = dict(vars(runtime))             # what reading rt.NAME finds without loading
        print([name for name, module in homes.items() if name in bound and bound[name] is not
               getattr(importlib.import_module(f"{runtime.__name__}.{module}"), name)])
    """)
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_runtime_module_is_read_as_rt_dot_its_name_in_a_new_process():
    """Generated code reads some helpers through their module (a rule's
    ``rt.decompositions.refuse_cofactor_derivative()``); a process whose derivatives come from
    the persistent cache has imported neither that module nor the rules that import it."""
    check = textwrap.dedent("""
        from srctrans import runtime
        print(callable(runtime.decompositions.refuse_cofactor_derivative),
              hasattr(runtime, "no_such_module"))
    """)
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


def test_every_export_is_accounted_for():
    """Each export has rules, is non-differentiable, is listed above, or is differentiated
    through its source (runtime/decompositions.py: plain NumPy srctrans reads again)."""
    unaccounted = []
    for name, helper in sorted(_exports().items()):
        rule = REGISTRY.lookup(helper)
        if REGISTRY.differentiated_through(helper):
            assert rule is None, f"rt.{name} is differentiated through its source and has rules"
        elif name in RULES_ELSEWHERE:
            assert rule is not None and rule.has_vjp, name
        elif name in WITHOUT_RULES:
            assert rule is None and not REGISTRY.is_nondifferentiable(helper), \
                f"rt.{name} has rules now: take it off WITHOUT_RULES"
        elif REGISTRY.is_nondifferentiable(helper):
            assert rule is None, f"rt.{name} is both non-differentiable and has rules"
        elif rule is None or not rule.has_vjp or not rule.has_jvp:
            unaccounted.append(name)
    assert not unaccounted, f"runtime helpers without a VJP and a JVP: {unaccounted}"
    assert set(WITHOUT_RULES) | RULES_ELSEWHERE <= set(_exports())


# Helpers whose rules are straight-through by design: finite differences of the helper
# alone disagree with them, and the tests named check them through what calls them.
STRAIGHT_THROUGH = {
    "valued": "the value of one argument, the derivative of the other (tests/test_row_loops.py)",
    "log_of_softmax": "the log of p, the derivative of the log-softmax of a, p being the "
                      "softmax of a (tests/test_softmax_logs.py)",
    "softmax_ratio": "e / s, the derivative of the softmax of a, e being exp(a) and s its sum "
                     "(tests/test_softmax_logs.py)",
    "log1p_tail": "the log1p of e, the derivative of the softplus of z, e being exp(-|z|) "
                  "(tests/test_softplus_terms.py)",
    "log_tail": "the log of p, the derivative of the softplus of z, p being 1 + exp(-|z|) "
                "(tests/test_softplus_terms.py)",
    **dict.fromkeys(("cholesky_solve", "cholesky_log_diagonal", "cholesky_log_diagonal_sum"),
                    "a value of the factor L, the derivative of the matrix a factored, L being "
                    "np.linalg.cholesky(a) (tests/test_cholesky_terms.py)"),
}


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_the_log_of_a_softmax_gives_the_log_softmaxs_derivative_to_its_logits(axis):
    """At ``p = softmax(a)`` the rule's cotangent of ``a`` is the VJP of ``log(softmax(a))``
    (by central differences), its tangent the JVP, and ``p`` gets none: the term sent to
    ``a`` holds the whole derivative."""
    rng = np.random.default_rng(7)
    a, u, t = (rng.standard_normal((3, 4)) for _ in range(3))

    def log_softmax(a):
        e = np.exp(a)
        return np.log(e / e.sum(axis=axis, keepdims=True))

    e = np.exp(a)
    p = e / e.sum(axis=axis, keepdims=True)
    rule = REGISTRY.lookup(rt.log_of_softmax)
    ans = rt.log_of_softmax(p, a, axis)
    assert np.array_equal(ans, np.log(p))
    dp, da, daxis = rule.vjp(u, ans, p, a, axis)
    assert dp is None and daxis is None
    derivative = (log_softmax(a + STEP * t) - log_softmax(a - STEP * t)) / (2 * STEP)
    np.testing.assert_allclose(np.sum(da * t), np.sum(u * derivative), rtol=1e-7)
    np.testing.assert_allclose(rule.jvp(t, ans, p, a, axis), derivative, rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_a_softmax_ratio_gives_the_softmaxs_derivative_to_its_logits(axis):
    """At ``e = exp(a)`` and ``s`` its sum along ``axis``, the rule of ``e / s`` sends ``a``
    the VJP of the softmax of ``a`` (by central differences) and gives its JVP; ``e`` and
    ``s`` get nothing: the term sent to ``a`` holds the whole derivative."""
    rng = np.random.default_rng(9)
    a, u, t = (rng.standard_normal((3, 4)) for _ in range(3))

    def softmax(a):
        e = np.exp(a)
        return e / e.sum(axis=axis, keepdims=True)

    e = np.exp(a)
    s = e.sum(axis=axis, keepdims=True)
    rule = REGISTRY.lookup(rt.softmax_ratio)
    ans = rt.softmax_ratio(e, s, a, axis)
    assert np.array_equal(ans, e / s)
    de, ds, da, daxis = rule.vjp(u, ans, e, s, a, axis)
    assert de is None and ds is None and daxis is None
    derivative = (softmax(a + STEP * t) - softmax(a - STEP * t)) / (2 * STEP)
    np.testing.assert_allclose(np.sum(da * t), np.sum(u * derivative), rtol=1e-7)
    np.testing.assert_allclose(rule.jvp(t, ans, e, s, a, axis), derivative, rtol=1e-6,
                               atol=1e-8)
    # a number's cotangent (a seed that broadcasts) is spread over p first
    np.testing.assert_allclose(rt.softmax_ratio_grad(2.0, ans, axis), np.zeros_like(ans),
                               atol=1e-15)


@pytest.mark.parametrize("form", ["log1p", "log"])
def test_a_softplus_tail_gives_the_whole_softplus_derivative_to_z(form):
    """At ``e = exp(-|z|)`` (and ``p = 1 + e``) the tail's rule sends ``z`` the VJP and JVP of
    the softplus ``max(z, 0) + log1p(exp(-|z|))`` (by central differences), ``e`` and ``p``
    nothing, and the maximum has no derivative of its own."""
    rng = np.random.default_rng(8)
    z, u, t = (3 * rng.standard_normal((3, 4)) for _ in range(3))

    def softplus(z):
        return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))

    e = np.exp(-np.abs(z))
    helper = rt.log1p_tail if form == "log1p" else rt.log_tail
    args = (e, z) if form == "log1p" else (1 + e, e, z)
    rule = REGISTRY.lookup(helper)
    ans = helper(*args)
    assert np.array_equal(ans, np.log1p(e) if form == "log1p" else np.log(1 + e))
    *others, dz = rule.vjp(u, ans, *args)
    assert all(other is None for other in others)
    derivative = (softplus(z + STEP * t) - softplus(z - STEP * t)) / (2 * STEP)
    np.testing.assert_allclose(np.sum(dz * t), np.sum(u * derivative), rtol=1e-7)
    np.testing.assert_allclose(rule.jvp(t, ans, *args), derivative, rtol=1e-6, atol=1e-8)
    assert REGISTRY.is_nondifferentiable(rt.relu_of_softplus)
    assert np.array_equal(rt.relu_of_softplus(z, 0), np.maximum(z, 0))


def test_a_straight_through_helper_gives_its_derivative_to_the_one_argument():
    rule = REGISTRY.lookup(rt.valued)
    g, value, differentiated = np.ones(3), np.arange(3.0), np.arange(3.0) + 1e-15
    assert rt.valued(value, differentiated) is value
    cotangents = rule.vjp(g, value, value, differentiated)
    assert cotangents[0] is None and cotangents[1] is g
    assert rule.jvp(g, value, value, differentiated) is g


def test_every_rule_is_checked_against_finite_differences():
    tested = {case.helper for case in CASES}
    for name, helper in _exports().items():
        rule = REGISTRY.lookup(helper)
        if name in STRAIGHT_THROUGH:
            assert rule is not None and rule.has_vjp and rule.has_jvp, name
            continue
        if rule is not None and rule.vjp is not None and rule.vjp.__module__ in HELPER_RULE_FILES:
            assert helper in tested, f"rt.{name} has rules but no row in CASES"


def test_every_helpers_rule_file_is_checked():
    """A rule file of runtime helpers (``rules/*_helpers.py``, which test_jvp_rules.py leaves to
    this file) not in HELPER_RULE_FILES would escape the check above."""
    import pathlib
    found = {f"srctrans.rules.{path.stem}" for path in
             (pathlib.Path(runtime_helpers.__file__).parent).glob("*_helpers.py")}
    assert found == HELPER_RULE_FILES


def test_templates_parse():
    for helper in _exports().values():
        rule = REGISTRY.lookup(helper)
        if rule is not None and rule.vjp is not None and rule.vjp.__module__ in HELPER_RULE_FILES:
            assert rule.template is not None
            assert rule.jvp is None or rule.jvp_template is not None


def test_masks_are_nondifferentiable():
    for helper in (rt.clip_mask, rt.tie_weight, rt.zeros_like):
        assert REGISTRY.is_nondifferentiable(helper)


# -- the helpers' fast paths for NumPy arrays give what their general paths give ---------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128, np.bool_])
def test_the_zeros_of_an_array_have_its_float_dtype(dtype):
    x = np.ones((2, 3), dtype=dtype)
    zeros = rt.zeros_like(x)
    want = np.zeros_like(x, dtype=np.result_type(x.dtype, np.float16))
    assert zeros.dtype == want.dtype and zeros.shape == x.shape and not zeros.any()


@pytest.mark.parametrize("x_dtype, g", [
    (np.float64, 2.0), (np.float32, np.float32(2.0)), (np.float32, np.float64(2.0)),
    (np.int64, 2.0), (np.float32, np.full(2, 3.0, np.float32)), (np.float64, np.full(2, 3j))])
def test_an_entrys_cotangent_of_an_array_is_the_general_one(x_dtype, g):
    x = np.ones(4, dtype=x_dtype)
    index = slice(1, 3) if np.ndim(g) else 2
    placed = rt.getitem_grad(g, x, index)
    want = np.zeros(4, np.result_type(x, g))
    want[index] = g
    assert placed.dtype == want.dtype
    np.testing.assert_array_equal(placed, want)


@pytest.mark.parametrize("x_dtype, g", [(np.float64, 1.0), (np.float32, 1.0),
                                        (np.float32, np.float64(0.5)), (np.int64, 2.0)])
def test_a_scalars_spread_over_an_array_has_arithmetics_dtype(x_dtype, g):
    x = np.ones((3, 2), dtype=x_dtype)
    spread = rt.unreduce(g, x)
    dtype = np.result_type(g, x)
    assert spread.dtype == (dtype if dtype.kind == "f" else np.float64) and spread.shape == x.shape
    assert spread.flags.writeable and np.all(spread == g)

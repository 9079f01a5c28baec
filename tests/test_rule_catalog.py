"""Every NumPy rule srctrans registers, checked in reverse mode against finite differences.

The catalog is an explicit table. Each :class:`Entry` names one small function
defined below with ``def`` (srctrans reads its source), how to build each of
its arguments (shape and domain) and which arguments are differentiated. For
every entry:

  * ``test_check_grads``: ``st.check_grads`` on each differentiated argument
    alone and on all of them together (one random inner product each);
  * ``test_vjp_jacobian``: the full Jacobian, row by row through ``st.vjp``
    with unit cotangents, against central differences column by column, and
    each gradient's shape and dtype;
  * ``test_float32``: ``st.grad`` on float32 inputs returns float32 gradients
    of the inputs' shapes, equal to the float64 gradients to ~1e-4;
  * ``test_float32_backward_pass_stays_float32``: the generated backward pass
    itself does not detour through float64 when the output is float32.

Points where the derivative is a convention (ties of max/min/maximum/minimum,
``abs`` at 0, ``sign``, zeros of ``prod``) are checked against exact values in
``EXACT``. Randomness comes from seeded ``np.random.default_rng`` only.
"""

import inspect

import numpy as np
import pytest

import srctrans as st
from srctrans import cache
from srctrans import runtime
# argument domains, shared with tests/test_jvp_rules.py
from rule_domains import fixed, nonzero, normal, positive, pyfloat, uniform


class Entry:
    """One catalog row: ``fn(*args)`` differentiated with respect to ``wrt``.

    ``wrt`` None selects every float argument. ``float32`` False leaves the
    entry out of the float32 comparison (with the reason in the table).
    """

    def __init__(self, id, fn, args, wrt=None, float32=True):
        self.id = id
        self.fn = fn
        self.args = tuple(args)
        self.wrt = wrt
        self.float32 = float32

    def build(self, seed):
        rng = np.random.default_rng(seed)
        args = tuple(a.build(rng) for a in self.args)
        wrt = self.wrt
        if wrt is None:
            wrt = tuple(i for i, a in enumerate(args)
                        if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))
        return args, wrt


# -- elementwise ---------------------------------------------------------------

def f_add(x, y):
    return np.add(x, y)

def f_subtract(x, y):
    return np.subtract(x, y)

def f_multiply(x, y):
    return np.multiply(x, y)

def f_divide(x, y):
    return np.divide(x, y)

def f_true_divide(x, y):
    return np.true_divide(x, y)

def f_negative(x):
    return np.negative(x)

def f_positive(x):
    return np.positive(x)

def f_power(x, y):
    return np.power(x, y)

def f_power_const(x):
    return np.power(x, 3)

def f_square(x):
    return np.square(x)

def f_sqrt(x):
    return np.sqrt(x)

def f_reciprocal(x):
    return np.reciprocal(x)

def f_exp(x):
    return np.exp(x)

def f_expm1(x):
    return np.expm1(x)

def f_exp2(x):
    return np.exp2(x)

def f_log(x):
    return np.log(x)

def f_log1p(x):
    return np.log1p(x)

def f_log2(x):
    return np.log2(x)

def f_log10(x):
    return np.log10(x)

def f_logaddexp(x, y):
    return np.logaddexp(x, y)

def f_sin(x):
    return np.sin(x)

def f_cos(x):
    return np.cos(x)

def f_tan(x):
    return np.tan(x)

def f_arcsin(x):
    return np.arcsin(x)

def f_arccos(x):
    return np.arccos(x)

def f_arctan(x):
    return np.arctan(x)

def f_arctan2(y, x):
    return np.arctan2(y, x)

def f_sinh(x):
    return np.sinh(x)

def f_cosh(x):
    return np.cosh(x)

def f_tanh(x):
    return np.tanh(x)

def f_arcsinh(x):
    return np.arcsinh(x)

def f_arccosh(x):
    return np.arccosh(x)

def f_arctanh(x):
    return np.arctanh(x)

def f_abs(x):
    return np.abs(x)

def f_absolute(x):
    return np.absolute(x)

def f_builtin_abs(x):
    return abs(x)

def f_sign_times(x):
    return np.sign(x) * x

def f_maximum(x, y):
    return np.maximum(x, y)

def f_minimum(x, y):
    return np.minimum(x, y)

def f_clip(x):
    return np.clip(x, -0.5, 0.5)

def f_clip_bounds(x, lo, hi):
    return np.clip(x, lo, hi)

def f_clip_upper(x):
    return np.clip(x, None, 0.3)

def f_clip_keywords(x, lo, hi):
    return np.clip(x, min=lo, max=hi)

def f_clip_method_max(x):
    return x.clip(max=0.3)

def f_where(x, y):
    return np.where(x > 0, x, y)

def f_where_scalar(x):
    return np.where(x > 0, x, 0.0)


ELEMENTWISE = [
    Entry("add", f_add, [normal(3, 4), normal(3, 4)]),
    Entry("add-broadcast-row", f_add, [normal(3, 4), normal(4)]),
    Entry("add-broadcast-outer", f_add, [normal(3, 1), normal(1, 4)]),
    Entry("add-0d-array", f_add, [normal(), normal(2, 3)]),
    Entry("add-pyfloat", f_add, [normal(2, 3), pyfloat()]),
    Entry("add-pyfloats", f_add, [pyfloat(), pyfloat()]),
    Entry("subtract", f_subtract, [normal(3, 4), normal(3, 4)]),
    Entry("subtract-broadcast", f_subtract, [normal(3, 1), normal(1, 4)]),
    Entry("subtract-pyfloat", f_subtract, [pyfloat(), normal(4)]),
    Entry("multiply", f_multiply, [normal(3, 4), normal(3, 4)]),
    Entry("multiply-broadcast", f_multiply, [normal(2, 3, 4), normal(3, 1)]),
    Entry("multiply-pyfloat", f_multiply, [normal(2, 3), pyfloat()]),
    Entry("divide", f_divide, [normal(3, 4), nonzero(3, 4)]),
    Entry("divide-broadcast", f_divide, [normal(3, 1), nonzero(4)]),
    Entry("divide-pyfloat-numerator", f_divide, [pyfloat(), nonzero(2, 3)]),
    Entry("true_divide", f_true_divide, [normal(2, 3), nonzero(2, 3)]),
    Entry("negative", f_negative, [normal(2, 3)]),
    Entry("positive", f_positive, [normal(2, 3)]),
    Entry("power", f_power, [positive(3, 4), normal(3, 4)]),
    Entry("power-broadcast", f_power, [positive(3, 1), normal(4)]),
    Entry("power-pyfloat-base", f_power, [pyfloat(0.5, 2.0), normal(2, 3)]),
    Entry("power-pyfloat-exponent", f_power, [positive(2, 3), pyfloat()]),
    Entry("power-int-exponent", f_power_const, [normal(2, 3)]),
    Entry("square", f_square, [normal(2, 3)]),
    Entry("sqrt", f_sqrt, [positive(2, 3)]),
    Entry("reciprocal", f_reciprocal, [nonzero(2, 3)]),
    Entry("exp", f_exp, [normal(2, 3)]),
    Entry("expm1", f_expm1, [normal(2, 3)]),
    Entry("exp2", f_exp2, [normal(2, 3)]),
    Entry("log", f_log, [positive(2, 3)]),
    Entry("log1p", f_log1p, [uniform(-0.5, 2.0, 2, 3)]),
    Entry("log2", f_log2, [positive(2, 3)]),
    Entry("log10", f_log10, [positive(2, 3)]),
    Entry("logaddexp", f_logaddexp, [normal(2, 3), normal(2, 3)]),
    Entry("logaddexp-broadcast", f_logaddexp, [normal(2, 1), normal(3)]),
    Entry("sin", f_sin, [normal(2, 3)]),
    Entry("cos", f_cos, [normal(2, 3)]),
    Entry("tan", f_tan, [uniform(-1.2, 1.2, 2, 3)]),
    Entry("arcsin", f_arcsin, [uniform(-0.9, 0.9, 2, 3)]),
    Entry("arccos", f_arccos, [uniform(-0.9, 0.9, 2, 3)]),
    Entry("arctan", f_arctan, [normal(2, 3)]),
    Entry("arctan2", f_arctan2, [normal(2, 3), nonzero(2, 3)]),
    Entry("arctan2-broadcast", f_arctan2, [nonzero(3, 1), nonzero(4)]),
    Entry("sinh", f_sinh, [normal(2, 3)]),
    Entry("cosh", f_cosh, [normal(2, 3)]),
    Entry("tanh", f_tanh, [normal(2, 3)]),
    Entry("arcsinh", f_arcsinh, [normal(2, 3)]),
    Entry("arccosh", f_arccosh, [uniform(1.5, 3.0, 2, 3)]),
    Entry("arctanh", f_arctanh, [uniform(-0.9, 0.9, 2, 3)]),
    Entry("abs", f_abs, [nonzero(2, 3)]),
    Entry("absolute", f_absolute, [nonzero(2, 3)]),
    Entry("builtin-abs", f_builtin_abs, [nonzero(2, 3)]),
    Entry("sign-zero-derivative", f_sign_times, [nonzero(2, 3)]),
    Entry("maximum", f_maximum, [normal(3, 4), normal(3, 4)]),
    Entry("maximum-broadcast", f_maximum, [normal(3, 1), normal(4)]),
    Entry("maximum-pyfloat", f_maximum, [normal(3, 4), pyfloat(-0.3, 0.3)]),
    Entry("minimum", f_minimum, [normal(3, 4), normal(3, 4)]),
    Entry("minimum-broadcast", f_minimum, [normal(3, 1), normal(1, 4)]),
    Entry("clip", f_clip, [normal(3, 4)]),
    Entry("clip-array-bounds", f_clip_bounds, [normal(3, 4), uniform(-1.5, -0.1, 4), uniform(0.1, 1.5, 3, 1)]),
    Entry("clip-pyfloat-bounds", f_clip_bounds, [normal(3, 4), pyfloat(-0.6, -0.4), pyfloat(0.4, 0.6)]),
    Entry("clip-upper-only", f_clip_upper, [normal(3, 4)]),
    Entry("clip-min-max-keywords", f_clip_keywords, [normal(3, 4), uniform(-1.5, -0.1, 4), pyfloat(0.4, 0.6)]),
    Entry("clip-method-max-keyword", f_clip_method_max, [normal(3, 4)]),
    Entry("where", f_where, [nonzero(3, 4), normal(3, 4)]),
    Entry("where-broadcast", f_where, [nonzero(3, 4), normal(4)]),
    Entry("where-scalar-branch", f_where_scalar, [nonzero(3, 4)]),
]


# -- operators -------------------------------------------------------------------

def op_add(x, y):
    return x + y

def op_sub(x, y):
    return x - y

def op_mul(x, y):
    return x * y

def op_div(x, y):
    return x / y

def op_pow(x, y):
    return x ** y

def op_pow_const(x):
    return x ** 2

def op_rpow_const(x):
    return 2.0 ** x

def op_matmul(x, y):
    return x @ y

def op_neg(x):
    return -x

def op_reuse(x):
    return x * x + x / 2.0 - 3.0 * x


OPERATORS = [
    Entry("op-add", op_add, [normal(3, 4), normal(4)]),
    Entry("op-add-pyfloat", op_add, [pyfloat(), normal(3)]),
    Entry("op-sub", op_sub, [normal(3, 1), normal(1, 4)]),
    Entry("op-mul", op_mul, [normal(3, 4), normal(3, 4)]),
    Entry("op-mul-0d", op_mul, [normal(), normal(3, 4)]),
    Entry("op-div", op_div, [normal(3, 4), nonzero(4)]),
    Entry("op-div-pyfloat", op_div, [normal(3, 4), pyfloat(0.5, 2.0)]),
    Entry("op-pow", op_pow, [positive(3, 4), normal(3, 4)]),
    Entry("op-pow-const", op_pow_const, [normal(3, 4)]),
    Entry("op-rpow-const", op_rpow_const, [normal(3, 4)]),
    Entry("op-matmul", op_matmul, [normal(3, 4), normal(4, 2)]),
    Entry("op-neg", op_neg, [normal(3, 4)]),
    Entry("op-reuse", op_reuse, [normal(3, 4)]),
]


# -- products --------------------------------------------------------------------

def f_dot(a, b):
    return np.dot(a, b)

def f_matmul(a, b):
    return np.matmul(a, b)

def f_inner(a, b):
    return np.inner(a, b)

def f_outer(a, b):
    return np.outer(a, b)

def f_tensordot(a, b):
    return np.tensordot(a, b)

def f_tensordot_1(a, b):
    return np.tensordot(a, b, axes=1)

def f_tensordot_0(a, b):
    return np.tensordot(a, b, 0)

def f_tensordot_pairs(a, b):
    return np.tensordot(a, b, axes=([1, 0], [0, 2]))

def f_tensordot_negative(a, b):
    return np.tensordot(a, b, axes=(-1, 0))

def f_einsum_matmul(a, b):
    return np.einsum("ij,jk->ik", a, b)

def f_einsum_implicit(a, b):
    return np.einsum("ij,jk", a, b)

def f_einsum_full(a, b):
    return np.einsum("ij,ij->", a, b)

def f_einsum_outer(a, b):
    return np.einsum("i,j->ij", a, b)

def f_einsum_batch(a, b):
    return np.einsum("...ij,...jk->...ik", a, b)

def f_einsum_three(a, b, c):
    return np.einsum("ij,jk,k->i", a, b, c)

def f_einsum_diagonal(a, b):
    return np.einsum("ii,i->i", a, b)

def f_einsum_trace(a):
    return np.einsum("ii", a)


PRODUCTS = [
    Entry("dot-2d-2d", f_dot, [normal(3, 4), normal(4, 2)]),
    Entry("dot-2d-1d", f_dot, [normal(3, 4), normal(4)]),
    Entry("dot-1d-2d", f_dot, [normal(4), normal(4, 2)]),
    Entry("dot-1d-1d", f_dot, [normal(4), normal(4)]),
    Entry("dot-3d-2d", f_dot, [normal(2, 3, 4), normal(4, 2)]),
    Entry("dot-2d-3d", f_dot, [normal(3, 4), normal(2, 4, 5)]),
    Entry("dot-0d", f_dot, [normal(), normal(3, 4)]),
    Entry("dot-pyfloat", f_dot, [normal(3, 4), pyfloat()]),
    Entry("matmul-2d-2d", f_matmul, [normal(3, 4), normal(4, 2)]),
    Entry("matmul-1d-2d", f_matmul, [normal(4), normal(4, 2)]),
    Entry("matmul-2d-1d", f_matmul, [normal(3, 4), normal(4)]),
    Entry("matmul-1d-1d", f_matmul, [normal(4), normal(4)]),
    Entry("matmul-batch", f_matmul, [normal(2, 3, 4), normal(4, 5)]),
    Entry("matmul-batch-broadcast", f_matmul, [normal(1, 3, 4), normal(2, 4, 2)]),
    Entry("matmul-1d-batch", f_matmul, [normal(4), normal(2, 4, 3)]),
    Entry("inner-1d", f_inner, [normal(4), normal(4)]),
    Entry("inner-2d-2d", f_inner, [normal(3, 4), normal(2, 4)]),
    Entry("inner-2d-1d", f_inner, [normal(3, 4), normal(4)]),
    Entry("inner-0d", f_inner, [normal(), normal(3)]),
    Entry("outer", f_outer, [normal(3), normal(4)]),
    Entry("outer-flattens", f_outer, [normal(2, 2), normal(3)]),
    Entry("tensordot-default", f_tensordot, [normal(2, 3, 4), normal(3, 4, 2)]),
    Entry("tensordot-1", f_tensordot_1, [normal(2, 3), normal(3, 4)]),
    Entry("tensordot-0", f_tensordot_0, [normal(2), normal(3)]),
    Entry("tensordot-pairs", f_tensordot_pairs, [normal(3, 2, 4), normal(2, 5, 3)]),
    Entry("tensordot-negative-axis", f_tensordot_negative, [normal(2, 3), normal(3, 4)]),
    Entry("einsum-matmul", f_einsum_matmul, [normal(3, 4), normal(4, 2)]),
    Entry("einsum-implicit", f_einsum_implicit, [normal(3, 4), normal(4, 2)]),
    Entry("einsum-full", f_einsum_full, [normal(3, 4), normal(3, 4)]),
    Entry("einsum-outer", f_einsum_outer, [normal(3), normal(4)]),
    Entry("einsum-batch-broadcast", f_einsum_batch, [normal(2, 3, 4), normal(1, 4, 2)]),
    Entry("einsum-three", f_einsum_three, [normal(3, 4), normal(4, 2), normal(2)]),
    Entry("einsum-diagonal", f_einsum_diagonal, [normal(3, 3), normal(3)]),
    Entry("einsum-trace", f_einsum_trace, [normal(3, 3)]),
]


# -- reductions ------------------------------------------------------------------

def r_sum(x):
    return np.sum(x)

def r_sum_axis0(x):
    return np.sum(x, axis=0)

def r_sum_negative(x):
    return np.sum(x, axis=-1)

def r_sum_tuple(x):
    return np.sum(x, axis=(0, 2))

def r_sum_keepdims(x):
    return np.sum(x, axis=1, keepdims=True)

def r_sum_negative_tuple_keepdims(x):
    return np.sum(x, axis=(-1, -3), keepdims=True)

def r_mean(x):
    return np.mean(x)

def r_mean_axis(x):
    return np.mean(x, axis=-2)

def r_mean_tuple_keepdims(x):
    return np.mean(x, axis=(0, 1), keepdims=True)

def r_prod(x):
    return np.prod(x)

def r_prod_axis(x):
    return np.prod(x, axis=1)

def r_prod_keepdims(x):
    return np.prod(x, axis=(0, -1), keepdims=True)

def r_var(x):
    return np.var(x)

def r_var_axis_ddof(x):
    return np.var(x, axis=0, ddof=1)

def r_var_keepdims(x):
    return np.var(x, axis=(-1,), keepdims=True)

def r_std(x):
    return np.std(x)

def r_std_axis_ddof(x):
    return np.std(x, axis=-1, ddof=1)

def r_std_keepdims(x):
    return np.std(x, axis=(0, 2), keepdims=True)

def r_max(x):
    return np.max(x)

def r_max_axis(x):
    return np.max(x, axis=1)

def r_amax_keepdims(x):
    return np.amax(x, axis=-1, keepdims=True)

def r_min(x):
    return np.min(x)

def r_min_tuple(x):
    return np.min(x, axis=(0, 2))

def r_amin_keepdims(x):
    return np.amin(x, axis=0, keepdims=True)


REDUCTIONS = [
    Entry("sum", r_sum, [normal(3, 4)]),
    Entry("sum-axis0", r_sum_axis0, [normal(3, 4)]),
    Entry("sum-negative-axis", r_sum_negative, [normal(2, 3, 4)]),
    Entry("sum-tuple-axis", r_sum_tuple, [normal(2, 3, 4)]),
    Entry("sum-keepdims", r_sum_keepdims, [normal(2, 3, 4)]),
    Entry("sum-negative-tuple-keepdims", r_sum_negative_tuple_keepdims, [normal(2, 3, 4)]),
    Entry("mean", r_mean, [normal(3, 4)]),
    Entry("mean-negative-axis", r_mean_axis, [normal(2, 3, 4)]),
    Entry("mean-tuple-keepdims", r_mean_tuple_keepdims, [normal(2, 3, 4)]),
    Entry("prod", r_prod, [nonzero(3, 4)]),
    Entry("prod-axis", r_prod_axis, [normal(3, 4)]),
    Entry("prod-tuple-keepdims", r_prod_keepdims, [nonzero(2, 3, 2)]),
    Entry("prod-with-zeros", r_prod_axis, [fixed([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, -2.0, 0.5]])]),
    Entry("var", r_var, [normal(3, 4)]),
    Entry("var-axis-ddof", r_var_axis_ddof, [normal(3, 4)]),
    Entry("var-keepdims", r_var_keepdims, [normal(2, 3, 4)]),
    Entry("std", r_std, [normal(3, 4)]),
    Entry("std-axis-ddof", r_std_axis_ddof, [normal(3, 4)]),
    Entry("std-keepdims", r_std_keepdims, [normal(2, 3, 4)]),
    Entry("max", r_max, [normal(3, 4)]),
    Entry("max-axis", r_max_axis, [normal(3, 4)]),
    Entry("amax-keepdims", r_amax_keepdims, [normal(2, 3, 4)]),
    Entry("min", r_min, [normal(3, 4)]),
    Entry("min-tuple-axis", r_min_tuple, [normal(2, 3, 4)]),
    Entry("amin-keepdims", r_amin_keepdims, [normal(2, 3, 4)]),
]


# -- shapes, joins, subscripts ---------------------------------------------------

def s_reshape(x):
    return np.reshape(x, (4, 3))

def s_reshape_minus_one(x):
    return np.reshape(x, -1)

def s_transpose(x):
    return np.transpose(x)

def s_transpose_axes(x):
    return np.transpose(x, (1, 2, 0))

def s_transpose_negative(x):
    return np.transpose(x, (-1, 0, 1))

def s_swapaxes(x):
    return np.swapaxes(x, 0, -1)

def s_moveaxis(x):
    return np.moveaxis(x, 0, -1)

def s_moveaxis_tuple(x):
    return np.moveaxis(x, (0, 1), (2, 0))

def s_expand_dims(x):
    return np.expand_dims(x, 1)

def s_expand_dims_tuple(x):
    return np.expand_dims(x, (0, -1))

def s_squeeze(x):
    return np.squeeze(x)

def s_squeeze_axis(x):
    return np.squeeze(x, axis=0)

def s_ravel(x):
    return np.ravel(x)

def s_broadcast_to(x):
    return np.broadcast_to(x, (2, 3, 4))

def s_concatenate(a, b):
    return np.concatenate([a, b])

def s_concatenate_negative(a, b, c):
    return np.concatenate([a, b, c], axis=-1)

def s_concatenate_none(a, b):
    return np.concatenate((a, b), axis=None)

def s_stack(a, b):
    return np.stack([a, b])

def s_stack_negative(a, b, c):
    return np.stack([a, b, c], axis=-1)

def s_hstack(a, b):
    return np.hstack([a, b])

def s_vstack(a, b):
    return np.vstack([a, b])

def s_array(a, b):
    return np.array([a, b])

def s_asarray(a, b, c):
    return np.asarray([a, b, c])

def s_array_of_array(x):
    return np.array(x)

def s_getitem_int(x):
    return x[1]

def s_getitem_negative(x):
    return x[-1, 2]

def s_getitem_slice(x):
    return x[1:3]

def s_getitem_column(x):
    return x[:, 0]

def s_getitem_steps(x):
    return x[::2, 1:]

def s_getitem_negative_slice(x):
    return x[-2:, ::-1]

def s_getitem_ellipsis(x):
    return x[..., 1]

def s_getitem_twice(x):
    return x[0] * x[1:2, 0]


SHAPES = [
    Entry("reshape", s_reshape, [normal(2, 6)]),
    Entry("reshape-minus-one", s_reshape_minus_one, [normal(2, 3, 2)]),
    Entry("transpose", s_transpose, [normal(2, 3, 4)]),
    Entry("transpose-axes", s_transpose_axes, [normal(2, 3, 4)]),
    Entry("transpose-negative-axes", s_transpose_negative, [normal(2, 3, 4)]),
    Entry("swapaxes", s_swapaxes, [normal(2, 3, 4)]),
    Entry("moveaxis", s_moveaxis, [normal(2, 3, 4)]),
    Entry("moveaxis-tuple", s_moveaxis_tuple, [normal(2, 3, 4)]),
    Entry("expand_dims", s_expand_dims, [normal(2, 3)]),
    Entry("expand_dims-tuple", s_expand_dims_tuple, [normal(2, 3)]),
    Entry("squeeze", s_squeeze, [normal(1, 3, 1)]),
    Entry("squeeze-axis", s_squeeze_axis, [normal(1, 3, 1)]),
    Entry("ravel", s_ravel, [normal(2, 3)]),
    Entry("broadcast_to", s_broadcast_to, [normal(3, 1)]),
    Entry("concatenate", s_concatenate, [normal(2, 3), normal(1, 3)]),
    Entry("concatenate-negative-axis", s_concatenate_negative, [normal(2, 1), normal(2, 3), normal(2, 2)]),
    Entry("concatenate-axis-none", s_concatenate_none, [normal(2, 2), normal(3)]),
    Entry("stack", s_stack, [normal(2, 3), normal(2, 3)]),
    Entry("stack-negative-axis", s_stack_negative, [normal(3), normal(3), normal(3)]),
    Entry("hstack-1d", s_hstack, [normal(2), normal(3)]),
    Entry("hstack-2d", s_hstack, [normal(2, 1), normal(2, 3)]),
    Entry("vstack-1d", s_vstack, [normal(3), normal(3)]),
    Entry("vstack-2d", s_vstack, [normal(2, 3), normal(1, 3)]),
    Entry("array-of-arrays", s_array, [normal(2, 3), normal(2, 3)]),
    Entry("array-of-pyfloats", s_array, [pyfloat(), pyfloat()]),
    Entry("asarray-of-mixed", s_asarray, [normal(), pyfloat(), normal()]),
    Entry("array-of-array", s_array_of_array, [normal(2, 3)]),
    Entry("getitem-int", s_getitem_int, [normal(3, 4)]),
    Entry("getitem-negative-ints", s_getitem_negative, [normal(3, 4)]),
    Entry("getitem-slice", s_getitem_slice, [normal(4, 2)]),
    Entry("getitem-column", s_getitem_column, [normal(3, 4)]),
    Entry("getitem-steps", s_getitem_steps, [normal(5, 4)]),
    Entry("getitem-negative-slice", s_getitem_negative_slice, [normal(4, 3)]),
    Entry("getitem-ellipsis", s_getitem_ellipsis, [normal(2, 3, 4)]),
    Entry("getitem-twice", s_getitem_twice, [normal(3, 4)]),
]


# -- array methods and attributes ------------------------------------------------

def m_sum(x):
    return x.sum(axis=0)

def m_mean(x):
    return x.mean()

def m_prod(x):
    return x.prod(axis=-1)

def m_var(x):
    return x.var(axis=1)

def m_std(x):
    return x.std()

def m_reshape_ints(x):
    return x.reshape(2, 3)

def m_reshape_tuple(x):
    return x.reshape((2, 3))

def m_T(x):
    return x.T

def m_dot(x, y):
    return x.dot(y)

def m_transpose(x):
    return x.transpose(1, 0)

def m_transpose_negative(x):
    return x.transpose(-1, 0)

def m_transpose_none(x):
    return x.transpose()

def m_max_keepdims(x):
    return x.max(axis=1, keepdims=True)

def m_min(x):
    return x.min(axis=0)

def m_clip(x, a, b):
    return x.clip(a, b)

def m_ravel(x):
    return x.ravel()

def m_flatten(x):
    return x.flatten()

def m_squeeze(x):
    return x.squeeze()

def m_swapaxes(x):
    return x.swapaxes(0, 1)

def m_copy(x):
    return x.copy() * 2.0

def m_astype(x):
    return x.astype(np.float64)


METHODS = [
    Entry("method-sum-axis", m_sum, [normal(3, 4)]),
    Entry("method-mean", m_mean, [normal(3, 4)]),
    Entry("method-prod", m_prod, [nonzero(3, 4)]),
    Entry("method-var", m_var, [normal(3, 4)]),
    Entry("method-std", m_std, [normal(3, 4)]),
    Entry("method-reshape-ints", m_reshape_ints, [normal(6)]),
    Entry("method-reshape-tuple", m_reshape_tuple, [normal(3, 2)]),
    Entry("attribute-T", m_T, [normal(2, 3)]),
    Entry("method-dot", m_dot, [normal(2, 3), normal(3, 4)]),
    Entry("method-transpose", m_transpose, [normal(2, 3)]),
    Entry("method-transpose-negative", m_transpose_negative, [normal(2, 3)]),
    Entry("method-transpose-none", m_transpose_none, [normal(2, 3, 4)]),
    Entry("method-max-keepdims", m_max_keepdims, [normal(3, 4)]),
    Entry("method-min", m_min, [normal(3, 4)]),
    Entry("method-clip", m_clip, [normal(3, 4), pyfloat(-0.6, -0.4), pyfloat(0.4, 0.6)]),
    Entry("method-ravel", m_ravel, [normal(2, 3)]),
    Entry("method-flatten", m_flatten, [normal(2, 3)]),
    Entry("method-squeeze", m_squeeze, [normal(3, 1)]),
    Entry("method-swapaxes", m_swapaxes, [normal(2, 3, 4)]),
    Entry("method-copy", m_copy, [normal(2, 3)]),
    Entry("method-astype", m_astype, [normal(2, 3)]),
]


CATALOG = ELEMENTWISE + OPERATORS + PRODUCTS + REDUCTIONS + SHAPES + METHODS


def _ids_are_unique():
    ids = [e.id for e in CATALOG]
    return len(ids) == len(set(ids))


assert _ids_are_unique(), "catalog ids must be unique"


def _seed(entry):
    """A seed fixed per entry (independent of the table's order)."""
    return sum(entry.id.encode()) * 7919 % 2**32


# -- the checks --------------------------------------------------------------------

@pytest.mark.parametrize("entry", CATALOG, ids=[e.id for e in CATALOG])
def test_check_grads(entry):
    args, wrt = entry.build(_seed(entry))
    assert wrt, f"{entry.id} has no float argument to differentiate"
    for i in wrt:
        st.check_grads(entry.fn, args, wrt=(i,), seed=_seed(entry) + i)
    if len(wrt) > 1:
        st.check_grads(entry.fn, args, wrt=wrt, seed=_seed(entry) + 100)


STEP = 1e-6


def _finite_difference_jacobian(fn, args, i):
    """d fn / d args[i] as an array of shape out.shape + args[i].shape (central differences)."""
    x = np.asarray(args[i], dtype=np.float64)
    out = np.asarray(fn(*args))
    columns = []
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = STEP
        step = step.reshape(x.shape)

        def moved(sign):
            shifted = list(args)
            shifted[i] = float(x + sign * step) if isinstance(args[i], float) else x + sign * step
            return np.asarray(fn(*shifted), dtype=np.float64)

        columns.append((moved(+1) - moved(-1)) / (2 * STEP))
    return np.stack(columns, axis=-1).reshape(out.shape + x.shape)


@pytest.mark.parametrize("entry", CATALOG, ids=[e.id for e in CATALOG])
def test_vjp_jacobian(entry):
    args, wrt = entry.build(_seed(entry))
    out, pullback = st.vjp(entry.fn, *args, wrt=wrt)
    np.testing.assert_allclose(out, entry.fn(*args), rtol=0, atol=0)
    out_shape = np.shape(out)
    rows = {i: [] for i in wrt}
    for k in range(int(np.prod(out_shape))):
        v = np.zeros(int(np.prod(out_shape)))
        v[k] = 1.0
        gradients = pullback(v.reshape(out_shape))
        assert len(gradients) == len(wrt)
        for i, g in zip(wrt, gradients):
            assert g is not None, f"argument {i} got no gradient"
            assert np.shape(g) == np.shape(args[i])
            assert np.asarray(g).dtype == np.float64
            if isinstance(args[i], float):
                assert isinstance(g, np.float64)
            rows[i].append(np.asarray(g))
    for i in wrt:
        analytic = np.stack(rows[i]).reshape(out_shape + np.shape(args[i]))
        numeric = _finite_difference_jacobian(entry.fn, args, i)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"Jacobian with respect to argument {i}")


def _outputs_float32(entry):
    """Whether the entry's function, given float32 arguments, returns float32 (the backward
    pass of one that returns float64 has no float32 to keep: not generated)."""
    args, _ = entry.build(_seed(entry))
    with np.errstate(all="ignore"):
        return np.result_type(entry.fn(*(_to_float32(a) for a in args))) == np.float32


def _to_float32(value):
    return value.astype(np.float32) if isinstance(value, np.ndarray) else value


FLOAT32 = [e for e in CATALOG if e.float32]


@pytest.mark.parametrize("entry", FLOAT32, ids=[e.id for e in FLOAT32])
def test_float32(entry):
    args, wrt = entry.build(_seed(entry))
    args32 = tuple(_to_float32(a) for a in args)
    gradient = st.grad(entry.fn, wrt=wrt)
    expected = gradient(*args)
    got = gradient(*args32)
    for i, g, g64 in zip(wrt, got, expected):
        if isinstance(args32[i], np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == np.float32, (i, type(g), np.asarray(g).dtype)
            assert g.shape == args32[i].shape
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), g64, rtol=1e-4,
                                   atol=1e-4 * max(1.0, float(np.max(np.abs(g64)))),
                                   err_msg=f"float32 gradient of argument {i}")


FLOAT32_OUTPUTS = [e for e in FLOAT32 if _outputs_float32(e)]


@pytest.mark.parametrize("entry", FLOAT32_OUTPUTS, ids=[e.id for e in FLOAT32_OUTPUTS])
def test_float32_backward_pass_stays_float32(entry):
    """The generated backward pass itself computes in float32 when the output is float32.

    ``st.grad`` casts every gradient to its input's dtype, which would hide a
    detour through float64 (a NumPy float64 scalar constant in a rule, say),
    so this calls the compiled pair directly.
    """
    args, wrt = entry.build(_seed(entry))
    args32 = tuple(_to_float32(a) for a in args)
    names = tuple(list(inspect.signature(entry.fn).parameters)[i] for i in wrt)
    fwd, bwd, _ = cache.reverse_pair(entry.fn, names)
    out, residuals = fwd(*args32)
    assert np.result_type(out) == np.float32
    raw = bwd(residuals, runtime.seed_cotangent(out, None))
    for i, g in zip(wrt, raw):
        if isinstance(args32[i], np.ndarray):
            assert np.result_type(g) == np.float32, f"argument {i}: {np.result_type(g)}"


# -- exact values at conventional points -------------------------------------------

def x_max_all(x):
    return np.max(x)

def x_max_axis_keepdims(x):
    return np.max(x, axis=1, keepdims=True)

def x_min_axis(x):
    return np.min(x, axis=0)

def x_amax_tuple(x):
    return np.amax(x, axis=(0, 1))

def x_method_max(x):
    return x.max(axis=1, keepdims=True)

def x_maximum(x, y):
    return np.maximum(x, y)

def x_minimum(x, y):
    return np.minimum(x, y)

def x_maximum_scalar(x):
    return np.maximum(x, 0.0)

def x_power_zero_exponent(x):
    return x ** 0.0 + x

def x_std_rows(x):
    return np.std(x, axis=1)


EXACT = [
    # (id, fn, args, wrt, expected gradients of sum(fn(*args)))
    ("abs-at-zero", f_abs, ([0.0, -1.5, 2.0, 0.0],), (0,), ([0.0, -1.0, 1.0, 0.0],)),
    ("absolute-at-zero", f_absolute, ([[0.0], [-3.0]],), (0,), ([[0.0], [-1.0]],)),
    ("sign-is-constant", f_sign_times, ([-2.0, 0.0, 3.0],), (0,), ([-1.0, 0.0, 1.0],)),
    ("max-ties", x_max_all, ([1.0, 3.0, 3.0, -1.0],), (0,), ([0.0, 0.5, 0.5, 0.0],)),
    ("max-ties-three", x_max_all, ([[2.0, 2.0], [2.0, 1.0]],), (0,), ([[1 / 3, 1 / 3], [1 / 3, 0.0]],)),
    ("max-axis-keepdims-ties", x_max_axis_keepdims, ([[1.0, 4.0, 4.0, 4.0], [5.0, 0.0, 5.0, 1.0]],), (0,),
     ([[0.0, 1 / 3, 1 / 3, 1 / 3], [0.5, 0.0, 0.5, 0.0]],)),
    ("method-max-ties", x_method_max, ([[7.0, 7.0], [1.0, 2.0]],), (0,), ([[0.5, 0.5], [0.0, 1.0]],)),
    ("min-axis-ties", x_min_axis, ([[1.0, 2.0], [1.0, 3.0]],), (0,), ([[0.5, 1.0], [0.5, 0.0]],)),
    ("amax-tuple-ties", x_amax_tuple, ([[[1.0, 2.0], [2.0, 0.0]], [[0.0, 2.0], [1.0, 0.0]]],), (0,),
     ([[[0.0, 0.5], [1.0, 0.0]], [[0.0, 0.5], [0.0, 0.0]]],)),
    ("maximum-ties", x_maximum, ([1.0, 2.0, 3.0], [1.0, 5.0, 3.0]), (0, 1),
     ([0.5, 0.0, 0.5], [0.5, 1.0, 0.5])),
    ("minimum-ties", x_minimum, ([1.0, 2.0, 3.0], [1.0, 5.0, 0.0]), (0, 1),
     ([0.5, 1.0, 0.0], [0.5, 0.0, 1.0])),
    ("maximum-ties-broadcast", x_maximum, ([[0.0, 1.0], [2.0, 1.0]], [1.0]), (0, 1),
     ([[0.0, 0.5], [1.0, 0.5]], [2.0])),
    ("maximum-scalar-tie", x_maximum_scalar, ([-1.0, 0.0, 2.0],), (0,), ([0.0, 0.5, 1.0],)),
    ("prod-one-zero", r_prod, ([2.0, 0.0, 3.0],), (0,), ([0.0, 6.0, 0.0],)),
    ("prod-two-zeros", r_prod, ([2.0, 0.0, 0.0],), (0,), ([0.0, 0.0, 0.0],)),
    ("prod-axis-zeros", r_prod_axis, ([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, -2.0, 4.0]],), (0,),
     ([[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [-8.0, 4.0, -2.0]],)),
    ("power-base-zero", f_power, ([0.0, 1.0, 2.0], [2.0, 1.5, 0.5]), (0, 1),
     ([0.0, 1.5, 0.5 * 2.0 ** -0.5], [0.0, 0.0, 2.0 ** 0.5 * np.log(2.0)])),
    ("power-zero-exponent", x_power_zero_exponent, ([0.0, 3.0],), (0,), ([1.0, 1.0],)),
    ("power-int-exponent-at-zero", f_power_const, ([0.0, -1.0],), (0,), ([0.0, 3.0],)),
    ("std-constant-row", x_std_rows, ([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]],), (0,),
     ([[0.0, 0.0, 0.0], [-1 / (3 * (2 / 3) ** 0.5), 0.0, 1 / (3 * (2 / 3) ** 0.5)]],)),
]


@pytest.mark.parametrize("id, fn, args, wrt, expected", EXACT, ids=[e[0] for e in EXACT])
def test_exact_gradient(id, fn, args, wrt, expected):
    args = tuple(np.array(a, dtype=np.float64) for a in args)
    got = st.grad(fn, wrt=wrt)(*args)          # wrt is a tuple, so got is one too
    assert len(got) == len(wrt)
    for i, g, e in zip(wrt, got, expected):
        # atol=0: every expected zero must be exactly zero
        np.testing.assert_allclose(g, np.array(e, dtype=np.float64), rtol=1e-14, atol=0,
                                   err_msg=f"argument {i}")

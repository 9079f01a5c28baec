"""Every JVP rule, checked directly as a Python function.

A JVP template is plain Python, so the tests call it (the forward-mode
generator inlines the same expression); a ``linear`` rule is the primal
called on the tangent. Contributions of a rule that returns one per argument
are evaluated one by one and only for the arguments that have a tangent, as
the generator does. The table ``CASES`` names each primal with arguments
drawn from the domains of tests/rule_domains.py. For every case:

  * ``test_jvp_matches_finite_differences``: the tangent along a random
    direction of each differentiated argument alone, and of all together,
    against central differences;
  * ``test_jvp_agrees_with_vjp``: ``<jvp(v), u> == <v, vjp(u)>`` with the
    VJP rule also called directly (and summed back over broadcast axes for
    elementwise rules), so the two modes share one derivative;
  * ``test_float32``: float32 arguments and tangents give a float32 tangent
    close to the float64 one.

The coverage tests fail when a primal gets a VJP without a JVP, a JVP whose
primal signature differs from its VJP's, or no row in ``CASES``. ``EXACT``
checks the conventions at ties and kinks (shared equally, as in reverse
mode) against exact values. Randomness comes from seeded generators only.
"""

import ast
import builtins
import copy
import inspect
import math

import gast
import numpy as np
import pytest

from srctrans import runtime as rt
from rule_domains import (Arg, Matrices, cnormal, factored, fixed, matrices, nonzero, normal,
                          positive, positive_definite, pyfloat, simplex, uniform)
from srctrans.rules import REGISTRY

VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD
VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL


class Mask(Arg):
    """A random boolean array of ``shape`` (a condition, never differentiated)."""

    def build(self, rng):
        return rng.random(self.shape) < 0.5


def mask(*shape):
    return Mask(shape)


class Case:
    """``primal(*args, **kwargs)``, differentiated with respect to its float arguments.

    ``args`` and ``kwargs`` hold builders (:class:`Arg`), lists of builders
    (a list argument such as ``np.concatenate``'s), or values used as they
    are (an axis, a shape, ``None``). ``float32`` False leaves the case out of
    the float32 comparison.
    """

    def __init__(self, id, primal, args, kwargs=None, float32=True):
        self.id = id
        self.primal = primal
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.float32 = float32

    def build(self, seed):
        rng = np.random.default_rng(seed)
        args = tuple(_build(a, rng) for a in self.args)
        kwargs = {k: _build(v, rng) for k, v in self.kwargs.items()}
        return args, kwargs


def _build(spec, rng):
    if isinstance(spec, Arg):
        return spec.build(rng)
    if isinstance(spec, list) and any(isinstance(s, (Arg, list)) for s in spec):
        return [_build(s, rng) for s in spec]          # nested lists too (np.block's)
    return spec


# -- the table -------------------------------------------------------------------

ELEMENTWISE = [
    Case("add-broadcast", np.add, [normal(3, 4), normal(4)]),
    Case("add-outer", np.add, [normal(3, 1), normal(1, 4)]),
    Case("add-pyfloat", np.add, [pyfloat(), normal(2, 3)]),
    Case("add-pyfloats", np.add, [pyfloat(), pyfloat()]),
    Case("subtract", np.subtract, [normal(3, 1), normal(1, 4)]),
    Case("multiply", np.multiply, [normal(2, 3, 4), normal(3, 1)]),
    Case("multiply-pyfloat", np.multiply, [normal(2, 3), pyfloat()]),
    Case("divide", np.divide, [normal(3, 1), nonzero(4)]),
    Case("divide-pyfloat-numerator", np.divide, [pyfloat(), nonzero(2, 3)]),
    Case("power", np.power, [positive(3, 1), normal(4)]),
    Case("power-pyfloat-base", np.power, [pyfloat(0.5, 2.0), normal(2, 3)]),
    Case("power-pyfloat-exponent", np.power, [positive(2, 3), pyfloat()]),
    Case("power-int-exponent", np.power, [normal(2, 3), fixed(3)]),
    Case("remainder", np.remainder, [uniform(0.5, 5.0, 3, 4), uniform(0.7, 2.0, 4)]),
    Case("negative", np.negative, [normal(2, 3)]),
    Case("positive", np.positive, [normal(2, 3)]),
    Case("square", np.square, [normal(2, 3)]),
    Case("sqrt", np.sqrt, [positive(2, 3)]),
    Case("reciprocal", np.reciprocal, [nonzero(2, 3)]),
    Case("absolute", np.absolute, [nonzero(2, 3)]),
    Case("builtin-abs", builtins.abs, [nonzero(2, 3)]),
    Case("builtin-abs-pyfloat", builtins.abs, [pyfloat(0.5, 2.0)]),
    Case("exp", np.exp, [normal(2, 3)]),
    Case("expm1", np.expm1, [normal(2, 3)]),
    Case("exp2", np.exp2, [normal(2, 3)]),
    Case("log", np.log, [positive(2, 3)]),
    Case("log1p", np.log1p, [uniform(-0.5, 2.0, 2, 3)]),
    Case("log2", np.log2, [positive(2, 3)]),
    Case("log10", np.log10, [positive(2, 3)]),
    Case("logaddexp", np.logaddexp, [normal(2, 1), normal(3)]),
    Case("sin", np.sin, [normal(2, 3)]),
    Case("cos", np.cos, [normal(2, 3)]),
    Case("tan", np.tan, [uniform(-1.2, 1.2, 2, 3)]),
    Case("arcsin", np.arcsin, [uniform(-0.9, 0.9, 2, 3)]),
    Case("arccos", np.arccos, [uniform(-0.9, 0.9, 2, 3)]),
    Case("arctan", np.arctan, [normal(2, 3)]),
    Case("arctan2", np.arctan2, [nonzero(3, 1), nonzero(4)]),
    Case("sinh", np.sinh, [normal(2, 3)]),
    Case("cosh", np.cosh, [normal(2, 3)]),
    Case("tanh", np.tanh, [normal(2, 3)]),
    Case("arcsinh", np.arcsinh, [normal(2, 3)]),
    Case("arccosh", np.arccosh, [uniform(1.5, 3.0, 2, 3)]),
    Case("arctanh", np.arctanh, [uniform(-0.9, 0.9, 2, 3)]),
    Case("maximum", np.maximum, [normal(3, 1), normal(4)]),
    Case("maximum-pyfloat", np.maximum, [normal(3, 4), pyfloat(-0.3, 0.3)]),
    Case("minimum", np.minimum, [normal(3, 1), normal(1, 4)]),
    Case("clip-pyfloat-bounds", np.clip, [normal(3, 4), pyfloat(-0.6, -0.4), pyfloat(0.4, 0.6)]),
    Case("clip-array-bounds", np.clip, [normal(3, 4), uniform(-1.5, -0.1, 4), uniform(0.1, 1.5, 3, 1)]),
    Case("clip-upper-only", np.clip, [normal(3, 4), None, pyfloat(0.2, 0.4)]),
    Case("clip-keywords", np.clip, [normal(3, 4)], {"min": uniform(-1.5, -0.1, 4), "max": pyfloat(0.4, 0.6)}),
    Case("where", np.where, [mask(3, 4), normal(3, 4), normal(4)]),
    Case("where-pyfloat", np.where, [mask(3, 4), normal(3, 4), 0.0]),
    Case("zero-guard", rt.zero_guard, [normal(3, 1), normal(3, 4)]),
    Case("zero-guard-sum", rt.zero_guard_sum, [normal(3, 1), normal(3, 4)]),
    Case("hypot", np.hypot, [nonzero(3, 1), nonzero(4)]),
    Case("fmax", np.fmax, [normal(3, 1), normal(4)]),
    Case("fmax-nans", np.fmax, [fixed([1.0, np.nan, -0.5, np.nan]), fixed([0.3, 2.0, np.nan, 1.5])]),
    Case("fmin", np.fmin, [normal(3, 1), normal(4)]),
    Case("fmin-nans", np.fmin, [fixed([1.0, np.nan, -0.5]), fixed([0.3, 2.0, np.nan])]),
    Case("sinc", np.sinc, [normal(3, 4)]),
    Case("sinc-at-zero", np.sinc, [fixed([0.0, 0.5, -1.5])]),
    Case("logaddexp2", np.logaddexp2, [normal(2, 1), normal(3)]),
    Case("cbrt", np.cbrt, [nonzero(2, 3)]),
    Case("fabs", np.fabs, [nonzero(2, 3)]),
    Case("deg2rad", np.deg2rad, [normal(2, 3)]),
    Case("radians", np.radians, [normal(2, 3)]),
    Case("rad2deg", np.rad2deg, [normal(2, 3)]),
    Case("degrees", np.degrees, [normal(2, 3)]),
    Case("float-power", np.float_power, [positive(3, 1), normal(4)], float32=False),
    Case("fmod", np.fmod, [uniform(0.1, 0.9, 3, 4), uniform(1.1, 1.9, 4)]),
    Case("fmod-negative", np.fmod, [uniform(-3.9, -3.1, 3, 4), uniform(1.1, 1.4, 4)]),
    Case("nan-to-num", np.nan_to_num, [normal(2, 3)]),
    # math's functions of Python floats share NumPy's rules
    *[Case(f"math-{f.__name__}", f, [pyfloat(low, high)], float32=False) for f, low, high in [
        (math.exp, -2.0, 2.0), (math.expm1, -2.0, 2.0), (math.log, 0.5, 2.0),
        (math.log1p, 0.5, 2.0), (math.log2, 0.5, 2.0), (math.log10, 0.5, 2.0),
        (math.sqrt, 0.5, 2.0), (math.sin, -2.0, 2.0), (math.cos, -2.0, 2.0), (math.tan, -1.0, 1.0),
        (math.asin, -0.9, 0.9), (math.acos, -0.9, 0.9), (math.atan, -2.0, 2.0),
        (math.sinh, -2.0, 2.0), (math.cosh, -2.0, 2.0), (math.tanh, -2.0, 2.0),
        (math.asinh, -2.0, 2.0), (math.acosh, 1.5, 3.0), (math.atanh, -0.9, 0.9),
        (math.fabs, 0.5, 2.0), (math.erf, -2.0, 2.0), (math.erfc, -2.0, 2.0),
        (math.lgamma, 0.3, 4.0), (math.gamma, 0.3, 4.0)]],
    Case("math-lgamma-negative", math.lgamma, [pyfloat(-2.8, -2.2)], float32=False),
    Case("math-atan2", math.atan2, [pyfloat(0.5, 2.0), pyfloat(-2.0, -0.5)], float32=False),
    Case("math-hypot", math.hypot, [pyfloat(0.5, 2.0), pyfloat(-2.0, -0.5)], float32=False),
    Case("math-pow", math.pow, [pyfloat(0.5, 2.0), pyfloat(-1.0, 2.0)], float32=False),
    Case("nan-to-num-with-nans", np.nan_to_num, [fixed([1.0, np.nan, np.inf, -2.0])]),
]

REDUCTIONS = [
    Case("sum", np.sum, [normal(3, 4)]),
    Case("sum-tuple-axis", np.sum, [normal(2, 3, 4)], {"axis": (0, 2)}),
    Case("sum-keepdims", np.sum, [normal(2, 3, 4)], {"axis": 1, "keepdims": True}),
    Case("mean", np.mean, [normal(2, 3, 4)], {"axis": -2}),
    Case("mean-keepdims", np.mean, [normal(2, 3, 4)], {"axis": (0, 1), "keepdims": True}),
    Case("prod", np.prod, [nonzero(3, 4)]),
    Case("prod-axis", np.prod, [nonzero(3, 4)], {"axis": 1}),
    Case("prod-keepdims", np.prod, [nonzero(2, 3, 2)], {"axis": (0, -1), "keepdims": True}),
    Case("prod-with-zeros", np.prod, [fixed([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, -2.0, 0.5]])],
         {"axis": 1}),
    Case("var", np.var, [normal(3, 4)]),
    Case("var-axis-ddof", np.var, [normal(3, 4)], {"axis": 0, "ddof": 1}),
    Case("var-keepdims", np.var, [normal(2, 3, 4)], {"axis": (-1,), "keepdims": True}),
    Case("std", np.std, [normal(3, 4)]),
    Case("std-axis-ddof", np.std, [normal(3, 4)], {"axis": -1, "ddof": 1}),
    Case("std-keepdims", np.std, [normal(2, 3, 4)], {"axis": (0, 2), "keepdims": True}),
    Case("max", np.max, [normal(3, 4)]),
    Case("max-axis", np.max, [normal(3, 4)], {"axis": 1}),
    Case("amax-keepdims", np.amax, [normal(2, 3, 4)], {"axis": -1, "keepdims": True}),
    Case("min-tuple-axis", np.min, [normal(2, 3, 4)], {"axis": (0, 2)}),
    Case("amin-keepdims", np.amin, [normal(2, 3, 4)], {"axis": 0, "keepdims": True}),
    Case("cumsum", np.cumsum, [normal(3, 4)]),
    Case("cumsum-axis", np.cumsum, [normal(2, 3, 4)], {"axis": -2}),
    Case("diff", np.diff, [normal(3, 5)]),
    Case("diff-n-axis", np.diff, [normal(4, 3, 2)], {"n": 2, "axis": 0}),
    Case("trace", np.trace, [normal(3, 4)]),
    Case("trace-offset-axes", np.trace, [normal(2, 3, 4)], {"offset": -1, "axis1": 2, "axis2": 1}),
    Case("nanmax", np.nanmax, [normal(3, 4)], {"axis": 1}),
    Case("nanmin-keepdims", np.nanmin, [normal(2, 3, 4)], {"axis": (0, 2), "keepdims": True}),
    Case("nanmax-with-nans", np.nanmax, [fixed([[1.0, np.nan, 3.0], [np.nan, -2.0, 0.5]])],
         {"axis": 1}),
    Case("ptp", np.ptp, [normal(3, 4)]),
    Case("ptp-axis-keepdims", np.ptp, [normal(2, 3, 4)], {"axis": 1, "keepdims": True}),
    Case("nansum", np.nansum, [normal(3, 4)], {"axis": 0}),
    Case("nansum-with-nans", np.nansum, [fixed([[1.0, np.nan, 3.0], [np.nan, -2.0, 0.5]])]),
    Case("nanprod", np.nanprod, [nonzero(3, 4)], {"axis": 1}),
    Case("nanprod-with-nans", np.nanprod, [fixed([[1.5, np.nan, 3.0], [np.nan, -2.0, 0.5]])]),
    Case("average", np.average, [normal(3, 4)]),
    Case("average-weights", np.average, [normal(3, 4)], {"weights": positive(3, 4)}),
    Case("average-weights-axis", np.average, [normal(2, 3, 4)], {"axis": 1, "weights": positive(3)}),
    Case("cumprod", np.cumprod, [nonzero(5)]),
    Case("cumprod-axis", np.cumprod, [normal(2, 3, 4)], {"axis": 1}),
    Case("cumprod-zeros", np.cumprod, [fixed([[1.5, 0.0, -2.0, 0.5], [0.0, 0.0, 3.0, 1.0]])], {"axis": 1}),
    Case("nanvar", np.nanvar, [normal(3, 4)], {"axis": 1}),
    Case("nanvar-with-nans", np.nanvar, [fixed([[1.0, np.nan, 3.0, 0.5], [np.nan, -2.0, 0.5, 1.5]])],
         {"axis": 1, "ddof": 1}),
    Case("nanstd", np.nanstd, [normal(2, 3, 4)], {"axis": (0, 2), "keepdims": True}),
    Case("nanstd-with-nans", np.nanstd, [fixed([[1.0, np.nan, 3.0], [np.nan, -2.0, 0.5]])]),
    Case("average-axis-keepdims", np.average, [normal(2, 3, 4)], {"axis": 1, "keepdims": True}),
    Case("nanmean", np.nanmean, [normal(2, 3, 4)], {"axis": (0, 2), "keepdims": True}),
    Case("nanmean-with-nans", np.nanmean, [fixed([[1.0, np.nan, 3.0], [np.nan, -2.0, 0.5]])],
         {"axis": 1}),
]

PRODUCTS = [
    Case("matmul", np.matmul, [normal(3, 4), normal(4, 2)]),
    Case("matmul-1d-batch", np.matmul, [normal(4), normal(2, 4, 3)]),
    Case("matmul-batch-broadcast", np.matmul, [normal(1, 3, 4), normal(2, 4, 2)]),
    Case("dot", np.dot, [normal(3, 4), normal(4)]),
    Case("dot-3d-2d", np.dot, [normal(2, 3, 4), normal(4, 2)]),
    Case("dot-0d", np.dot, [normal(), normal(3)]),
    Case("inner", np.inner, [normal(3, 4), normal(2, 4)]),
    Case("outer", np.outer, [normal(2, 2), normal(3)]),
    Case("tensordot", np.tensordot, [normal(2, 3, 4), normal(3, 4, 2)]),
    Case("tensordot-pairs", np.tensordot, [normal(3, 2, 4), normal(2, 5, 3), ([1, 0], [0, 2])]),
    Case("einsum-matmul", np.einsum, ["ij,jk->ik", normal(3, 4), normal(4, 2)]),
    Case("einsum-diagonal", np.einsum, ["ii,i->i", normal(3, 3), normal(3)]),
    Case("einsum-batch-broadcast", np.einsum, ["...ij,...jk->...ik", normal(2, 3, 4), normal(1, 4, 2)]),
    Case("einsum-three", np.einsum, ["ij,jk,k->i", normal(3, 4), normal(4, 2), normal(2)]),
    Case("cross", np.cross, [normal(2, 3), normal(3)]),
    Case("cross-axes", np.cross, [normal(3, 2), normal(2, 3)], {"axisa": 0, "axisb": 1, "axisc": 0}),
    Case("cross-axis", np.cross, [normal(3, 2), normal(3, 2)], {"axis": 0}),
    Case("kron", np.kron, [normal(2, 3), normal(3, 2)]),
    Case("kron-mixed-ndim", np.kron, [normal(3), normal(2, 2)]),
    Case("polyval", np.polyval, [normal(4), normal(3, 2)]),
    Case("polyval-scalar", np.polyval, [normal(3), pyfloat()]),
    Case("convolve", np.convolve, [normal(5), normal(3)]),
    Case("convolve-same", np.convolve, [normal(5), normal(4)], {"mode": "same"}),
    Case("convolve-valid-swapped", np.convolve, [normal(3), normal(6)], {"mode": "valid"}),
    Case("correlate", np.correlate, [normal(6), normal(3)]),
    Case("correlate-full", np.correlate, [normal(4), normal(3)], {"mode": "full"}),
    Case("correlate-same", np.correlate, [normal(5), normal(4)], {"mode": "same"}),
    Case("tensorinv", np.linalg.tensorinv, [Matrices((6, 6)).reshaped((6, 2, 3))], {"ind": 1}),
    Case("tensorsolve", np.linalg.tensorsolve, [Matrices((6, 6)).reshaped((2, 3, 6)), normal(2, 3)]),
    Case("inv", np.linalg.inv, [matrices(3, 3)]),
    Case("inv-batch", np.linalg.inv, [matrices(2, 3, 3)]),
    Case("det", np.linalg.det, [matrices(3, 3)]),
    Case("det-batch", np.linalg.det, [matrices(2, 2, 2)]),
    Case("solve", np.linalg.solve, [matrices(3, 3), normal(3)]),
    Case("solve-matrix", np.linalg.solve, [matrices(3, 3), normal(3, 2)]),
    Case("solve-batch-vector", np.linalg.solve, [matrices(2, 3, 3), normal(3)]),
    Case("solve-batch-broadcast", np.linalg.solve, [matrices(1, 3, 3), normal(2, 3, 2)]),
    Case("slogdet", np.linalg.slogdet, [matrices(3, 3)]),
    Case("slogdet-batch", np.linalg.slogdet, [matrices(2, 3, 3)]),
    Case("cholesky", np.linalg.cholesky, [positive_definite(3, 3)]),
    Case("cholesky-batch", np.linalg.cholesky, [positive_definite(2, 3, 3)]),
    Case("eigh", np.linalg.eigh, [positive_definite(3, 3)]),
    Case("eigh-upper-batch", np.linalg.eigh, [positive_definite(2, 3, 3)], {"UPLO": "U"}),
    Case("eigh-nonsymmetric-input", np.linalg.eigh, [matrices(3, 3)]),      # reads one triangle
    Case("eigvalsh", np.linalg.eigvalsh, [positive_definite(3, 3)]),
    # general matrices: complex eigenvalues and eigenvectors (and real ones where all are real)
    Case("vdot", np.vdot, [normal(2, 3), normal(6)]),
    Case("vdot-complex", np.vdot, [cnormal(2, 3), cnormal(3, 2)]),
    Case("vdot-mixed", np.vdot, [normal(4), cnormal(4)]),
    Case("eig", np.linalg.eig, [normal(4, 4)]),
    Case("eig-batch", np.linalg.eig, [normal(2, 3, 3)]),
    Case("eig-real-spectrum", np.linalg.eig, [positive_definite(3, 3)]),
    Case("eig-complex", np.linalg.eig, [cnormal(3, 3)]),
    Case("eigvals", np.linalg.eigvals, [normal(4, 4)]),
    Case("eigvals-batch", np.linalg.eigvals, [normal(2, 3, 3)]),
    Case("eigvalsh-upper-batch", np.linalg.eigvalsh, [positive_definite(2, 3, 3)], {"UPLO": "U"}),
    Case("svd-square", np.linalg.svd, [matrices(3, 3)]),
    Case("svd-tall-reduced", np.linalg.svd, [normal(4, 3)], {"full_matrices": False}),
    Case("svd-wide-reduced-batch", np.linalg.svd, [normal(2, 2, 4)], {"full_matrices": False}),
    Case("svd-values", np.linalg.svd, [normal(4, 3)], {"compute_uv": False}),
    Case("qr", np.linalg.qr, [normal(4, 3)]),
    Case("qr-square-batch", np.linalg.qr, [matrices(2, 3, 3)]),
    Case("qr-r", np.linalg.qr, [normal(4, 3)], {"mode": "r"}),
    Case("pinv-tall", np.linalg.pinv, [normal(4, 3)]),
    Case("pinv-wide", np.linalg.pinv, [normal(2, 4)]),
    Case("lstsq-vector", np.linalg.lstsq, [normal(5, 3), normal(5)], {"rcond": None}),
    Case("lstsq-matrix", np.linalg.lstsq, [normal(5, 3), normal(5, 2)], {"rcond": None}),
    Case("matrix_power", np.linalg.matrix_power, [matrices(3, 3), 3]),
    Case("matrix_power-inverse", np.linalg.matrix_power, [matrices(3, 3), -2]),
    Case("matrix_power-batch", np.linalg.matrix_power, [matrices(2, 2, 2), 2]),
    Case("multi_dot", np.linalg.multi_dot, [[normal(2, 3), normal(3, 4), normal(4, 2)]]),
    Case("multi_dot-vectors", np.linalg.multi_dot, [[normal(3), normal(3, 4), normal(4)]]),
    Case("norm", np.linalg.norm, [normal(4)]),
    Case("norm-ord-1", np.linalg.norm, [nonzero(4)], {"ord": 1}),
    Case("norm-ord-3", np.linalg.norm, [nonzero(4)], {"ord": 3}),
    Case("norm-ord-half", np.linalg.norm, [nonzero(4)], {"ord": 0.5}),
    Case("norm-ord-inf", np.linalg.norm, [normal(2, 4)], {"ord": np.inf, "axis": 1}),
    Case("norm-ord-minus-inf", np.linalg.norm, [normal(4)], {"ord": -np.inf}),
    Case("norm-ord-0", np.linalg.norm, [normal(4)], {"ord": 0}),
    Case("norm-matrix-1", np.linalg.norm, [normal(3, 4)], {"ord": 1}),
    Case("norm-matrix-minus-1", np.linalg.norm, [normal(3, 4)], {"ord": -1}),
    Case("norm-matrix-inf-keepdims", np.linalg.norm, [normal(2, 3, 4)],
         {"ord": np.inf, "axis": (1, 2), "keepdims": True}),
    Case("norm-matrix-2", np.linalg.norm, [normal(3, 4)], {"ord": 2}),
    Case("norm-matrix-minus-2", np.linalg.norm, [normal(4, 3)], {"ord": -2}),
    Case("norm-nuclear", np.linalg.norm, [normal(2, 3, 4)], {"ord": "nuc", "axis": (2, 1)}),
    Case("norm-fro", np.linalg.norm, [normal(3, 4)], {"ord": "fro"}),
    Case("norm-frobenius", np.linalg.norm, [normal(3, 4)]),
    Case("norm-axis", np.linalg.norm, [normal(3, 4)], {"axis": 1}),
    Case("norm-axes-keepdims", np.linalg.norm, [normal(2, 3, 4)], {"axis": (0, 2), "keepdims": True}),
]

SHAPES = [
    Case("reshape", np.reshape, [normal(2, 6), (4, 3)]),
    Case("copy", np.copy, [normal(2, 3)]),
    Case("linspace", np.linspace, [pyfloat(), pyfloat(), 5]),
    Case("linspace-arrays", np.linspace, [normal(3), normal(2, 1), 4], {"endpoint": False, "axis": 1}),
    Case("linspace-one", np.linspace, [normal(2), pyfloat(), 1]),
    Case("full", np.full, [(2, 3), pyfloat()]),
    Case("full-broadcast", np.full, [(2, 3), normal(3)]),
    Case("full_like", np.full_like, [normal(2, 3), normal(3)]),
    Case("arange", np.arange, [pyfloat(), 5.5, pyfloat(0.5, 2.0)], float32=False),
    Case("arange-start-stop", np.arange, [pyfloat(), 4.5], float32=False),
    Case("sort", np.sort, [normal(3, 4)]),
    Case("sort-axis-0", np.sort, [normal(3, 4)], {"axis": 0}),
    Case("sort-flat", np.sort, [normal(3, 4)], {"axis": None}),
    Case("reshape-order-f", np.reshape, [normal(2, 6), (3, 4)], {"order": "F"}),
    Case("ravel", np.ravel, [normal(2, 3)]),
    Case("squeeze", np.squeeze, [normal(1, 3, 1)], {"axis": 0}),
    Case("expand_dims", np.expand_dims, [normal(2, 3), (0, -1)]),
    Case("transpose", np.transpose, [normal(2, 3, 4), (1, 2, 0)]),
    Case("swapaxes", np.swapaxes, [normal(2, 3, 4), 0, -1]),
    Case("diagonal", np.diagonal, [normal(3, 4)]),
    Case("diagonal-offset-axes", np.diagonal, [normal(2, 3, 4), 1, 2, 0]),
    Case("tril", np.tril, [normal(3, 4)]),
    Case("triu-k-batch", np.triu, [normal(2, 3, 4), -1]),
    Case("flip", np.flip, [normal(2, 3)]),
    Case("flip-axis", np.flip, [normal(2, 3, 4)], {"axis": (0, 2)}),
    Case("fliplr", np.fliplr, [normal(2, 3)]),
    Case("flipud", np.flipud, [normal(2, 3)]),
    Case("roll", np.roll, [normal(5), 2]),
    Case("roll-axes", np.roll, [normal(3, 4), (1, -1)], {"axis": (0, 1)}),
    Case("rot90", np.rot90, [normal(2, 3)]),
    Case("rot90-k-axes", np.rot90, [normal(2, 3, 4), 3, (2, 0)]),
    Case("real-if-close", np.real_if_close, [normal(2, 3)]),
    Case("split", np.split, [normal(6), 3]),
    *([Case("row_stack", np.row_stack, [[normal(3), normal(2, 3)]])]
      if hasattr(np, "row_stack") and np.row_stack is not np.vstack else []),
    Case("dsplit", np.dsplit, [normal(2, 2, 4), 2]),
    Case("column_stack", np.column_stack, [[normal(3), normal(3, 2)]]),
    Case("dstack", np.dstack, [[normal(2, 3), normal(2, 3, 2)]]),
    Case("append", np.append, [normal(2, 3), normal(4)]),
    Case("append-axis", np.append, [normal(2, 3), normal(1, 3)], {"axis": 0}),
    Case("diag-vector", np.diag, [normal(3)], {"k": 1}),
    Case("diag-matrix", np.diag, [normal(3, 4)], {"k": -1}),
    Case("diagflat", np.diagflat, [normal(2, 2)], {"k": -1}),
    Case("rollaxis", np.rollaxis, [normal(2, 3, 4), 2]),
    Case("rollaxis-start", np.rollaxis, [normal(2, 3, 4, 5), 0, 3]),
    Case("meshgrid", np.meshgrid, [normal(3), normal(2)]),
    Case("meshgrid-ij-three", np.meshgrid, [normal(3), normal(2), normal(4)], {"indexing": "ij"}),
    Case("select", np.select, [[mask(2, 3), mask(3)], [normal(2, 3), normal(3)], normal(2, 3)]),
    Case("compress", np.compress, [[True, False, True], normal(3, 4)], {"axis": 0}),
    Case("compress-flat", np.compress, [[True, False, True, True], normal(2, 2)]),
    Case("extract", np.extract, [mask(3, 4), normal(3, 4)]),
    Case("choose", np.choose, [np.array([[0, 1, 2], [2, 0, 1]]), [normal(2, 3), normal(3), normal(2, 3)]]),
    Case("partition", np.partition, [normal(2, 5), 2]),
    Case("partition-axis", np.partition, [normal(4, 3), [0, 2]], {"axis": 0}),
    Case("ediff1d", np.ediff1d, [normal(2, 3)]),
    Case("ediff1d-ends", np.ediff1d, [normal(4)], {"to_end": normal(2), "to_begin": pyfloat()}),
    Case("unwrap", np.unwrap, [fixed([0.0, 3.0, 6.5, -2.0, 1.0])]),
    Case("interp", np.interp, [uniform(-0.5, 3.5, 5), fixed([0.0, 1.0, 2.5, 3.0]), normal(4)]),
    Case("interp-left-right", np.interp, [uniform(-1.0, 4.0, 2, 3), fixed([0.0, 1.0, 2.5, 3.0]), normal(4)],
         {"left": pyfloat(), "right": pyfloat()}),
    Case("logspace", np.logspace, [pyfloat(), pyfloat(), 5]),
    Case("logspace-base", np.logspace, [normal(2), pyfloat(), 4], {"base": pyfloat(1.5, 3.0)}),
    Case("geomspace", np.geomspace, [pyfloat(0.5, 2.0), pyfloat(2.0, 4.0), 5]),
    Case("geomspace-arrays", np.geomspace, [positive(2), positive(3, 1), 4], {"endpoint": False, "axis": 1}),
    Case("split-indices-axis", np.split, [normal(2, 5), [1, 4]], {"axis": 1}),
    Case("array-split", np.array_split, [normal(7, 2), 3]),
    Case("hsplit", np.hsplit, [normal(2, 4), 2]),
    Case("vsplit", np.vsplit, [normal(4, 3), [1]]),
    Case("pad", np.pad, [normal(2, 3), 1]),
    Case("pad-edge", np.pad, [normal(2, 3), ((1, 0), (2, 2)), "edge"]),
    Case("pad-reflect", np.pad, [normal(4, 3), 2, "reflect"]),
    Case("pad-symmetric", np.pad, [normal(3), (2, 4), "symmetric"]),
    Case("pad-wrap", np.pad, [normal(2, 3), (3, 1), "wrap"]),
    Case("take", np.take, [normal(2, 3), [4, 0, 4]]),
    Case("take-axis", np.take, [normal(2, 3, 4), [[0, 2], [1, 1]]], {"axis": 1}),
    Case("take-along-axis", np.take_along_axis, [normal(3, 4), np.array([[0, 3], [1, 1], [2, 0]]), 1]),
    Case("take-along-axis-broadcast", np.take_along_axis,
         [normal(3, 4, 1), np.array([[[0, 1]], [[2, 2]]]), 0]),
    Case("tile", np.tile, [normal(2, 3), (2, 1, 2)]),
    Case("tile-int", np.tile, [normal(3), 2]),
    Case("repeat", np.repeat, [normal(2, 3), 2]),
    Case("repeat-axis", np.repeat, [normal(2, 3), [1, 0, 3]], {"axis": 1}),
    Case("atleast-1d", np.atleast_1d, [normal()]),
    Case("atleast-2d", np.atleast_2d, [normal(3)]),
    Case("atleast-3d", np.atleast_3d, [normal(2, 3)]),
    Case("real", np.real, [normal(2, 3)]),
    Case("conjugate", np.conjugate, [normal(2, 3)]),
    *([Case("matrix_transpose", np.matrix_transpose, [normal(2, 3, 4)])]
      if hasattr(np, "matrix_transpose") else []),
    Case("moveaxis", np.moveaxis, [normal(2, 3, 4), (0, 1), (2, 0)]),
    Case("broadcast_to", np.broadcast_to, [normal(3, 1), (2, 3, 4)]),
    Case("concatenate", np.concatenate, [[normal(2, 3), normal(1, 3)]]),
    Case("block", np.block, [[[normal(2, 3), normal(2, 1)], [normal(1, 3), normal(1, 1)]]]),
    Case("block-promoted", np.block, [[[[normal(2, 2), normal(2, 1)]], [[normal(2, 3)]]]]),
    Case("block-flat", np.block, [[normal(2), normal(3), pyfloat()]]),
    Case("concatenate-axis-none", np.concatenate, [[normal(2, 2), normal(3)]], {"axis": None}),
    Case("stack", np.stack, [[normal(3), normal(3), normal(3)]], {"axis": -1}),
    Case("hstack", np.hstack, [[normal(2, 1), normal(2, 3)]]),
    Case("vstack", np.vstack, [[normal(3), normal(3)]]),
    Case("array-of-arrays", np.array, [[normal(2, 3), normal(2, 3)]]),
    Case("asarray", np.asarray, [normal(2, 3)]),
    Case("asanyarray", np.asanyarray, [[normal(), normal()]]),
    Case("ascontiguousarray", np.ascontiguousarray, [normal(3, 2)]),
    Case("identity-copy", rt.identity, [normal(2, 3)]),
]

BUILTINS = [
    Case("builtin-sum", builtins.sum, [[normal(3), normal(3), normal(3)]]),
    Case("builtin-sum-start", builtins.sum, [[normal(3), normal(3)], normal(3)]),
    Case("builtin-sum-broadcast", builtins.sum, [[normal(3), normal(2, 3)], normal()]),
    Case("builtin-max", builtins.max, [pyfloat(), pyfloat(), pyfloat()]),
    Case("builtin-max-list", builtins.max, [[pyfloat(), pyfloat(), pyfloat()]]),
    Case("builtin-min-array", builtins.min, [normal(5)]),
    Case("builtin-float", builtins.float, [normal()], float32=False),   # float() is float64
    Case("builtin-list", builtins.list, [normal(3, 2)]),
    Case("builtin-tuple", builtins.tuple, [normal(2, 3)]),
]

special = pytest.importorskip("scipy.special")     # the test extra installs SciPy
import srctrans.rules.scipy_special  # noqa: E402,F401  (its rules load on demand otherwise)

SCIPY = [
    Case("erf", special.erf, [normal(2, 3)]),
    Case("i0", special.i0, [normal(2, 3)]),
    Case("i1", special.i1, [normal(2, 3)]),
    Case("j0", special.j0, [normal(2, 3)]),
    Case("j1", special.j1, [normal(2, 3)]),
    Case("y0", special.y0, [uniform(0.5, 4.0, 2, 3)]),
    Case("y1", special.y1, [uniform(0.5, 4.0, 2, 3)]),
    Case("logsumexp-b", special.logsumexp, [normal(2, 3)], {"axis": 1, "b": positive(2, 3)}),
    Case("logsumexp-b-broadcast", special.logsumexp, [normal(2, 3)], {"b": positive(3), "keepdims": True}),
    Case("logsumexp-return-sign", special.logsumexp, [normal(2, 3)],
         {"axis": 1, "b": nonzero(2, 3), "return_sign": True}),
    Case("logsumexp-return-sign-all", special.logsumexp, [normal(3)],
         {"b": nonzero(3), "return_sign": True}),
    Case("erfc", special.erfc, [normal(2, 3)]),
    Case("ndtr", special.ndtr, [normal(2, 3)]),
    Case("log_ndtr", special.log_ndtr, [uniform(-6.0, 3.0, 2, 3)]),
    Case("erfinv", special.erfinv, [uniform(-0.8, 0.8, 2, 3)]),
    Case("erfcinv", special.erfcinv, [uniform(0.2, 1.8, 2, 3)]),
    Case("gamma", special.gamma, [uniform(0.5, 3.0, 2, 3)]),
    Case("gammaln", special.gammaln, [uniform(0.5, 3.0, 2, 3)]),
    # SciPy's polygamma returns float64 whatever its input, so digamma's derivative is
    # float64 too (the API gives the gradient its argument's dtype): no float32 cases
    Case("digamma", special.digamma, [uniform(0.5, 3.0, 2, 3)], float32=False),
    Case("polygamma", special.polygamma, [fixed(1), uniform(0.5, 3.0, 2, 3)], float32=False),
    Case("beta", special.beta, [uniform(0.5, 3.0, 3, 1), uniform(0.5, 3.0, 4)]),
    Case("betaln", special.betaln, [uniform(0.5, 3.0, 3, 1), uniform(0.5, 3.0, 4)]),
    Case("expit", special.expit, [normal(2, 3)]),
    Case("logit", special.logit, [uniform(0.1, 0.9, 2, 3)]),
    Case("log-expit", special.log_expit, [normal(2, 3)]),
    Case("xlogy", special.xlogy, [normal(3, 1), positive(4)]),
    Case("xlog1py", special.xlog1py, [normal(3, 1), positive(4)]),
    Case("entr", special.entr, [positive(2, 3)]),
    Case("rel-entr", special.rel_entr, [positive(3, 1), positive(4)]),
    Case("logsumexp", special.logsumexp, [normal(3, 4)]),
    Case("logsumexp-axis-keepdims", special.logsumexp, [normal(2, 3, 4)],
         {"axis": (0, 2), "keepdims": True}),
    Case("softmax", special.softmax, [normal(3, 4)], {"axis": -1}),
    Case("softmax-all", special.softmax, [normal(3, 4)]),
    Case("log-softmax", special.log_softmax, [normal(3, 4)], {"axis": 0}),
]

scipy_linalg = pytest.importorskip("scipy.linalg")
import srctrans.rules.scipy_linalg  # noqa: E402,F401

def _scipy_takes_stacks():
    """SciPy 1.16 and later take stacked matrices in scipy.linalg (earlier: one matrix)."""
    try:
        scipy_linalg.inv(np.eye(2)[None])
    except ValueError:
        return False
    return True


SCIPY_STACKS = _scipy_takes_stacks()
INV_STRUCTURE = "assume_a" in inspect.signature(scipy_linalg.inv).parameters   # SciPy 1.17


def _stacked(*cases):
    return list(cases) if SCIPY_STACKS else []


SCIPY_LINALG = [
    Case("sl-solve", scipy_linalg.solve, [matrices(3, 3), normal(3, 2)]),
    *_stacked(Case("sl-solve-vector-batch", scipy_linalg.solve, [matrices(2, 3, 3), normal(3)])),
    Case("sl-solve-pos-lower", scipy_linalg.solve, [positive_definite(3, 3), normal(3)],
         {"assume_a": "pos", "lower": True}),
    Case("sl-solve-sym-nonsymmetric-input", scipy_linalg.solve, [matrices(3, 3), normal(3, 2)],
         {"assume_a": "sym"}),                    # reads the upper triangle
    Case("sl-solve-diagonal", scipy_linalg.solve, [matrices(3, 3), normal(3)],
         {"assume_a": "diagonal"}),
    Case("sl-solve-tridiagonal-transposed", scipy_linalg.solve, [matrices(4, 4), normal(4, 2)],
         {"assume_a": "tridiagonal", "transposed": True}),
    Case("sl-solve-lower-triangular", scipy_linalg.solve, [matrices(3, 3), normal(3)],
         {"assume_a": "lower triangular"}),
    Case("sl-solve-triangular", scipy_linalg.solve_triangular, [matrices(3, 3), normal(3, 2)]),
    Case("sl-solve-triangular-lower-trans", scipy_linalg.solve_triangular,
         [matrices(3, 3), normal(3, 2)], {"lower": True, "trans": "T"}),
    *_stacked(Case("sl-solve-triangular-batch", scipy_linalg.solve_triangular,
                   [matrices(2, 3, 3), normal(2, 3, 2)], {"lower": True})),
    Case("sl-solve-triangular-unit-vector", scipy_linalg.solve_triangular,
         [matrices(3, 3), normal(3)], {"unit_diagonal": True, "lower": True}),
    Case("sl-inv", scipy_linalg.inv, [matrices(3, 3)]),
    *_stacked(Case("sl-inv-batch", scipy_linalg.inv, [matrices(2, 3, 3)])),
    *([Case("sl-inv-pos", scipy_linalg.inv, [positive_definite(3, 3)], {"assume_a": "pos"})]
      if INV_STRUCTURE else []),
    Case("sl-det", scipy_linalg.det, [matrices(2, 3, 3)]),
    Case("sl-cho-factor", scipy_linalg.cho_factor, [positive_definite(3, 3)]),
    *_stacked(Case("sl-cho-factor-lower-batch", scipy_linalg.cho_factor,
                   [positive_definite(2, 3, 3)], {"lower": True})),
    Case("sl-cho-solve", scipy_linalg.cho_solve,
         [factored(scipy_linalg.cho_factor, positive_definite(3, 3)), normal(3, 2)]),
    Case("sl-cho-solve-lower-vector", scipy_linalg.cho_solve,
         [factored(scipy_linalg.cho_factor, positive_definite(3, 3), lower=True), normal(3)]),
    Case("sl-lu-factor", scipy_linalg.lu_factor, [normal(4, 4)]),
    *_stacked(Case("sl-lu-factor-batch", scipy_linalg.lu_factor, [normal(2, 3, 3)])),
    Case("sl-lu-solve", scipy_linalg.lu_solve,
         [factored(scipy_linalg.lu_factor, normal(4, 4)), normal(4, 2)]),
    Case("sl-lu-solve-trans-vector", scipy_linalg.lu_solve,
         [factored(scipy_linalg.lu_factor, normal(4, 4)), normal(4)], {"trans": 1}),
    Case("sl-expm", scipy_linalg.expm, [uniform(-0.5, 0.5, 3, 3)]),
    Case("sl-expm-batch", scipy_linalg.expm, [uniform(-0.5, 0.5, 2, 3, 3)]),
    Case("sl-sqrtm", scipy_linalg.sqrtm, [positive_definite(3, 3)]),
    Case("sl-solve-sylvester", scipy_linalg.solve_sylvester,
         [matrices(3, 3), matrices(2, 2), normal(3, 2)]),
]

scipy_signal = pytest.importorskip("scipy.signal")
import srctrans.rules.scipy_signal  # noqa: E402,F401

SCIPY_SIGNAL = [
    Case("ss-convolve", scipy_signal.convolve, [normal(5), normal(3)]),
    Case("ss-convolve-same-2d", scipy_signal.convolve, [normal(4, 5), normal(2, 3)], {"mode": "same"}),
    Case("ss-convolve-valid-swapped", scipy_signal.convolve, [normal(2, 3), normal(4, 5)],
         {"mode": "valid"}),
    Case("ss-convolve-valid-fft", scipy_signal.convolve, [normal(6, 4), normal(3, 2)],
         {"mode": "valid", "method": "fft"}),
    Case("ss-correlate", scipy_signal.correlate, [normal(5), normal(3)]),
    Case("ss-correlate-same-direct", scipy_signal.correlate, [normal(3), normal(5)],
         {"mode": "same", "method": "direct"}),
    Case("ss-correlate-valid-2d", scipy_signal.correlate, [normal(2, 3), normal(4, 5)],
         {"mode": "valid"}),
]

scipy_distance = pytest.importorskip("scipy.spatial.distance")

# points away from each other (the Euclidean distance has no derivative where two coincide)
SCIPY_DISTANCE = [
    Case("ssd-cdist", scipy_distance.cdist, [normal(3, 2), normal(4, 2)]),
    Case("ssd-cdist-sq", scipy_distance.cdist, [normal(3, 2), normal(4, 2), "sqeuclidean"]),
    Case("ssd-pdist", scipy_distance.pdist, [normal(4, 3)]),
    Case("ssd-pdist-sq", scipy_distance.pdist, [normal(4, 3)], {"metric": "sqeuclidean"}),
    Case("ssd-squareform-vector", scipy_distance.squareform, [normal(6)]),
]

stats = pytest.importorskip("scipy.stats")
import srctrans.rules.scipy_stats  # noqa: E402,F401


def _family_cases(name, distribution, x, shapes, constants, loc, scale):
    """Each of logpdf, pdf, cdf and logcdf, with loc and scale (``Arg`` builders that keep
    the standardised variable in the support); the cdf and logcdf with the shape
    parameters ``constants`` (ints: their derivative in them is refused)."""
    return [
        Case(f"{name}-logpdf", distribution.logpdf, [x, *shapes, loc, scale]),
        Case(f"{name}-pdf", distribution.pdf, [x, *shapes]),
        Case(f"{name}-cdf", distribution.cdf, [x, *map(fixed, constants), loc, scale]),
        Case(f"{name}-logcdf", distribution.logcdf, [x, *map(fixed, constants)], {"scale": scale}),
    ]


SCIPY_STATS = (
    _family_cases("norm", stats.norm, normal(3, 4), [], [], normal(3, 1), positive(4))
    + _family_cases("t", stats.t, normal(3, 4), [uniform(1.5, 5.0, 4)], [3], normal(4),
                    positive(3, 1))
    + _family_cases("beta", stats.beta, uniform(0.2, 0.8, 3, 4),
                    [uniform(1.5, 3.0, 4), uniform(1.5, 3.0, 3, 1)], [2, 3],
                    uniform(-0.1, 0.0, 4), uniform(1.0, 1.2, 3, 1))
    + _family_cases("gamma", stats.gamma, uniform(0.5, 3.0, 3, 4), [uniform(1.5, 3.0, 4)], [2],
                    uniform(-0.1, 0.0, 4), positive(3, 1))
    + [
        Case("poisson-logpmf", stats.poisson.logpmf, [fixed(np.array([0, 1, 3, 6])), positive(3, 4)]),
        Case("poisson-pmf", stats.poisson.pmf, [fixed(np.array([0, 2, 5])), positive(3)]),
        Case("poisson-cdf", stats.poisson.cdf, [fixed(np.array([-1, 0, 2, 5])), positive(4)]),
        Case("poisson-logcdf", stats.poisson.logcdf, [fixed(np.array([0, 2, 5])), positive(3)]),
        Case("mvn-logpdf", stats.multivariate_normal.logpdf,
             [normal(5, 3), normal(3), positive_definite(3, 3)]),
        Case("mvn-logpdf-one-point-diagonal", stats.multivariate_normal.logpdf,
             [normal(3), normal(3), positive(3)]),
        Case("mvn-logpdf-nonsymmetric-cov", stats.multivariate_normal.logpdf,
             [normal(4, 2), normal(2), matrices(2, 2)]),        # reads the lower triangle
        Case("mvn-pdf-scalar-cov", stats.multivariate_normal.pdf, [normal(4, 2), normal(2), positive()]),
        Case("dirichlet-logpdf", stats.dirichlet.logpdf,
             [simplex(3, 4, drop_last=True), positive(3)]),
        Case("dirichlet-pdf", stats.dirichlet.pdf, [simplex(4, drop_last=True), positive(4)]),
    ])

# complex parts (rules/complex_numbers.py), on complex and on real arrays
COMPLEX = [
    Case("real-complex", np.real, [cnormal(2, 3)]),
    Case("conjugate-complex", np.conjugate, [cnormal(2, 3)]),
    Case("imag", np.imag, [cnormal(2, 3)]),
    Case("imag-real", np.imag, [normal(2, 3)]),
    Case("angle", np.angle, [cnormal(2, 3)]),
    Case("angle-degrees", np.angle, [cnormal(2, 3)], {"deg": True}),
    Case("angle-real", np.angle, [nonzero(2, 3)]),
    Case("sign-complex", np.sign, [cnormal(2, 3)]),
    Case("sign", np.sign, [nonzero(2, 3)]),
    Case("absolute-complex", np.absolute, [cnormal(2, 3)]),
    Case("complex", builtins.complex, [pyfloat(), pyfloat()]),
    Case("multiply-complex-real", np.multiply, [cnormal(2, 3), normal(3)]),
    Case("exp-complex", np.exp, [cnormal(2, 3)]),
]

# np.fft (rules/fourier.py): every transform with n/s, axis/axes and norm
FOURIER = [
    Case("fft", np.fft.fft, [cnormal(3, 6)]),
    Case("fft-real", np.fft.fft, [normal(3, 6)], {"axis": 0}),
    Case("fft-padded-ortho", np.fft.fft, [cnormal(3, 6)], {"n": 8, "norm": "ortho"}),
    Case("fft-cropped-forward", np.fft.fft, [cnormal(3, 6)], {"n": 4, "norm": "forward"}),
    Case("ifft", np.fft.ifft, [cnormal(3, 6)], {"n": 7, "axis": 0}),
    Case("fft2", np.fft.fft2, [cnormal(2, 3, 4)], {"s": (5, 3), "norm": "ortho"}),
    Case("ifft2", np.fft.ifft2, [cnormal(3, 4)]),
    Case("fftn", np.fft.fftn, [cnormal(3, 4)], {"axes": (1,)}),
    Case("ifftn", np.fft.ifftn, [cnormal(3, 4)], {"s": (2, 6), "axes": (0, 1)}),
    Case("rfft", np.fft.rfft, [normal(3, 6)]),
    Case("rfft-odd-ortho", np.fft.rfft, [normal(3, 6)], {"n": 9, "axis": 0, "norm": "ortho"}),
    Case("rfft-cropped", np.fft.rfft, [normal(3, 6)], {"n": 4, "norm": "forward"}),
    Case("rfft2", np.fft.rfft2, [normal(3, 4)]),
    Case("rfftn", np.fft.rfftn, [normal(3, 4)], {"s": (5, 7), "axes": (0, 1), "norm": "ortho"}),
    Case("irfft", np.fft.irfft, [cnormal(3, 6)]),
    Case("irfft-odd-ortho", np.fft.irfft, [cnormal(3, 6)], {"n": 9, "axis": 1, "norm": "ortho"}),
    Case("irfft-cropped", np.fft.irfft, [cnormal(3, 6)], {"n": 4, "axis": 0, "norm": "forward"}),
    Case("irfft2", np.fft.irfft2, [cnormal(3, 4)]),
    Case("irfftn", np.fft.irfftn, [cnormal(3, 4)], {"s": (3, 7), "axes": (0, 1), "norm": "ortho"}),
    Case("hfft", np.fft.hfft, [cnormal(3, 6)]),
    Case("hfft-odd-ortho", np.fft.hfft, [cnormal(3, 6)], {"n": 7, "axis": 0, "norm": "ortho"}),
    Case("ihfft", np.fft.ihfft, [normal(3, 6)]),
    Case("ihfft-padded", np.fft.ihfft, [normal(3, 6)], {"n": 8, "norm": "forward"}),
    Case("fftshift", np.fft.fftshift, [cnormal(3, 5)]),
    Case("ifftshift-axes", np.fft.ifftshift, [normal(3, 5)], {"axes": 0}),
]

CASES = (ELEMENTWISE + REDUCTIONS + PRODUCTS + SHAPES + BUILTINS + SCIPY + SCIPY_LINALG
         + SCIPY_SIGNAL + SCIPY_DISTANCE + SCIPY_STATS + COMPLEX + FOURIER)

assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"


def _seed(case):
    """A seed fixed per case (independent of the table's order)."""
    return sum(case.id.encode()) * 7919 % 2**32


# -- evaluating rules as plain Python ---------------------------------------------

def _primal_signature(rule):
    """The primal part of the VJP rule's signature (what call sites bind against)."""
    return rule.template.signature


def _slots(rule, args, kwargs):
    """``{slot: value}`` of the call's arguments: a parameter's name, or
    ``(name, k)`` for the k-th argument of a ``*args`` parameter."""
    signature = _primal_signature(rule)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    slots = {}
    for name, param in signature.parameters.items():
        value = bound.arguments[name]
        if param.kind is VAR_POSITIONAL:
            slots.update(((name, k), v) for k, v in enumerate(value))
        elif param.kind is not VAR_KEYWORD:
            slots[name] = value
    return slots


def _is_float(value):
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_float(v) for v in value)
    return isinstance(value, (float, complex)) or (isinstance(value, np.ndarray)
                                                   and value.dtype.kind in "fc")


def _active(rule, args, kwargs):
    """The slots that get a derivative: float arguments of parameters the VJP differentiates."""
    differentiated = _differentiated(rule.template)
    return [slot for slot, value in _slots(rule, args, kwargs).items()
            if _is_float(value) and (slot[0] if isinstance(slot, tuple) else slot) in differentiated]


def _moved(rule, args, kwargs, tangents, step):
    """``(args, kwargs)`` with each slot in ``tangents`` moved by ``step`` times its tangent."""
    signature = _primal_signature(rule)
    bound = signature.bind(*args, **kwargs)
    if any(not isinstance(slot, tuple) and slot not in bound.arguments for slot in tangents):
        bound.apply_defaults()          # a default the case moves (np.logspace's base)
    for slot, tangent in tangents.items():
        if isinstance(slot, tuple):
            name, k = slot
            values = list(bound.arguments[name])
            values[k] = _axpy(values[k], tangent, step)
            bound.arguments[name] = tuple(values)
        else:
            bound.arguments[slot] = _axpy(bound.arguments[slot], tangent, step)
    return bound.args, bound.kwargs


def _axpy(x, v, alpha):
    """``x + alpha * v``, entry by entry for lists and tuples; a Python float stays one."""
    if isinstance(x, (list, tuple)):
        return type(x)(_axpy(a, b, alpha) for a, b in zip(x, v))
    moved = x + alpha * v
    return float(moved) if isinstance(x, float) else moved


def _like(value, rng):
    """A random direction shaped like ``value`` (and of its dtype)."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):       # a named tuple
        return type(value)(*(_like(v, rng) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_like(v, rng) for v in value)
    if isinstance(value, float):
        return float(rng.standard_normal())
    if np.iscomplexobj(value):               # a complex direction (docs/complex.md)
        draw = rng.standard_normal(np.shape(value)) + 1j * rng.standard_normal(np.shape(value))
        return complex(draw) if isinstance(value, complex) else draw.astype(np.result_type(value))
    return rng.standard_normal(np.shape(value)).astype(np.result_type(value))


def _inner(a, b):
    """The inner product ``Re(sum(a * b))`` of two values of the same structure, in float64
    (complex128 for complex values: docs/complex.md)."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        return builtins.sum(_inner(x, y) for x, y in zip(a, b))
    return float(np.real(np.sum(_wide(a) * _wide(b))))


def _wide(value):
    """``value`` as a float64 array, or complex128 when complex."""
    return np.asarray(value, dtype=np.complex128 if np.iscomplexobj(value) else np.float64)


_ENTRIES = {}


def _entries(rule_fn, returned):
    """One function per entry of ``returned`` (a tuple), each with ``rule_fn``'s
    signature, so that one argument's contribution is computed without the others'."""
    if rule_fn not in _ENTRIES:
        signature = str(inspect.signature(rule_fn))
        functions = []
        for element in returned.elts:
            node = element.value if isinstance(element, gast.Starred) else element
            expression = ast.unparse(gast.gast_to_ast(copy.deepcopy(node)))
            namespace = dict(rule_fn.__globals__)
            exec(f"def entry{signature}:\n    return {expression}\n", namespace)
            functions.append(namespace["entry"])
        _ENTRIES[rule_fn] = functions
    return _ENTRIES[rule_fn]


def _zero_tangent(value):
    """A zero tangent for ``value``: entry by entry for a list or tuple (``np.select``'s
    choices), and no wider than its dtype (float16 for a Python number)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_zero_tangent(v) for v in value)
    return np.zeros_like(value, dtype=np.result_type(value, np.float16))


def jvp(rule, args, kwargs, ans, tangents):
    """The output's tangent given ``{slot: tangent}`` for the arguments that have one."""
    if rule.linear:
        first = next(iter(_primal_signature(rule).parameters))
        assert set(tangents) == {first}, "a linear rule is linear in its first argument only"
        return rule.primal(tangents[first], *args[1:], **kwargs)
    template = rule.jvp_template
    slots = _slots(rule, args, kwargs)
    parameters = template.signature.parameters
    passed = []                    # the tangent parameters' values, None when inactive
    for name in template.tangents:
        if parameters[name].kind is VAR_POSITIONAL:
            count = len([s for s in slots if isinstance(s, tuple) and s[0] == name])
            passed.append(tuple(tangents.get((name, k)) for k in range(count)))
        else:
            passed.append(tangents.get(name))
    if template.per_argument:
        total = None
        for entry, tangent in zip(_entries(rule.jvp, template.returned), passed):
            if tangent is not None:
                part = entry(*passed, ans, *args, **kwargs)
                total = part if total is None else total + part
    else:
        zeros = [_zero_tangent(slots[name])
                 if t is None and parameters[name].kind is not VAR_POSITIONAL else t
                 for name, t in zip(template.tangents, passed)]
        total = rule.jvp(*zeros, ans, *args, **kwargs)
    if rule.elementwise and np.shape(total) != np.shape(ans):
        total = np.broadcast_to(total, np.shape(ans))     # a bare tangent smaller than the output
    return total


def vjp(rule, args, kwargs, ans, u, wanted):
    """``{slot: cotangent}`` for the slots in ``wanted``, from the VJP rule called directly."""
    template = rule.template
    slots = _slots(rule, args, kwargs)
    params = [p for p in template.signature.parameters.values() if p.kind is not VAR_KEYWORD]
    if not template.is_tuple:
        pieces = [([params[0].name], rule.vjp)]
    else:
        pieces = []
        elements = template.returned.elts
        entries = _entries(rule.vjp, template.returned)
        grouped = len(params) - len(elements) + 1     # the parameters a (*grads) entry covers
        position = 0
        for entry, element in zip(entries, elements):
            param = params[position]
            if param.kind is VAR_POSITIONAL:
                assert isinstance(element, gast.Starred)
                covered = [s for s in slots if isinstance(s, tuple) and s[0] == param.name]
                pieces.append((covered, entry))
                position += 1
            elif isinstance(element, gast.Starred):   # (*grads, None): grads covers several
                pieces.append(([p.name for p in params[position:position + grouped]], entry))
                position += grouped
            else:
                pieces.append(([param.name], entry))
                position += 1
    cotangents = {}
    for covered, function in pieces:
        if not any(slot in wanted for slot in covered):
            continue
        value = function(u, ans, *args, **kwargs)
        values = list(value) if len(covered) > 1 or isinstance(covered[0], tuple) else [value]
        for slot, cotangent in zip(covered, values):
            if rule.elementwise:
                cotangent = rt.unbroadcast(cotangent, slots[slot])
            cotangents[slot] = cotangent
    return cotangents


# -- coverage ----------------------------------------------------------------------

RULES = [rule for rule in REGISTRY.rules() if rule.has_vjp]


def _name(rule):
    owner = getattr(rule.primal, "__self__", None)
    if getattr(owner, "name", None) and inspect.ismethod(rule.primal):
        return f"{owner.name}.{rule.primal.__name__}"          # scipy.stats.norm.logpdf: norm.logpdf
    return getattr(rule.primal, "__qualname__", repr(rule.primal))


def _differentiated(template):
    """The primal parameters a VJP template returns a cotangent for."""
    params = [p for p in template.signature.parameters.values() if p.kind is not VAR_KEYWORD]
    if not template.is_tuple:
        return {params[0].name}
    elements = list(template.returned.elts)
    stars = [i for i, e in enumerate(elements) if isinstance(e, gast.Starred)]
    if stars and params[-1].kind is not VAR_POSITIONAL:     # (*grads, None): grads covers the rest
        star = stars[0]
        covered = len(params) - (len(elements) - 1)
        elements[star:star + 1] = [elements[star]] * covered
    return {param.name for param, element in zip(params, elements)
            if not (isinstance(element, gast.Constant) and element.value is None)}


def test_every_vjp_has_a_jvp():
    missing = [_name(rule) for rule in RULES if not rule.has_jvp]
    assert not missing, f"VJP rules without a JVP rule: {missing}"


@pytest.mark.parametrize("rule", [r for r in RULES if r.jvp is not None],
                         ids=[_name(r) for r in RULES if r.jvp is not None])
def test_jvp_template_fits_its_vjp(rule):
    """Same primal signature (names, kinds, defaults) and the same differentiated parameters."""
    template = rule.jvp_template
    assert template.signature == rule.template.signature
    assert set(template.tangents) == _differentiated(rule.template)


def test_linear_rules_have_no_template():
    assert not [_name(r) for r in RULES if r.linear and r.jvp is not None]


# The rule files whose rules CASES checks (the rules of the runtime helpers that only
# derivatives of derivatives call are checked with those helpers' own tests).
RULE_FILES = {"srctrans.rules.elementwise", "srctrans.rules.reductions", "srctrans.rules.linalg",
              "srctrans.rules.shapes", "srctrans.rules.builtins", "srctrans.rules.scipy_special",
              "srctrans.rules.scipy_linalg", "srctrans.rules.scipy_signal",
              "srctrans.rules.scipy_stats", "srctrans.rules.complex_numbers",
              "srctrans.rules.fourier"}


def _identity(primal):
    """What names a primal: the function, or the object and function of a bound method
    (``scipy.stats.norm.logpdf`` is a new method object at each reading)."""
    if inspect.ismethod(primal):
        return id(primal.__self__), id(primal.__func__)
    return id(primal)


def test_every_rule_has_a_case():
    covered = {_identity(case.primal) for case in CASES}
    missing = [_name(rule) for rule in RULES
               if getattr(rule.vjp, "__module__", None) in RULE_FILES
               and _identity(rule.primal) not in covered]
    assert not missing, f"add a row to CASES for: {missing}"


def test_the_rule_files_are_known():
    """A rule file not in RULE_FILES would escape test_every_rule_has_a_case."""
    modules = {rule.vjp.__module__ for rule in RULES if rule.vjp is not None}
    helpers = {m for m in modules if m.endswith("_helpers")}   # test_runtime_helper_rules.py's
    unknown = modules - RULE_FILES - helpers
    assert not unknown, f"add to RULE_FILES, and rows to CASES: {sorted(unknown)}"


# -- numerical checks -------------------------------------------------------------------

STEP = 1e-6


def _finite_difference(case, rule, args, kwargs, tangents):
    plus = case.primal(*_moved(rule, args, kwargs, tangents, STEP)[0],
                       **_moved(rule, args, kwargs, tangents, STEP)[1])
    minus = case.primal(*_moved(rule, args, kwargs, tangents, -STEP)[0],
                        **_moved(rule, args, kwargs, tangents, -STEP)[1])
    return _scaled_difference(plus, minus)


def _scaled_difference(plus, minus):
    if isinstance(plus, (list, tuple)):
        return [_scaled_difference(p, m) for p, m in zip(plus, minus)]
    return (_wide(plus) - _wide(minus)) / (2 * STEP)


def _assert_close(got, expected, what):
    if isinstance(expected, list):
        assert len(got) == len(expected), what
        for g, e in zip(got, expected):
            _assert_close(g, e, what)
        return
    assert np.shape(got) == np.shape(expected), f"{what}: shape {np.shape(got)}, expected {np.shape(expected)}"
    np.testing.assert_allclose(_wide(got), expected, rtol=1e-5, atol=1e-6, err_msg=what)


def _directions(case, rule, args, kwargs, rng):
    """Each active slot alone, then all of them together (when there are several)."""
    active = _active(rule, args, kwargs)
    assert active, f"{case.id} has no float argument"
    if rule.linear:
        active = active[:1]
    tangents = {slot: _like(_slots(rule, args, kwargs)[slot], rng) for slot in active}
    directions = [{slot: tangents[slot]} for slot in active]
    if len(active) > 1:
        directions.append(tangents)
    return directions


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_jvp_matches_finite_differences(case):
    rule = REGISTRY.lookup(case.primal)
    args, kwargs = case.build(_seed(case))
    ans = case.primal(*args, **kwargs)
    rng = np.random.default_rng(_seed(case) + 1)
    for tangents in _directions(case, rule, args, kwargs, rng):
        got = jvp(rule, args, kwargs, ans, tangents)
        expected = _finite_difference(case, rule, args, kwargs, tangents)
        _assert_close(got, expected, f"tangent along {sorted(map(str, tangents))}")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_jvp_agrees_with_vjp(case):
    rule = REGISTRY.lookup(case.primal)
    args, kwargs = case.build(_seed(case))
    ans = case.primal(*args, **kwargs)
    rng = np.random.default_rng(_seed(case) + 2)
    u = _like(ans if not isinstance(ans, float) else float(ans), rng)
    for tangents in _directions(case, rule, args, kwargs, rng):
        forward = _inner(jvp(rule, args, kwargs, ans, tangents), u)
        cotangents = vjp(rule, args, kwargs, ans, u, set(tangents))
        slots = _slots(rule, args, kwargs)
        for slot in tangents:
            assert _same_structure(cotangents[slot], slots[slot]), slot
        backward = builtins.sum(_inner(tangents[slot], cotangents[slot]) for slot in tangents)
        np.testing.assert_allclose(forward, backward, rtol=1e-10, atol=1e-12,
                                   err_msg=f"<jvp(v), u> != <v, vjp(u)> along {sorted(map(str, tangents))}")


def _same_structure(a, b):
    """Same shapes, entry by entry for lists and tuples (a list of rows matches an array)."""
    sequences = isinstance(a, (list, tuple)), isinstance(b, (list, tuple))
    if all(sequences):
        return len(a) == len(b) and all(_same_structure(x, y) for x, y in zip(a, b))
    if any(sequences):
        return np.shape(np.array(a)) == np.shape(np.array(b))
    return np.shape(a) == np.shape(b)


def _float32(value, scalars=False):
    """float64 arrays as float32 (and Python floats as NumPy float32 when ``scalars``)."""
    if isinstance(value, dict):
        return {k: _float32(v, scalars) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_float32(v, scalars) for v in value)
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(np.float32)
    if isinstance(value, np.ndarray) and value.dtype == np.complex128:
        return value.astype(np.complex64)
    if scalars and isinstance(value, float):
        return np.float32(value)
    return value


FLOAT32 = [c for c in CASES if c.float32]


@pytest.mark.parametrize("case", FLOAT32, ids=[c.id for c in FLOAT32])
def test_float32(case):
    """float32 arguments and tangents give a float32 tangent, close to the float64 one.

    Python float arguments stay Python floats (NumPy treats them as weak) and
    get float32 tangents; the tangent must be float32 wherever the output is.
    """
    rule = REGISTRY.lookup(case.primal)
    args, kwargs = case.build(_seed(case))
    rng = np.random.default_rng(_seed(case) + 3)
    active = _active(rule, args, kwargs)[:1] if rule.linear else _active(rule, args, kwargs)
    slots = _slots(rule, args, kwargs)
    tangents = {slot: _like(slots[slot], rng) for slot in active}
    expected = jvp(rule, args, kwargs, case.primal(*args, **kwargs), tangents)
    args32, kwargs32 = _float32(args), _float32(kwargs)
    tangents32 = _float32(tangents, scalars=True)
    ans32 = case.primal(*args32, **kwargs32)
    got = jvp(rule, args32, kwargs32, ans32, tangents32)
    for g, e, a in zip(_leaves(got), _leaves(expected), _leaves(ans32)):
        if isinstance(a, (np.ndarray, np.generic)) and a.dtype in (np.float32, np.complex64):
            assert np.result_type(g) == a.dtype, np.result_type(g)
        scale = max(1.0, float(np.max(np.abs(e))) if np.size(e) else 1.0)
        np.testing.assert_allclose(_wide(g), e, rtol=1e-4, atol=1e-4 * scale)


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


# -- exact values at ties and kinks -----------------------------------------------------

EXACT = [
    # (id, primal, args, kwargs, tangents by slot, expected tangent)
    ("maximum-ties", np.maximum, ([1.0, 2.0, 3.0], [1.0, 5.0, 3.0]), {},
     {"x": [1.0, 1.0, 1.0], "y": [3.0, 3.0, 3.0]}, [2.0, 3.0, 2.0]),
    ("minimum-ties", np.minimum, ([1.0, 2.0, 3.0], [1.0, 5.0, 0.0]), {},
     {"x": [1.0, 1.0, 1.0], "y": [3.0, 3.0, 3.0]}, [2.0, 1.0, 3.0]),
    ("maximum-scalar-tie", np.maximum, ([-1.0, 0.0, 2.0], 0.0), {}, {"x": [4.0, 4.0, 4.0]},
     [0.0, 2.0, 4.0]),
    ("max-ties", np.max, ([1.0, 3.0, 3.0, -1.0],), {}, {"a": [1.0, 2.0, 4.0, 8.0]}, 3.0),
    ("max-axis-keepdims-ties", np.max, ([[1.0, 4.0, 4.0, 4.0], [5.0, 0.0, 5.0, 1.0]],),
     {"axis": 1, "keepdims": True}, {"a": [[1.0, 1.0, 2.0, 3.0], [4.0, 1.0, 2.0, 1.0]]}, [[2.0], [3.0]]),
    ("min-axis-ties", np.min, ([[1.0, 2.0], [1.0, 3.0]],), {"axis": 0},
     {"a": [[2.0, 1.0], [4.0, 1.0]]}, [3.0, 1.0]),
    ("max-nan-slice", np.max, ([[1.0, np.nan], [2.0, 0.0]],), {"axis": 1},
     {"a": [[1.0, 1.0], [1.0, 1.0]]}, [0.0, 1.0]),
    ("abs-at-zero", np.absolute, ([0.0, -1.5, 2.0],), {}, {"x": [5.0, 1.0, 1.0]}, [0.0, -1.0, 1.0]),
    ("clip-at-bounds", np.clip, ([-1.0, 0.0, 0.5, 1.0, 2.0], 0.0, 1.0), {},
     {"a": [1.0, 1.0, 1.0, 1.0, 1.0], "a_min": 10.0, "a_max": 100.0}, [10.0, 1.0, 1.0, 1.0, 100.0]),
    ("prod-one-zero", np.prod, ([2.0, 0.0, 3.0],), {}, {"a": [1.0, 1.0, 1.0]}, 6.0),
    ("prod-two-zeros", np.prod, ([2.0, 0.0, 0.0],), {}, {"a": [1.0, 1.0, 1.0]}, 0.0),
    ("std-constant-row", np.std, ([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]],), {"axis": 1},
     {"a": [[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]]}, [0.0, 2 / (3 * (2 / 3) ** 0.5)]),
    ("power-base-zero", np.power, ([0.0, 1.0, 0.0], [2.0, 1.5, 0.0]), {},
     {"x": [1.0, 1.0, 1.0], "y": [1.0, 1.0, 1.0]}, [0.0, 1.5, 0.0]),
    ("builtin-max-tie", builtins.max, (2.0, 2.0, 1.0), {},
     {("args", 0): 1.0, ("args", 1): 3.0, ("args", 2): 5.0}, 2.0),
    ("builtin-max-array-tie", builtins.max, ([1.0, 3.0, 3.0],), {},
     {("args", 0): [1.0, 2.0, 4.0]}, 3.0),
    ("where-selects", np.where, ([True, False], [1.0, 2.0], [3.0, 4.0]), {},
     {"x": [1.0, 1.0], "y": [2.0, 2.0]}, [1.0, 2.0]),
    ("zero-guard-repairs", rt.zero_guard, ([0.0, 0.0, 1.0, 0.0], [np.nan, 2.0, np.inf, 0.0]), {},
     {"value": [1.0, 3.0, 5.0, 7.0]}, [0.0, 3.0, 5.0, 7.0]),
    ("zero-guard-sum-repairs", rt.zero_guard_sum, ([0.0, 0.0, 1.0, 0.0], [np.nan, 2.0, np.inf, 0.0]),
     {}, {"value": [1.0, 3.0, 5.0, 7.0]}, 15.0),
]


def _array(value):
    if isinstance(value, list):
        return np.array(value, dtype=np.float64 if not isinstance(value[0], bool) else bool)
    return value


@pytest.mark.parametrize("id, primal, args, kwargs, tangents, expected", EXACT, ids=[e[0] for e in EXACT])
def test_exact(id, primal, args, kwargs, tangents, expected):
    rule = REGISTRY.lookup(primal)
    if primal is builtins.max and isinstance(args[0], list):
        args = (np.array(args[0]),)                     # max over a 1-D array
    else:
        args = tuple(_array(a) for a in args)
    tangents = {slot: _array(t) for slot, t in tangents.items()}
    ans = primal(*args, **kwargs)
    got = jvp(rule, args, kwargs, ans, tangents)
    # atol=0: every expected zero must be exactly zero
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    u = np.arange(1.0, np.size(ans) + 1).reshape(np.shape(ans))
    cotangents = vjp(rule, args, kwargs, ans, u, set(tangents))
    backward = builtins.sum(_inner(tangents[slot], cotangents[slot]) for slot in tangents)
    np.testing.assert_allclose(_inner(got, u), backward, rtol=1e-14,
                               err_msg="the VJP shares ties differently")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_rule_whose_result_is_a_tuple_is_declared_so(case):
    """A result the analyses took for an array would have its cotangents added with ``+``:
    two tuples of cotangents concatenated, silently (``logsumexp(..., return_sign=True)``)."""
    args, kwargs = case.build(_seed(case))
    ans = case.primal(*args, **kwargs)
    if isinstance(ans, tuple):
        assert REGISTRY.is_tuple_valued(case.primal) or case.primal in (builtins.tuple,
                                                                        builtins.list)


# Every function the NumPy and SciPy breadth work names has both rules (np.put_along_axis
# is rewritten into a functional write instead: srctrans/normalize/effects.py).
NAMED = {
    np: """hypot fmax fmin logaddexp2 fabs sinc deg2rad rad2deg degrees radians cbrt
        nan_to_num real_if_close float_power true_divide fmod cumsum cumprod diff ediff1d
        ptp average nansum nanmean nanvar nanstd nanmax nanmin nanprod trace atleast_1d
        atleast_2d atleast_3d diag diagonal diagflat tril triu pad roll rollaxis flip fliplr
        flipud rot90 tile repeat split array_split hsplit vsplit dsplit append column_stack
        dstack block take take_along_axis choose select compress extract sort partition
        linspace geomspace logspace meshgrid kron cross convolve correlate polyval interp
        unwrap copy real imag conj conjugate angle abs vdot""",
    np.linalg: """inv pinv solve lstsq det slogdet cholesky qr eigh eigvalsh eig eigvals svd
        matrix_power multi_dot tensorsolve tensorinv norm""",
    np.fft: """fft ifft rfft irfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn hfft ihfft
        fftshift ifftshift""",
}


def test_every_named_function_has_both_rules():
    missing = [f"{module.__name__}.{name}" for module, names in NAMED.items()
               for name in names.split()
               if (REGISTRY.lookup(getattr(module, name)) is None
                   or not REGISTRY.lookup(getattr(module, name)).has_jvp)]
    assert not missing, missing


# -- every rule again, on complex arguments -----------------------------------------------

def _complexified(value, rng):
    """``value`` with an imaginary part added to its float arrays."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value + 0.5j * rng.standard_normal(value.shape)
    if isinstance(value, list):
        return [_complexified(v, rng) for v in value]
    return value


def _has_complex(value):
    if isinstance(value, list):
        return any(_has_complex(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind == "c"


def _complex_case(case):
    """``(args, kwargs, rng, ans)`` of ``case`` with its float arrays made complex, or None
    when it has none to make complex or NumPy and SciPy do not define it for complex arrays."""
    args, kwargs = case.build(_seed(case))
    rng = np.random.default_rng(_seed(case) + 7)
    args = tuple(_complexified(a, rng) for a in args)
    if not any(_has_complex(a) for a in args):
        return None
    try:
        with np.errstate(all="ignore"):
            ans = case.primal(*args, **kwargs)
    except Exception:
        return None
    return args, kwargs, rng, ans


COMPLEX_CASES = [case for case in CASES if _complex_case(case) is not None]


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=[c.id for c in COMPLEX_CASES])
def test_every_rule_on_complex_arguments_is_right_or_refused(case):
    """Each case with its float arrays made complex (docs/complex.md): where NumPy or SciPy
    evaluate it, the JVP matches finite differences and the VJP is its transpose for
    ``Re(sum(a * b))``, or the rule refuses complex values with a clear error."""
    from srctrans.errors import UnsupportedSyntaxError
    rule = REGISTRY.lookup(case.primal)
    args, kwargs, rng, ans = _complex_case(case)
    try:
        for tangents in _directions(case, rule, args, kwargs, rng):
            got = jvp(rule, args, kwargs, ans, tangents)
            with np.errstate(all="ignore"):
                _assert_close(got, _finite_difference(case, rule, args, kwargs, tangents),
                              f"tangent along {sorted(map(str, tangents))}")
            u = _like(ans, rng)
            cotangents = vjp(rule, args, kwargs, ans, u, set(tangents))
            np.testing.assert_allclose(
                _inner(got, u), builtins.sum(_inner(tangents[s], cotangents[s]) for s in tangents),
                rtol=1e-6, atol=1e-8)
    except UnsupportedSyntaxError as error:
        assert "complex" in str(error)

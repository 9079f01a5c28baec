"""Functions whose results carry no derivative: shapes, indices, rounding,
comparisons, predicates, and constructors of fresh arrays."""

import builtins

import numpy as np

from srctrans.rules import REGISTRY

REGISTRY.nondifferentiable(
    # shapes and sizes
    np.shape, np.ndim, np.size, builtins.len, builtins.range, builtins.isinstance,
    # indices and rounding
    np.argmax, np.argmin, np.argsort, np.nonzero, np.floor, np.ceil, np.round,
    np.around, np.rint, np.trunc, np.fix, np.sign, np.floor_divide,
    # comparisons and predicates
    np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.invert, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift,
    np.isnan, np.isfinite, np.isinf, np.allclose, np.isclose, np.array_equal,
    np.any, np.all,
    # fresh arrays
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
    np.empty_like, np.full_like, np.arange, np.linspace, np.eye, np.identity,
    # integer casts and side effects
    builtins.int, builtins.bool, builtins.print, np.int32, np.int64, np.bool_,
)

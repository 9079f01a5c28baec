"""Functions whose results carry no derivative: shapes, indices, rounding,
comparisons, predicates, random draws, integer casts, constructors of fresh
arrays, and ``st.stop_gradient``.

``st.nondifferentiable(fn)`` adds the user's own functions to this table;
``st.register_vjp`` on one of them takes it out again (a straight-through
gradient for ``np.round``, for instance).
"""

import builtins
import math

import numpy as np

from srctrans.runtime.custom import stop_gradient
from srctrans.runtime.seeding import aux_pair_error, not_an_aux_pair, seed_sum
from srctrans.rules.registry import REGISTRY

REGISTRY.nondifferentiable(
    # shapes and sizes
    np.shape, np.ndim, np.size, builtins.len, builtins.range, builtins.isinstance,
    # indices and rounding
    np.argmax, np.argmin, np.argsort, np.nonzero, np.floor, np.ceil, np.round,
    np.around, np.rint, np.trunc, np.fix, np.floor_divide,
    np.argwhere, np.flatnonzero, np.searchsorted, np.digitize, np.count_nonzero,
    np.argpartition, np.result_type, np.promote_types,
    builtins.round, math.floor, math.ceil, math.trunc,
    # comparisons and predicates
    np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.invert, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift,
    np.isnan, np.isfinite, np.isinf, np.allclose, np.isclose, np.array_equal,
    np.signbit, np.isposinf, np.isneginf, math.isnan, math.isfinite, math.isinf,
    np.any, np.all,
    # a step function
    np.heaviside,
    # fresh arrays (np.full, np.full_like, np.arange and np.linspace have rules: their
    # values depend on their arguments)
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.eye, np.identity,
    np.ndarray,                 # np.ndarray(shape, dtype): new, uninitialised memory
    # random draws (np.random.normal and the like are methods of a RandomState:
    # see constant_methods_of below)
    np.random.default_rng, np.random.seed,
    # integer casts and side effects
    builtins.int, builtins.bool, builtins.print, np.bool_,
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    # the user's explicit stop; the ones that start a plain gradient function's backward pass
    stop_gradient, seed_sum,
    # has_aux=True: the check that the function returned a pair (output, aux)
    not_an_aux_pair, aux_pair_error,
)

# Every method of a random generator draws numbers that do not depend on the
# values passed in a differentiable way (np.random.normal(mu) included: use
# mu + np.random.normal() to differentiate through mu).
REGISTRY.constant_methods_of(np.random.Generator, np.random.RandomState,
                             np.random.BitGenerator, np.random.SeedSequence)

_INTEGER_KINDS = "biu"


def casts_to_integers(dtype):
    """Whether ``x.astype(dtype)`` gives integers or booleans (a constant), for a live ``dtype``."""
    try:
        return np.dtype(dtype).kind in _INTEGER_KINDS
    except (TypeError, ValueError):
        return False

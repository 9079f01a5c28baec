"""The shapes of the runtime's helpers' and NumPy's results, by table: which argument's shape
a helper's result has, which pair a helper returns, which helpers and functions broadcast,
and the reductions' array methods (read by :mod:`srctrans.optimise.expression_shapes`).

Requires: nothing (data only).
Guarantees: each entry states what the function it names returns, for every call (checked
by ``tests/test_optimise.py``'s program calling every helper in specialised code).
"""

import numpy as np


# Which argument of a runtime helper its result has the shape of.
RESULT_SHAPE_OF_ARGUMENT = {
    "unbroadcast": 1, "unreduce": 1, "mean_grad": 1, "var_grad": 1, "extremum_grad": 2,
    "prod_grad": 2, "std_grad": 2, "matmul_lhs": 1, "matmul_rhs": 2, "dot_lhs": 1,
    "dot_rhs": 2, "inner_lhs": 1, "inner_rhs": 2, "outer_lhs": 1, "outer_rhs": 2,
    "tensordot_lhs": 1, "tensordot_rhs": 2, "getitem_grad": 1, "tie_weight": None,
    "zeros_like": 0, "zeros_of": 0, "zero_at": 0, "restored_at": 0, "zero_guard": 1,
    "broadcast_like": 1, "logsumexp_share": 2, "norm_grad": 2, "copied": 0,
    "softmax_share": 1, "cholesky_grad": 1, "diag_grad": 1, "logaddexp_fold_grad": 2,
    "logaddexp_fold_share": 1, "logaddexp_fold_tangent": 1, "log_of_softmax_grad": 1,
    "log_of_softmax_tangent": 1, "softmax_ratio": 0, "softmax_ratio_grad": 1, "log_tail": 0,
    "cholesky_log_diagonal": 0,
    "cholesky_solve_grad": 2, "cholesky_log_diagonal_grad": 1, "cholesky_terms_grad": 3,
    "cumsum_grad": 1, "cumprod_grad": 1, "diff_grad": 1, "diagonal_grad": 1, "trace_grad": 1,
    "take_along_axis_grad": 1, "tile_grad": 1, "inv": 0, "real_only": 0,
}

# Runtime helpers that return a pair of cotangents: which argument each entry has the shape of.
PAIR_SHAPES_OF_ARGUMENTS = {"solve_grads": (2, 3), "solve_grads_by_inverse": (2, 3),
                            "convolve_grads": (1, 2), "correlate_grads": (1, 2),
                            "polyval_grads": (1, 2)}

# Runtime helpers of two arguments whose result has their broadcast shape.
BROADCASTING_HELPERS = ("add", "abs_grad", "tie_weight", "power_base_factor", "ratio_or_zero",
                        "ratio_or_zero_times", "relu_of_softplus", "log1p_tail",
                        "sigmoid_from_tail")

# NumPy reductions and the array methods that do the same with less dispatch.
REDUCTION_METHODS = {
    np.sum: "sum", np.mean: "mean", np.prod: "prod", np.max: "max", np.amax: "max",
    np.min: "min", np.amin: "min", np.var: "var", np.std: "std",
}

# The array methods that reduce along ``axis=`` (all axes by default), ``keepdims=`` as
# NumPy's: the shape of ``a.sum(axis=1)`` is that of ``a.mean(axis=1)``.
SHAPE_REDUCING_METHODS = frozenset(REDUCTION_METHODS.values())

# Reductions of a whole array, to one number, when called with the array alone.
WHOLE_REDUCTIONS = tuple(REDUCTION_METHODS)

# Functions of three arguments whose result has their broadcast shape.
BROADCASTING = (np.clip, np.where)

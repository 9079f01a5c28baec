"""What generated code calls, and nothing else.

Generated adjoints and tangents reach this package through one reserved name
(``rt`` unless the user's function already uses it). Everything here is plain
NumPy, so a generated function needs only NumPy and this package to run.

Modules:
  broadcast    -- summing a gradient back to the shape of a broadcast input
  reductions   -- gradients and tangents of sum/mean/prod/var/std/max/min along axes
  linalg       -- gradients of matmul, dot, inner, outer, tensordot; einsum's tangent
  decompositions -- derivatives of eigh, eigvalsh, svd, qr, pinv, lstsq, matrix_power,
                  multi_dot and det
  linalg_kernels -- np.linalg.cholesky, inv and solve of one float64 matrix without their
                  wrapper's cost (what specialised code calls)
  picked_kernels -- one operand's cotangent of a helper that computes all (np.interp's
                  values'), where specialised code reads only that one
  shared_inverses -- a Cholesky factor's inverse shared by the solves of one backward pass
  cholesky_terms -- a Cholesky factor's two solves and log-diagonal, derived for the matrix
  composites   -- derivatives of cumprod, nanvar, weighted averages, kron, polyval,
                  convolutions, interp, grids, tensor solves and norms
  selections   -- derivatives of np.select, compress, extract, choose, partition and the joins
                  column_stack, dstack, append, ediff1d
  log_sum_exp  -- log-sum-exp's derivatives, and the softmax its gradient reads
  folds        -- a loop folding np.logaddexp over an array's slices, as one call
  float_lists  -- whether a loop over vectors' entries may run on lists of their floats, or
                  keep the entry it writes for its next step
  softmax_logs -- the log of a softmax computed as probabilities, and its closed derivatives
  joins        -- splitting the gradient of concatenate/stack among inputs
  elementwise  -- masks and weights for clip, maximum/minimum, abs
  singular     -- keeping zero cotangents zero at singular points (sqrt, log, division...)
  reshaping    -- cotangents of subscript reads and writes, transposes, conversions
  container_cotangents -- a container's cotangent made once from its entries' (dicts,
                  lists, named tuples, objects' attributes)
  scans        -- transposes of cumulative sums, differences, diagonals, traces, takes,
                  tiles and repeats
  writes       -- functional forms of np.add.at and np.put, what a write with repeated
                  indices keeps, and the cotangent of a sort
  accumulate   -- adding cotangents of unknown type (containers entry by entry); the
                  derivatives of the builtins sum, max and min
  containers   -- taking containers (tuple, list, dict, named tuple, dataclass) apart and back
  seeding      -- the output gradient: ones by default, or a checked cotangent
  tangents     -- helpers of forward-mode code
  higher       -- derivatives of these helpers, for derivatives of derivatives
  custom       -- gradient control: stop_gradient, stop_recording, grad_of,
                  custom_gradient functions, checking user-written cotangents, and
                  valued (a loop's sum, differentiated as its batched step's)
  refusals     -- the errors generated code raises (srctrans's classes, built-in ones when exported)
  foreign      -- arrays of other libraries (Dask, CuPy) kept in their library; the error
                  for derivatives that need NumPy arrays
  fastpath     -- shortcuts for hot loops (a reversed loop's saved values, all at once,
                  or from a loop's own list; the zero of a known number or array)
  counting     -- where a counted ``while`` loop, written as a ``range`` loop, stops
  branches     -- the check of a branch specialised code took as measured, and of a number
                  it divides by unguarded (MissedBranch)
  batching     -- what batched code (st.vmap) calls, as rt.batch.NAME: ranks lifted, axes
                  moved, members spread, and a call without a batching rule run per member
  batched_derivatives -- the derivative helpers on batches (rt.batch.unbroadcast,
                  getitem_grad, container_cotangent...), which batching holds as its own
  scipy_linalg -- derivatives of scipy.linalg (imported on first use, as rt.scipy_linalg)
  scipy_signal -- derivatives of scipy.signal's convolutions (likewise, rt.scipy_signal)
  scipy_distance -- derivatives of scipy.spatial.distance (likewise, rt.scipy_distance)
  scipy_stats  -- derivatives of scipy.stats's distributions (likewise, rt.scipy_stats)
"""

import importlib

# What each module exports as rt.NAME. A module is imported when one of its names is
# first read (the package's __getattr__), which binds all of them here: a new process
# imports only the modules its generated code calls, and later reads are plain look-ups.
_EXPORTS = {
    "broadcast": ("unbroadcast",),
    "reductions": (
        "unreduce", "mean_grad", "extremum_grad", "prod_grad", "var_grad", "std_grad",
        "extremum_jvp", "prod_jvp", "var_jvp", "std_jvp",
    ),
    "linalg": (
        "cross_grads", "matmul_lhs", "matmul_rhs", "dot_lhs", "dot_rhs", "inner_lhs", "inner_rhs",
        "outer_lhs", "outer_rhs", "tensordot_lhs", "tensordot_rhs", "einsum_grads", "einsum_jvp",
        "solve_column", "solve_uncolumn", "solve_grads", "solve_grads_vjp", "solve_grads_jvp",
        "tril_halved", "symmetric_sum",
    ),
    "decompositions": (
        "eigh_grad", "eigh_jvp", "eigvalsh_grad", "eigvalsh_jvp", "svd_grad", "svd_jvp", "qr_grad",
        "qr_jvp", "eig_grad", "eig_jvp", "eigvals_grad", "eigvals_jvp", "pinv_grad", "pinv_jvp",
        "lstsq_grads", "lstsq_jvp", "matrix_power_grad", "matrix_power_jvp", "multi_dot_grads",
        "multi_dot_jvp", "tuple_like", "det_grad", "det_jvp", "cholesky_grad", "cholesky_jvp",
    ),
    "linalg_kernels": ("cholesky", "inv", "solve"),
    "picked_kernels": ("interp_values_grad",),
    "shared_inverses": ("solve_grads_by_inverse",),
    "cholesky_terms": (
        "cholesky_solve", "cholesky_log_diagonal", "cholesky_log_diagonal_sum",
        "cholesky_solve_grad", "cholesky_solve_tangent", "cholesky_log_diagonal_grad",
        "cholesky_log_diagonal_tangent", "cholesky_terms_grad",
    ),
    "joins": (
        "concatenate_grads", "block_grads", "block_of", "stack_grads", "hstack_grads",
        "vstack_grads", "array_grads", "r_concat", "c_concat", "r_concat_grads", "c_concat_grads",
        "linspace_grads", "linspace_grads_transpose", "arange_grads", "arange_tangent", "concat",
        "concat_grads", "repeated", "repeated_grads",
    ),
    "elementwise": (
        "clip_mask", "tie_weight", "nan_tie_weight", "power_base_factor", "power_exponent_factor",
        "polygamma", "LN2", "LN10",
    ),
    "singular": ("zero_guard", "zero_guard_sum"),
    "complex_numbers": (
        "is_complex_value", "real_for", "conj_if_complex", "real_if_complex", "abs_direction",
        "abs_grad", "abs_jvp", "angle_grad", "angle_jvp", "sign_grad", "sign_jvp", "imag_grad",
        "imag_tangent", "complex_grads", "real_only", "finite_parts",
    ),
    "fourier": (
        "fft_grad", "fftn_grad", "rfft_grad", "rfftn_grad", "irfft_grad", "irfftn_grad",
        "hfft_grad", "ihfft_grad",
    ),
    "seeding": (
        "seed_cotangent", "seed_sum", "conform_gradient", "not_an_aux_pair", "aux_pair_error",
        "split_aux_pair",
    ),
    "accumulate": (
        "add", "zeros_like", "spread_grads", "choice_grads", "sum_tangents", "choice_tangent",
    ),
    "containers": (
        "saved_entry", "restored_entry", "entry_cotangent", "without_entry", "keys_of", "has_key",
        "sort_order", "best_index", "sequence_length", "record", "record_fields",
        "record_fields_transpose",
    ),
    "container_cotangents": (
        "added_at_key", "added_at", "sequence_cotangent", "sequence_cotangent_transpose",
        "container_cotangent", "container_cotangent_transpose", "attributes_cotangent",
        "attributes_cotangent_transpose", "picks_cotangent", "picks_cotangent_transpose",
    ),
    "reshaping": (
        "identity", "copied", "getitem_grad", "getattr_grad", "sequence_grad",
        "sequence_grad_transpose", "last_and_rest", "pushed", "pushed_many",
        "pushed_many_transpose", "transpose_grad", "reshape_like", "asarray_grad", "zero_at",
        "saved_at", "restored_at", "position", "slice_position", "snapshot", "writable_copy",
        "argument_copy", "entry_copy", "dict_copy", "entry_zero_like",
    ),
    "scans": (
        "cumsum_grad", "diff_grad", "diagonal_grad", "trace_grad", "take_grad",
        "take_along_axis_grad", "tile_grad", "repeat_grad", "pad_grad", "pad_tangent",
        "uniform_gradient", "uniform_gradient_grad", "axis_length",
    ),
    "writes": (
        "add_at", "put", "put_values_grad", "put_values_grad_transpose", "put_along",
        "put_along_values_grad", "put_along_values_grad_transpose", "written_part",
        "written_part_transpose", "sort_grad", "sort_tangent",
    ),
    "tangents": ("broadcast_like",),
    "objects": (
        "has_class", "has_method", "holds_own", "is_same", "unseen_callee", "attribute_tangent",
    ),
    "branches": ("expect_branch", "expect_divisor", "expect_positive"),
    "effects": ("note_effect",),
    "refusals": ("unsupported",),
    "foreign": ("as_array", "numpy_only"),
    "composites": (
        "vdot_grads", "cumprod_grad", "cumprod_jvp", "nanvar_grad", "nanvar_jvp", "average_grad",
        "average_weights_grad", "average_jvp", "kron_grads", "polyval_grads",
        "polyder_coefficients", "convolve_grads", "correlate_grads", "meshgrid_grads",
        "meshgrid_jvp", "geomspace_grads", "tensorinv_grad", "tensorinv_jvp", "tensorsolve_grads",
        "tensorsolve_jvp", "norm_weights", "norm_grad", "norm_jvp", "interp_grads", "interp_jvp",
        "sinc_slope", "diag_grad", "diagflat_grad", "digamma", "over_x",
    ),
    "selections": (
        "select_grads", "compress_grad", "extract_grad", "choose_grads", "partition_grad",
        "partition_jvp", "rollaxis_grad", "column_stack_grads", "dstack_grads", "append_grads",
        "ediff1d_grads", "ediff1d_jvp",
    ),
    "log_sum_exp": ("logsumexp_share", "logsumexp_jvp", "softmax_share"),
    "folds": (
        "logaddexp_fold", "logaddexp_fold_from", "logaddexp_fold_grad", "logaddexp_fold_share",
        "logaddexp_fold_tangent", "logaddexp_fold_from_grad",
    ),
    "softmax_logs": ("log_of_softmax", "log_of_softmax_grad", "log_of_softmax_tangent",
                     "softmax_ratio", "softmax_ratio_grad"),
    "softplus_terms": ("relu_of_softplus", "log1p_tail", "log_tail", "sigmoid_from_tail"),
    "float_lists": ("FLOAT64", "NUMBERS", "runs_on_float_lists"),
    "higher": (
        "unbroadcast_transpose", "unbroadcast_tree", "broadcast_tree", "ratio_or_zero",
        "ratio_or_zero_times",
        "spread_grads_transpose", "choice_grads_transpose", "getattr_grad_transpose",
        "last_and_rest_transpose", "entry_cotangent_transpose", "without_entry_transpose",
        "restored_entry_tangent", "prod_grad_dprod", "prod_grad_dprod_transpose", "prod_grad_dx",
        "power_base_second_factor", "einsum_grads_transpose", "einsum_grads_doperands",
        "einsum_grads_doperands_transpose", "sum_tangents_transpose", "choice_tangent_transpose",
        "einsum_jvp_doperands", "custom_cotangents_tangent", "custom_cotangents_transpose",
    ),
    "custom": (
        "stop_gradient", "stop_recording", "grad_of", "CustomGradient", "custom_cotangents",
        "valued",
    ),
    "fastpath": ("pop_many", "reversed", "zeros_of"),
    "checkpoints": ("checkpoint_plan", "checkpoint_keeps", "checkpoint_start", "state_copy"),
    "counting": ("counted", "range_stop"),
}
_HOMES = {name: module for module, names in _EXPORTS.items() for name in names}

# rt.NAME that is a module under another name, imported when first read (a module of the
# runtime is read under its own: rt.scipy_linalg, so the runtime needs SciPy only where a
# program uses SciPy)
_ON_DEMAND = {"batch": "srctrans.runtime.batching", "special": "scipy.special"}


def __getattr__(name):
    """``rt.NAME`` read for the first time: imports the module that defines it (binding all
    that module's exports here, so that later reads are look-ups), or the module it names
    (one of ``_ON_DEMAND``, or of the runtime's own)."""
    if name in _HOMES:
        module = importlib.import_module(f"{__name__}.{_HOMES[name]}")
        namespace = globals()
        for exported in _EXPORTS[_HOMES[name]]:
            namespace[exported] = getattr(module, exported)
        return namespace[name]
    if name in _ON_DEMAND:
        value = globals()[name] = importlib.import_module(_ON_DEMAND[name])
        return value
    if not name.startswith("_"):          # a module of the runtime (rt.decompositions.NAME)
        try:
            return importlib.import_module(f"{__name__}.{name}")   # (binds it here)
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_HOMES) | set(_ON_DEMAND))

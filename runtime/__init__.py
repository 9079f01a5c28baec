"""What generated code calls, and nothing else.

Generated adjoints and tangents reach this package through one reserved name
(``rt`` unless the user's function already uses it). Everything here is plain
NumPy, so a generated function needs only NumPy and this package to run.

Modules:
  broadcast    -- summing a gradient back to the shape of a broadcast input
  reductions   -- gradients of sum/mean/prod/var/std/max/min along axes
  linalg       -- gradients of matmul, dot, inner, outer, tensordot, einsum
  joins        -- splitting the gradient of concatenate/stack among inputs
  elementwise  -- masks and weights for clip, maximum/minimum, abs
  reshaping    -- cotangents of subscript reads and writes, transposes, conversions
  accumulate   -- adding cotangents of unknown type (containers entry by entry)
  containers   -- taking containers (tuple, list, dict, named tuple, dataclass) apart and back
  seeding      -- the output gradient: ones by default, or a checked cotangent
  fastpath     -- shortcuts for hot loops (a reversed loop's saved values, all at once;
                  the zero of a known number or array)
"""

from runtime.broadcast import unbroadcast
from runtime.reductions import (
    unreduce, mean_grad, extremum_grad, prod_grad, var_grad, std_grad)
from runtime.linalg import (
    matmul_lhs, matmul_rhs, dot_lhs, dot_rhs, inner_lhs, inner_rhs,
    outer_lhs, outer_rhs, tensordot_lhs, tensordot_rhs, einsum_grads)
from runtime.joins import (
    concatenate_grads, stack_grads, hstack_grads, vstack_grads, array_grads)
from runtime.elementwise import (
    clip_mask, tie_weight, power_base_factor, power_exponent_factor, LN2, LN10)
from runtime.seeding import seed_cotangent, conform_gradient
from runtime.accumulate import add, zeros_like, spread_grads, choice_grads
from runtime.containers import saved_entry, restored_entry, entry_cotangent, without_entry
from runtime.reshaping import (
    identity, getitem_grad, getattr_grad, last_and_rest, transpose_grad, asarray_grad, zero_at,
    saved_at, restored_at)
from runtime.fastpath import pop_many, zeros_of

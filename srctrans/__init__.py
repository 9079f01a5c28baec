"""srctrans: automatic differentiation of Python/NumPy functions by source transformation.

The public API:
  grad, value_and_grad, vjp  -- reverse mode (vector-Jacobian products)
  jvp                        -- forward mode (Jacobian-vector products)
  jacobian, batch_jacobian, hessian, hvp -- composed from the two modes
  source                     -- the generated derivative's source text
  export                     -- the derivative as a standalone module that needs only NumPy
  check_grads                -- compare derivatives with finite differences
  stop_gradient, stop_recording, grad_of, custom_gradient,
  register_vjp, register_jvp, nondifferentiable, differentiate_through
                             -- controlling gradients (srctrans.gradient_control)
  SrcTransError and its subclasses -- every error srctrans raises on purpose
"""

from srctrans.api import grad, value_and_grad, vjp, source
from srctrans.forward_api import jvp
from srctrans.composed import jacobian, batch_jacobian, hessian, hvp
from srctrans.cache import clear as clear_cache
from srctrans.checks import check_grads
from srctrans.export import export
from srctrans.gradient_control import (
    stop_gradient, stop_recording, grad_of, custom_gradient, register_vjp, register_jvp,
    nondifferentiable, differentiate_through)
from srctrans.errors import (
    SrcTransError, UnsupportedSyntaxError, NoSourceError, MissingRuleError,
    NonDifferentiableError, ShapeError, UsageError, UnsupportedArrayError, CallError, InternalError)

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "jacobian", "batch_jacobian", "hessian", "hvp",
    "source", "export", "check_grads", "clear_cache",
    "stop_gradient", "stop_recording", "grad_of", "custom_gradient", "register_vjp",
    "register_jvp", "nondifferentiable", "differentiate_through",
    "SrcTransError", "UnsupportedSyntaxError", "NoSourceError", "MissingRuleError",
    "NonDifferentiableError", "ShapeError", "UsageError", "UnsupportedArrayError", "CallError",
    "InternalError",
]
__version__ = "0.1.0"

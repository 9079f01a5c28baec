"""srctrans: automatic differentiation of Python/NumPy functions by source transformation.

The public API:
  grad, value_and_grad, vjp  -- reverse mode (vector-Jacobian products)
  jvp                        -- forward mode (Jacobian-vector products)
  jacobian, batch_jacobian, hessian, hvp -- composed from the two modes
  vmap                       -- a function of one example run on a batch, vectorised
  source                     -- the generated derivative's source text
  clear_cache, cache_directory, set_cache_directory
                             -- the caches: in memory, and on disk for later processes
  export                     -- the derivative as a standalone module that needs only NumPy
  check_grads                -- compare derivatives with finite differences
  stop_gradient, stop_recording, grad_of, custom_gradient, checkpoint, checkpointed,
  register_vjp, register_jvp, nondifferentiable, differentiate_through
                             -- controlling gradients (srctrans.gradient_control)
  register_pytree            -- which attributes of a class of yours carry derivatives
  SrcTransError and its subclasses -- every error srctrans raises on purpose
"""

from typing import TYPE_CHECKING

from srctrans.errors import (
    SrcTransError, UnsupportedSyntaxError, NoSourceError, MissingRuleError,
    NonDifferentiableError, ShapeError, UsageError, UnsupportedArrayError, CallError, InternalError)

# The compiler is imported when a program first asks for one of these (``st.grad``), not by
# ``import srctrans``: a script that imports srctrans and never differentiates pays nothing
# beyond NumPy, and one that does pays once, at its first derivative.
_PUBLIC = {
    "grad": "srctrans.api", "value_and_grad": "srctrans.api", "vjp": "srctrans.api",
    "source": "srctrans.shown_source", "jvp": "srctrans.forward_api",
    "jacobian": "srctrans.composed", "batch_jacobian": "srctrans.composed",
    "hessian": "srctrans.second_order", "hvp": "srctrans.second_order",
    "check_grads": "srctrans.checks", "export": "srctrans.exporting",
    "stop_gradient": "srctrans.gradient_control", "stop_recording": "srctrans.gradient_control",
    "grad_of": "srctrans.gradient_control", "custom_gradient": "srctrans.gradient_control",
    "checkpoint": "srctrans.gradient_control", "checkpointed": "srctrans.gradient_control",
    "register_vjp": "srctrans.gradient_control", "register_jvp": "srctrans.gradient_control",
    "nondifferentiable": "srctrans.gradient_control",
    "differentiate_through": "srctrans.gradient_control",
    "register_pytree": "srctrans.pytrees",
    "vmap": "srctrans.batch_api", "BatchingWarning": "srctrans.batch_api",
}
_RENAMED = {"clear_cache": ("srctrans.cache", "clear"),
            "cache_directory": ("srctrans.cache", "cache_directory"),
            "set_cache_directory": ("srctrans.cache", "set_cache_directory")}


def __getattr__(name):
    """The public function ``name``, imported from its module on first use (PEP 562)."""
    import importlib
    if name in _PUBLIC:
        module, attribute = _PUBLIC[name], name
    elif name in _RENAMED:
        module, attribute = _RENAMED[name]
    else:
        raise AttributeError(f"module 'srctrans' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value               # later look-ups are plain attribute reads
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC) | set(_RENAMED))


if TYPE_CHECKING:                          # what type checkers and the docs see
    from srctrans.api import grad, value_and_grad, vjp
    from srctrans.shown_source import source
    from srctrans.forward_api import jvp
    from srctrans.composed import jacobian, batch_jacobian
    from srctrans.second_order import hessian, hvp
    from srctrans.cache import clear as clear_cache, cache_directory, set_cache_directory
    from srctrans.checks import check_grads
    from srctrans.exporting import export
    from srctrans.gradient_control import (
        stop_gradient, stop_recording, grad_of, custom_gradient, checkpoint, checkpointed,
        register_vjp, register_jvp, nondifferentiable, differentiate_through)
    from srctrans.pytrees import register_pytree
    from srctrans.batch_api import vmap, BatchingWarning

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "jacobian", "batch_jacobian", "hessian", "hvp",
    "source", "export", "check_grads", "clear_cache", "cache_directory", "set_cache_directory",
    "stop_gradient", "stop_recording", "grad_of", "custom_gradient", "checkpoint", "checkpointed",
    "register_vjp", "register_jvp", "nondifferentiable", "differentiate_through", "register_pytree",
    "vmap", "BatchingWarning", "SrcTransError", "UnsupportedSyntaxError", "NoSourceError", "MissingRuleError",
    "NonDifferentiableError", "ShapeError", "UsageError", "UnsupportedArrayError", "CallError",
    "InternalError",
]
__version__ = "0.1.0"

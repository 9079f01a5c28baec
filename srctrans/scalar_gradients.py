"""The gradient with respect to one number, by forward mode.

Requires: a gradient asked of a function with a scalar output with respect to one
Python float, whose fused reverse gradient, specialised on a call's shape key, ran
on that call and returned ``raw``.
Guarantees: :func:`forward_gradient` returns ``NAME_grad(*args) -> (g,)``, the
output's tangent along the number's tangent 1.0 (``pipeline.build_forward`` with
``tangent_only="gradient"``), specialised on the same call's shapes, when the
function runs a loop; None for code without loops, and when forward mode may not
give what the reverse pass gives: a ``with st.grad_of``
block (backward-pass code), a user's rule (a VJP need not be the transpose of
any JVP), no forward rule, code not specialised on shapes, or a tangent that
differs from ``raw`` on the call at hand by more than rounding.

A derivative with respect to one number is one directional derivative: forward
mode computes it alongside the values, with no tape and no second pass, where
the reverse pass stores every intermediate the backward pass reads and runs the
loops twice. Code without loops keeps its reverse pass (its optimisations make
it as fast as the tangent's, or faster).

``srctrans.api`` runs it on the short path (from the third call with a shape key
on); the first calls run the reverse code. The two agree to rounding: the short
path checks the tangent against the reverse gradient once, when it is made.
"""

import numpy as np

from srctrans.builds import builds_reached
from srctrans.errors import SrcTransError
from srctrans.interface import API
from srctrans.rules import REGISTRY
from srctrans.runtime.branches import MissedBranch


def forward_gradient(fn, reverse, args, names, places, raw, instance=False):
    """The forward-mode gradient of ``fn`` for calls shaped like ``args``, or None.

    ``reverse`` is the reverse instance specialised on their shape key, ``names``
    the selected parameters, ``places`` their ``(position, name, default)`` among
    ``args`` (a bound method's object first), ``raw`` what ``reverse.grad``
    returned for ``args``; with ``instance``, its forward instance rather than the
    function (``st.source`` shows its build). Straight-line code keeps its reverse
    pass, which is optimised further; a loop's reverse pass saves each step's values
    and runs the steps again backward, where forward mode runs them once."""
    if not may_take(reverse, args, places) or len(raw) != 1 or \
            not isinstance(raw[0], (float, np.floating)):
        return None
    try:
        generic = API.forward_instance(fn, tuple(names), True, tangent_only="gradient")
        if not generic.build.specialisable or not _same_derivative(generic.build):
            return None
        specialised = generic.for_call(fn, tuple(args), {}, now=True)
        if specialised is generic:
            return None
        tangent = specialised.jvp(*args)[0]
    except (SrcTransError, MissedBranch, ArithmeticError, ValueError, TypeError):
        return None
    if not isinstance(tangent, (float, np.floating)) or not _agree(tangent, raw[0]):
        return None
    return specialised if instance else specialised.jvp


def may_take(reverse, args, places):
    """Whether :func:`forward_gradient` may make a forward-mode gradient of the function whose
    reverse instance ``reverse`` is specialised on ``args`` (before running either): one
    selected Python float, and a loop."""
    if not reverse.build.has_loops or len(places) != 1:
        return False
    position = places[0][0]
    return position is not None and position < len(args) and type(args[position]) is float


def _same_derivative(build):
    """Whether forward mode differentiates ``build``'s function and every callee as the
    reverse pass does: no backward-pass code left out, no rule a user registered."""
    for found in builds_reached(build):
        if found.backward_code:
            return False
        for callee in found.consulted:
            rule = REGISTRY.lookup(callee)
            if rule is not None and (rule.custom_vjp or rule.custom_jvp) is not None:
                return False
    return True


def _agree(tangent, gradient):
    """Whether two computations of one derivative agree to rounding (both non-finite alike)."""
    tangent, gradient = float(tangent), float(gradient)
    if not (np.isfinite(tangent) and np.isfinite(gradient)):
        return tangent == gradient or (np.isnan(tangent) and np.isnan(gradient))
    return abs(tangent - gradient) <= 1e-6 * max(abs(tangent), abs(gradient), 1e-300)

"""``st.source``: the generated source of a derivative, as a user reads it.

Requires: the cache's instances (``examples.instance_for`` builds what example arguments
reach), and ``scalar_gradients`` for the forward-mode gradient a call may run.
Guarantees: :func:`source` returns the generated functions a derivative runs, callers
before callees, each once; with example arguments, under a comment saying which code a
call with them runs (specialised on their shapes or not, and why not), and, where calls
from the third on run a forward-mode gradient, that gradient after the reverse code.
"""

import functools
import textwrap
import types

from srctrans import examples, scalar_gradients
from srctrans.builds import builds_reached
from srctrans.shape_keys import reads_outside_data
from srctrans.errors import UsageError
from srctrans.hints import Function, Mode, Wrt
from srctrans.reporting import user_facing
from srctrans.runtime.branches import MissedBranch
from srctrans.selection import Selection, unwrap


@user_facing
def source(f: Function, mode: Mode = "reverse", wrt: Wrt = 0, optimize: bool = True,
           args: tuple | None = None) -> str:
    """The generated source of ``f``'s derivative, as text.

    Args:
      f: the function.
      mode: ``"reverse"`` (the forward and backward passes of the adjoint) or
        ``"forward"`` (the JVP: the function computing the output and its tangent).
      wrt: the selected arguments, as in [`grad`][srctrans.grad].
      optimize: show the optimised code (default) or the raw output of the
        differentiation pass.
      args: example arguments (a tuple); when given, show the code a call with
        them runs, as [`grad`][srctrans.grad] and [`jvp`][srctrans.jvp] run it:
        built for the objects and functions they reach, specialised on their
        shapes where srctrans specialises such a call (the function is run once
        to measure them), under a comment saying which, and why not when not.

    Raises [`UsageError`][srctrans.errors.UsageError] without ``args`` for a function that calls
    a value passed in to it (``model(x)``) with no branch built yet: the code to
    show depends on the arguments.

    Returns the generated functions of ``f``, followed by those of every user
    function they differentiate through. For ``f`` made by [`vmap`][srctrans.vmap],
    the batched code a call with ``args`` (required) runs, with the batched forms of
    the functions it calls.
    """
    batched = getattr(f, "batched_source", None)
    if isinstance(batched, types.MethodType):   # st.vmap(f): the batched code a call runs
        return batched(args)
    if mode not in ("reverse", "forward"):
        raise UsageError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    fn, bound_self = unwrap(f)
    signature_fn = fn if bound_self is None else functools.partial(fn, bound_self)
    selection = Selection(signature_fn, wrt)
    call_args = selected = None
    if args is not None:
        call_args = tuple(args) if bound_self is None else (bound_self,) + tuple(args)
        selected = selection.values(tuple(args), {})
    found = examples.instance_for(fn, selection.names, mode, optimize, call_args, selected)
    if call_args is None:
        examples.refuse_unseen_callees(found.build, getattr(f, "__qualname__", f),
                                       "st.source(f, args=(...)), or on the command line "
                                       "--args '...'")
    forward = _forward_path(fn, bound_self, found, selection, call_args) \
        if mode == "reverse" and optimize and call_args is not None else None
    texts = [_path_comment(fn, found, call_args, optimize, forward is not None)]
    shown = [found.build] + ([forward.build] if forward is not None else [])
    texts += [build.source for build in builds_reached(*shown)]   # callees after callers
    return "\n".join(text for text in texts if text)


def _path_comment(fn, found, call_args, optimize, forward=False):
    """The comment above the code ``st.source`` shows for example arguments: which code a
    call with them runs, and why it is not specialised when it is not; ``forward``: calls
    from the third on run a forward-mode gradient (:func:`_forward_path`), shown after."""
    if call_args is None or not optimize:
        return ""
    if found.specialised:
        said = ("The code a call with these arguments runs: specialised on their shapes (a "
                "call with other shapes runs the generic code first, then its own).")
        checks = " ".join(build.source for build in builds_reached(found.build)) \
            if found.build.speculates else ""
        if "expect_branch(" in checks:
            said += (" It takes each `if` as this call does and checks the tests its shapes "
                     "do not decide (rt.expect_branch): a call that goes the other way runs "
                     "the generic code.")
        if "expect_divisor(" in checks:
            said += (" It divides by the numbers this call found neither 0 nor NaN without "
                     "guarding each quotient, and checks them (rt.expect_divisor): a call "
                     "where one is 0 or NaN runs the generic code.")
        if "expect_positive(" in checks:
            said += (" It divides by the arrays this call found above 0 throughout without "
                     "guarding each quotient, and checks them (rt.expect_positive): a call "
                     "where an entry is not above 0 runs the generic code.")
        if forward:
            said += (" From the third call with these shapes on, the forward-mode gradient "
                     "after it runs instead: the gradient with respect to one number of a "
                     "function with a loop is one tangent along 1.0, with no saved steps and "
                     "no backward loop.")
    else:
        reason = found.why_generic(fn, call_args, {}) or "it is not specialised"
        said = ("The code a call with these arguments runs: the generic code, not specialised "
                f"on their shapes, because {reason}.")
    return _comment(said)


def _comment(said):
    return "".join(f"# {line}\n" for line in textwrap.wrap(said, 88))


def _forward_path(fn, bound_self, found, selection, call_args):
    """The forward-mode gradient's instance (``scalar_gradients``) that calls of ``st.grad``
    with ``call_args`` run from the third on, or None when they keep the reverse code."""
    places = selection.places
    if found.grad is None or not found.specialised or None in [i for i, _, _ in places] \
            or reads_outside_data(fn, found.build.data_names) or found.build.float_values_matter:
        return None
    if bound_self is not None:                     # (call_args hold the object first)
        places = [(index + 1, name, default) for index, name, default in places]
    if not scalar_gradients.may_take(found, call_args, places):
        return None
    try:
        raw = found.grad(*call_args)
    except MissedBranch:      # (code made for another call with this key, which took a branch
        return None           # this one does not: the call runs the generic code)
    return scalar_gradients.forward_gradient(fn, found, call_args, selection.names, places,
                                             raw, instance=True)

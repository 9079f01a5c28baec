"""Derivatives built for example arguments: what ``st.source`` and ``st.export`` show.

Requires: the cache's instances.
Guarantees: :func:`instance_for` returns the instance a call with the example
arguments runs: its calls through values (an object or function passed in and
called) have a branch for each kind the arguments reach, and it is specialised
on their shapes where the build allows; without arguments, the generic
instance, refused by :func:`refuse_unseen_callees` when a call through a value
has no branch yet (the code shown would not be the code that runs).
"""

from srctrans import cache
from srctrans import runtime
from srctrans.builds import builds_reached
from srctrans.errors import UsageError
from srctrans.reporting import noting_callees


def instance_for(fn, names, mode, optimize, args=None, selected=(), gradient=None,
                 guess=True):
    """The instance of ``fn``'s derivative (``mode``: ``"reverse"`` or ``"forward"``) with
    respect to parameters ``names`` for a call with ``args`` (all of the call's arguments,
    the bound object included; ``selected``: the values of ``names`` among them), or the
    generic one without them. ``gradient``: the plain
    gradient function's instance (``"single"`` or ``"tuple"``), as :mod:`srctrans.exporting`
    writes it without arguments. Without ``guess``, code that takes no branch as the
    measuring call took it (``Instance.for_call``)."""
    def built():
        if mode == "forward":
            found = cache.forward_instance(fn, names, optimize)
        elif gradient is not None and args is None:
            found = cache.gradient_instance(fn, names, single=gradient == "single")
        else:
            found = cache.instance(fn, names, optimize)
        if args is None:
            return found, {}
        given = {}
        if mode == "forward":                   # the JVP runs with zero tangents to measure
            given = {found.build.tangents[name]: runtime.zeros_like(value)
                     for name, value in zip(names, selected)}
        found.fwd(*args, **given)               # meets the callees these arguments reach
        return found, given

    found, keywords = noting_callees(built, (), {})
    if args is not None and optimize:
        found = found.for_call(fn, args, keywords, now=True, guess=guess)
    return found


def refuse_unseen_callees(build, what, how):
    """Raise ``UsageError`` when ``build`` (or a callee's) calls a value passed in for which
    no kind of callee has a branch yet (no call has met one): ``what`` names the function,
    ``how`` says how to pass examples."""
    for reached in builds_reached(build):
        unseen = [site for site, kinds in reached.sites.items() if not kinds]
        if unseen:
            raise UsageError(
                f"{what} calls a value passed in to it (at {unseen[0]}): srctrans builds "
                "such a call for the objects and functions a call meets, so its code depends "
                "on the arguments", hint=f"pass example arguments: {how}")

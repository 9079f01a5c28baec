"""Every built derivative is cached: asking again costs a dictionary look-up.

Two levels, guarded by one re-entrant lock (builds of callers build callees):
  * builds, keyed on the function's code object and the options; a build is
    reused for another function object with the same code as long as the
    non-local names it resolved (called functions, modules) still denote the
    same objects;
  * instances (the live generated functions bound to one function object's
    closure), keyed weakly on the function object and the options.
A call that re-enters the build of a function already being built is a
recursive call and is rejected with the caller's location.
"""

import threading
import weakref

from srctrans.errors import UnsupportedSyntaxError
from srctrans.parse.resolve import still_valid
from srctrans.pipeline import build_reverse

_lock = threading.RLock()
_builds = {}                                 # (code, options) -> [Build]
_instances = weakref.WeakKeyDictionary()     # function -> {options: (fwd, bwd, build)}
_in_progress = set()


def reverse_pair(fn, wrt, optimize=True, unconnected_zero=False, location=None):
    """``(fwd, bwd, build)`` of ``fn`` with respect to the parameter names ``wrt``."""
    options = ("reverse", tuple(wrt), bool(optimize), bool(unconnected_zero))
    per_function = _instances.get(fn)
    if per_function is not None:
        hit = per_function.get(options)
        if hit is not None:
            return hit
    with _lock:
        build = _find_build(fn, options)
        if build is None:
            build = _new_build(fn, options, location)
        fwd, bwd = build.compiled.instantiate(fn)
        fwd.__defaults__ = fn.__defaults__
        fwd.__kwdefaults__ = fn.__kwdefaults__
        entry = (fwd, bwd, build)
        _instances.setdefault(fn, {})[options] = entry
        return entry


def _find_build(fn, options):
    for build in _builds.get((fn.__code__, options), ()):
        if still_valid(fn, build.assumptions):
            return build
    return None


def _new_build(fn, options, location):
    code = fn.__code__
    if code in _in_progress:
        raise UnsupportedSyntaxError(
            f"recursive call of {fn.__qualname__} cannot be differentiated", location,
            "rewrite the recursion as a loop, or give the function a rule with st.register_vjp")
    _, wrt, optimize, unconnected_zero = options

    def build_callee(callee, callee_wrt, call_location):
        fwd, bwd, _ = reverse_pair(callee, callee_wrt, optimize, True, call_location)
        return fwd, bwd

    _in_progress.add(code)
    try:
        build = build_reverse(fn, wrt, build_callee, optimize, unconnected_zero)
    finally:
        _in_progress.discard(code)
    _builds.setdefault((code, options), []).append(build)
    return build


def clear():
    """Forget every build and instance (for benchmarks of the first call)."""
    with _lock:
        _builds.clear()
        _instances.clear()

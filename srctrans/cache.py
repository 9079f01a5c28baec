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

Builds run with enough recursion headroom for the function's deepest
expression (the passes recurse over syntax trees).
"""

import contextlib
import gc
import threading
import types
import weakref

from srctrans.runtime import objects
from srctrans.assumed import callees_current, link_callees
from srctrans.build_guards import (
    building, in_progress, recursion_error, refuse_missing_return_here, with_location)
from srctrans.instances import MAX_SPECIALISATIONS, ForwardInstance, Instance  # noqa: F401
from srctrans.normalize.auxiliary import has_aux

from srctrans.emit.compile import forget_sources
from srctrans.interface import API
from srctrans.persist import entries as stored
from srctrans.parse.resolve import still_valid
from srctrans.parse.source import forget_compiled_files, parse_function
from srctrans.rules import REGISTRY

_lock = threading.RLock()
_builds: dict[tuple, list] = {}              # _build_key(fn, options) -> [Build]
_instances: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> {options: ...}
_memos: list = []                            # the API's per-function memos (see memo)


def memo():
    """A new per-function memo (weak on the function) that `clear` empties too."""
    table = weakref.WeakKeyDictionary()
    _memos.append(table)
    return table


def reverse_pair(fn, wrt, optimize=True, unconnected_zero=False, location=None):
    """``(fwd, bwd, build)`` of ``fn`` with respect to the parameter names ``wrt``.

    ``location`` is where ``fn`` is called from when it is a callee of
    another function being built; errors about ``fn`` itself then name it.
    """
    found = instance(fn, wrt, optimize, unconnected_zero, location)
    return found.fwd, found.bwd, found.build


def instance(fn, wrt, optimize=True, unconnected_zero=False, location=None, shapes=None):
    """The `Instance` of ``fn``'s derivative for these options, built if needed.

    ``shapes`` (a tuple of (name, shape) pairs) asks for the backward pass
    specialised on those shapes of the forward values (see `Instance.for_call`).
    """
    options = ("reverse", tuple(wrt), bool(optimize), bool(unconnected_zero), shapes)
    return _cached(fn, options, location, _new_build, Instance)


def gradient_instance(fn, wrt, single=False, location=None):
    """The `Instance` of ``fn`` whose ``grad`` is the plain gradient function.

    ``grad(*args)`` returns the gradient of the output's sum with respect to
    ``wrt`` (the only one when ``single``, else a tuple; zeros where the output
    does not depend on a parameter), for arguments of any shape. It is
    generated source like every derivative, so it can be differentiated again.
    """
    options = ("gradient", tuple(wrt), True, True, "single" if single else "tuple")
    return _cached(fn, options, location, _new_build, Instance)


def _cached(fn, options, location, new_build, kind):
    """The instance (of class ``kind``) of ``fn`` for ``options``; built by ``new_build`` if needed."""
    if not isinstance(fn, types.FunctionType):
        with_location(parse_function, fn, location, True)     # raises NoSourceError
    per_function = _instances.get(fn)
    if per_function is not None:
        hit = per_function.get(options)
        if hit is not None and hit.current(fn):
            return hit
    with _lock:
        build = _find_build(fn, options)
        if build is None:
            build = _build_callees_first(fn, options, location, new_build)
        found = kind(fn, *build.compiled.instantiate(fn), build)
        _instances.setdefault(fn, {})[options] = found
        return found


# Builds nest (the build of a caller asks for its callees' as it meets their calls),
# at most this deep; deeper, the callee is built first, from the outermost build.
MAX_NESTED_BUILDS = 8
_nesting = [0]          # how deep the current build is (builds hold _lock: one thread at a time)


class _NeedsCallee(BaseException):
    """Raised by a build nested too deep: build this request first, then try again.

    A BaseException, so that no ``except Exception`` on the way can swallow it.
    """

    def __init__(self, request):
        super().__init__()
        self.request = request


def _build_callees_first(fn, options, location, new_build):
    """A new build of ``fn`` for ``options``, recorded in ``_builds``.

    The stack of Python frames does not grow with the depth of the user's call
    chain: a build nested ``MAX_NESTED_BUILDS`` deep stops and asks (with
    `_NeedsCallee`) for its callee to be built first; the outermost
    build keeps a list of such requests and works through it, retrying each
    caller once its callee is cached. Each function is then built about twice
    at worst. A request for a function whose build is waiting on the list is
    recursion, reported at the call.
    """
    request = (fn, options, location, new_build)
    if _nesting[0] >= MAX_NESTED_BUILDS:
        raise _NeedsCallee(request)
    if _nesting[0] > 0:
        return _recorded_build(*request)
    with _collector_paused():
        return _build_pending(request)


def _build_pending(request):
    """The outermost build's loop (see `_build_callees_first`)."""
    pending = [request]          # the codes of all but the last are in in_progress
    try:
        while True:
            try:
                build = _recorded_build(*pending[-1])
            except _NeedsCallee as need:
                callee, _, call_location, _ = need.request
                if any(callee.__code__ is waiting[0].__code__ for waiting in pending):
                    raise recursion_error(callee, call_location) from None
                in_progress.add(pending[-1][0].__code__)
                pending.append(need.request)
                continue
            pending.pop()
            if not pending:
                return build
            in_progress.discard(pending[-1][0].__code__)      # retried next
    finally:
        in_progress.difference_update(waiting[0].__code__ for waiting in pending)


@contextlib.contextmanager
def _collector_paused():
    """Python's cycle collector off while a build runs (it is turned on again after).

    A build makes hundreds of thousands of syntax-tree nodes that live until it
    ends; the collector would scan them again and again as they accumulate,
    about a tenth of a large build's time. What the build leaves as garbage is
    collected after it, as usual.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _recorded_build(fn, options, location, new_build):
    """The build of ``fn`` for ``options`` from the persistent cache, else
    ``new_build(fn, options, location)`` (then kept there); recorded in ``_builds``.
    Counts as one nesting."""
    _nesting[0] += 1
    try:
        build = stored.load(fn, options, _instance_for)
        made = build is None
        if made:
            build = new_build(fn, options, location)
        else:
            link_callees(build)
    finally:
        _nesting[0] -= 1
    build.options = options
    build.speculates = _speculates(build)
    build.may_write = build.notes_effects or any(found.build.may_write
                                                 for _, found in build.callees)
    if made:
        stored.save(fn, options, build)
    _builds.setdefault(_build_key(fn, options), []).append(build)
    return build


def _speculates(build):
    """Whether ``build`` (built for ``build.options``), or a callee's, checks as it runs a
    branch it took as the measuring call did, or a number it divides by (``runtime.branches``)."""
    mode, *_, shapes = build.options
    own = mode == "reverse" and bool(shapes) and (any(checked for _, _, checked in shapes[2])
                                                  or bool(shapes[4]))
    return own or any(found.build.speculates for _, found in build.callees)


def _instance_for(fn, options):
    """The instance of ``fn`` for cache ``options`` of any mode (a callee of a stored build)."""
    if options[0] == "forward":
        return _cached(fn, options, None, _new_forward_build, ForwardInstance)
    return _cached(fn, options, None, _new_build, Instance)


def _build_key(fn, options):
    """Builds of one code object for ``options`` are shared by the functions running it, but
    for the variant of a function differentiated with ``has_aux`` (another transform of it)."""
    return (fn.__code__, has_aux(fn), options)


def _find_build(fn, options):
    for build in _builds.get(_build_key(fn, options), ()):
        if still_valid(fn, build.assumptions) and objects.sites_covered(build.sites) \
                and objects.methods_unchanged(build.methods) \
                and callees_current(build):
            return build
    return None


def _new_build(fn, options, location):
    """A reverse-mode build of ``fn`` for ``options`` (``_cached`` records it)."""
    mode, wrt, optimize, unconnected_zero, shapes = options
    gradient = None
    if mode == "gradient":        # the plain gradient function; the last option says its form
        gradient, shapes = shapes, None
    own_shapes, callee_shapes, tests, floats, divisors = shapes if shapes else ((),) * 5
    callee_shapes = dict(callee_shapes)
    callees = []

    def build_callee(callee, callee_wrt, call_location, residuals):
        found = instance(callee, callee_wrt, optimize, True, call_location,
                         shapes=callee_shapes.get(residuals))
        callees.append((callee, found))
        build_callee.residuals[residuals] = found
        spread = found.spread_grad
        return found.fwd, found.bwd, spread and (spread, found.build.spread_seed)

    build_callee.residuals = {}

    with building(fn, location):
        from srctrans import pipeline           # not needed when every build is stored
        refuse_missing_return_here(fn, location)
        with REGISTRY.recording() as consulted:
            build = with_location(pipeline.build_reverse, fn, location, wrt, build_callee,
                                   optimize, unconnected_zero, dict(own_shapes) or None, gradient,
                                   {name: value for name, value, _ in tests},
                                   {name for name, _, checked in tests if checked},
                                   frozenset(floats), frozenset(divisors))
    build.consulted = list(consulted.values())
    build.callees = tuple(callees)
    build.callee_residuals = build_callee.residuals
    link_callees(build)
    return build


def clear(persistent=False):
    """Forget every build and instance, and the generated source kept for tracebacks.

    With ``persistent=True``, also delete every entry of the persistent cache
    (the directory [`cache_directory`][srctrans.cache_directory] names), so that later
    processes build afresh too.
    """
    with _lock:
        _builds.clear()
        _instances.clear()
        for table in _memos:
            table.clear()
        forget_sources()
        forget_compiled_files()
        stored.forget()
        if persistent:
            stored.clear()


def cache_directory():
    """The directory of the persistent cache this process uses, or None when it is off.

    Derivatives built by one process are kept there as generated source text
    (JSON entries, never pickles) and read back by later processes instead of
    being built again. It is, in order: the directory [`set_cache_directory`][srctrans.set_cache_directory]
    gave; ``$SRCTRANS_CACHE_DIR`` (an empty value switches the cache off); the
    platform's user cache directory (``~/.cache/srctrans`` on Linux,
    ``~/Library/Caches/srctrans`` on macOS, ``%LOCALAPPDATA%\\srctrans\\Cache``
    on Windows). srctrans creates it private (mode 700) and uses it only while it
    is a directory, not a symbolic link, owned by the user and closed to others;
    otherwise the cache is off for the process, with a ``RuntimeWarning``.
    """
    return stored.directory.location()


def set_cache_directory(path):
    """Use ``path`` for the persistent cache from now on; ``None`` switches it off.

    See [`cache_directory`][srctrans.cache_directory]. Builds already in memory are kept.
    """
    stored.directory.set_location(path)


# -- forward mode ----------------------------------------------------------------

def forward_instance(fn, wrt, optimize=True, location=None, tangent_only=False, shapes=None):
    """The `ForwardInstance` of ``fn``'s JVP with respect to ``wrt``, built if needed.

    ``shapes`` (a tuple of (name, shape) pairs, and a tuple of the names that held
    real floats) asks for the JVP specialised on those shapes of its values (see
    `Instance.for_call`). ``tangent_only`` is True
    for the output's tangent alone, ``"gradient"`` for the gradient with respect to
    one number (``pipeline.build_forward``).
    """
    tangent_only = tangent_only if tangent_only == "gradient" else bool(tangent_only)
    options = ("forward", tuple(wrt), bool(optimize), tangent_only, shapes)
    return _cached(fn, options, location, _new_forward_build, ForwardInstance)


def _new_forward_build(fn, options, location):
    """A forward-mode build of ``fn`` for ``options`` (``_cached`` records it)."""
    _, wrt, optimize, tangent_only, shapes = options
    own_shapes, floats = shapes if shapes else ((), ())
    callees = []

    def build_callee(callee, callee_wrt, call_location):
        found = forward_instance(callee, callee_wrt, optimize, call_location)
        callees.append((callee, found))
        return found.jvp, found.build.tangents

    with building(fn, location):
        from srctrans import pipeline
        refuse_missing_return_here(fn, location)
        with REGISTRY.recording() as consulted:
            build = with_location(pipeline.build_forward, fn, location, wrt, build_callee,
                                   optimize, tangent_only, dict(own_shapes) or None,
                                   frozenset(floats))
    build.consulted = list(consulted.values())
    build.callees = tuple(callees)
    link_callees(build)
    return build


API.forward_instance = forward_instance
API.instance = instance

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

import numpy as np

from srctrans.runtime import objects
from srctrans.assumed import Assumed, callees_current, link_callees, why_unspecialisable
from srctrans.build_guards import (
    building, in_progress, recursion_error, refuse_missing_return_here, with_location)
from srctrans.measuring import (
    Watched, has_shape, watched_callees, measure, run_keeping_locals, settled)
from srctrans.shape_keys import holds_mask, shape_key
from srctrans.runtime.branches import MissedBranch
from srctrans.runtime.seeding import check_outputs, is_complex
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
    if made:
        stored.save(fn, options, build)
    _builds.setdefault(_build_key(fn, options), []).append(build)
    return build


def _speculates(build):
    """Whether ``build`` (built for ``build.options``), or a callee's, checks as it runs a
    branch it took as the measuring call did (``runtime.branches``)."""
    mode, *_, shapes = build.options
    own = mode == "reverse" and bool(shapes) and any(checked for _, _, checked in shapes[2])
    return own or any(found.build.speculates for _, found in build.callees)


def _instance_for(fn, options):
    """The instance of ``fn`` for cache ``options`` of any mode (a callee of a stored build)."""
    if options[0] == "forward":
        return _cached(fn, options, None, _new_forward_build, ForwardInstance)
    return _cached(fn, options, None, _new_build, Instance)


class Instance(Assumed):
    """The generated functions bound to one function object, what they assume
    (:class:`~srctrans.assumed.Assumed`), and the code specialised on the shapes of its calls
    (:meth:`for_call`)."""

    __slots__ = ("fwd", "bwd", "grad", "build", "variants", "unguessed", "repeats", "missed",
                 "_seen")

    def __init__(self, fn, fwd, bwd, *rest):
        *fused, build = rest
        self.grad = fused[0] if fused else None   # NAME_grad, for a scalar output
        for generated in (fwd, self.grad):
            if generated is not None:      # called with the user's arguments: their defaults,
                generated.__defaults__ = fn.__defaults__     # and their name in a TypeError
                generated.__kwdefaults__ = fn.__kwdefaults__
                generated.__qualname__ = fn.__qualname__
        self.fwd, self.bwd, self.build = fwd, bwd, build
        self.variants = {}                   # shape key -> specialised Instance
        self.unguessed = {}                  # shape key -> one that checks no branch
        self._seen = set()                   # shape keys called once, not yet specialised
        self.repeats = {}                    # the short paths of api.grad for calls of this instance
        self.missed = set()                  # shape keys whose specialised code missed a branch
        self._assume(fn, build)

    def _shape_key(self, fn, args, kwargs):
        """This call's shape key for this build (what its specialised code depends on)."""
        build = self.build
        return shape_key(fn, args, kwargs, build.data_names, build.float_values_matter,
                         build.indexes_by_arguments, build.value_floats)

    def made_for(self, fn, args, kwargs, guess=True):
        """The instance `for_call` made for this call's shapes (with ``guess``), or None
        (builds nothing)."""
        if not self.build.specialisable:
            return None
        key = self._shape_key(fn, args, kwargs)
        return None if key is None else (self.variants if guess else self.unguessed).get(key)

    def for_call(self, fn, args, kwargs, now=False, guess=True):
        """The instance to run for this call: specialised on its shapes when possible.

        Specialising is tiered, as a JIT compiler's is: the first call with new
        input shapes runs this (generic) instance, since a gradient asked for
        once would not repay a second build. The second call with those shapes
        runs this instance's forward pass once more to measure the shapes of the
        values the backward pass reads, then builds (or finds) the backward
        pass specialised on them, which later calls reuse. With ``now`` the
        first call specialises (``st.source`` with example arguments, and the
        derivatives that differentiate the gradient again). At most
        ``MAX_SPECIALISATIONS`` shape keys get their own code per instance.
        Without ``guess`` the code takes no branch as the measuring call took it
        unless the key decides it (no ``rt.expect_branch``: what is differentiated
        again, batched or exported, which holds for any values of the key's shapes).
        """
        if not self.build.specialisable:
            return self
        key = self._shape_key(fn, args, kwargs)
        if key is None:
            return self
        variants = self.variants if guess else self.unguessed
        variant = variants.get(key)
        if variant is None:
            if len(variants) >= MAX_SPECIALISATIONS:
                return self
            if not now and key not in self._seen:
                if len(self._seen) >= MAX_SEEN_SHAPES:
                    self._seen.clear()
                self._seen.add(key)
                return self
            self._seen.discard(key)
            variant = variants[key] = self._specialised(fn, args, kwargs, guess)
        return variant

    def run_for_call(self, fn, args, kwargs, run):
        """``run(instance)`` of the instance `for_call` gives this call; when its code meets
        a branch its measuring call had not taken (``runtime.MissedBranch``), ``run(self)``:
        this generic instance, which calls with this call's shape key run from then on."""
        variant = self.for_call(fn, args, kwargs)
        try:
            return run(variant)
        except MissedBranch:
            if variant is self:
                raise
        key = self._shape_key(fn, args, kwargs)
        if key is not None:
            self.variants[key] = self
            self.missed.add(key)
        self.repeats.clear()               # (a short path may run the specialised code)
        return run(self)

    @property
    def specialised(self):
        """Whether this instance's code is specialised on a call's shapes (made by
        :meth:`for_call`), not the generic code."""
        return self.build.options[-1] is not None

    def why_generic(self, fn, args, kwargs):
        """Why a call with ``args`` runs this (generic) instance's code rather than code
        specialised on its shapes, as a phrase; None when it is specialised (after
        :meth:`for_call` with ``now``)."""
        build = self.build
        if not build.specialisable:
            return why_unspecialisable(build)
        key = self._shape_key(fn, args, kwargs)
        if key is None and build.indexes_by_arguments and holds_mask(args, kwargs):
            return ("an argument holds a boolean array (a mask) or a 0-d integer array, and "
                    "the function indexes by values read from its arguments: the shape such "
                    "an index picks depends on its values")
        if key is None:
            return ("an argument is neither an array, a number, a string, None, nor a "
                    "container or object of those (a function, say, or a call through a value)")
        variant = self.variants.get(key)
        if key in self.missed:
            return ("a call with these shapes took a branch its specialised code had not "
                    "taken (a test of values, not of shapes)")
        if variant is self:
            return "its values are complex (complex values run the generic code)"
        if variant is None:
            return f"{MAX_SPECIALISATIONS} shapes of it have specialised code already"
        return None

    def _specialised(self, fn, args, kwargs, guess=True):
        watched = {code: Watched() for code in watched_callees(self.build)}
        (out, residuals), values, varying, taken = self._probe(self.fwd, args, kwargs, watched,
                                                               guess)
        check_outputs(out[0] if has_aux(fn) else out)      # (output, aux): aux is any value
        if any(map(is_complex, values.values())) or is_complex(out):
            return self       # complex values run the generic code (docs/complex.md)
        _, wrt, optimize, unconnected_zero, _ = self.build.options
        return instance(fn, wrt, optimize, unconnected_zero,
                        shapes=measure(self.build, out, residuals, values, varying, watched,
                                       taken=taken, guess=guess))

    def _probe(self, generated, args, kwargs, watched=None, guess=True):
        """``(generated(*args, **kwargs), its local values, varying names, taken)``: the
        values whose shape another call with this shape key may change (they changed during
        the run, depend on the path, or a ``while`` loop that carries them ran no step) are
        named in ``varying`` and left out of the values; ``taken`` is the branches the run
        took, when specialised code may take them alone (``measuring.settled``, with
        ``guess``). ``watched`` maps the code of callees' forward passes
        (``watched_callees``) to a :class:`Watched` that gets their locals, watched alike
        over all their calls in the run."""
        out, values, varying = run_keeping_locals(generated, args, kwargs,
                                                   watch_lines=self.build.has_loops
                                                   or self.build.rebound_in_blocks,
                                                   callees=watched or {})
        return out, *settled(self.build, values, varying, guess)


MAX_SPECIALISATIONS = 8
# Shape keys remembered as called once; a function called with ever new shapes forgets them.
MAX_SEEN_SHAPES = 64


def _build_key(fn, options):
    """Builds of one code object for ``options`` are shared by the functions running it, but
    for the variant of a function differentiated with ``has_aux`` (another transform of it)."""
    return (fn.__code__, has_aux(fn), options)


def _find_build(fn, options):
    for build in _builds.get(_build_key(fn, options), ()):
        if still_valid(fn, build.assumptions) and objects.sites_covered(build.sites) \
                and callees_current(build):
            return build
    return None


def _new_build(fn, options, location):
    """A reverse-mode build of ``fn`` for ``options`` (``_cached`` records it)."""
    mode, wrt, optimize, unconnected_zero, shapes = options
    gradient = None
    if mode == "gradient":        # the plain gradient function; the last option says its form
        gradient, shapes = shapes, None
    own_shapes, callee_shapes, tests = shapes if shapes else ((), (), ())
    callee_shapes = dict(callee_shapes)
    callees = []

    def build_callee(callee, callee_wrt, call_location, residuals):
        found = instance(callee, callee_wrt, optimize, True, call_location,
                         shapes=callee_shapes.get(residuals))
        callees.append((callee, found))
        build_callee.residuals[residuals] = found
        return found.fwd, found.bwd

    build_callee.residuals = {}

    with building(fn, location):
        from srctrans import pipeline           # not needed when every build is stored
        refuse_missing_return_here(fn, location)
        with REGISTRY.recording() as consulted:
            build = with_location(pipeline.build_reverse, fn, location, wrt, build_callee,
                                   optimize, unconnected_zero, dict(own_shapes) or None, gradient,
                                   {name: value for name, value, _ in tests},
                                   {name for name, _, checked in tests if checked})
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

class ForwardInstance(Instance):
    """The generated JVP bound to one function object (``jvp``), and what it assumes.

    `for_call` specialises it as it does a reverse instance: the JVP's
    tangents are keyword arguments of the call.
    """

    __slots__ = ()

    def __init__(self, fn, jvp, build):
        super().__init__(fn, jvp, None, build)

    @property
    def jvp(self):
        return self.fwd

    def _specialised(self, fn, args, kwargs, guess=True):
        out, values, _, _ = self._probe(self.jvp, args, kwargs, guess=False)
        if any(map(is_complex, values.values())) or is_complex(out):
            return self       # complex values run the generic code (docs/complex.md)
        shapes = tuple(sorted((name, np.shape(value)) for name, value in values.items()
                              if has_shape(value)))
        _, wrt, optimize, tangent_only, _ = self.build.options
        return forward_instance(fn, wrt, optimize, tangent_only=tangent_only, shapes=shapes)


def forward_instance(fn, wrt, optimize=True, location=None, tangent_only=False, shapes=None):
    """The `ForwardInstance` of ``fn``'s JVP with respect to ``wrt``, built if needed.

    ``shapes`` (a tuple of (name, shape) pairs) asks for the JVP specialised on
    those shapes of its values (see `Instance.for_call`).
    """
    options = ("forward", tuple(wrt), bool(optimize), bool(tangent_only), shapes)
    return _cached(fn, options, location, _new_forward_build, ForwardInstance)


def _new_forward_build(fn, options, location):
    """A forward-mode build of ``fn`` for ``options`` (``_cached`` records it)."""
    _, wrt, optimize, tangent_only, shapes = options
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
                                   optimize, tangent_only, dict(shapes) if shapes else None)
    build.consulted = list(consulted.values())
    build.callees = tuple(callees)
    link_callees(build)
    return build


API.forward_instance = forward_instance

"""The live code of one function's derivative: the generic instance and the code it
specialises on a call's shapes.

Requires: a build (``builds.Build`` or ``ForwardBuild``) of a function, made by the cache
(``srctrans.cache``), which makes each instance and builds its specialised code
(``API.instance``, ``API.forward_instance``).
Guarantees: an :class:`Instance` holds the generated functions bound to one function object
and what they assume (:class:`~srctrans.assumed.Assumed`); :meth:`Instance.for_call` gives
the instance a call runs (the generic one, or one specialised on its shape key, built on
the second call with that key), :meth:`Instance.run_for_call` runs it and falls back to the
generic code when it meets a branch its measuring call had not taken (later calls with
that key get specialised code that keeps its branches), and
:meth:`Instance.why_generic` says why a call runs the generic code. :class:`ForwardInstance`
is the same for a JVP.
"""

import numpy as np

from srctrans.assumed import Assumed, why_unspecialisable
from srctrans.interface import API
from srctrans.measuring import (
    Watched, float_names, has_shape, watched_callees, measure, run_keeping_locals, settled)
from srctrans.normalize.auxiliary import has_aux
from srctrans.runtime.branches import MissedBranch
from srctrans.runtime.seeding import check_outputs, is_complex
from srctrans.shape_keys import holds_mask, shape_key


class Instance(Assumed):
    """The generated functions bound to one function object, what they assume
    (:class:`~srctrans.assumed.Assumed`), and the code specialised on the shapes of its calls
    (:meth:`for_call`)."""

    __slots__ = ("fwd", "bwd", "grad", "spread_grad", "build", "variants", "unguessed",
                 "repeats", "missed", "_seen")

    def __init__(self, fn, fwd, bwd, *rest):
        *fused, build = rest
        spread = getattr(build, "spread_seed", None) is not None
        self.grad = fused[0] if fused and not spread else None   # NAME_grad, a scalar output's
        # NAME_spread_grad, a callee's: the gradient of its output's sum times a number
        self.spread_grad = fused[0] if fused and spread else None
        for generated in (fwd, self.grad, self.spread_grad):
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
        if key is None:
            return None
        return (self.variants if guess and key not in self.missed else self.unguessed).get(key)

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
        again, batched or exported, which holds for any values of the key's shapes);
        nor does the code of a key whose checked code missed a branch (:meth:`run_for_call`).
        """
        if not self.build.specialisable:
            return self
        key = self._shape_key(fn, args, kwargs)
        if key is None:
            return self
        guess = guess and key not in self.missed
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
        this generic instance. Calls with this call's shape key then get code specialised
        on it that keeps its ``if`` statements (``guess`` off), built on the next such call,
        as a JIT compiler that saw its guard fail compiles the code again without the guess."""
        variant = self.for_call(fn, args, kwargs)
        try:
            return run(variant)
        except MissedBranch:
            if variant is self:
                raise
        key = self._shape_key(fn, args, kwargs)
        if key is not None:
            self.variants.pop(key, None)
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
        missed = key in self.missed
        variant = (self.unguessed if missed else self.variants).get(key)
        if missed and variant is None:
            return ("a call with these shapes took a branch its specialised code had not "
                    "taken (a test of values, not of shapes); the next call with them gets "
                    "code specialised on them that keeps its branches")
        if variant is self:
            return "its values are complex (complex values run the generic code)"
        if variant is None:
            return f"{MAX_SPECIALISATIONS} shapes of it have specialised code already"
        return None

    def _specialised(self, fn, args, kwargs, guess=True):
        watched = {code: Watched() for code in watched_callees(self.build)}
        (out, residuals), values, varying, mixed, taken = self._probe(self.fwd, args, kwargs,
                                                                      watched, guess)
        check_outputs(out[0] if has_aux(fn) else out)      # (output, aux): aux is any value
        if any(map(is_complex, values.values())) or is_complex(out):
            return self       # complex values run the generic code (docs/complex.md)
        _, wrt, optimize, unconnected_zero, _ = self.build.options
        return API.instance(fn, wrt, optimize, unconnected_zero,
                        shapes=measure(self.build, out, residuals, values, varying, watched,
                                       taken=taken, guess=guess, mixed=mixed))

    def _probe(self, generated, args, kwargs, watched=None, guess=True):
        """``(generated(*args, **kwargs), its local values, varying names, mixed names,
        taken)``: the values whose shape another call with this shape key may change (they
        changed during the run, depend on the path, or a ``while`` loop that carries them ran
        no step) are named in ``varying`` and left out of the values; ``mixed`` names those
        that held a float and another kind of number; ``taken`` is the branches the run
        took, when specialised code may take them alone (``measuring.settled``, with
        ``guess``). ``watched`` maps the code of callees' forward passes
        (``watched_callees``) to a :class:`Watched` that gets their locals, watched alike
        over all their calls in the run."""
        out, values, varying, mixed = run_keeping_locals(generated, args, kwargs,
                                                          watch_lines=self.build.has_loops
                                                          or self.build.rebound_in_blocks,
                                                          callees=watched or {})
        values, varying, taken = settled(self.build, values, varying, guess)
        return out, values, varying, mixed, taken


MAX_SPECIALISATIONS = 8
# Shape keys remembered as called once; a function called with ever new shapes forgets them.
MAX_SEEN_SHAPES = 64




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
        out, values, _, mixed, _ = self._probe(self.jvp, args, kwargs, guess=False)
        if any(map(is_complex, values.values())) or is_complex(out):
            return self       # complex values run the generic code (docs/complex.md)
        shapes = tuple(sorted((name, np.shape(value)) for name, value in values.items()
                              if has_shape(value)))
        floats = tuple(float_names(values, mixed))
        _, wrt, optimize, tangent_only, _ = self.build.options
        return API.forward_instance(fn, wrt, optimize, tangent_only=tangent_only,
                                    shapes=(shapes, floats))

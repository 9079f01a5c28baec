"""The public API: grad, value_and_grad, vjp, source.

Every function here is lazy: it builds the derivative the first time it is
called (so functions it calls may be defined after the decorator runs) and
then reuses the cached build.
"""

import functools

import numpy as np

from srctrans import runtime
from srctrans.runtime.branches import MissedBranch
from srctrans.runtime.objects import UnseenCallee
from srctrans.runtime.seeding import check_outputs, is_integer
from srctrans import cache
from srctrans import shape_keys
from srctrans.ownership import argument_arrays, owned
from srctrans.repeat_structures import leaf_arrays
from srctrans.batch_pullbacks import PullbackParts, pullback_plan
from srctrans.reporting import chained_cause, for_user, noting_callees, user_facing
from srctrans import repeat as repeat_path
from srctrans import scalar_gradients
from srctrans.errors import UsageError
from srctrans.hints import Any, Function, Unconnected, Wrt
from srctrans.interface import API
from srctrans.lean_cotangents import lean_gradient
from srctrans.selection import Selection, check_differentiable, selects_self, unwrap
from srctrans.normalize.auxiliary import variant_with_aux

_UNCONNECTED = ("none", "zero")
# function -> {(bound, as tuple, wrt): (Selection, whether wrt selects the bound object)}
_SELECTIONS = cache.memo()


def _finish(gradients, values, unconnected, arguments=()):
    """Shape and type the raw gradients like their inputs, each an array of its own: none
    shares memory with one of ``arguments`` (the call's) or with another gradient, so the
    caller may change it in place (``g *= lr``) and change nothing else."""
    finished = []
    taken = argument_arrays(arguments)
    for g, value in zip(gradients, values):
        if (type(g) is np.ndarray and type(value) is np.ndarray and g.dtype is value.dtype
                and g.shape == value.shape and g.base is None and id(g) not in taken):
            taken.add(id(g))
            finished.append(g)        # the common case: a fresh array of the right kind
        elif g is None:
            if unconnected == "zero":
                g = runtime.zeros_like(value)
            finished.append(owned(runtime.conform_gradient(g, value), taken)
                            if g is not None else None)
        else:
            finished.append(owned(runtime.conform_gradient(g, value), taken))
    return finished


class _Differentiated:
    """The callable returned by [`grad`][srctrans.grad] and [`value_and_grad`][srctrans.value_and_grad]."""

    def __init__(self, f, wrt, unconnected_gradients, optimize, with_value, specialize=True,
                 has_aux=False):
        if unconnected_gradients not in _UNCONNECTED:
            raise UsageError(f"unconnected_gradients must be 'none' or 'zero', not {unconnected_gradients!r}")
        if not callable(f):
            raise UsageError(f"cannot differentiate {f!r}: it is not callable")
        self._f = f
        self._fn = self._self = None
        self._wrt = wrt
        self._selection = None
        self._instance = None
        self._repeat = None            # the short path for calls like the last one
        self._self_selected = False
        self._unconnected = unconnected_gradients
        self._optimize = optimize
        self._specialize = specialize and optimize
        self._with_value = with_value
        self._has_aux = bool(has_aux)
        functools.update_wrapper(self, f, updated=())    # not f.__dict__: f may be a derivative too

    def plain_function(self):
        """The generated function computing this gradient, for any argument shapes.

        It returns what calling ``self`` returns without ``output_gradients``
        (zeros for unconnected arguments), and is plain source, so srctrans
        can differentiate it again: ``grad(grad(f))``, ``jvp`` of a gradient.
        """
        if self._with_value:
            raise UsageError("derivatives of value_and_grad are not supported",
                             hint="differentiate grad(f) instead")
        if self._has_aux:
            raise UsageError("derivatives of grad(f, has_aux=True) are not supported",
                             hint="differentiate grad of a function returning the output alone")
        selection = self._selection or self._select()
        if self._self is not None:
            raise UsageError("derivatives of the gradient of a bound method are not supported",
                             hint="differentiate the gradient of a plain function")
        return cache.gradient_instance(self._fn, selection.names, selection.single).grad

    def _select(self):
        # lazily, so the function and its callees may be defined after grad() runs
        fn, bound_self = unwrap(self._f)
        if self._has_aux:
            fn = variant_with_aux(fn)           # returns (output, aux); aux not differentiated
        wrt = self._wrt
        key = (bound_self is not None, type(wrt) in (tuple, list),
               tuple(wrt) if type(wrt) in (tuple, list) else wrt)
        try:
            known = _SELECTIONS.get(fn, {}).get(key)     # st.grad(f)(x) in a loop: no new signature
        except TypeError:                                # an unhashable wrt: UsageError below
            known = None
        if known is None:
            self_selected = bound_self is not None and selects_self(fn, wrt)
            if bound_self is None or self_selected:
                signature_fn = fn            # wrt="self": the object is the first argument
            else:
                signature_fn = functools.partial(fn, bound_self)
            known = (Selection(signature_fn, wrt), self_selected)
            _SELECTIONS.setdefault(fn, {})[key] = known
        selection, self._self_selected = known
        self._fn, self._self = fn, bound_self
        self._selection = selection      # last: another thread may see it set
        return selection

    def _repeat_for(self, args, specialised, selection, raw):
        """The short path for calls like ``args`` (made once per shape key and dtypes), or None.

        ``raw`` is what the fused gradient returned for ``args`` (a bound method's object
        first, as the guard sees them).
        """
        places = selection.places
        if self._self is not None and not self._self_selected:     # args[0] is the object
            places = [(index + 1, name, default) for index, name, default in places]
        floats = self._instance.build.value_floats    # compared floats: tested by value
        key = shape_keys.guard_key(
            args, shape_keys.value_positions(self._fn, floats, len(args)) if floats else ())
        if not repeat_path.fits(args, key, places):
            return None
        key = tuple(key)
        kinds = (key, tuple(a.dtype for a in leaf_arrays(args)), selection.single,
                 self._unconnected)
        repeats = self._instance.repeats      # shared by every grad(f) of this instance
        repeat = repeats.get(kinds)
        if repeat is None and len(repeats) < cache.MAX_SPECIALISATIONS:
            # with respect to one number: forward mode, where it gives what the reverse pass does
            fused = scalar_gradients.forward_gradient(
                self._fn, specialised, args, selection.names, places, raw)
            if fused is None:            # the reverse gradient, handing containers' back as made
                fused, raw = lean_gradient(specialised.grad, args, raw) or (specialised.grad, raw)
            repeat = repeats[kinds] = repeat_path.make_repeat(
                self._fn, self._instance, fused, args, key, places,
                selection.single, self._finisher(selection), raw) or False
        if repeat:                                # (False: no guard can be made for these)
            repeats[selection.single, self._unconnected] = repeat    # what a new grad(f) tries first
        return repeat or None

    def _guarded(self, args):
        """The arguments the short path's guard takes: a bound method's object first
        (written out again in ``__call__``, where a method call costs a quarter of a
        microsecond)."""
        return args if self._self is None else (self._self, *args)

    def _finisher(self, selection):
        """``finish(raw, values)``: the gradients conformed the general way, as returned."""
        unconnected, single = self._unconnected, selection.single

        def finish(raw, values, arguments=()):
            gradients = _finish(raw, values, unconnected, arguments)
            return gradients[0] if single else tuple(gradients)
        return finish

    def __call__(self, *args, output_gradients=None, **kwargs):
        # (with a short path, the object's class is one whose __call__ is its entry)
        try:
            return noting_callees(self._call, (args, output_gradients, kwargs), {})
        except Exception as error:
            raise for_user(error, self._f, args, kwargs) from chained_cause(error)

    def _full(self, args, kwargs):
        """What ``__call__`` returns by the full path: the short path's entry takes a call
        that is not its own here."""
        return _Differentiated.__call__(self, *args, **kwargs)

    def _failed(self, error, args, kwargs):
        """What the short path's entry raises when the fused gradient it ran raised
        ``error`` (as ``raise for_user(...) from ...`` would), or None: the entry then takes
        the full path, which notes an unseen callee or, after a missed branch, runs the
        generic code."""
        if isinstance(error, MissedBranch):
            self._drop_repeats()
        elif not isinstance(error, UnseenCallee):
            raised = for_user(error, self._f, args, kwargs)
            raised.__cause__, raised.__suppress_context__ = chained_cause(error), True
            return raised
        return None

    def _set_repeat(self, repeat):
        """Take ``repeat`` (a guard of :func:`srctrans.repeat.make_repeat`; None: none) as
        the short path. A call reaches its entry with no step between: the object's class
        becomes one whose ``__call__`` is the entry (an instance's own ``__call__`` is not
        looked up), made once per entry; without one, the class is this one again."""
        self._repeat = repeat    # (never set for has_aux: its output is a pair)
        kind = _Differentiated
        if repeat is not None:
            entry = repeat.entries[self._self is not None]
            kind = entry.__dict__.get("kind")
            if kind is None:
                kind = entry.kind = type(_Differentiated.__name__, (_Differentiated,), {
                    "__call__": entry, "__doc__": _Differentiated.__doc__,
                    "__module__": __name__, "__qualname__": _Differentiated.__qualname__})
        if self.__class__ is not kind:
            self.__class__ = kind

    def _drop_repeats(self):
        """None, after dropping the short paths of this instance: the specialised code one
        ran missed a branch (``MissedBranch``), and the full path runs the generic code."""
        self._set_repeat(None)
        self._instance.repeats.clear()

    def _call(self, args, output_gradients, kwargs):
        repeat = self._repeat
        if repeat is not None and not kwargs and output_gradients is None:
            try:                                    # (again: a callee was noted)
                gradients = repeat(self._fn, self._guarded(args))
            except MissedBranch:
                gradients = self._drop_repeats()
            if gradients is not None:
                return gradients
        selection = self._selection or self._select()
        found = self._instance
        if found is None or not found.current(self._fn):
            # a rebound helper or new defaults need another instance (usually a cache hit)
            found = self._instance = cache.instance(self._fn, selection.names, self._optimize)
            self._set_repeat(None)
            if self._specialize and not self._with_value:   # grad(f)(x) written inline, again:
                self._set_repeat(found.repeats.get((selection.single, self._unconnected)))
                if self._repeat is not None:                # the instance's guard, tried above
                    return self._call(args, output_gradients, kwargs)
        if self._self_selected:
            args = (self._self,) + args
        values = selection.values(args, kwargs)
        for value, name in zip(values, selection.names):
            if type(value) is not np.ndarray or value.dtype.kind != "f":
                check_differentiable(value, name)
        if self._self is not None and not self._self_selected:
            args = (self._self,) + args
        if self._specialize:
            return found.run_for_call(self._fn, args, kwargs, lambda instance: self._run(
                instance, args, kwargs, values, selection, output_gradients))
        return self._run(found, args, kwargs, values, selection, output_gradients)

    def _run(self, found, args, kwargs, values, selection, output_gradients):
        """The gradients (and value) of this call from the code of instance ``found``."""
        if self._specialize:
            if (found.grad is not None and output_gradients is None and not self._with_value
                    and not self._has_aux):
                raw = found.grad(*args, **kwargs)          # the fused gradient of a scalar output
                gradients = _finish(raw, values, self._unconnected, (*args, *kwargs.values()))
                build = self._instance.build
                if (not kwargs and not shape_keys.reads_outside_data(self._fn, build.data_names)
                        and not build.float_values_matter
                        and None not in [index for index, _, _ in selection.places]):
                    self._set_repeat(self._repeat_for(args, found, selection, raw))
                return gradients[0] if selection.single else tuple(gradients)
        out, residuals = found.fwd(*args, **kwargs)
        raw = found.bwd(residuals, _seed(out, output_gradients, self._has_aux))
        gradients = _finish(raw, values, self._unconnected,
                            (*args, *kwargs.values(), output_gradients, out))
        result = gradients[0] if selection.single else tuple(gradients)
        if self._has_aux:                      # JAX's order: (g, aux), ((value, aux), g)
            return (out, result) if self._with_value else (result, out[1])
        return (out, result) if self._with_value else result


def _seed(out, output_gradients, has_aux):
    """The output's cotangent: ``output_gradients`` (None: ones) for ``out``, or, for a
    has-aux function (``out`` is ``(output, aux)``), for ``output`` with None for ``aux``."""
    if has_aux:
        return runtime.seed_cotangent(out[0], output_gradients), None
    return runtime.seed_cotangent(out, output_gradients)


def _decorator_or_call(f, make):
    if f is None:
        return make
    return make(f)


@user_facing
def grad(f: Function | None = None, wrt: Wrt = 0, *,
         unconnected_gradients: Unconnected = "none", optimize: bool = True,
         specialize: bool = True, has_aux: bool = False) -> Function:
    """The gradient (vector-Jacobian product) of ``f``, as a new function.

    Args:
      f: a Python function over NumPy arrays and floats, defined with ``def``.
        Omit it to use ``grad`` as a decorator with options (``@grad(wrt=1)``).
      wrt: which arguments to differentiate with respect to: an index, a
        parameter name, or a tuple of them. Default 0 (the first argument).
      unconnected_gradients: what a selected argument the output does not
        depend on receives: ``"none"`` (default, as TensorFlow) gives None,
        ``"zero"`` gives zeros of its shape and dtype.
      optimize: run the optimisation passes (default True).
      specialize: let srctrans specialise the backward pass on the shapes of
        each call's arguments (default True): the first call with new shapes
        runs the generic code; the second builds code without the generic
        broadcasting helpers, which it and later calls with those shapes run.
        ``False`` keeps one generic version.
      has_aux: ``f`` returns a pair ``(output, aux)``: only ``output`` is
        differentiated, and ``aux`` (any value: metrics, predictions, labels)
        comes back as the forward pass computed it, as the second item of the
        result: ``(gradients, aux)`` (JAX's convention). docs/outputs.md.

    Returns:
      A function taking ``f``'s arguments plus the keyword
      ``output_gradients``: the vector ``v`` of ``J^T v``, with the output's
      shape (a tuple of them for a function returning a tuple). When omitted,
      ``v`` is ones of the output's shape, so a vector output gives the
      gradient of its sum. It returns one gradient for one selected argument,
      or a tuple in the order of ``wrt``; each has its argument's shape and
      dtype (a Python float argument gets a ``numpy.float64`` gradient).
      Complex values follow docs/complex.md: a complex argument's gradient of
      a real loss is ``dL/dx - 1j * dL/dy``, and a complex output is seeded
      with ones (the gradient of the real part of its sum: ``f'(z)`` for a
      holomorphic ``f``).

    >>> import numpy as np
    >>> def f(x):
    ...     return x * x
    >>> grad(f)(np.array([1.0, 2.0]))                       # doctest: +SKIP
    array([2., 4.])
    """
    return _decorator_or_call(f, lambda fn: _Differentiated(
        fn, wrt, unconnected_gradients, optimize, with_value=False, specialize=specialize,
        has_aux=has_aux))


@user_facing
def value_and_grad(f: Function | None = None, wrt: Wrt = 0, *,
                   unconnected_gradients: Unconnected = "none", optimize: bool = True,
                   specialize: bool = True, has_aux: bool = False) -> Function:
    """Like [`grad`][srctrans.grad], but the new function returns ``(value, gradients)``
    where ``value`` is ``f``'s output, computed once; with ``has_aux``,
    ``((output, aux), gradients)``."""
    return _decorator_or_call(f, lambda fn: _Differentiated(
        fn, wrt, unconnected_gradients, optimize, with_value=True, specialize=specialize,
        has_aux=has_aux))


def _call_of_vjp(f, *args, wrt=None, unconnected_gradients="none", optimize=True,
                 specialize=True, has_aux=False, **kwargs):
    return f, args, kwargs


@user_facing(calls=_call_of_vjp)
def vjp(f: Function, *args: Any, wrt: Wrt | None = None,
        unconnected_gradients: Unconnected = "none", optimize: bool = True,
        specialize: bool = True, has_aux: bool = False,
        **kwargs: Any) -> tuple:
    """Run ``f(*args, **kwargs)`` and return ``(out, pullback)``.

    Args:
      f: the function.
      *args: its positional arguments.
      wrt: the selected arguments (index, name or tuple); None selects every
        positional argument, and those that are ints or bools get None.
      unconnected_gradients: ``"none"`` or ``"zero"``, as in [`grad`][srctrans.grad].
      optimize: as in [`grad`][srctrans.grad].
      specialize: as in [`grad`][srctrans.grad].
      has_aux: ``f`` returns ``(out, aux)``; the result is then
        ``(out, pullback, aux)`` (JAX's convention), ``aux`` not differentiated.
      **kwargs: its keyword arguments.

    Returns:
      ``out``, and ``pullback(v)``, which returns a tuple with one gradient per
      selected argument for the cotangent ``v`` (shaped like ``out``). The
      pullback reuses the forward pass and can be called many times.
    """
    fn, bound_self = unwrap(f)
    if has_aux:
        fn = variant_with_aux(fn)
    call_args = args if bound_self is None else (bound_self,) + args
    signature_fn = fn if bound_self is None else functools.partial(fn, bound_self)
    if wrt is None:
        float_like = tuple(i for i, a in enumerate(args) if not is_integer(a))
        selection = Selection(signature_fn, float_like) if float_like else None
        every = list(range(len(args)))
    else:
        selection = Selection(signature_fn, wrt if isinstance(wrt, (tuple, list)) else (wrt,))
        every = None
    if selection is None:
        out = fn(*call_args, **kwargs)
        def nothing(v):
            return tuple(None for _ in args)
        if has_aux:
            output, aux = runtime.split_aux_pair(out)
            return output, nothing, aux
        return out, nothing
    values = selection.values(args, kwargs)
    for value, name in zip(values, selection.names):
        check_differentiable(value, name)
    found = cache.instance(fn, selection.names, optimize)
    def forward(instance):
        return (*instance.fwd(*call_args, **kwargs), instance)
    if specialize and optimize:
        out, residuals, found = found.run_for_call(fn, call_args, kwargs, forward)
    else:
        out, residuals, found = forward(found)
    check_outputs(out[0] if has_aux else out)
    bwd = found.bwd

    @user_facing(calls=lambda v: (f, args, kwargs))
    def pullback(v):               # the backward pass pops from a copy of the tape: reusable
        raw = bwd(residuals, _seed(out, v, has_aux))
        gradients = _finish(raw, values, unconnected_gradients,
                            (*call_args, *kwargs.values(), v, out))
        if every is None:
            return tuple(gradients)
        by_position = dict(zip(float_like, gradients))
        return tuple(by_position.get(i) for i in every)

    # what st.vmap(pullback) batches (a backward pass that pops from a tape it calls per member)
    batchable = not has_aux and found.build.tape_index is None and not found.build.sites
    pullback.__srctrans_batched__ = functools.partial(pullback_plan, PullbackParts(
        bwd if batchable else None, residuals, out, values, unconnected_gradients,
        None if every is None else (float_like, every)))
    return (out[0], pullback, out[1]) if has_aux else (out, pullback)


def _plain_function(value):
    """The plain gradient function an object made by [`grad`][srctrans.grad] computes, else None."""
    return value.plain_function() if isinstance(value, _Differentiated) else None


API.grad = grad
API.plain_function = _plain_function

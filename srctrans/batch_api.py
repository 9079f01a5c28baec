"""``st.vmap``: a function of one example made a function of a batch, by source transformation.

``vmap(f, in_axes, out_axes)`` moves each batched argument's batch axis to the
front, runs the batched form of ``f`` that ``batch_pipeline`` generates for
the arguments' per-example ranks (made once per pattern and cached), and moves
the output's batch axis to ``out_axes``. A construct that has no batched form
(an ``if`` on a batched value) makes the call run ``f`` once per member, and a
call without a batching rule runs once per member inside the batched code;
either way a warning names it, once.
"""

import functools
import inspect
import os

import numpy as np

from srctrans import batch_axes as axes_
from srctrans import cache
from srctrans.batch_pipeline import BatchBuild, build_batched, output_flag, output_ranks
from srctrans.differentiate.batched_names import Unbatchable
from srctrans.errors import SrcTransError, UsageError
from srctrans.hints import Function
from srctrans.reporting import user_facing
from srctrans.runtime import batching as rt_batch
from srctrans.selection import unwrap
from srctrans.batch_plans import (  # noqa: F401 -- BatchingWarning and _warned: st's and tests'
    BatchingWarning, Built, Looped, _quiet, _warned, member_of, per_member, same, warn_per_member)


def _call_of_vmap(f, *args, **kwargs):
    return f, args, kwargs


@user_facing
def vmap(f: Function, in_axes=0, out_axes=0, axis_size: int | None = None) -> Function:
    """``f`` of each member of a batch, as one vectorised function (JAX's ``vmap``).

    Args:
      f: a function of arrays (or containers of them), or a derivative made by
        srctrans (``st.grad(loss)``), or another ``vmap``.
      in_axes: the batch axis of each positional argument: an int for all of
        them, or a tuple with one entry per argument, each an int, None (the
        argument is the same for every member), or a container of the
        argument's structure holding one such entry per array. Keyword
        arguments are batched along axis 0.
      out_axes: where the output's batch axis goes: an int, or a container of
        the output's structure (None: an output that is the same for every
        member, returned once).
      axis_size: the batch size, needed only when no argument is batched.

    Returns:
      A function taking ``f``'s arguments with the batch axes added, returning
      ``f``'s output for every member, stacked along ``out_axes``.
      ``st.source(vmap(f), args=...)`` shows the batched code it runs.
    """
    if not callable(f):
        raise UsageError(f"cannot vmap {f!r}: it is not callable")
    return _Vmapped(f, in_axes, out_axes, axis_size)


class _Vmapped:
    """The callable [`vmap`][srctrans.vmap] returns."""

    def __init__(self, f, in_axes, out_axes, axis_size):
        axes_.check_axes(in_axes, "in_axes")
        axes_.check_axes(out_axes, "out_axes")
        self._f = f
        self._in_axes = in_axes
        self._out_axes = out_axes
        self._axis_size = axis_size
        self._fast = {}          # arrays' shapes and dtypes -> (plan, in_axes, a batched position)
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args, **kwargs):
        if isinstance(self._f, _Vmapped):                 # vmap of vmap: one merged batch
            from srctrans.batch_nested import nested_call
            found = nested_call(self, args, kwargs)
            if found is not None:
                return found
        key = None if kwargs else _fast_key(args)
        found = self._fast.get(key) if key is not None else None
        if found is None:
            return _run(self, args, kwargs, key)
        plan, axes, size_at = found                    # a call like an earlier one: no checks
        moved = [(a, False) if ax is None else (a if ax == 0 else np.moveaxis(a, ax, 0), True)
                 for a, ax in zip(args, axes)]
        size = args[size_at].shape[axes[size_at]]
        return axes_.moved_out(plan.run(moved, {}, size), plan.output_flag, self._out_axes, size)

    def batched_source(self, args):
        return _batched_source(self, args)

    def argument_axes(self, args):
        """The batch axis of each positional argument of a call with ``args``."""
        return axes_.per_argument(self._in_axes, args)

    def simple_axes(self, args):
        """``(the batch axis of each argument, the output's)`` when every one is an int (or
        None, for an argument), as derivatives, nesting and export of a vmap need; None for
        container axes."""
        axes = self.argument_axes(args)
        if all(ax is None or isinstance(ax, (int, np.integer)) for ax in axes) and \
                isinstance(self._out_axes, (int, np.integer)):
            return axes, int(self._out_axes)
        return None

    def __srctrans_rule__(self):
        """Its derivative rules, for a function srctrans differentiates that calls it."""
        from srctrans.batch_derivatives import rule_of
        return rule_of(self)

    def plan(self, args, kwargs):
        """``(plan, moved args, moved kwargs, size)`` for a call: what :func:`_run` runs."""
        axes = axes_.per_argument(self._in_axes, args)
        moved = [axes_.moved_in(a, ax, f"argument {i}") for i, (a, ax) in enumerate(zip(args, axes))]
        moved_kw = {k: axes_.moved_in(v, 0, f"keyword argument {k!r}") for k, v in kwargs.items()}
        size = axes_.batch_size(moved + list(moved_kw.values()), self._axis_size)
        plan = _plan_for(self._f, moved, moved_kw, size)
        return plan, moved, moved_kw, size


@user_facing(calls=lambda self, args, kwargs, key=None: (self._f, args, kwargs))
def _run(vmapped, args, kwargs, key=None):
    plan, moved, moved_kw, size = vmapped.plan(args, kwargs)
    out = plan.run(moved, moved_kw, size)
    if key is not None:
        axes = axes_.per_argument(vmapped._in_axes, args)
        batched = [i for i, ax in enumerate(axes) if ax is not None]
        if batched and all(isinstance(ax, (int, np.integer)) or ax is None for ax in axes):
            vmapped._fast[key] = (plan, axes, batched[0])
    return axes_.moved_out(out, plan.output_flag, vmapped._out_axes, size)


def _fast_key(args):
    """The shapes and dtypes of arguments that are all arrays or numbers, else None."""
    key = []
    for a in args:
        kind = type(a)
        if kind is np.ndarray:
            key.append((a.shape, a.dtype.char))
        elif kind is float or kind is int:
            key.append(kind)
        else:
            return None
    return tuple(key)


# -- plans: the batched function for a pattern of arguments --------------------------

_built = cache.memo()          # per-example function -> {pattern: Built or Looped}


def _plan_for(f, moved, moved_kw, size):
    # a function made by srctrans (st.vjp's pullback, st.hvp(f)) says how it runs on a batch:
    # hook(moved, moved_kw, looped, batched_call) -> a plan, or None for ``looped``
    batched = getattr(f, "__srctrans_batched__", None)
    if batched is not None:
        looped = per_member(f)
        plan = batched(moved, moved_kw, looped, batched_call)
        if plan is None:
            warn_per_member(f, "a function made by srctrans, for arguments it has no batched "
                            "form for,")
        return plan or looped
    fn, prefix, post = _per_example_function(f, moved, moved_kw)
    if _made_by_srctrans(fn):         # st.hessian(f), st.jacobian(f): Python loops of srctrans's
        warn_per_member(f, "a function made by srctrans that has no batched form", None)
        return per_member(f)
    signature = inspect.signature(fn)
    try:
        flags = signature.bind(*[False] * len(prefix), *[f for _, f in moved],
                               **{k: f for k, (_, f) in moved_kw.items()}).arguments
        values = signature.bind(*prefix, *[v for v, _ in moved],
                                **{k: v for k, (v, _) in moved_kw.items()}).arguments
    except TypeError as error:
        raise UsageError(f"the call does not fit {fn.__qualname__}'s signature: {error}") from None
    flags = {name: flag if isinstance(flag, bool) or flag is None else
             None if isinstance(flag, axes_.Mixed) else
             (None if None in flag or len(set(flag)) > 1 else flag[0] if flag else False)
             for name, flag in flags.items()}
    ranks = {name: _rank(value, flags[name]) for name, value in values.items()}
    key = (tuple(flags.items()), tuple(ranks.items()), len(prefix), len(moved), tuple(moved_kw))
    plans = _built.setdefault(fn, {})
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _make_plan(fn, prefix, post, flags, ranks)
    return plan


def _make_plan(fn, prefix, post, flags, ranks):
    if isinstance(fn, _Vmapped):
        warn_per_member(fn, "an inner st.vmap with container axes or arguments", None)
        return Looped(fn, prefix, post)
    if any(f is None for f in flags.values()):
        warn_per_member(fn, "a container argument batched in some of its arrays only", None)
        return Looped(fn, prefix, post)
    try:
        build = build_batched(fn, flags, ranks, _build_callee, callee_flag=_callee_flag,
                              callee_rank=_callee_rank)
    except Unbatchable as refusal:
        warn_per_member(fn, refusal.what, _location(fn, refusal))
        return Looped(fn, prefix, post)
    for what, location in build.loops:
        warn_per_member(fn, what, location)
    return Built(build, fn, prefix, post)


def _build_callee(fn, flags, ranks, all_batched=True):
    """The batched build of a function the batched code calls (with ``all_batched``, every
    output array batched; else batched as its own analysis says, ``_callee_flag``'s)."""
    key = ("callee", all_batched, tuple(sorted(flags.items())), tuple(sorted(ranks.items())))
    plans = _built.setdefault(fn, {})
    found = plans.get(key)
    if found is None:
        try:
            found = build_batched(fn, flags, ranks, _build_callee, all_batched=all_batched,
                                  callee_flag=_callee_flag, callee_rank=_callee_rank)
        except SrcTransError as error:
            raise Unbatchable(f"its source cannot be batched ({error.args[0]})", None) from None
        plans[key] = found
    for what, where in found.loops:
        warn_per_member(fn, what, where)
    return found


_in_progress: set = set()        # (function, analysis) being computed
_analysed = cache.memo()        # function -> {batched parameters: its front end's unit}


def _callee_flag(fn, flags):
    """The output flag of ``fn`` called with parameters batched as ``flags`` say."""
    return _analysis(fn, ("output flag", tuple(sorted(flags.items()))), lambda units:
                     output_flag(fn, flags, _callee_flag, units))


def _callee_rank(fn, flags, ranks):
    """The output rank of ``fn`` called with parameters batched as ``flags`` say and of
    ``ranks``."""
    return _analysis(fn, ("output rank", tuple(sorted(flags.items())),
                          tuple(sorted(ranks.items()))),
                     lambda units: output_ranks(fn, flags, ranks, _callee_flag, _callee_rank,
                                                units))


def _analysis(fn, key, compute):
    """``compute(units)`` for ``fn`` (``units``: its front ends, shared by its analyses),
    cached under ``key``; None, for unknown, while it is being computed (a recursive call)."""
    plans = _built.setdefault(fn, {})
    if key in plans:
        return plans[key]
    if (fn, key) in _in_progress:
        return None
    _in_progress.add((fn, key))
    try:
        found = plans[key] = compute(_analysed.setdefault(fn, {}))
    finally:
        _in_progress.discard((fn, key))
    return found


def _location(fn, refusal):
    try:
        from srctrans.parse.source import parse_function
        lineno = getattr(refusal.node, "lineno", None)
        return parse_function(fn, shared=True).location_of_line(lineno) if lineno else None
    except SrcTransError:
        return None


def _made_by_srctrans(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(_PACKAGE)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _rank(value, batched):
    """A value's per-example rank; for a tuple or list, a tuple of its entries' (None for a
    value that is not an array or a number)."""
    if type(value) in (tuple, list):
        return tuple(_rank(v, batched) if _is_array(v) else None for v in value)
    return np.ndim(value) - (1 if batched else 0) if _is_array(value) else None


def _is_array(value):
    return isinstance(value, (np.ndarray, np.generic, float, int, complex)) and \
        not isinstance(value, bool)


def _per_example_function(f, moved, moved_kw):
    """``(function, prefix, post)``: the plain function whose source is batched, the unbatched
    arguments it takes first (a bound method's object), and what turns its batched result into
    what ``f`` returns (a gradient's one-entry tuple unwrapped)."""
    from srctrans.api import _Differentiated
    if isinstance(f, _Differentiated) and not f._with_value and not f._has_aux:
        members = [member_of(v, 0, flag) for v, flag in moved]
        specialised = _specialised_gradient(f, members)
        if specialised is not None:
            gradient, single = specialised
            conform = _as_array_gradients(f, moved)
            return gradient, (), _FirstEntry(conform) if single else conform
    if isinstance(f, _Vmapped):          # (an inner vmap nested_call does not merge)
        return f, (), same
    fn, bound_self = unwrap(f)
    if isinstance(f, _Differentiated) and not f._has_aux:
        return fn, (() if bound_self is None else (bound_self,)), _as_array_gradients(f, moved)
    return fn, (() if bound_self is None else (bound_self,)), same


class _FirstEntry:
    """What turns a specialised gradient's batched one-entry tuple into ``grad``'s one
    gradient: the entry (conformed by ``conform``), whose batch flags (:meth:`flag`) are the
    tuple's first too."""

    def __init__(self, conform):
        self.conform = conform

    def __call__(self, out):
        return self.conform(out[0])

    @staticmethod
    def flag(flag):
        return flag[0] if isinstance(flag, tuple) else flag


def _as_array_gradients(grad_object, moved):
    """What makes the batched generic gradient's entries look like ``grad``'s: the gradient of
    an array argument that the code accumulated as a list of rows (``tuple(x)``) stacked
    into one array (``grad`` conforms it the same way, member by member)."""
    selection = grad_object._selection or grad_object._select()
    arrays = [isinstance(v, np.ndarray) for v in selection.values([v for v, _ in moved], {})]

    def post(out):
        single = selection.single
        parts = [out] if single else list(out)
        parts = [np.stack([np.asarray(e) for e in g], axis=1)
                 if array and isinstance(g, (list, tuple)) else g
                 for g, array in zip(parts, arrays)]
        return parts[0] if single else tuple(parts)
    return post


def _specialised_gradient(grad_object, members):
    """The fused gradient specialised on one member's shapes, as ``(function, single)``, or
    None when srctrans makes none for them, or when a member's values may decide more than
    its shapes (a test of an argument's value; a number rounded to a size): then the
    generic gradient is batched."""
    selection = grad_object._selection or grad_object._select()
    if grad_object._self is not None:
        return None
    # the instance the grad object itself runs: an unconnected argument's gradient is None
    # there too, unless the object asked for zeros
    found = cache.instance(grad_object._fn, selection.names, grad_object._optimize,
                           grad_object._unconnected == "zero")
    build = found.build
    if build.float_values_matter or any(operands for _, operands in build.keyed_tests):
        return None        # one member's values decide its code: not the other members'
    try:
        made = found.for_call(grad_object._fn, tuple(members), {}, now=True, guess=False)
    except (SrcTransError, TypeError, ValueError):
        return None
    if made.grad is None:
        return None
    return made.grad, selection.single





def batched_call(fn, args, flags, kwargs=None):
    """``fn`` (a plain or generated function) of each member of a batch, by its batched form:
    ``args`` batched along axis 0 where ``flags`` say, ``kwargs`` all batched. For srctrans's
    own Jacobians and Hessians: no warning, and no output axes moved."""
    moved = [(a, bool(f)) for a, f in zip(args, flags)]
    moved_kw = {k: (v, True) for k, v in (kwargs or {}).items()}
    size = rt_batch.size_of(*zip(*moved, *moved_kw.values()))
    key = _ranks_key((tuple(flags), args, kwargs))
    plans = _called.setdefault(fn, {})
    plan = plans.get(key) if key is not None else None
    if plan is None:
        _quiet[0] += 1
        try:
            plan = _plan_for(fn, moved, moved_kw, size)
        finally:
            _quiet[0] -= 1
        if key is not None:
            plans[key] = plan
    return plan.run(moved, moved_kw, size)


_called = cache.memo()       # function -> {flags and the arguments' ranks: plan} (batched_call)


def direct_function(fn, args, flags, kwargs=None):
    """The generated batched function that :func:`batched_call` ran for arguments of these
    ranks, when calling it directly with the same arguments does the same: no object
    prepended, nothing done to its result, no select that may fall back to a loop; else
    None."""
    key = _ranks_key((tuple(flags), args, kwargs))
    plans = _called.get(fn)
    plan = plans.get(key) if plans is not None and key is not None else None
    if (isinstance(plan, Built) and not plan.prefix and plan.post is same
            and not plan.build.selects):
        return plan.build.function
    return None


def _ranks_key(value):
    """What a plan depends on in ``value``: containers' structure, arrays' ranks and dtypes,
    numbers' types; None for anything else (no short cut)."""
    kind = type(value)
    if kind is np.ndarray:
        return value.ndim, value.dtype.char
    if kind in (float, int, bool, str) or value is None:
        return kind
    if kind in (tuple, list):
        parts = [_ranks_key(v) for v in value]
        return None if any(p is None and v is not None for p, v in zip(parts, value)) \
            else (kind, tuple(parts))
    if kind is dict:
        return _ranks_key(tuple(value.items()))
    return None


def _batched_source(vmapped, args):
    """The source of the batched code a call of ``vmapped`` with ``args`` runs (the batched
    forms of the functions it calls after it), or a comment saying it runs ``f`` per member
    (``st.source(st.vmap(f), args=...)`` calls it, as the object's ``batched_source``)."""
    if args is None:
        raise UsageError("the batched code depends on the arguments' ranks",
                         hint="pass example arguments: st.source(st.vmap(f), args=(x, y))")
    plan, _, _, _ = vmapped.plan(tuple(args), {})
    if isinstance(plan, Looped):
        return (f"# st.vmap runs {getattr(plan.fn, '__qualname__', plan.fn)} once per member of "
                f"the batch: it has a construct with no batched form (see the warning)\n")
    texts = [plan.build.source]
    seen = {plan.build.source}
    for found in (b for plans in _built.values() for b in plans.values()
                  if isinstance(b, BatchBuild)):
        if found.function.__name__ in plan.build.source and found.source not in seen:
            texts.append(found.source)
            seen.add(found.source)
    return "\n".join(texts)

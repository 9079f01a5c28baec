"""Forward mode in the public API: [`jvp`][srctrans.jvp] (TensorFlow's ``ForwardAccumulator``).

The JVP of a function is built from its source once per selection of
arguments (those given a tangent) and cached like every other derivative.
"""

import functools
import inspect

import numpy as np

from srctrans import runtime
from srctrans.runtime import objects
from srctrans.runtime.containers import map_leaves
from srctrans.runtime.seeding import check_outputs, is_complex, is_integer
from srctrans import cache
from srctrans import shape_keys
from srctrans import repeat as repeat_path
from srctrans.ownership import owned_tangent
from srctrans.reporting import calls_with_primals, user_facing
from srctrans.errors import NonDifferentiableError, ShapeError, UsageError
from srctrans.signatures import positional_names
from srctrans.hints import Function
from srctrans.interface import API
from srctrans.normalize import auxiliary


_plans = cache.memo()      # function -> {call pattern: _Plan, kinds of call: (JVP, its guard),
                           #              _REPEAT: the guard of the last call}
_REPEAT = "repeat"
# jvp(f, primals, tangents) for a call shaped like the last one of f, by the guard made for
# that call (repeat.make_jvp_repeat); None when there is none or it does not hold
_repeat_jvp = functools.partial(repeat_path.call_last, _plans, _REPEAT)


@user_facing(fast=_repeat_jvp, calls=calls_with_primals)
def jvp(f: Function, primals: tuple, tangents: tuple, *,
        optimize: bool = True, has_aux: bool = False) -> tuple:
    """The output of ``f`` at ``primals`` and its directional derivative along ``tangents``.

    Args:
      f: a Python function over NumPy arrays and floats (or a bound method).
      primals: a tuple of ``f``'s positional arguments.
      tangents: a tuple of the same length and structure: one tangent per
        argument, shaped like it (a container argument takes a container of
        tangents). ``None`` marks an argument held constant; int and bool
        arguments must take ``None``.
      optimize: run the optimisation passes (default True).
      has_aux: ``f`` returns ``(out, aux)``: ``aux`` is not differentiated,
        and the result is ``(out, out_tangent, aux)`` (JAX's convention).

    Returns:
      ``(out, out_tangent)``: ``f(*primals)`` and ``J v``, the Jacobian of
      ``f`` at ``primals`` applied to ``tangents``, shaped like ``out``. A
      function whose output does not depend on any argument with a tangent
      gets a zero tangent.

    >>> import numpy as np
    >>> def f(x, y):
    ...     return x * np.sin(y)
    >>> jvp(f, (2.0, 0.0), (1.0, 1.0))                      # doctest: +SKIP
    (0.0, 2.0)
    """
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise UsageError("jvp takes primals and tangents as tuples",
                         hint="write jvp(f, (x,), (v,)) for a function of one argument")
    if len(primals) != len(tangents):
        raise UsageError(f"jvp got {len(primals)} primals but {len(tangents)} tangents",
                         hint="give one tangent per argument, None for a constant one")
    from srctrans.selection import unwrap
    fn, bound_self = unwrap(f)
    if has_aux:
        (out, aux), (tangent, _) = run_jvp(auxiliary.variant_with_aux(fn), bound_self, primals, tangents,
                                           {}, optimize)
        return out, tangent, aux
    return run_jvp(fn, bound_self, primals, tangents, {}, optimize,
                   repeatable=fn is f and optimize)


def run_jvp(fn, bound_self, primals, tangents, kwargs, optimize=True, tangent_only=False,
            repeatable=False, checked=True):
    """[`jvp`][srctrans.jvp] of the plain function ``fn`` (bound to ``bound_self`` unless None);
    ``kwargs`` are passed to ``fn`` as constants; ``tangent_only`` returns the output's
    tangent alone, from code that computes only what the tangent needs. ``repeatable``
    (a call of [`jvp`][srctrans.jvp] with ``f`` itself a plain function) makes the guard that lets the
    next call shaped like this one skip to the JVP specialised for it. ``checked`` False
    leaves the output unchecked (a has-aux gradient function's, whose aux is any value)."""
    call_args = primals if bound_self is None else (bound_self,) + primals
    plan = current_plan(fn, bound_self, primals, tangents, optimize, tangent_only)
    keywords = {}
    for index, keyword in plan.tangents:
        primal, tangent = primals[index], tangents[index]
        if not taken_as_given(primal, tangent):
            repeatable = False                  # the guard passes tangents on unchecked
            if is_complex(tangent) and not is_complex(primal):
                raise NonDifferentiableError(
                    f"argument {plan.names[index]!r} is real but its tangent is complex",
                    hint="a real argument's tangent is real: pass np.real(tangent), or make "
                         "the argument complex (x.astype(complex))")
            if is_integer(primal):
                raise NonDifferentiableError(
                    f"argument {plan.names[index]!r} is an integer but was given a tangent",
                    hint="pass None as the tangent of an int or bool argument, or pass a float")
            tangent = _conformed_tangent(tangent, primal, plan.names[index])
        keywords[keyword] = tangent
    if plan.starred is not None:                # *args's tangents: a tuple, zeros for None
        repeatable = False
        start, keyword = plan.starred
        keywords[keyword] = tuple(
            _conformed_tangent(tangent, primal, plan.names[start + k]) if tangent is not None
            else runtime.zeros_like(primal)
            for k, (primal, tangent) in enumerate(zip(primals[start:], tangents[start:])))
    found = plan.instance
    if found.jvp is None:
        out = fn(*call_args, **kwargs)
        if auxiliary.has_aux(fn):            # (output, aux): the tangent of output alone
            out = runtime.split_aux_pair(out)
            zeros = (runtime.zeros_like(out[0]), None)
        else:
            zeros = runtime.zeros_like(out)
        if not tangent_only and checked:
            check_outputs(out[0] if auxiliary.has_aux(fn) else out)
        return zeros if tangent_only else (out, zeros)
    keywords.update(kwargs)
    if found.build.specialisable:
        found = found.for_call(fn, call_args, keywords)    # the JVP for this call's shapes
    result = found.jvp(*call_args, **keywords)
    if not tangent_only and checked:
        check_outputs(result[0][0] if auxiliary.has_aux(fn) else result[0])
        result = owned_tangent(result, primals, tangents)
    if (repeatable and found is not plan.instance and bound_self is None and not kwargs
            and not tangent_only and not plan.instance.build.data_names
            and not plan.instance.build.float_values_matter
            and not plan.instance.build.value_floats):
        _note_repeat(fn, plan, found, primals, tangents, result[0])
    return result


def taken_as_given(primal, tangent):
    """Whether `run_jvp` passes ``tangent`` on as it is: an array of ``primal``'s
    shape, both of floats (any other tangent is checked and conformed first)."""
    return (type(tangent) is np.ndarray and type(primal) is np.ndarray
            and tangent.shape == primal.shape and primal.dtype.kind == "f"
            and tangent.dtype.kind == "f")


def current_plan(fn, bound_self, primals, tangents, optimize, tangent_only):
    """The `_Plan` of ``fn`` for this pattern of given tangents, made if needed."""
    pattern = tuple(t is not None for t in tangents)
    key = (len(primals), pattern, bool(optimize), bound_self is not None, tangent_only)
    plans = _plans.get(fn)
    plan = plans.get(key) if plans is not None else None
    if plan is None or not plan.instance.current(fn):
        plan = _plan(fn, bound_self, primals, pattern, optimize, tangent_only)
        _plans.setdefault(fn, {})[key] = plan
    return plan


def specialised_tangent_jvp(fn, primals, tangents):
    """``(generic instance, specialised instance, (position, keyword) per given tangent)`` of the
    tangent-only JVP of the plain function ``fn`` that `run_jvp` has just run for these
    arguments (``tangent_only``, optimised), or None when that call ran no JVP specialised on
    its shapes."""
    plan = current_plan(fn, None, primals, tangents, True, True)
    if plan.instance.jvp is None:
        return None
    keywords = {keyword: tangents[index] for index, keyword in plan.tangents}
    found = plan.instance.made_for(fn, primals, keywords)
    return None if found is None else (plan.instance, found, plan.tangents)


def _note_repeat(fn, plan, specialised, primals, tangents, out):
    """Make the call's guard the one [`jvp`][srctrans.jvp] tries first (made once per shape key and
    dtypes, at most ``cache.MAX_SPECIALISATIONS`` of them per function)."""
    key = shape_keys.args_key(primals)
    if key is None:
        return
    given = dict(plan.tangents)
    tangents = tuple(t if i in given else None for i, t in enumerate(tangents))
    kinds = (plan.tangents, tuple(key), tuple(p.dtype for p in primals if type(p) is np.ndarray),
             tuple(t.dtype for t in tangents if t is not None))
    repeat_path.remember(_plans[fn], kinds, specialised.jvp, lambda: repeat_path.make_jvp_repeat(
        fn, plan.instance, specialised.jvp, primals, tangents, plan.tangents, out),
        _REPEAT, 2 * cache.MAX_SPECIALISATIONS)


class _Plan:
    """How to run the JVP of one function for one pattern of given tangents."""

    __slots__ = ("instance", "names", "tangents", "starred")

    def __init__(self, instance, names, tangents, starred=None):
        self.instance = instance     # a ForwardInstance (its jvp None when no tangent is given)
        self.names = names           # a name per primal (``args[0]`` for one *args takes)
        self.tangents = tangents     # (primal index, tangent keyword) per given tangent
        self.starred = starred       # (first primal *args takes, its tangents' keyword), or None


def _plan(fn, bound_self, primals, pattern, optimize, tangent_only):
    signature_fn = fn if bound_self is None else functools.partial(fn, bound_self)
    names, starred = _positional_names(signature_fn, len(primals), fn)
    named = len(names)
    selected = [name for name, given in zip(names, pattern) if given]
    extra = starred is not None and any(pattern[named:])
    if extra:
        selected.append(starred)      # the primals *args takes: one tuple of tangents
    names = names + [f"{starred}[{k}]" for k in range(len(primals) - named)]
    if not selected:
        return _Plan(_NoTangents(), names, ())
    found = cache.forward_instance(fn, tuple(selected), optimize, tangent_only=tangent_only)
    return _Plan(found, names, tuple((i, found.build.tangents[names[i]])
                                     for i, given in enumerate(pattern[:named]) if given),
                 (named, found.build.tangents[starred]) if extra else None)


class _NoTangents:
    jvp = None

    def current(self, fn):
        return True


def _positional_names(signature_fn, count, fn):
    """The names of the positional parameters the first ``count`` primals bind, and the name
    of the ``*args`` parameter that takes the rest (None when none is left for it)."""
    names = list(positional_names(signature_fn))
    if count <= len(names):
        return names[:count], None
    starred = [p.name for p in inspect.signature(signature_fn).parameters.values()
               if p.kind is p.VAR_POSITIONAL]
    if not starred:
        raise UsageError(f"jvp got {count} primals but {fn.__qualname__} has "
                         f"{len(names)} positional parameter{'' if len(names) == 1 else 's'}",
                         hint="give one primal (and one tangent) per parameter")
    return names, starred[0]


def _conformed_tangent(tangent, primal, name):
    """``tangent`` checked against ``primal``'s structure and shape (arrays of its dtype kind)."""
    def conform(t, p):
        if t is None:
            return runtime.zeros_like(p)
        if objects.is_plain_object(p):       # an object's tangent: its attributes' tangents
            given = t if isinstance(t, dict) else objects.attributes(t) if type(t) is type(p) \
                else None
            if given is None:
                raise ShapeError(f"the tangent of an object of class {type(p).__qualname__} "
                                 f"in {name!r} is a {type(t).__qualname__}",
                                 hint="give an object's tangent as a dict of its attributes' "
                                      "tangents ({'W': dW, 'b': db}) or an object of its class")
            return objects.ObjectTangent(p, {k: map_leaves(lambda p_, t_: conform(t_, p_),
                                                           getattr(p, k), v)
                                             for k, v in given.items()})
        if is_integer(p):                    # an int field of a container is a constant
            if np.any(np.asarray(t) != 0):
                raise NonDifferentiableError(
                    f"the tangent of {name!r} is nonzero at an integer entry",
                    hint="give integer entries of a container a tangent of None or 0: they "
                         "are constants")
            return runtime.zeros_like(p)
        if np.shape(t) != np.shape(p):
            raise ShapeError(f"the tangent of {name!r} has shape {np.shape(t)} but the argument "
                             f"has shape {np.shape(p)}", hint="give each tangent its argument's shape")
        if isinstance(p, np.ndarray) and not isinstance(t, np.ndarray):
            return np.asarray(t, dtype=p.dtype if p.dtype.kind in "fc" else float)
        if type(t) is float:                 # as NumPy's results are: a scalar with .reshape
            return np.float64(t)
        return t
    try:
        return map_leaves(lambda p, t: conform(t, p), primal, tangent)
    except (TypeError, KeyError, ValueError) as error:
        if isinstance(error, ShapeError):
            raise
        raise ShapeError(f"the tangent of {name!r} does not have the structure of the argument "
                         f"({error})", hint="give a container of tangents shaped like the argument"
                         ) from error


API.jvp = jvp

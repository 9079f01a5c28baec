"""Derivatives of ``st.vmap(f)``: ``grad(vmap(f))``, ``jvp`` of it, and a vmapped function
called inside a differentiated one.

Requires: a ``batch_api._Vmapped`` (any ``in_axes`` and ``out_axes``: ints, None, or
containers of them) whose output is a float array or a tuple of them.
Guarantees: :func:`rule_of` gives the registry's :class:`Rule` of such an object (the
registry asks the object, ``__srctrans_rule__``): its VJP is the batched VJP of ``f``,
``vmap`` of the gradient of ``sum(f(*args) * g)`` per member, summed over the batch for
the arguments (and the arrays of a container argument) every member shares (``in_axes``
None); its JVP is ``vmap`` of ``f``'s JVP.
Both run batched code (``st.vmap`` of generated derivatives), not a loop. The wrappers
whose derivatives these are are generated source, made once per function, argument count
and output structure.
"""

import numpy as np

from srctrans import cache
from srctrans.emit.compile import register_source
from srctrans.errors import UsageError
from srctrans.pytrees import is_tree, tree_leaves, tree_map
from srctrans.runtime.containers import entries, is_container, rebuild
from srctrans.rules.registry import Rule

_wrappers = cache.memo()   # f -> {(kind, count, output structure): generated wrapper}


def rule_of(vmapped):
    """The derivative rules of the vmapped function ``vmapped`` (made once per object)."""
    found = vmapped.__dict__.get("_rule")
    if found is None:
        found = vmapped.__dict__["_rule"] = Rule(vmapped)
        found.custom_vjp = lambda g, ans, *args, **kwargs: vjp(vmapped, g, ans, args, kwargs)
        found.custom_jvp = lambda tangents, ans, *args, **kwargs: jvp(vmapped, tangents, ans,
                                                                     args, kwargs)
    return found


def _axes(vmapped, args, kwargs):
    """``(the batch axis of each argument, the output's)``: ints, None, or containers."""
    if kwargs:
        raise UsageError("the derivative of an st.vmap function called with keyword arguments",
                         hint="pass its arguments by position")
    return vmapped.argument_axes(args), vmapped._out_axes


def _is_float(value):
    return isinstance(value, (float, np.floating)) or \
        isinstance(value, np.ndarray) and value.dtype.kind == "f"


def _has_floats(value):
    """A float, or a container or object holding one."""
    return any(_is_float(leaf) for leaf in tree_leaves(value)) if is_tree(value) \
        else _is_float(value)


def _every_member(axes):
    """``axes`` with None (an argument every member shares) as 0: the per-member gradients'
    batch axes, summed over afterwards."""
    if axes is None:
        return 0
    if is_container(axes):
        return rebuild(axes, [(k, _every_member(v)) for k, v in entries(axes)])
    return axes


def _summed_where_shared(gradient, axes):
    """The per-member gradients ``gradient`` summed over the batch where ``axes`` is None (the
    arrays every member shares), leaf by leaf for a container's axes."""
    if axes is None:
        return tree_map(lambda g: None if g is None else np.sum(g, axis=0), gradient) \
            if is_tree(gradient) else np.sum(gradient, axis=0)
    if is_tree(axes):
        return tree_map(lambda g, ax: g if g is None or ax is not None else np.sum(g, axis=0),
                        gradient, axes)
    return gradient


def _zero_tangent(value):
    def zero(leaf):
        return np.zeros_like(leaf, dtype=np.result_type(leaf, 1.0)) if _is_float(leaf) or \
            isinstance(leaf, (int, np.ndarray)) else leaf
    return tree_map(zero, value) if is_tree(value) else zero(value)


def _output_parts(ans):
    """How many arrays the output is: None for one array, the count for a tuple of them."""
    if isinstance(ans, tuple) and not hasattr(ans, "_fields"):
        if not all(_is_float(np.asarray(a)) for a in ans):
            raise UsageError("the derivative of an st.vmap function whose output is not "
                             "float arrays", hint="return a float array, or a tuple of them")
        return len(ans)
    if not _is_float(np.asarray(ans)):
        raise UsageError("the derivative of an st.vmap function whose output is not a float "
                         "array (complex outputs have no VJP through vmap yet)",
                         hint="return a float array, or a tuple of them")
    return None


def _wrapper(f, kind, count, parts):
    """The generated source function whose derivative is the member's VJP (``kind``
    ``"vjp"``: ``sum(f(*a) * g)``) or JVP (``"jvp"``: ``st.jvp(f, a, t)[1]``)."""
    key = (kind, count, parts)
    found = _wrappers.setdefault(f, {}).get(key)
    if found is not None:
        return found
    names = [f"a{i}" for i in range(count)]
    arguments = ", ".join(names)
    if kind == "vjp":
        if parts is None:
            total = "np.sum(F(" + arguments + ") * g)"
            text = f"def vjp_of_member({arguments}, g):\n    return {total}\n"
        else:
            terms = " + ".join(f"np.sum(out[{k}] * g[{k}])" for k in range(parts))
            text = (f"def vjp_of_member({arguments}, g):\n    out = F({arguments})\n"
                    f"    return {terms}\n")
    else:
        tangents = ", ".join(f"t{i}" for i in range(count))
        text = (f"def jvp_of_member({arguments}, {tangents}):\n"
                f"    return JVP(F, ({arguments},), ({tangents},))[1]\n")
    filename = register_source(text, f"{getattr(f, '__qualname__', 'f')} vmap {kind}")
    from srctrans.forward_api import jvp as jvp_transform
    namespace = {"np": np, "F": f, "JVP": jvp_transform}
    exec(compile(text, filename, "exec"), namespace)          # noqa: S102 -- generated above
    found = _wrappers[f][key] = namespace[f"{kind}_of_member"]
    return found


def vjp(vmapped, g, ans, args, kwargs):
    """The cotangents of ``vmapped(*args)``'s arguments for its output's cotangent ``g``."""
    from srctrans.api import grad
    vmap = type(vmapped)                  # (the class st.vmap makes: this module is below it)
    axes, out_axis = _axes(vmapped, args, kwargs)
    floats = tuple(i for i, a in enumerate(args) if _has_floats(a))
    if not floats:
        return tuple(None for _ in args)
    member = _wrapper(vmapped._f, "vjp", len(args), _output_parts(ans))
    gradients = member.__dict__.setdefault("_gradients", {})     # one grad object per wrt
    gradient = gradients.get(floats)
    if gradient is None:
        gradient = gradients[floats] = grad(member, wrt=floats)
    per_member = vmap(gradient, (*axes, out_axis), tuple(_every_member(axes[i]) for i in floats),
                      vmapped._axis_size)(*args, g)
    by_index = dict(zip(floats, per_member))
    return tuple(None if i not in by_index else _summed_where_shared(by_index[i], axes[i])
                 for i in range(len(args)))


def jvp(vmapped, tangents, ans, args, kwargs):
    """The tangent of ``vmapped(*args)``'s output along ``tangents`` (one per argument)."""
    vmap = type(vmapped)
    axes, out_axis = _axes(vmapped, args, kwargs)
    _output_parts(ans)
    member = _wrapper(vmapped._f, "jvp", len(args), None)
    tangents = [_zero_tangent(a) if t is None else t for a, t in zip(args, tangents)]
    return vmap(member, (*axes, *axes), out_axis, vmapped._axis_size)(*args, *tangents)

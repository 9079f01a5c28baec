"""Second derivatives, forward over reverse: Hessians and Hessian-vector products.

Both run forward mode over the generated gradient function: an HVP is one JVP of it, and
a Hessian of an array argument one batched JVP over the argument's basis
(:mod:`srctrans.batched_matrices`), or one JVP per column where the batched form does not
apply (containers, ``has_aux``, calls through values). Calls shaped like the previous one
take a guard generated for their shapes (:mod:`srctrans.repeat`), which runs the
specialised code with no look-ups.
"""

import functools

import numpy as np

from srctrans import batched_matrices, cache, forward_api, shape_keys
from srctrans import repeat as repeat_path
from srctrans.composed import (_aligned, _assembled, _float_dtype, _float_leaves, _gradient_function,
                               _jvp, _rebuilt, _selected, _tangent, _unit)
from srctrans.hints import Function, Wrt
from srctrans.interface import API
from srctrans.pytrees import is_tree
from srctrans.reporting import calls_of, calls_with_primals, user_facing
from srctrans.batch_api import batched_call, per_member, warn_per_member
from srctrans.batch_axes import Mixed
from srctrans.differentiate.batched_names import truthy
from srctrans.errors import UsageError
from srctrans.runtime import batching as rt_batch

_MISSING = object()


@user_facing
def hessian(f: Function, wrt: Wrt = 0, *, optimize: bool = True,
            has_aux: bool = False) -> Function:
    """The Hessian of a scalar function, forward over reverse, as a new function.

    Args:
      f: a function returning a scalar.
      wrt: an argument index or name, or a tuple of them.
      has_aux: ``f`` returns ``(output, aux)``: the Hessian is of ``output``
        alone, and the function returns ``(hessian, aux)`` (JAX's convention;
        ``aux`` as the gradient function's first run computed it).

    Returns:
      A function returning the Hessian with shape ``x.shape + x.shape`` for
      one selected argument, or for several a tuple of rows of blocks, block
      ``[i][j]`` with shape ``x_i.shape + x_j.shape``. A container argument
      nests its blocks by pairs of its arrays, as JAX's ``hessian``: for a
      dict ``params``, ``H["mu"]["sigma"]`` has shape
      ``mu.shape + sigma.shape`` (None for ints and strings, which are constants). Each
      column is one JVP of the generated gradient function.
    """
    selection = wrt if not isinstance(wrt, list) else tuple(wrt)

    def repeat(args, kwargs):
        guard = hessian_guard(f, selection)
        return None if guard is None or kwargs else guard(f, args)

    @functools.wraps(f, updated=())
    @user_facing(fast=repeat, calls=calls_of(f))
    def hessian_of_f(*args):
        fn, call_args, names, indices, single = _selected(f, args, wrt, "hessian", has_aux)
        gradient = _gradient_function(fn, names, call_args)
        selected = [call_args[i] for i in indices]
        inputs = [_float_leaves(a) for a in selected]
        flat = [(i, m, x) for i, leaves_ in enumerate(inputs) for m, x in enumerate(leaves_)
                if x is not None]
        pieces = {(a[:2], b[:2]): [] for a in flat for b in flat}     # (row leaf, column leaf)
        aux = _MISSING
        for j, leaf, y in flat:
            remember = None
            if fn is f and single and optimize and not has_aux and len(flat) == 1:
                remember = functools.partial(
                    _note_hessian_repeat, _hessian_guards.setdefault(fn, {}).setdefault(
                        selection, {}), fn, names, gradient, call_args, y)
            batched = None if has_aux or is_tree(selected[j]) else _hessian_columns(
                gradient, call_args, indices, j, y, selected, optimize, remember)
            if batched is not None:                   # every column in one batched JVP
                for i, block in enumerate(batched):
                    pieces[(i, 0), (j, leaf)] = block
                continue
            for k in range(y.size):
                tangents = [None] * len(selected)
                tangents[j] = _tangent(selected[j], leaf, _unit(y.shape, k, y.dtype))
                if has_aux:          # the gradient function returns (gradients, aux)
                    out, columns = _jvp(gradient, call_args, indices, tangents, optimize,
                                        with_output=aux is _MISSING)
                    columns = columns[0]
                    aux = out[1] if aux is _MISSING else aux        # from the first column's run
                else:
                    _, columns = _jvp(gradient, call_args, indices, tangents, optimize)
                for i, column in enumerate(columns):
                    for m, piece in enumerate(_aligned(selected[i], column)):
                        if inputs[i][m] is not None:
                            pieces[(i, m), (j, leaf)].append(piece)
        blocks = [[_rebuilt(x_arg, [None if x is None else _rebuilt(y_arg, [
            None if y is None else pieces[(i, m), (j, leaf)]
            if isinstance(pieces[(i, m), (j, leaf)], np.ndarray) else
            _assembled(pieces[(i, m), (j, leaf)], x.shape, -1, x.shape + y.shape, _float_dtype(x, y))
            for leaf, y in enumerate(inputs[j])]) for m, x in enumerate(inputs[i])])
            for j, y_arg in enumerate(selected)] for i, x_arg in enumerate(selected)]
        result = blocks[0][0] if single else tuple(tuple(row) for row in blocks)
        if has_aux and aux is _MISSING:              # no float entry to differentiate
            aux = gradient(*call_args)[1]
        return (result, aux) if has_aux else result

    return hessian_of_f


def _hessian_columns(gradient, call_args, indices, j, y, selected, optimize, remember=None):
    """The Hessian's columns for the selected argument ``j`` (an array ``y``), one block per
    selected argument, from one batched JVP of the gradient; None when that does not apply
    (then one JVP per column). ``remember(jvp instance, specialised JVP, tangent keyword)``
    is called when they came from the batched JVP."""
    if any(is_tree(x) for x in selected):
        return None
    found = batched_matrices.jvp_along(gradient, call_args, indices[j], optimize)
    if found is None:
        return None
    instance, jvp, keyword = found
    try:
        blocks = batched_matrices.jvp_columns(jvp, call_args, keyword, y, selected)
    except Exception:                   # a batched form that fails: one JVP per column instead
        return None
    if blocks is not None and remember is not None:
        remember(instance, jvp, keyword)
    return blocks


_hessian_guards = cache.memo()  # function -> {wrt: {kinds of call: (batched JVP, its guard),
                                #                   _LAST: the guard of the last call}}


def hessian_guard(fn, wrt):
    """The guard a Hessian of ``fn`` with respect to ``wrt`` tries first, or None."""
    table = _hessian_guards.get(fn)
    guards = table.get(wrt) if table is not None else None
    return guards.get(_LAST) if guards is not None else None


def _note_hessian_repeat(guards, fn, names, gradient, primals, y, jvp_instance, jvp, keyword):
    """Make ``guards[_LAST]`` the guard a Hessian of ``fn`` tries first for calls shaped like
    this one, when it ran the batched JVP of a fused gradient specialised on its shapes as a
    plain function in one chunk (at most ``cache.MAX_SPECIALISATIONS`` guards a function)."""
    found = _repeatable(fn, names, gradient, primals)
    if found is None or _keyed(gradient, jvp_instance):
        return
    key, instance = found
    made = batched_matrices.hessian_kernel(jvp, primals, keyword, y)
    if made is None:
        return
    kernel, basis = made
    size, shape, dtype = y.size, y.shape, y.dtype

    def finish(out):
        column = out[0] if type(out) is tuple else out
        return batched_matrices.block_of_columns(
            [batched_matrices.batched_column(column, size, shape)], shape, shape, dtype, basis)

    kinds = (tuple(key), tuple(p.dtype for p in primals if type(p) is np.ndarray))
    repeat_path.remember(guards, kinds, kernel, lambda: repeat_path.make_hessian_repeat(
        fn, instance, gradient, jvp_instance, kernel, basis, primals, keyword, finish),
        _LAST, cache.MAX_SPECIALISATIONS + 1)


_hvp_guards = cache.memo()    # function -> {kinds of call: (gradient, its HVP guard),
                              #              _LAST: the guard of the last call}
_LAST = "last"
# hvp(f, primals, tangents) for a call shaped like the last one of f, by the guard made for
# that call (repeat.make_hvp_repeat); None when there is none or it does not hold
_repeat_hvp = functools.partial(repeat_path.call_last, _hvp_guards, _LAST)


@user_facing(fast=_repeat_hvp, calls=calls_with_primals)
def hvp(f: Function, primals: tuple | None = None, tangents: tuple | None = None, *,
        optimize: bool = True) -> tuple | Function:
    """The Hessian of the scalar ``f`` at ``primals`` applied to ``tangents``, forward over reverse.

    Args:
      f: a function returning a scalar.
      primals: a tuple of ``f``'s positional arguments.
      tangents: a tuple of the same length: the vector ``v`` (one array per
        argument, shaped like it), ``None`` for arguments held constant.
      optimize: run the optimisation passes (default True).

    Returns:
      A tuple with one entry per argument: ``H v`` restricted to that
      argument (shaped like it), None where the tangent is None. The Hessian
      is not formed: this is one JVP of the generated gradient function.
      ``st.hvp(f)`` (without ``primals`` and ``tangents``) is the function
      ``(primals, tangents) -> hvp(f, primals, tangents)``, the form
      ``st.hessian(f)`` and ``st.jacobian(f)`` take.
    """
    if primals is None and tangents is None:
        def hvp_of_f(primals, tangents):
            return hvp(f, primals, tangents, optimize=optimize)
        functools.update_wrapper(hvp_of_f, f, updated=())
        attributes = vars(hvp_of_f)
        del attributes["__wrapped__"]       # (not f's source: st.vmap batches it by its hook)
        attributes["__srctrans_batched__"] = functools.partial(_batched_hvp_plan, f, optimize)
        return hvp_of_f
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple) or \
            len(primals) != len(tangents):
        raise UsageError("hvp takes primals and tangents as tuples of the same length",
                         hint="st.hvp(f, (x,), (v,)), or st.hvp(f)((x,), (v,))")
    indices = tuple(i for i, t in enumerate(tangents) if t is not None)
    if not indices:
        return tuple(None for _ in primals)
    fn, call_args, names, _, _ = _selected(f, primals, indices)
    gradient = _gradient_function(fn, names, call_args)
    _, products = _jvp(gradient, call_args, indices, [tangents[i] for i in indices], optimize)
    if fn is f and optimize:
        _note_hvp_repeat(fn, names, gradient, primals, tangents)
    by_index = dict(zip(indices, products))
    return tuple(by_index.get(i) for i in range(len(primals)))


def _note_hvp_repeat(fn, names, gradient, primals, tangents):
    """Make the guard [`hvp`][srctrans.hvp] tries first for calls shaped like this one, when the call ran
    the JVP of a fused gradient specialised on its shapes, with each tangent an array of its
    primal's shape and float dtype (at most ``cache.MAX_SPECIALISATIONS`` guards a function)."""
    repeatable = _repeatable(fn, names, gradient, primals)
    if repeatable is None or not all(
            tangent is None or forward_api.taken_as_given(primal, tangent)
            for primal, tangent in zip(primals, tangents)):
        return
    key, instance = repeatable
    found = forward_api.specialised_tangent_jvp(gradient, primals, tangents)
    if found is None or _keyed(gradient, found[0]):
        return
    jvp_instance, specialised, keywords = found
    kinds = (tuple(key), tuple(p.dtype for p in primals if type(p) is np.ndarray),
             tuple(None if t is None else t.dtype for t in tangents))
    repeat_path.remember(_hvp_guards.setdefault(fn, {}), kinds, gradient,
                         lambda: repeat_path.make_hvp_repeat(
                             fn, instance, gradient, jvp_instance, specialised.jvp, primals,
                             tangents, keywords),
                         _LAST, cache.MAX_SPECIALISATIONS + 1)


def _repeatable(fn, names, gradient, primals):
    """``(shape key, fn's reverse instance)`` when a guard for calls shaped like this one may
    run ``gradient``: it is the fused gradient specialised on the call's shape key, which
    depends on the arguments alone (no global data, no float values); else None."""
    key = shape_keys.args_key(primals)
    instance = cache.instance(fn, names, True, True)
    specialised_gradient = instance.made_for(fn, primals, {}, guess=False)
    build = instance.build
    if (key is None or build.data_names or build.float_values_matter or build.value_floats
            or specialised_gradient is None or specialised_gradient.grad is not gradient):
        return None
    return key, instance


def _keyed(gradient, jvp_instance):
    """Whether the JVP of ``gradient`` depends on more than the call's shape key (global data
    other than modules, float values): no guard may run it."""
    return (shape_keys.keyed_data(gradient, jvp_instance.build.data_names)
            or jvp_instance.build.float_values_matter or jvp_instance.build.value_floats)


def _batched_hvp_plan(f, optimize, moved, moved_kw, looped, _batched_call):
    """The plan of ``st.vmap(st.hvp(f))`` (see :mod:`srctrans.batch_api`): one batched JVP of
    the gradient, or None (a loop of ``hvp``)."""
    if moved_kw or len(moved) != 2:
        return None
    return _BatchedHvp(f, optimize, looped)


class _BatchedHvp:
    """``hvp(f, primals, tangents)`` of each member of a batch: the JVP of the generated
    gradient (specialised on a member's shapes), batched over the members' primals and
    tangents; a loop of ``hvp`` for containers, or a gradient with no JVP to batch."""

    output_flag = True

    def __init__(self, f, optimize, looped):
        self.f, self.optimize, self.looped = f, optimize, looped

    def run(self, moved, moved_kw, size):
        found = self._batched(moved, size)
        if found is not None:
            return found
        warn_per_member(self.f, "st.hvp, for arguments it does not batch (containers, a "
                        "gradient that calls through values),")
        return self.looped.run(moved, moved_kw, size)

    def _batched(self, moved, size):
        (primals, primal_flag), (tangents, tangent_flag) = moved
        if not (type(primals) is tuple and type(tangents) is tuple
                and len(primals) == len(tangents)) or primal_flag is None:
            return None
        count = len(primals)
        primal_flags, flags = _entry_flags(primal_flag, count), _entry_flags(tangent_flag, count)
        if primal_flags is None or flags is None:
            return None
        members = tuple(rt_batch.member(p, 0, truthy(f)) for p, f in zip(primals, primal_flags))
        given = [i for i, t in enumerate(tangents) if t is not None]
        if not given or not batched_matrices.plain_arrays(*[members[i] for i in given]) or \
                not all(type(tangents[i]) is np.ndarray for i in given) or \
                not batched_matrices.plain_call(members):
            return None
        fn, call_args, names, indices, _ = _selected(self.f, members, tuple(given))
        shift = len(call_args) - count                     # (a bound method's object first)
        tangent_members = {p: rt_batch.member(tangents[i], 0, flags[i])
                           for i, p in zip(given, indices)}
        if any(m.shape != np.shape(call_args[p]) for p, m in tangent_members.items()):
            return None                            # hvp's own error, member by member
        gradient = _gradient_function(fn, names, call_args)
        tangents_at = [tangent_members.get(p) for p in range(len(call_args))]
        found = batched_matrices.specialised_jvp(gradient, call_args, tangents_at, self.optimize)
        if found is None:
            return None
        _, jvp, keywords = found
        batch = {keywords[p]: tangents[i] if flags[i] else rt_batch.spread(tangents[i], size)
                 for i, p in zip(given, indices)}
        products = batched_call(jvp, call_args[:shift] + primals,
                                (False,) * shift + tuple(map(truthy, primal_flags)), batch)
        products = products if isinstance(products, tuple) else (products,)
        # (copies: an HVP may return its tangent, the caller's array)
        by_index = {i: batched_matrices.batched_column(product, size, np.shape(members[i])).astype(
            np.result_type(members[i]), copy=True) for i, product in zip(given, products)}
        return tuple(by_index.get(i) for i in range(count))


def _entry_flags(flag, count):
    """A tuple argument's flag, entry by entry (bools), or None for entries batched in some
    of their arrays only."""
    if isinstance(flag, Mixed):
        flag = flag.leaves
    flags = flag if isinstance(flag, tuple) else (flag,) * count
    return flags if all(isinstance(f, bool) for f in flags) else None


def _batched_hvp_call(args, flags, size):
    """``st.hvp(f, primals, tangents)`` of each member, for batched code that calls it
    (``args`` batched as ``flags`` say): :class:`_BatchedHvp`, or a loop of ``hvp``."""
    f, primals, tangents = args
    if truthy(flags[0]):
        raise UsageError("st.hvp of a function that differs from member to member")
    looped = per_member(lambda primals, tangents: hvp(f, primals, tangents))
    return _BatchedHvp(f, True, looped).run([(primals, flags[1]), (tangents, flags[2])], {}, size)


API.batched_forms[hvp] = _batched_hvp_call

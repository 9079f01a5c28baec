"""Batching rules of the runtime's derivative helpers (``rt.unbroadcast``, ``rt.matmul_lhs``...).

The calls generated derivatives make, batched as ``batching_rules`` batches NumPy's
(same conventions: a batched value has its batch axis first; a rule returns None
for a case it does not cover, and the call then runs once per member). The
tables say what each helper does with axes:

* ``RUNTIME_ELEMENTWISE``: elementwise in their arguments (lifted as NumPy's ufuncs are);
* ``RUNTIME_SAME_CALL``: of one argument's shape, or vectorised already: the same call;
* ``RUNTIME_AXISWISE``: working along an ``axis`` argument, which moves past the batch
  axis (``rt.batch.axiswise``), with the helper's default axis, and refused where
  ``axis=None`` means the flattened array;
* the products' cotangents (``rt.matmul_lhs``) written as batched products.
"""

import inspect

import gast

from srctrans import runtime as rt
from srctrans.differentiate.batching_rules.calls import aligned, flag_constant, flag_node, same_func
from srctrans.differentiate.batching_rules.products import matmul


RUNTIME_ELEMENTWISE = frozenset({rt.zero_guard, rt.power_base_factor, rt.power_exponent_factor,
                                 rt.clip_mask, rt.abs_grad, rt.sign_grad, rt.abs_jvp, rt.sign_jvp,
                                 rt.tie_weight, rt.nan_tie_weight, rt.ratio_or_zero,
                                 rt.ratio_or_zero_times,
                                 rt.relu_of_softplus, rt.log1p_tail, rt.log_tail,
                                 rt.sigmoid_from_tail})
RUNTIME_SAME_CALL = frozenset({rt.zeros_like, rt.zeros_of, rt.identity, rt.copied,
                               rt.writable_copy, rt.as_array, rt.seed_sum, rt.real_only})
# helpers working along an ``axis`` argument: helper -> (its position in their signature,
# the helper's default axis, whether ``axis=None`` means the flattened array)
RUNTIME_AXISWISE: dict[object, tuple[int, int | None, bool]] = {
    **{helper: (list(inspect.signature(helper).parameters).index("axis"), None, False)
       for helper in (rt.unreduce, rt.mean_grad, rt.var_grad, rt.std_grad, rt.extremum_grad,
                      rt.prod_grad, rt.extremum_jvp, rt.prod_jvp, rt.var_jvp, rt.std_jvp,
                      rt.prod_grad_dprod, rt.log_of_softmax, rt.log_of_softmax_grad,
                      rt.log_of_softmax_tangent, rt.softmax_ratio, rt.softmax_ratio_grad)},
    rt.cumsum_grad: (2, None, True), rt.sort_grad: (2, -1, True), rt.take_grad: (3, None, True),
    rt.diff_grad: (3, -1, False), rt.take_along_axis_grad: (3, None, True),
}


def matmul_vjp(call):
    """``rt.matmul_lhs(g, a, b)`` / ``rt.matmul_rhs`` (and ``dot``'s) for operands of rank at
    most 2 per example: the gradient's product written for the batch."""
    if len(call.args) != 3 or call.keywords:
        return None
    g, a, b = call.args
    rg, ra, rb = (call.rank_of(n) for n in (g, a, b))
    if None in (rg, ra, rb) or ra > 2 or rb > 2 or ra == 0 or rb == 0:
        return None
    t = call.template
    lhs = call.callee in (rt.matmul_lhs, rt.dot_lhs)
    other = b if lhs else a
    if not call.flag(g) and not call.flag(other):
        return None                     # a member's result depends on the batch only by shape
    if ra == 1 and rb == 1:             # a number's gradient times the other vector
        x, y = aligned(call, [g, other])
        return t("X * Y", X=x, Y=y)
    if lhs and ra == 2 and rb == 1 or not lhs and ra == 1 and rb == 2:
        first, second = (g, b) if lhs else (a, g)            # an outer product
        return t("L * R", L=_column(call, first), R=_row(call, second))
    if lhs and ra == 1:                                       # b @ g
        return matmul(call, b, g)
    if not lhs and rb == 1:                                   # a.T @ g
        return _matmul_transposed_left(call, a, g)
    if lhs:                                                   # g @ b.T
        return _matmul_transposed_right(call, g, b)
    return _matmul_transposed_left(call, a, g)


def _column(call, node):
    return call.template("X[:, :, None]" if call.flag(node) else "X[:, None]", X=node)


def _row(call, node):
    return call.template("X[:, None, :]" if call.flag(node) else "X", X=node)


def _matmul_transposed_left(call, a, g):
    """``a.T @ g`` per member (``a`` a matrix, ``g`` a vector or matrix)."""
    t = call.template
    if not call.flag(a):
        return matmul(call, t("A.T", A=a), g) if call.rank_of(g) == 2 \
            else (t("G @ A", G=g, A=a) if call.flag(g) else t("A.T @ G", A=a, G=g))
    if call.rank_of(g) == 1:
        return t("np.einsum('bij,bi->bj', A, G)" if call.flag(g) else "G @ A", A=a, G=g)
    return t("np.swapaxes(A, -1, -2) @ G", A=a, G=g)


def _matmul_transposed_right(call, g, b):
    """``g @ b.T`` per member (both matrices)."""
    t = call.template
    if not call.flag(b):
        return t("G @ B.T", G=g, B=b)
    return t("G @ np.swapaxes(B, -1, -2)", G=g, B=b)


_WITH_RULES = frozenset({rt.matmul_lhs, rt.matmul_rhs, rt.dot_lhs, rt.dot_rhs, rt.unbroadcast,
                         rt.getitem_grad, rt.transpose_grad, rt.add, rt.broadcast_like,
                         rt.reshape_like, rt.tuple_like, rt.custom_cotangents,
                         rt.container_cotangent, rt.attributes_cotangent, rt.logaddexp_fold,
                         rt.logaddexp_fold_from, rt.zero_guard_sum})


# checks a helper makes for their effect (an error) that read the dtype or the array library
# alone: the same on the batch as on each member
CHECKS = frozenset({rt.real_only, rt.numpy_only})


def has_rule(callee):
    """Whether :func:`runtime_rule` has a rule for calls of ``callee`` (it may decline one)."""
    try:
        return callee in RUNTIME_ELEMENTWISE or callee in RUNTIME_SAME_CALL or \
            callee in RUNTIME_AXISWISE or callee in _WITH_RULES
    except TypeError:
        return False


def runtime_rule(call):
    """The batched call of one of the runtime's helpers, or None."""
    callee = call.callee
    t = call.template
    if callee in RUNTIME_ELEMENTWISE:
        return call.call(same_func(call), aligned(call, call.args))
    if callee in RUNTIME_SAME_CALL:
        return call.call(same_func(call), call.args)
    if callee in (rt.matmul_lhs, rt.matmul_rhs, rt.dot_lhs, rt.dot_rhs):
        return matmul_vjp(call)
    if callee is rt.reshape_like and len(call.args) >= 2 and call.flag(call.args[0]) and \
            call.flag(call.args[1]) and not any(call.flag(o) for o in call.operands()[2:]):
        return call.call(same_func(call), call.args)        # g to x's shape, batch axis and all
    if callee is rt.unbroadcast and len(call.args) == 2:
        g, x = call.args
        return t("rt.batch.unbroadcast(G, X, FG, FX)", G=g, X=x, FG=flag_constant(call, g),
                 FX=flag_constant(call, x))
    if callee is rt.getitem_grad and len(call.args) == 3 and not call.flag(call.args[2]):
        g, x, key = call.args
        return t("rt.batch.getitem_grad(G, X, K, FG, FX)", G=g, X=x, K=key,
                 FG=flag_constant(call, g), FX=flag_constant(call, x))
    if callee is rt.transpose_grad and call.flag(call.args[0]) and not any(
            call.flag(o) for o in call.operands()[1:]):
        return call.call(t("rt.batch.transpose_grad"), call.args)
    if callee is rt.add and len(call.args) == 2:
        a, b = call.args
        return t("rt.batch.add(A, B, FA, FB)", A=a, B=b, FA=flag_constant(call, a),
                 FB=flag_constant(call, b))
    if callee is rt.broadcast_like and len(call.args) == 2:
        x, ans = call.args
        return t("rt.batch.broadcast_like(T, A, FT, FA)", T=x, A=ans,
                 FT=flag_constant(call, x), FA=flag_constant(call, ans))
    if callee is rt.tuple_like and len(call.args) == 2 and not call.keywords:
        ans, parts = call.args                 # every part batched, as the tuple's flag says
        return t("rt.tuple_like(A, rt.batch.conformed(P, F, True, S))", A=ans, P=parts,
                 F=flag_node(call.flag(parts)), S=call.size())
    if callee in (rt.container_cotangent, rt.attributes_cotangent) and len(call.args) == 2 and \
            not call.keywords and isinstance(call.flag(call.args[1]), bool):
        found, container = call.args
        return t(f"rt.batch.{callee.__name__}(F, C, FF, FC, N)", F=found, C=container,
                 FF=flag_constant(call, found), FC=flag_constant(call, container),
                 N=call.size())
    if callee is rt.custom_cotangents and 3 <= len(call.args) <= 4 and not call.keywords:
        cotangents, args, rule = call.args[:3]      # (a user's rule, batched itself, returned)
        single = call.args[3] if len(call.args) == 4 else gast.Constant(False, None)
        return t("rt.batch.custom_cotangents(C, A, R, S, FC, FA, N)", C=cotangents, A=args,
                 R=rule, S=single, FC=flag_node(call.flag(cotangents)),
                 FA=flag_node(call.flag(args)), N=call.size())
    if callee is rt.logaddexp_fold and len(call.args) == 5 and not call.keywords \
            and not any(call.flag(a) for a in call.args[2:]):
        acc, x, axis, start, stop = call.args
        return t("rt.batch.logaddexp_fold(A, X, AX, S0, S1, FA, FX)", A=acc, X=x, AX=axis,
                 S0=start, S1=stop, FA=flag_constant(call, acc), FX=flag_constant(call, x))
    if callee is rt.logaddexp_fold_from and len(call.args) == 4 and not call.keywords \
            and not any(call.flag(a) for a in call.args[1:]):
        x, axis, start, stop = call.args
        return t("rt.batch.logaddexp_fold_from(X, AX, S0, S1, FX)", X=x, AX=axis, S0=start,
                 S1=stop, FX=flag_constant(call, x))
    if callee is rt.zero_guard_sum and len(call.args) == 2 and not call.keywords:
        g, value = call.args
        return t("rt.batch.zero_guard_sum(G, V, FG, FV)", G=g, V=value,
                 FG=flag_constant(call, g), FV=flag_constant(call, value))
    if callee in RUNTIME_AXISWISE:
        return _axiswise(call)
    return None


def _axiswise(call):
    """A helper along an ``axis`` argument of each member (``rt.batch.axiswise``), for
    unbatched axis and parameters after it."""
    position, default, flattens = RUNTIME_AXISWISE[call.callee]
    args, keywords = list(call.args), dict(call.keywords)
    if any(call.flag(v) for v in keywords.values()) or any(call.flag(a) for a in args[position:]):
        return None
    axis = args[position] if position < len(args) else keywords.get("axis")
    if axis is None:
        axis = gast.Constant(default, None)
        keywords["axis"] = axis
    if flattens and isinstance(axis, gast.Constant) and axis.value is None:
        return None                     # the flattened array's: one call per member
    t = call.template
    flags = gast.Tuple([flag_constant(call, a) for a in args], gast.Load())
    return t("rt.batch.axiswise(F, A, FL, P, S, K)", F=call.func,
             A=gast.Tuple(args, gast.Load()), FL=flags, P=gast.Constant(position, None),
             S=call.size(), K=gast.Dict([gast.Constant(k, None) for k in keywords],
                                        list(keywords.values())))

"""Batching rules: how a call runs on a batch of its arguments (``st.vmap``).

A batched value has its batch axis first; an unbatched value is as the
unbatched function has it. A rule is given the call's arguments, which of
them are batched and their per-example ranks (None where unknown), and
returns the batched expression, whose result is batched too. Rules are
grouped in tables by what the function does with axes:

* elementwise (:func:`is_elementwise`): NumPy's ufuncs, ``ELEMENTWISE_EXTRA`` and
  the functions the VJP registry marks ``elementwise=True`` broadcast their
  arguments: a batched argument of a lower per-example rank than another gets
  axes after its batch axis (``x[:, None] * y``); unbatched ones broadcast from
  the right already.
* ``AXIS_ARGUMENTS``: reductions, scans and axis-wise functions name an axis
  (or axes) per example; when their first argument alone is batched, the
  batched call's is one further right (negative axes count from the right and
  stay); ``axis=None`` (all axes) becomes every
  axis after the batch axis. ``FLAT_WHEN_NONE`` lists those that flatten
  their argument when ``axis`` is None (``np.cumsum``): rank-known members
  are reshaped to rows first.
* ``SAME_CALL``: functions already vectorised over leading axes
  (``np.linalg.inv`` on stacks of matrices), or of one argument's shape
  alone (``np.zeros_like``): the same call.
* products (``@``, ``np.dot``, ``np.einsum``), shape functions
  (``np.reshape``, ``np.transpose``, ``np.concatenate``...) and shape queries
  (``np.shape``, ``len``) have rules of their own below.

A rule returns None for a case it does not cover; the transform then runs the
call once per member (``rt.batch.loop``), with a one-time warning.
"""

import inspect

import gast
import numpy as np

from srctrans import runtime as rt
from srctrans.nodes import clone, int_literal
from srctrans.rules.registry import REGISTRY

_AXIS = "axis"
AXIS_ARGUMENTS = {
    **dict.fromkeys((
        np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var, np.any,
        np.all, np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanstd, np.nanvar,
        np.median, np.ptp, np.argmax, np.argmin, np.cumsum, np.cumprod, np.sort, np.argsort,
        np.flip, np.expand_dims, np.squeeze, np.diff, np.count_nonzero, np.average,
        np.linalg.norm, np.gradient, np.take, np.take_along_axis),
        (_AXIS,)),
    np.swapaxes: ("axis1", "axis2"), np.moveaxis: ("source", "destination"),
    np.trace: ("axis1", "axis2"), np.diagonal: ("axis1", "axis2"),
}
# where ``axis=None`` means "the flattened array", not "every axis"
FLAT_WHEN_NONE = frozenset({np.argmax, np.argmin, np.cumsum, np.cumprod, np.sort, np.argsort,
                            np.take, np.take_along_axis})
# where ``axis=None`` is not a default that applies
_NO_NONE = frozenset({np.expand_dims, np.swapaxes, np.moveaxis, np.trace, np.diagonal,
                      np.diff})
# NumPy's defaults for the axes these take when the call does not name them
_DEFAULT_AXES = {np.trace: (0, 1), np.diagonal: (0, 1), np.diff: (-1,), np.sort: (-1,),
                 np.argsort: (-1,)}

SAME_CALL = frozenset({
    np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy, np.array, np.asarray,
    np.ascontiguousarray, np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.cholesky,
    np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr, np.linalg.pinv,
    np.linalg.eig, np.linalg.eigvals, np.real, np.imag, np.conj, np.conjugate, np.isnan,
    np.isfinite, np.isinf, np.nan_to_num, np.around, np.round, np.sign,
})
# functions whose batched call takes the same arguments when their first argument alone is
# batched and is at least of rank 2 per example (they work on the last two axes)
_LAST_TWO_AXES = frozenset({np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.cholesky,
                            np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr,
                            np.linalg.pinv, np.linalg.eig, np.linalg.eigvals})
_SHAPE_QUERIES = {np.shape: "shape", np.ndim: "ndim", np.size: "size", len: "len"}
ELEMENTWISE_EXTRA = (np.where, np.clip)


class Call:
    """One call to batch: the expressions a rule combines.

    Attributes:
      callee: the function called; func: the expression the batched call calls it by.
      args, keywords: its argument atoms (gast), positional and by name.
      flag: ``node -> flag``, whether an argument is batched (``differentiate.batching``).
      rank_of: ``node -> rank``, an argument's per-example rank, or None.
      template: ``(text, **nodes) -> gast expression`` with ``np``/``rt`` mapped to the
        generated module's aliases (the transform's ``expression``).
      size: ``() -> gast expression`` of the batch size.
    """

    def __init__(self, callee, func, args, keywords, flag, rank_of, template, size):
        self.callee = callee
        self.size = size
        self.func = func
        self.args = list(args)
        self.keywords = dict(keywords)
        self.flag = flag
        self.rank_of = rank_of
        self.template = template

    def operands(self):
        return self.args + list(self.keywords.values())

    def call(self, func, args, keywords=None):
        keywords = self.keywords if keywords is None else keywords
        return gast.Call(func, list(args), [gast.keyword(k, v) for k, v in keywords.items()])


def is_elementwise(callee):
    if isinstance(callee, np.ufunc) or callee in ELEMENTWISE_EXTRA:
        return True
    rule = REGISTRY.lookup(callee)
    return rule is not None and rule.elementwise and callee is not np.matmul


def aligned(call, operands):
    """``operands`` for an elementwise operation of the batched ones among them: each batched
    operand of a lower per-example rank than another lifted to the highest
    (``x[:, None]``), statically where the ranks are known."""
    template = call.template
    ranks = [call.rank_of(o) for o in operands]
    flags = [call.flag(o) for o in operands]
    if sum(flags) == 0:
        return list(operands)
    if None not in ranks:
        top = max(ranks)
        return [lift(o, top - r) if f and r < top else o
                for o, r, f in zip(operands, ranks, flags)]
    out = []
    for o, f in zip(operands, flags):
        if not f or len(operands) == 1:
            out.append(o)
            continue
        targets = [template("np.ndim(X) - 1" if call.flag(p) else "np.ndim(X)", X=p)
                   for p in operands if p is not o]
        target = targets[0] if len(targets) == 1 else template("max(T)", T=gast.Tuple(targets, gast.Load()))
        out.append(template("rt.batch.lifted(X, R)", X=o, R=target))
    return out


def lift(node, missing):
    """``node[:, None, ...]``: ``missing`` axes of length 1 after the batch axis."""
    if missing <= 0:
        return node
    parts = [gast.Slice(None, None, None)] + [gast.Constant(None, None)] * missing
    return gast.Subscript(clone(node), gast.Tuple(parts, gast.Load()), gast.Load())


def shifted_axis(node, rank, template, array):
    """The batched call's axis argument for the per-example axis expression ``node`` (a
    literal int, tuple of them, None, or any expression) of an argument of per-example
    ``rank`` (None: unknown), the batched ``array``."""
    if node is None or isinstance(node, gast.Constant) and node.value is None:
        if rank is not None:
            return gast.Tuple([gast.Constant(i + 1, None) for i in range(rank)], gast.Load())
        return template("rt.batch.axis(None, X)", X=array)
    parts = node.elts if isinstance(node, gast.Tuple) else [node]
    literals = [int_literal(p) for p in parts]
    if None in literals:
        return template("rt.batch.axis(A, X)", A=node, X=array)
    moved = [gast.Constant(a + 1 if a >= 0 else a, None) for a in literals]
    return gast.Tuple(moved, gast.Load()) if isinstance(node, gast.Tuple) else moved[0]


def bound_arguments(callee, args, keywords):
    """``{parameter: node}`` for a call of ``callee``, or None when it has no signature
    Python can read or the call does not match it."""
    try:
        signature = inspect.signature(callee)
        return dict(signature.bind(*args, **keywords).arguments)
    except (TypeError, ValueError):
        return None


def axis_rule(call):
    """A call naming axes per example, with its first argument alone batched."""
    callee = call.callee
    first = call.args[0] if call.args else None
    if first is None or not call.flag(first) or \
            any(call.flag(o) for o in call.operands() if o is not first):
        return None
    bound = bound_arguments(callee, call.args, call.keywords)
    if bound is None:
        return None
    rank = call.rank_of(first)
    keywords = dict(call.keywords)
    args = list(call.args)
    positional = list(inspect.signature(callee).parameters)
    defaults = _DEFAULT_AXES.get(callee, ())
    for k, name in enumerate(AXIS_ARGUMENTS[callee]):
        node = bound.get(name)
        if node is None and k < len(defaults):
            node = gast.Constant(defaults[k], None)
        elif node is None and callee in _NO_NONE:
            return None
        every_axis = node is None or isinstance(node, gast.Constant) and node.value is None
        flattens = callee in FLAT_WHEN_NONE
        if every_axis and callee is np.linalg.norm and rank is not None and rank > 1:
            if not _ord_is_none(bound):
                return None               # a matrix norm of the whole: one call per member
            flattens = True               # the flattened array's 2-norm
        if every_axis and flattens:
            if rank is None:
                return None
            args[0] = call.template("X.reshape(X.shape[0], -1)", X=first)
            node = gast.Constant(0, None)
        moved = shifted_axis(node, rank, call.template, args[0])
        index = positional.index(name)
        if index < len(args):
            args[index] = moved
        else:
            keywords[name] = moved
    return call.call(_func(call), args, keywords)


def _ord_is_none(bound):
    order = bound.get("ord")
    return order is None or isinstance(order, gast.Constant) and order.value is None


def _func(call):
    return clone(call.func)


def same_call(call):
    first = call.args[0] if call.args else None
    if call.callee in _LAST_TWO_AXES:
        if any(call.flag(o) for o in call.operands() if o is not first):
            return None
        if call.rank_of(first) is None or call.rank_of(first) < 2:
            return None
    elif any(call.flag(o) for o in call.operands() if o is not first):
        return None                     # (np.full_like(x, v) of a batched v: one call per member)
    return call.call(_func(call), call.args)


def shape_query(call):
    """``np.shape(x)``, ``len(x)``, ``np.ndim(x)``, ``np.size(x)`` of a batched array: the
    per-example value, unbatched."""
    kind = _SHAPE_QUERIES[call.callee]
    x = call.args[0]
    if kind == "len":
        return call.template("rt.batch.length(X)", X=x) if call.rank_of(x) is None \
            else call.template("X.shape[1]", X=x)
    if kind == "shape":
        return call.template("np.shape(X)[1:]", X=x)
    if kind == "ndim":
        return call.template("np.ndim(X) - 1", X=x)
    return call.template("np.size(X) // np.shape(X)[0]", X=x)


def matmul(call, a, b):
    """``a @ b`` per member, written for the ranks when they are known."""
    fa, fb = call.flag(a), call.flag(b)
    ra, rb = call.rank_of(a), call.rank_of(b)
    t = call.template
    if ra is not None and rb is not None:
        if fa and not fb and not (ra == 1 and rb > 2):
            return t("A @ B", A=a, B=b)
        if fb and not fa:
            if rb >= 2:
                return t("A @ B", A=a, B=b)
            if ra == 1:
                return t("B @ A", A=a, B=b)
            if ra == 2:
                return t("B @ A.T", A=a, B=b)
        if fa and fb:
            if ra == 1 and rb == 1:
                return t("np.einsum('bi,bi->b', A, B)", A=a, B=b)
            if rb == 1:
                return t("(A @ B[..., None])[..., 0]", A=a, B=b)
            if ra == 1:
                return t("(A[:, None] @ B)[:, 0]", A=a, B=b)
            return t("A @ B", A=lift(a, rb - ra), B=lift(b, ra - rb))
    return t("rt.batch.matmul(A, B, FA, FB)", A=a, B=b, FA=_flag_constant(call, a),
             FB=_flag_constant(call, b))


def dot(call):
    if len(call.args) != 2 or call.keywords:
        return None
    a, b = call.args
    ra, rb = call.rank_of(a), call.rank_of(b)
    if ra is not None and rb is not None and ra <= 2 and rb <= 2:
        if ra == 0 or rb == 0:
            x, y = aligned(call, [a, b])
            return call.template("X * Y", X=x, Y=y)
        return matmul(call, a, b)
    return call.template("rt.batch.dot(A, B, FA, FB)", A=a, B=b, FA=_flag_constant(call, a),
                         FB=_flag_constant(call, b))


def einsum(call):
    """``np.einsum('ij,j->i', a, b)``: a letter for the batch axis, on batched operands and the
    output (literal subscripts without ``...``)."""
    spec = call.args[0] if call.args else None
    if not (isinstance(spec, gast.Constant) and isinstance(spec.value, str)) or "..." in spec.value:
        return None
    text = spec.value.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    if not arrow:
        letters = sorted(c for c in inputs if c.isalpha() and inputs.count(c) == 1)
        output = "".join(letters)
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in text)
    operands = call.args[1:]
    parts = inputs.split(",")
    if len(parts) != len(operands):
        return None
    parts = [free + p if call.flag(o) else p for p, o in zip(parts, operands)]
    spec = gast.Constant(",".join(parts) + "->" + free + output, None)
    return call.call(_func(call), [spec] + operands)


def join(call):
    """``np.concatenate([a, b], axis)`` / ``np.stack``: a list display of members."""
    values = call.args[0] if call.args else None
    if not isinstance(values, (gast.List, gast.Tuple)):
        return None
    flags = gast.Tuple([_flag_constant(call, v) for v in values.elts], gast.Load())
    axis = call.args[1] if len(call.args) > 1 else call.keywords.get("axis", gast.Constant(0, None))
    if isinstance(axis, gast.Constant) and axis.value is None:
        return None
    name = "concatenate" if call.callee is np.concatenate else "stack"
    return call.template(f"rt.batch.{name}(V, F, A)", V=values, F=flags, A=axis)


def reshape(call):
    x = call.args[0]
    shape = call.args[1] if len(call.args) > 1 else call.keywords.get("newshape",
                                                                      call.keywords.get("shape"))
    if shape is None or any(call.flag(o) for o in call.operands() if o is not x) \
            or set(call.keywords) - {"newshape", "shape"}:
        return None
    if isinstance(shape, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in shape.elts):
        return call.template("X.reshape((X.shape[0],) + S)", X=x, S=shape)
    return call.template("rt.batch.reshape(X, S)", X=x, S=shape)


def transpose(call):
    x = call.args[0]
    axes = call.args[1] if len(call.args) > 1 else call.keywords.get("axes")
    if axes is not None and call.flag(axes):
        return None
    rank = call.rank_of(x)
    if axes is None and rank is not None and rank <= 1:
        return clone(x)                                  # a vector's transpose is itself
    literal = None if axes is None else [int_literal(e) for e in getattr(axes, "elts", [])]
    if axes is None and rank is not None:
        order = (0,) + tuple(range(rank, 0, -1))
        return call.template("X.transpose(O)", X=x, O=_ints(order))
    if literal and None not in literal and rank is not None:
        order = (0,) + tuple(a % rank + 1 for a in literal)
        return call.template("X.transpose(O)", X=x, O=_ints(order))
    return call.template("rt.batch.transpose(X, A)", X=x, A=axes or gast.Constant(None, None))


def _ints(values):
    return gast.Tuple([gast.Constant(v, None) for v in values], gast.Load())


def ravel(call):
    if len(call.args) != 1 or call.keywords:
        return None
    return call.template("X.reshape(X.shape[0], -1)", X=call.args[0])


def outer(call):
    if len(call.args) != 2 or call.keywords:
        return None
    a, b = call.args
    t = call.template
    left = t("A.reshape(A.shape[0], -1)[:, :, None]", A=a) if call.flag(a) \
        else t("np.ravel(A)[:, None]", A=a)
    right = t("B.reshape(B.shape[0], -1)[:, None, :]", B=b) if call.flag(b) else t("np.ravel(B)", B=b)
    return t("L * R", L=left, R=right)


# -- the runtime's helpers that generated derivatives call ----------------------------

RUNTIME_ELEMENTWISE = frozenset({rt.zero_guard, rt.power_base_factor, rt.power_exponent_factor,
                                 rt.clip_mask, rt.abs_grad, rt.sign_grad, rt.abs_jvp, rt.sign_jvp})
RUNTIME_SAME_CALL = frozenset({rt.zeros_like, rt.zeros_of, rt.identity, rt.copied,
                               rt.writable_copy, rt.as_array, rt.seed_sum})
# helpers working along an ``axis`` argument: its position in their signature
RUNTIME_AXISWISE = {helper: list(inspect.signature(helper).parameters).index("axis")
                    for helper in (rt.unreduce, rt.mean_grad, rt.var_grad, rt.std_grad,
                                   rt.extremum_grad, rt.prod_grad, rt.extremum_jvp, rt.prod_jvp,
                                   rt.var_jvp, rt.std_jvp)}


def _flag_constant(call, node):
    return gast.Constant(bool(call.flag(node)), None)


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


def runtime_rule(call):
    """The batched call of one of the runtime's helpers, or None."""
    callee = call.callee
    t = call.template
    if callee in RUNTIME_ELEMENTWISE:
        return call.call(_func(call), aligned(call, call.args))
    if callee in RUNTIME_SAME_CALL:
        return call.call(_func(call), call.args)
    if callee in (rt.matmul_lhs, rt.matmul_rhs, rt.dot_lhs, rt.dot_rhs):
        return matmul_vjp(call)
    if callee is rt.unbroadcast and len(call.args) == 2:
        g, x = call.args
        return t("rt.batch.unbroadcast(G, X, FG, FX)", G=g, X=x, FG=_flag_constant(call, g),
                 FX=_flag_constant(call, x))
    if callee is rt.getitem_grad and len(call.args) == 3 and not call.flag(call.args[2]):
        g, x, key = call.args
        return t("rt.batch.getitem_grad(G, X, K, FG, FX)", G=g, X=x, K=key,
                 FG=_flag_constant(call, g), FX=_flag_constant(call, x))
    if callee is rt.transpose_grad and call.flag(call.args[0]) and not any(
            call.flag(o) for o in call.operands()[1:]):
        return call.call(t("rt.batch.transpose_grad"), call.args)
    if callee is rt.add and len(call.args) == 2:
        a, b = call.args
        return t("rt.batch.add(A, B, FA, FB)", A=a, B=b, FA=_flag_constant(call, a),
                 FB=_flag_constant(call, b))
    if callee is rt.broadcast_like and len(call.args) == 2:
        x, ans = call.args
        return t("rt.batch.broadcast_like(T, A, FT, FA)", T=x, A=ans,
                 FT=_flag_constant(call, x), FA=_flag_constant(call, ans))
    if callee in RUNTIME_AXISWISE:
        position = RUNTIME_AXISWISE[callee]
        if any(call.flag(v) for k, v in call.keywords.items()) or \
                any(call.flag(a) for a in call.args[position:]):
            return None
        flags = gast.Tuple([_flag_constant(call, a) for a in call.args], gast.Load())
        keywords = gast.Dict([gast.Constant(k, None) for k in call.keywords],
                             list(call.keywords.values()))
        return t("rt.batch.axiswise(F, A, FL, P, S, K)", F=call.func,
                 A=gast.Tuple(list(call.args), gast.Load()), FL=flags,
                 P=gast.Constant(position, None), S=call.size(), K=keywords)
    return None


def broadcast_to(call):
    if len(call.args) != 2 or call.keywords or call.flag(call.args[1]):
        return None
    x, shape = call.args
    return call.template("rt.batch.broadcast_to(X, S)", X=x, S=shape)


SPECIAL = {
    np.matmul: lambda call: matmul(call, *call.args) if len(call.args) == 2 and not call.keywords
    else None,
    np.dot: dot, np.einsum: einsum, np.concatenate: join, np.stack: join, np.reshape: reshape,
    np.transpose: transpose, np.ravel: ravel, np.outer: outer, np.broadcast_to: broadcast_to,
}


def rule(call):
    """The batched expression of ``call`` (a :class:`Call`), or None when no rule covers it."""
    callee = call.callee
    if callee in _SHAPE_QUERIES:
        return shape_query(call)
    special = SPECIAL.get(callee)
    if special is not None:
        return special(call)
    if callee in AXIS_ARGUMENTS:
        return axis_rule(call)
    found = runtime_rule(call)
    if found is not None:
        return found
    if callee in SAME_CALL:
        return same_call(call)
    if is_elementwise(callee) and not any(isinstance(v, (gast.List, gast.Tuple))
                                          for v in call.operands()):
        positional = aligned(call, call.args + list(call.keywords.values()))
        args = positional[:len(call.args)]
        keywords = dict(zip(call.keywords, positional[len(call.args):]))
        return call.call(_func(call), args, keywords)
    return None


def is_random(callee):
    """Whether ``callee`` draws random numbers (``np.random.normal``, a ``Generator``'s
    method): under ``vmap`` each member would need its own draw."""
    module = getattr(callee, "__module__", None) or ""
    owner = getattr(getattr(callee, "__self__", None), "__class__", None)
    return module.startswith("numpy.random") or (
        owner is not None and owner.__module__.startswith("numpy.random"))


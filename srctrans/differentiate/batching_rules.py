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
import math

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
    **dict.fromkeys((
        np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft,
        np.roll, np.repeat, np.partition, np.split, np.array_split), (_AXIS,)),
    **dict.fromkeys((
        np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2, np.fft.fftn, np.fft.ifftn,
        np.fft.rfftn, np.fft.irfftn, np.fft.fftshift, np.fft.ifftshift, np.rot90), ("axes",)),
    np.swapaxes: ("axis1", "axis2"), np.moveaxis: ("source", "destination"),
    np.trace: ("axis1", "axis2"), np.diagonal: ("axis1", "axis2"),
}
# SciPy's functions along an axis (SciPy is optional: recognised by module and name)
_SCIPY_AXIS_FUNCTIONS = {("scipy.special", "logsumexp"), ("scipy.special", "softmax"),
                         ("scipy.special", "log_softmax")}
# where ``axis=None`` means "the flattened array", not "every axis"
FLAT_WHEN_NONE = frozenset({np.argmax, np.argmin, np.cumsum, np.cumprod, np.sort, np.argsort,
                            np.take, np.take_along_axis, np.repeat, np.partition})
# where ``axis=None`` is not a default that applies (np.roll's flattens and reshapes back)
_NO_NONE = frozenset({np.expand_dims, np.swapaxes, np.moveaxis, np.trace, np.diagonal,
                      np.diff, np.roll, np.rot90, np.split, np.array_split, np.fft.fft,
                      np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft,
                      np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2})
# NumPy's defaults for the axes these take when the call does not name them
_DEFAULT_AXES = {np.trace: (0, 1), np.diagonal: (0, 1), np.diff: (-1,), np.sort: (-1,),
                 np.argsort: (-1,), np.partition: (-1,), np.rot90: ((0, 1),),
                 np.split: (0,), np.array_split: (0,),
                 **dict.fromkeys((np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft,
                                  np.fft.hfft, np.fft.ihfft), (-1,)),
                 **dict.fromkeys((np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2),
                                 ((-2, -1),))}

SAME_CALL = frozenset({
    np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy, np.array, np.asarray,
    np.ascontiguousarray, np.asanyarray, np.linalg.inv, np.linalg.det, np.linalg.slogdet,
    np.linalg.cholesky, np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr,
    np.linalg.pinv, np.linalg.eig, np.linalg.eigvals, np.linalg.matrix_power, np.real, np.imag,
    np.conj, np.conjugate, np.isnan, np.isfinite, np.isinf, np.nan_to_num, np.around, np.round, np.sign,
})
# functions whose batched call takes the same arguments when their first argument alone is
# batched and is at least of rank 2 per example (they work on the last two axes)
_LAST_TWO_AXES = frozenset({np.linalg.inv, np.linalg.det, np.linalg.slogdet, np.linalg.cholesky,
                            np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr,
                            np.linalg.pinv, np.linalg.eig, np.linalg.eigvals,
                            np.linalg.matrix_power})
_SHAPE_QUERIES = {np.shape: "shape", np.ndim: "ndim", np.size: "size", len: "len"}
# what reads a value's dtype alone: the same for every member, so unbatched, and the same call
# (and positions in a list that grows, whose length is every member's)
DTYPE_QUERIES = frozenset({np.result_type, np.iscomplexobj, np.isrealobj, rt.is_complex_value,
                           rt.position, rt.slice_position})
# ``math``'s functions of numbers, as the NumPy ufuncs that compute them for every member
MATH_AS_NUMPY = {getattr(math, name): getattr(np, numpy_name) for name, numpy_name in (
    ("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log1p", "log1p"), ("log2", "log2"),
    ("log10", "log10"), ("sqrt", "sqrt"), ("sin", "sin"), ("cos", "cos"), ("tan", "tan"),
    ("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"), ("atan2", "arctan2"),
    ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"), ("asinh", "arcsinh"),
    ("acosh", "arccosh"), ("atanh", "arctanh"), ("fabs", "fabs"), ("hypot", "hypot"),
    ("pow", "power"), ("copysign", "copysign"), ("degrees", "degrees"),
    ("radians", "radians"))}
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
    if isinstance(callee, np.ufunc):
        return callee.signature is None          # not a generalised ufunc (np.matmul)
    if callee in ELEMENTWISE_EXTRA:
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
    for k, name in enumerate(AXIS_ARGUMENTS.get(callee, (_AXIS,))):
        node = bound.get(name)
        if node is None and k < len(defaults):
            node = gast.Constant(defaults[k], None)
        elif node is None and callee in _NO_NONE:
            return None
        every_axis = node is None or isinstance(node, gast.Constant) and node.value is None
        if every_axis and (callee in _NO_NONE or bound.get("s") is not None):
            return None     # (np.fft.fftn's s= without axes= takes the last axes, not all)
        flattens = callee in FLAT_WHEN_NONE
        if every_axis and callee is np.linalg.norm and rank is not None and rank > 1:
            if not _ord_is_none(bound):
                if rank != 2:
                    return None
                node = gast.Tuple([gast.Constant(0, None), gast.Constant(1, None)], gast.Load())
                every_axis = False        # a matrix norm: of the member's two axes
            else:
                flattens = True           # the flattened array's 2-norm
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
    if callee is np.take_along_axis:            # its indices need the array's rank: a batch axis
        if len(args) < 2:
            return None
        args[1] = call.template("I[None]", I=args[1])
    return call.call(same_func(call), args, keywords)


def _scipy_axis_function(callee):
    module = getattr(callee, "__module__", None) or ""
    return module.startswith("scipy.special") and \
        ("scipy.special", getattr(callee, "__name__", None)) in _SCIPY_AXIS_FUNCTIONS


def _ord_is_none(bound):
    order = bound.get("ord")
    return order is None or isinstance(order, gast.Constant) and order.value is None


def same_func(call):
    """The expression the batched call calls the primal by: the call's own."""
    return clone(call.func)


_ARRAY_MAKERS = frozenset({np.array, np.asarray, np.ascontiguousarray, np.asanyarray})


def same_call(call):
    first = call.args[0] if call.args else None
    if call.callee in _ARRAY_MAKERS and first is not None and len(call.args) == 1:
        # an array of a list of batched entries: the entries stacked after the batch axis
        keywords = gast.Dict([gast.Constant(k, None) for k in call.keywords],
                             list(call.keywords.values()))
        return call.template("rt.batch.array_of(F, X, FL, S, K)", F=same_func(call), X=first,
                             FL=_flag_node(call.flag(first)), S=call.size(), K=keywords)
    if call.callee in _LAST_TWO_AXES:
        if any(call.flag(o) for o in call.operands() if o is not first):
            return None
        if call.rank_of(first) is not None and call.rank_of(first) < 2:
            return None                 # (they need a matrix per member: an unknown rank is one)
    elif any(call.flag(o) for o in call.operands() if o is not first):
        return None                     # (np.full_like(x, v) of a batched v: one call per member)
    return call.call(same_func(call), call.args)


def flag_constant(call, node):
    """Whether ``node`` is batched, as a literal the batched call passes on."""
    return gast.Constant(bool(call.flag(node)), None)


def _flag_node(flag):
    if isinstance(flag, tuple):
        return gast.Tuple([_flag_node(f) for f in flag], gast.Load())
    return gast.Constant(flag, None)


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
        if fa and not fb and (rb <= 2 or ra >= rb):
            return t("A @ B", A=a, B=b)        # the batch axis meets no axis of b
        if fb and not fa and rb >= 2 and rb >= ra:
            return t("A @ B", A=a, B=b)
        if fb and not fa and rb == 1 and ra <= 2:
            return t("B @ A", A=a, B=b) if ra == 1 else t("B @ A.T", A=a, B=b)
        if fa and fb and ra == 1 and rb == 1:
            return t("np.einsum('bi,bi->b', A, B)", A=a, B=b)
        return _matmul_of_stacks(call, a, b, ra, rb)
    return t("rt.batch.matmul(A, B, FA, FB)", A=a, B=b, FA=flag_constant(call, a),
             FB=flag_constant(call, b))


def _matmul_of_stacks(call, a, b, ra, rb):
    """``a @ b`` for any known ranks: a vector made a matrix (a row on the left, a column on
    the right), each batched operand given axes after its batch axis up to the other's
    rank (so that its batch axis meets no axis of the other), and the vector's axis
    taken out of the product again."""
    t = call.template
    top = max(ra, rb, 2)
    left = a if ra > 1 else t("A[..., None, :]", A=a)
    right = b if rb > 1 else t("B[..., None]", B=b)
    if call.flag(a):
        left = lift(left, top - max(ra, 2))
    if call.flag(b):
        right = lift(right, top - max(rb, 2))
    product = t("L @ R", L=left, R=right)
    if ra == 1 and rb == 1:
        return t("P[..., 0, 0]", P=product)
    if ra == 1:
        return t("P[..., 0, :]", P=product)
    return t("P[..., 0]", P=product) if rb == 1 else product


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
    return call.template("rt.batch.dot(A, B, FA, FB)", A=a, B=b, FA=flag_constant(call, a),
                         FB=flag_constant(call, b))


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
    return call.call(same_func(call), [spec] + operands)


def join(call):
    """``np.concatenate([a, b], axis)`` / ``np.stack``: a list display of members."""
    values = call.args[0] if call.args else None
    if not isinstance(values, (gast.List, gast.Tuple)):
        return None
    flags = gast.Tuple([flag_constant(call, v) for v in values.elts], gast.Load())
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

def solve(call):
    """``np.linalg.solve(a, b)`` of each member, for a matrix ``a``: a vector ``b`` made a
    column (NumPy takes a batched one for a matrix), the rest broadcast over the batch."""
    if len(call.args) != 2 or call.keywords:
        return None
    a, b = call.args
    ra, rb = call.rank_of(a), call.rank_of(b)
    if ra != 2 or rb not in (1, 2):
        return None
    if rb == 2:
        return call.call(same_func(call), [a, b])
    return call.template("F(A, B[..., None])[..., 0]", F=same_func(call), A=a, B=b)


def at_least(call):
    """``np.atleast_1d/2d/3d(x)`` of one argument of known per-example rank: the axes NumPy
    adds, added after the batch axis."""
    if len(call.args) != 1 or call.keywords or call.rank_of(call.args[0]) is None:
        return None
    x, rank = call.args[0], call.rank_of(call.args[0])
    wanted = {np.atleast_1d: 1, np.atleast_2d: 2, np.atleast_3d: 3}[call.callee]
    if rank >= wanted:
        return x
    shapes = {(1, 0): "X[:, None]", (2, 0): "X[:, None, None]", (2, 1): "X[:, None, :]",
              (3, 0): "X[:, None, None, None]", (3, 1): "X[:, None, :, None]",
              (3, 2): "X[..., None]"}
    return call.template(shapes[wanted, rank], X=x)


def spaced(call):
    """``np.linspace(start, stop, num, ..., axis)`` (and ``logspace``, ``geomspace``) of
    batched end points: aligned, and the new axis placed after the batch axis."""
    bound = bound_arguments(call.callee, call.args, call.keywords)
    if bound is None or any(call.flag(v) for k, v in bound.items() if k not in ("start", "stop")):
        return None
    start, stop = aligned(call, [bound["start"], bound["stop"]])
    keywords = {k: v for k, v in bound.items() if k not in ("start", "stop")}
    axis = keywords.get("axis", gast.Constant(0, None))
    literal = int_literal(axis)
    if literal is None:
        return None
    keywords["axis"] = gast.Constant(literal + 1 if literal >= 0 else literal, None)
    return call.call(same_func(call), [start, stop], keywords)


def pad(call):
    """``np.pad(x, pad_width, ...)`` of a batched ``x`` alone: no padding of the batch axis."""
    bound = bound_arguments(call.callee, call.args, call.keywords)
    if bound is None or "pad_width" not in bound or \
            any(call.flag(v) for k, v in bound.items() if k != "array"):
        return None
    keywords = {k: v for k, v in bound.items() if k not in ("array", "pad_width")}
    keywords.update(bound.get("kwargs", {}))
    keywords.pop("kwargs", None)
    return call.template("rt.batch.pad(X, W, K)", X=bound["array"], W=bound["pad_width"],
                         K=gast.Dict([gast.Constant(k, None) for k in keywords],
                                     list(keywords.values())))


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
    np.linalg.solve: solve, np.atleast_1d: at_least, np.atleast_2d: at_least,
    np.atleast_3d: at_least, np.linspace: spaced, np.logspace: spaced, np.geomspace: spaced,
    np.pad: pad,
}


def has_rule(callee):
    """Whether :func:`rule` has a rule for calls of ``callee`` (that may still decline one)."""
    try:
        return callee in _SHAPE_QUERIES or callee in DTYPE_QUERIES or callee in MATH_AS_NUMPY \
            or callee in SPECIAL or callee in AXIS_ARGUMENTS or callee in SAME_CALL \
            or _scipy_axis_function(callee) or is_elementwise(callee)
    except TypeError:                   # an unhashable callable
        return False


def rule(call):
    """The batched expression of ``call`` (a :class:`Call`), or None when no rule covers it."""
    callee = call.callee
    if callee in _SHAPE_QUERIES:
        return shape_query(call)
    if callee in DTYPE_QUERIES:
        return call.call(same_func(call), call.args)
    if callee in MATH_AS_NUMPY:
        return call.call(call.template(f"np.{MATH_AS_NUMPY[callee].__name__}"),
                         aligned(call, call.args))
    special = SPECIAL.get(callee)
    if special is not None:
        return special(call)
    if callee in AXIS_ARGUMENTS or _scipy_axis_function(callee):
        return axis_rule(call)
    if callee in SAME_CALL:
        return same_call(call)
    if is_elementwise(callee) and not any(isinstance(v, (gast.List, gast.Tuple))
                                          for v in call.operands()):
        positional = aligned(call, call.args + list(call.keywords.values()))
        args = positional[:len(call.args)]
        keywords = dict(zip(call.keywords, positional[len(call.args):]))
        return call.call(same_func(call), args, keywords)
    return None


def is_random(callee):
    """Whether ``callee`` draws random numbers (``np.random.normal``, a ``Generator``'s
    method): under ``vmap`` each member would need its own draw."""
    module = getattr(callee, "__module__", None) or ""
    owner = getattr(getattr(callee, "__self__", None), "__class__", None)
    return module.startswith("numpy.random") or (
        owner is not None and owner.__module__.startswith("numpy.random"))


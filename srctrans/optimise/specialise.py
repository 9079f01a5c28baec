"""Specialise a backward pass on the shapes of the values it reads.

Requires: backward statements (after simplification) and the shapes of the
forward values they read (the residuals and the output), measured on one call.
Guarantees: the statements compute the same values for every call whose
forward values have those shapes. Runtime helpers that exist only to handle
every shape become the plain NumPy expression for the shapes at hand:

  >>> import ast, gast
  >>> body = gast.parse("dy = rt.unbroadcast(d_add, b)\\ndW = rt.matmul_rhs(dy, x, W)").body
  >>> shapes = {"d_add": (32, 4), "b": (4,), "x": (32, 16), "W": (16, 4)}
  >>> print("\\n".join(ast.unparse(gast.gast_to_ast(s)) for s in specialise(body, shapes)))
  dy = d_add.sum(axis=0)
  dW = x.T @ dy

``rt.unbroadcast`` disappears when nothing was broadcast and becomes a sum
over leading axes when only leading axes were added; ``rt.matmul_*`` of matrices, vectors
and a stack times a matrix become products with a transpose
(:mod:`srctrans.optimise.matmul_cotangents`), ``rt.einsum_grads`` the einsums it calls
(:mod:`srctrans.optimise.einsum_cotangents`); ``rt.zeros_like`` of a value of known
shape (a number or an array, not a container) becomes ``rt.zeros_of``; a called user
function's cotangents (``dz, = f_bwd(res, g)``) have their arguments' shapes; the
spread of a scalar cotangent over an array (``rt.unreduce``) is dropped
when its only use multiplies it by an array of that shape
(``rt.mean_grad`` likewise, divided by the count), or added to an array of that
shape; a variance's cotangent is written out. Whether a function's shapes are fixed
by its inputs' shapes is decided by :mod:`srctrans.analyse.fixed_shapes`, and
``expression_shapes.infer_shapes`` adds the shapes of the temporaries the measuring
run did not see, and of names that every branch gives one shape.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.analyse.fixed_shapes import stored_names
from srctrans.annotations import Anno
from srctrans.nodes import clone, int_literal, whole_slice
from srctrans.optimise.accumulate import sink_into_branches
from srctrans.optimise.dce import reads_of
from srctrans.optimise.einsum_cotangents import einsum_cotangents, einsum_tangent
from srctrans.optimise.expression_shapes import (REDUCTION_METHODS, basic_index_shape, index_of,
                                                 is_runtime_helper_call, record_pair, shape_of)
from srctrans.optimise.matmul_cotangents import matmul_cotangent
from srctrans.optimise.matrix_axes import (moved_axes, reshaped_like, transposed_swap,
                                          unexpanded_product)
from srctrans.optimise.scan_cotangents import scan_cotangent
from srctrans.optimise.picked_cotangents import picked_cotangent, picked_entry
from srctrans.optimise.simplify import power_of_two
from srctrans.optimise.solve_picks import picked_solve, single_picks, solve_cotangent
from srctrans.optimise.softmax_ratios import plain_softmax_ratio, softmax_ratio_cotangent
from srctrans.optimise.spreads import Spreads, is_spread, reduced_count, spread_against, spread_of
from srctrans.treewalk import replace_children, walk

def use_array_methods(statements, shapes):
    """Call reductions of known arrays as methods: ``np.sum(a, axis=1)`` -> ``a.sum(axis=1)``,
    and moves of their axes alike (``np.moveaxis(a, 0, -1)`` -> ``a.transpose((1, 2, 0))``:
    :func:`~srctrans.optimise.matrix_axes.moved_axes`).

    Only where ``a`` is known to be an array of at least one dimension (a name,
    or an expression of names: ``np.sum(d * (2 * r))``); the method gives the
    same result and skips NumPy's function-level dispatch.
    """
    for stmt in statements:
        for node in walk(stmt):
            if not isinstance(node, gast.Call) or not node.args:
                continue
            moved = moved_axes(node, shapes)
            if moved is not None:
                node.func, node.args = moved.func, moved.args
                anno.set_(node, Anno.CALLEE, None)
                continue
            callee = anno.get(node, Anno.CALLEE)
            try:
                method = REDUCTION_METHODS.get(callee)
            except TypeError:
                continue
            receiver = node.args[0]
            if method and len(shape_of(receiver, shapes) or ()) >= 1:
                node.func = gast.Attribute(receiver, method, gast.Load())
                node.args = node.args[1:]
                anno.set_(node, Anno.CALLEE, None)
    return statements


def read_entries_uncopied(statements, shapes):
    """``statements`` (changed in place) with ``rt.copied(a[i])`` read as ``a[i]`` where ``a``
    is an array of known shape and ``a[i]`` one of its entries (a NumPy number: no later
    write into ``a`` changes it; a copy guards against one changing a view)."""
    def uncopied(node):
        return node.args[0] if _copied_entry(node, shapes) else node
    for stmt in statements:
        replace_children(stmt, uncopied)
    return statements


def _copied_entry(node, known):
    """Whether ``node`` is ``rt.copied(a[i])`` of an entry of an array of known shape."""
    return (is_runtime_helper_call(node, "copied") and len(node.args) == 1
            and isinstance(node.args[0], gast.Subscript) and isinstance(node.args[0].value, gast.Name)
            and len(known.get(node.args[0].value.id) or ()) >= 1
            and shape_of(node.args[0], known) == ())


def specialise_tangents(statements, shapes):
    """A JVP's ``statements`` rewritten, in place, for values of the given ``shapes``.

    ``shapes`` holds each name's one shape whenever it has a value (measured, then
    :func:`one_valued` and :func:`infer_shapes`). ``rt.broadcast_like(t, y)`` becomes ``t`` where
    ``t`` already has ``y``'s shape, reductions of arrays become their methods
    (:func:`use_array_methods`), and the runtime's other helpers their plain
    NumPy form, as in a backward pass (``rt.zeros_like`` of a number or an
    array, ``rt.unbroadcast``, 2-D ``rt.matmul_*``).
    """
    use_array_methods(statements, shapes)
    rewriter = _Rewriter(shapes)
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, (gast.Assign, gast.Return, gast.Expr)) and node.value is not None:
                node.value = rewriter.visit(node.value)
    return statements


def factor_out_of_sums(statements, tangents):
    """The assignments of ``statements`` to the names ``tangents``, rewritten in place:
    ``(d * (2 * r)).sum()`` -> ``2 * (d * r).sum()`` (:func:`_factor_out_of_sum`)."""
    for stmt in statements:
        for node in walk(stmt):
            if (isinstance(node, gast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], gast.Name) and node.targets[0].id in tangents):
                node.value = _factor_out_of_sum(node.value)
    return statements


def _factor_out_of_sum(node):
    """``(d * (2 * r)).sum()`` -> ``2 * (d * r).sum()``: a power of two out of a whole sum (one
    array operation less; multiplying by a power of two is exact, so each term rounds alike).
    The tangent of ``np.sum((y - t) ** 2)`` is such a sum."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == "sum" and not node.args and not node.keywords
            and isinstance(node.func.value, gast.BinOp) and isinstance(node.func.value.op, gast.Mult)):
        return node
    product = node.func.value
    for side in ("left", "right"):
        inner = getattr(product, side)
        if isinstance(inner, gast.BinOp) and isinstance(inner.op, gast.Mult):
            for factor, rest in ((inner.left, inner.right), (inner.right, inner.left)):
                if power_of_two(factor):
                    setattr(product, side, rest)
                    return gast.BinOp(factor, gast.Mult(), node)
    return node


def specialise(statements, shapes, numpy_alias="np", live_out=frozenset(), forward=()):
    """``statements`` rewritten for values of the given ``shapes`` (name -> tuple), in code
    that reaches NumPy as ``numpy_alias``; ``live_out``: the names read after them (the
    gradients returned), whose spreads stay (a read there is no product's); ``forward``: the
    forward pass they follow, whose elementwise definitions tell names of one shape apart
    where the shapes do not (:class:`~srctrans.optimise.spreads.Spreads`)."""
    known = dict(shapes)
    statements = sink_into_branches(statements)
    spreads = Spreads(statements, live_out, forward, known)
    spread_names = frozenset(stmt.targets[0].id for top in statements for stmt in walk(top)
                             if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                             and isinstance(stmt.targets[0], gast.Name) and is_spread(stmt.value))
    rewriter = _Rewriter(known, numpy_alias=numpy_alias, spread_names=spread_names,
                         single_picks=single_picks(statements))
    _specialise_block(statements, known, rewriter, shapes, spreads)
    return spreads.drop(statements, known)


def _specialise_block(statements, known, rewriter, measured, spreads):
    for stmt in statements:
        if isinstance(stmt, gast.If):
            # each branch from the shapes before it; after it, the shapes both agree on
            branches = [dict(known), dict(known)]
            for field, shapes in zip(("body", "orelse"), branches):
                block = getattr(stmt, field)
                _specialise_block(block, shapes,
                                  _Rewriter(shapes, rewriter.zeros, rewriter.numpy_alias,
                                            rewriter.spread_names, rewriter.single_picks),
                                  measured, spreads)
                setattr(stmt, field, spreads.drop(block, shapes) or
                        ([gast.Pass()] if field == "body" else []))
            merged = {k: v for k, v in branches[0].items() if branches[1].get(k) == v}
            known.clear()
            known.update(merged)
            rewriter.zeros.clear()
        elif isinstance(stmt, (gast.For, gast.While)):
            rewriter.zeros.clear()            # a later step may have changed them
            _specialise_block(stmt.body, known, rewriter, measured, spreads)
            _specialise_block(getattr(stmt, "orelse", []), known, rewriter, measured, spreads)
            stmt.body = spreads.drop(stmt.body, known) or [gast.Pass()]   # a step's own spreads
            rewriter.zeros.clear()
        elif isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Name) and target.id in rewriter.single_picks:
                k = rewriter.single_picks[target.id]
                stmt.value = picked_solve(stmt.value, k, known, rewriter.numpy_alias) or \
                    picked_entry(stmt.value, k, known, rewriter.numpy_alias) or stmt.value
            stmt.value = rewriter.visit(stmt.value)
            if rewriter.zeros:
                for name in stored_names(target):
                    rewriter.zeros.pop(name, None)
            if isinstance(target, gast.Name) and is_runtime_helper_call(stmt.value, "zeros_of"):
                rewriter.zeros[target.id] = shape_of(stmt.value, known)
            if isinstance(target, gast.Name):
                if target.id in measured:
                    continue              # measured: one shape all along (a pop restores it)
                shape = shape_of(stmt.value, known)
                if shape is not None:
                    known[target.id] = shape
                else:
                    known.pop(target.id, None)
                record_pair(target.id, stmt.value, known)     # (rt.solve_grads' cotangents)
            elif anno.get(stmt, Anno.COTANGENTS_OF) is not None:   # dz, = f_bwd(res, g): each
                for name, primal in zip(target.elts, anno.get(stmt, Anno.COTANGENTS_OF)):
                    if name.id not in measured:                   # has its primal's shape
                        if known.get(primal) is not None:
                            known[name.id] = known[primal]
                        else:
                            known.pop(name.id, None)


def _sum(expression, axes, keepdims=False):
    axis = gast.Constant(axes[0], None) if len(axes) == 1 else \
        gast.Tuple([gast.Constant(a, None) for a in axes], gast.Load())
    keywords = [gast.keyword("axis", axis)] if axes else []
    if keepdims:
        keywords.append(gast.keyword("keepdims", gast.Constant(True, None)))
    return gast.Call(gast.Attribute(expression, "sum", gast.Load()), [], keywords)


def _new_axes_taken_away(call, known, spread_names):
    """``g[:, 0]`` for ``rt.getitem_grad(g, x, np.s_[:, None])``: an index of whole slices and
    new axes (``None``: ``lse[:, None]``, ``means[None, :, :]``) picks all of ``x``, with axes
    of length 1 put in; its cotangent, shaped as the pick, is ``x``'s with those axes taken
    away. None for any other index, a ``g`` of another shape (a number, say), or one reading
    a spread (``spread_names``: the spread's number is put back where it was picked)."""
    g, x, index = call.args
    if reads_of(g) & spread_names:
        return None
    index = index_of(index)
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    new = [isinstance(p, gast.Constant) and p.value is None for p in parts]
    whole = [whole_slice(p) for p in parts]
    x_shape, g_shape = shape_of(x, known), shape_of(g, known)
    if not any(new) or not all(a or b for a, b in zip(new, whole)) or x_shape is None \
            or sum(whole) > len(x_shape):
        return None
    axes = iter(x_shape)
    picked = tuple(1 if is_new else next(axes) for is_new in new) + tuple(axes)
    if g_shape != picked:
        return None
    taken = [gast.Constant(0, None) if is_new else gast.Slice(None, None, None) for is_new in new]
    return gast.Subscript(g, gast.Tuple(taken, gast.Load()) if len(taken) > 1 else taken[0],
                          gast.Load())


def _variance_cotangent(call, known):
    """``g * (x - x.mean(axis=axis, keepdims=...)) * (2.0 / dof)`` for
    ``rt.var_grad(g, x, axis, ddof, keepdims)`` of a real array ``x`` of known shape (what
    the helper computes; ``g`` with the reduced axes put back), whose mean the forward pass
    may already hold (:mod:`srctrans.optimise.common_values` then reads it); None when the
    axes or the count are not constants or the variance is undefined (``dof <= 0``)."""
    g, x, axis, ddof, keepdims = call.args
    shape, ddof = shape_of(x, known), int_literal(ddof)
    count = reduced_count(shape, axis) if shape and ddof is not None else None
    spread = None if count is None or count - ddof <= 0 or shape_of(g, known) is None else \
        spread_against(g, shape, axis, keepdims, known)
    if spread is None:
        return None
    # the mean as the forward pass likely spelt it: as reduced when g broadcasts as it is
    keywords = [gast.keyword("axis", clone(axis))]
    if spread is not g or isinstance(keepdims, gast.Constant) and keepdims.value is True:
        keywords.append(gast.keyword("keepdims", gast.Constant(True, None)))
    mean = gast.Call(gast.Attribute(clone(x), "mean", gast.Load()), [], keywords)
    deviation = gast.BinOp(clone(x), gast.Sub(), mean)
    return gast.BinOp(gast.BinOp(spread, gast.Mult(), deviation), gast.Mult(),
                      gast.Constant(2.0 / (count - ddof), None))


def _log_of_softmax_cotangent(call, known):
    """``rt.log_of_softmax_grad(g, p, axis)`` written out, ``p * -g.sum(axis=axis,
    keepdims=True) + g``, when the name ``g`` has ``p``'s shape (the helper spreads it
    otherwise); or None. The same values as the helper's ``g - p * g.sum(...)``, bit for bit
    (a negation is exact), in the form ``negated_names`` reads a cross-entropy's ``g = -T``
    into: ``p * T.sum(axis=axis, keepdims=True) - T``, what an expert writes."""
    g, p, axis = call.args
    if not isinstance(g, gast.Name) or shape_of(g, known) is None \
            or shape_of(g, known) != shape_of(p, known):
        return None
    total = gast.Call(gast.Attribute(clone(g), "sum", gast.Load()), [], [
        gast.keyword("axis", axis), gast.keyword("keepdims", gast.Constant(True, None))])
    return gast.BinOp(gast.BinOp(p, gast.Mult(), gast.UnaryOp(gast.USub(), total)), gast.Add(), g)


def _euclidean_norm_cotangent(call, known):
    """``g * rt.ratio_or_zero(x, norm)`` for ``rt.norm_grad(g, norm, x, ord, axis, keepdims)``
    of a real array's Euclidean norm (``ord`` None, or 2 along one axis) of known shapes
    (``g`` and ``norm`` with the reduced axes put back): what the helper computes, 0 in a
    slice whose norm is 0, without its general path's reshapes; None otherwise."""
    g, norm, x, order, axis, keepdims = call.args
    shape = shape_of(x, known)
    if not (isinstance(order, gast.Constant) and isinstance(axis, gast.Constant) and shape
            and (order.value is None or order.value == 2 and (axis.value is not None
                                                              or len(shape) == 1))):
        return None
    if shape_of(g, known) is None or shape_of(norm, known) is None:
        return None
    spreads = [spread_against(v, shape, axis, keepdims, known) for v in (g, norm)]
    if None in spreads:
        return None
    quotient = gast.Call(gast.Attribute(clone(call.func.value), "ratio_or_zero", gast.Load()),
                         [x, spreads[1]], [])
    if anno.get(call, Anno.CALLEE) is not None:
        anno.set_(quotient, Anno.CALLEE, runtime.ratio_or_zero)
    anno.set_(quotient, Anno.NORM_QUOTIENT, True)        # (optimise/norm_ratios.py)
    return gast.BinOp(spreads[0], gast.Mult(), quotient)


def fold_shape_counts(statements, known):
    """``statements`` with each ``np.size(x)`` and ``np.ndim(x)`` of a name ``x`` whose shape
    ``known`` holds written as the int it gives for every call of those shapes (in place): a
    scipy density's ``infinite == np.size(df)`` then tests a number against a constant
    (``np.size`` of a float costs a microsecond)."""
    def folded(node):
        counted = _shape_count(node, known) if isinstance(node, gast.Call) else None
        return node if counted is None else gast.copy_location(gast.Constant(counted, None), node)
    for stmt in statements:
        replace_children(stmt, folded)
    return statements


def _shape_count(call, known):
    """The int ``np.size(x)`` or ``np.ndim(x)`` gives, ``x`` a name of a shape ``known``
    holds, else None."""
    callee = anno.get(call, Anno.CALLEE)
    if not ((callee is np.size or callee is np.ndim) and len(call.args) == 1
            and not call.keywords and isinstance(call.args[0], gast.Name)):
        return None
    shape = known.get(call.args[0].id)
    if shape is None:
        return None
    return int(np.prod(shape, dtype=int)) if callee is np.size else len(shape)


class _Rewriter(gast.NodeTransformer):
    """Rewrites the runtime's calls for the shapes ``known``; ``zeros`` maps the names
    that hold ``rt.zeros_of(x)`` in the block being rewritten to ``x``'s shape."""

    def __init__(self, known, zeros=None, numpy_alias="np", spread_names=frozenset(),
                 single_picks=None):
        self.known = known
        self.zeros = dict(zeros or {})
        self.numpy_alias = numpy_alias
        self.spread_names = spread_names     # spreads (:class:`Spreads`) may become numbers
        self.single_picks = single_picks or {}   # a pair's name -> the one index read of it

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Mult):
            return unexpanded_product(node, self.known) or node
        return self._spreads_in_sum(node) if isinstance(node.op, (gast.Add, gast.Sub)) else node

    def _spreads_in_sum(self, node):
        """``a + rt.mean_grad(g, x, ...)`` -> ``a + g / n`` (``rt.unreduce``: ``a + g``) when
        ``a`` has ``x``'s shape: the sum broadcasts the cotangent as the spread would."""
        for side, other in (("left", node.right), ("right", node.left)):
            term = getattr(node, side)
            if is_spread(term) and shape_of(other, self.known) is not None:
                spread = spread_of(term, self.known)
                if spread is not None and spread[1] == shape_of(other, self.known):
                    setattr(node, side, spread[0])
                    break                 # (the other side, spread too, keeps the sum's shape)
        return node

    def visit_Subscript(self, node):
        picked = einsum_cotangents(node, self.known, self.numpy_alias) or \
            solve_cotangent(node, self.known, self.numpy_alias) or \
            picked_cotangent(node, self.known, self.numpy_alias)             # a pick of one
        return picked if picked is not None else self.generic_visit(node)

    def visit_Call(self, node):
        self.generic_visit(node)
        known = self.known
        einsums = einsum_cotangents(node, known, self.numpy_alias) or \
            einsum_tangent(node, known, self.numpy_alias)
        if einsums is not None:
            return einsums
        plain = plain_softmax_ratio(node) or softmax_ratio_cotangent(node, known) or \
            transposed_swap(node, known) or moved_axes(node, known) or \
            reshaped_like(node, known) or scan_cotangent(node, known, self.numpy_alias)
        if plain is not None:
            return plain
        if is_runtime_helper_call(node, "zeros_like") and len(node.args) == 1 \
                and shape_of(node.args[0], known) is not None:   # a number or an array
            node.func.attr = "zeros_of"
            if anno.get(node, Anno.CALLEE) is not None:
                anno.set_(node, Anno.CALLEE, runtime.zeros_of)
            return node
        if is_runtime_helper_call(node, "broadcast_like") and len(node.args) == 2:
            tangent, like = (shape_of(a, known) for a in node.args)
            if tangent is not None and tangent == like:
                return node.args[0]                     # already the output's shape
            return node
        if is_runtime_helper_call(node, "add") and len(node.args) == 2:
            left, right = (shape_of(a, known) for a in node.args)
            first = node.args[0]
            if isinstance(first, gast.Name) and first.id in self.zeros and \
                    right is not None and right == self.zeros[first.id]:
                return node.args[1]                     # zeros + e, e of the zeros' shape
            if left is not None and right is not None:     # arrays or numbers, not containers
                return self._spreads_in_sum(gast.BinOp(node.args[0], gast.Add(), node.args[1]))
        if is_runtime_helper_call(node, "unbroadcast") and len(node.args) == 2:
            g, x = node.args
            g_shape, x_shape = shape_of(g, known), shape_of(x, known)
            if g_shape is None or x_shape is None:
                return node
            if g_shape == x_shape:
                return g
            lead = len(g_shape) - len(x_shape)
            if lead > 0 and g_shape[lead:] == x_shape:
                return _sum(g, tuple(range(lead)) if x_shape else ())
            if lead == 0 and all(a == b or a == 1 for a, b in zip(x_shape, g_shape)):
                kept = tuple(i for i, (a, b) in enumerate(zip(x_shape, g_shape)) if a != b)
                return _sum(g, kept, keepdims=True)
            return node
        if is_runtime_helper_call(node, "getitem_grad") and len(node.args) == 3:
            return _new_axes_taken_away(node, known, self.spread_names) or node
        if is_runtime_helper_call(node, "log_of_softmax_grad") and len(node.args) == 3:
            return _log_of_softmax_cotangent(node, known) or node
        if is_runtime_helper_call(node, "var_grad") and len(node.args) == 5:
            return _variance_cotangent(node, known) or node
        if is_runtime_helper_call(node, "norm_grad") and len(node.args) == 6:
            return _euclidean_norm_cotangent(node, known) or node
        if is_runtime_helper_call(node, "clip_mask") and len(node.args) >= 3 and all(
                shape_of(a, known) is not None for a in node.args[:3]):
            x, lo, hi = node.args[:3]     # numbers or arrays, both bounds given (its min=
                                          # and max=, read only for a bound of None, are not)
            return gast.BinOp(gast.Compare(x, [gast.GtE()], [lo]), gast.BitAnd(),
                              gast.Compare(clone(x), [gast.LtE()], [hi]))
        if is_runtime_helper_call(node, "abs_grad") and len(node.args) == 2 \
                and shape_of(node.args[1], known) is not None:
            g, x = node.args                      # real (specialised code has no complex value)
            sign = gast.Attribute(gast.Name(self.numpy_alias, gast.Load(), None, None), "sign",
                                  gast.Load())
            call = gast.Call(sign, [x], [])
            anno.set_(call, Anno.CALLEE, np.sign)
            return gast.BinOp(g, gast.Mult(), call)
        if is_runtime_helper_call(node, "written_part") and len(node.args) == 2 \
                and basic_index_shape(*node.args, known) is not None:
            g, index = node.args               # each entry written once: the part as it is
            return gast.Subscript(g, index_of(index), gast.Load())
        if _copied_entry(node, known):
            return node.args[0]          # an array's entry: a NumPy number, which no write changes
        if is_runtime_helper_call(node, "transpose_grad") and len(node.args) == 2 \
                and isinstance(node.args[1], gast.Constant) and node.args[1].value is None \
                and len(shape_of(node.args[0], known) or ()) >= 1:
            return gast.Attribute(node.args[0], "T", gast.Load())   # an array's axes reversed
        if is_runtime_helper_call(node, "entry_zero_like") and len(node.args) == 3 \
                and shape_of(node.args[2], known) is not None:
            return node.args[0]              # an array's (or number's): nothing to change
        written = matmul_cotangent(node, known)
        if written is not None:
            return written
        return node


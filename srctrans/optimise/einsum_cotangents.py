"""An einsum's cotangents and tangent written as the einsums they are.

Requires: specialised backward statements (``optimise.specialise`` calls this on each
call it rewrites) and the shapes of the values they read.
Guarantees: ``rt.einsum_grads(g, 'ij,j->i', (X, beta))`` (a tuple, one cotangent an
operand, found by parsing the subscripts and checking the shapes at every call) is the
tuple display ``(np.einsum('i,j->ij', g, beta), np.einsum('i,ij->j', g, X))``, and a pick
``rt.einsum_grads(...)[1]`` is its one einsum, when the subscripts are a constant, every
operand and ``g`` a name or a number of known shape, and each operand's cotangent is one
einsum (:func:`srctrans.analyse.einsum_labels.cotangent_subscripts`): the einsum the
helper itself calls there, on the same arrays, so the values are the helper's, bit for bit.
And ``rt.einsum_jvp((rt.zeros_of(X), dbeta), pred, 'ij,j->i', (X, beta))`` is the sum of
the einsums with an operand replaced by its tangent, ``np.einsum('ij,j->i', X, dbeta)``,
where the operands are names or numbers: the helper's sum, without the terms of tangents
known to be zero (``None``, ``rt.zeros_of``, ``rt.zeros_like``).

An einsum of two operands that is a product written otherwise is written so
(:func:`product`): a matrix or vector product sums one label shared by operands of one or
two axes (``'i,ij->j'`` is ``g @ X``, ``'ik,ij->jk'`` is ``X.T @ g``), an outer product of
two vectors (``'i,j->ij'``) is ``g[:, None] * b``, a number times an operand whose labels
are the output's (``',i->i'``) is ``g * b``. NumPy's einsum sums in loops of its own (no
BLAS without ``optimize``), so the values are the einsum's up to rounding, and at large
sizes far sooner.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.analyse.einsum_labels import cotangent_subscripts, einsum_labels
from srctrans.annotations import Anno
from srctrans.nodes import clone, dotted, int_literal
from srctrans.optimise.expression_shapes import is_runtime_helper_call, shape_of


def einsum_cotangents(node, known, numpy_alias):
    """``node``'s einsums where it is ``rt.einsum_grads(...)`` (a tuple display) or a pick of
    one at a constant index (one einsum) that :mod:`this module <srctrans.optimise.
    einsum_cotangents>` rewrites for the shapes ``known``; else None."""
    if isinstance(node, gast.Subscript) and _is_einsum_grads(node.value):
        k = int_literal(node.slice)
        labels = _labels(node.value, known)
        if labels is None or k is None or not -len(labels.terms) <= k < len(labels.terms):
            return None
        return _cotangent(node.value, labels, k % len(labels.terms), numpy_alias)
    if _is_einsum_grads(node):
        labels = _labels(node, known)
        if labels is None:
            return None
        parts = [_cotangent(node, labels, k, numpy_alias) for k in range(len(labels.terms))]
        return None if None in parts else gast.Tuple(parts, gast.Load())
    return None


def einsum_tangent(node, known, numpy_alias):
    """The sum of einsums ``rt.einsum_jvp(tangents, ans, subscripts, operands)`` adds up,
    when ``tangents`` and ``operands`` are displays (operands of names or numbers, read by
    each term) and some tangent is not known to be zero; else None. A term is written as
    the :func:`product` it is only where ``known`` gives the operands' shapes and no label
    is broadcast (``'ij,j->i'`` of a vector of length 1: einsum broadcasts it, ``@`` does
    not)."""
    if not (is_runtime_helper_call(node, "einsum_jvp") and len(node.args) == 4
            and not node.keywords):
        return None
    tangents, _, subscripts, operands = node.args
    if not (isinstance(tangents, gast.Tuple) and isinstance(operands, gast.Tuple)
            and isinstance(subscripts, gast.Constant) and isinstance(subscripts.value, str)
            and len(tangents.elts) == len(operands.elts)
            and all(isinstance(v, (gast.Name, gast.Constant)) for v in operands.elts)):
        return None
    total = None
    plain = einsum_labels(subscripts.value, [shape_of(v, known) for v in operands.elts]) is None
    for k, tangent in enumerate(tangents.elts):
        if _is_zero(tangent):
            continue
        arguments = [clone(v) for v in operands.elts]
        arguments[k] = tangent
        term = _einsum(numpy_alias, subscripts.value, arguments, plain)
        total = term if total is None else gast.BinOp(total, gast.Add(), term)
    return total


def _is_zero(tangent):
    return isinstance(tangent, gast.Constant) and tangent.value is None or any(
        is_runtime_helper_call(tangent, name) for name in ("zeros_of", "zeros_like"))


def _einsum(numpy_alias, spec, arguments, plain=False):
    """``np.einsum(spec, *arguments)``, or the :func:`product` it is (unless ``plain``)."""
    written = None if plain else product(spec, arguments)
    if written is not None:
        return written
    call = gast.Call(dotted(numpy_alias, "einsum"), [gast.Constant(spec, None), *arguments], [])
    anno.set_(call, Anno.CALLEE, np.einsum)
    return call


def product(spec, arguments):
    """``np.einsum(spec, a, b)`` (explicit subscripts, two operands) as the product it is, or
    None: ``a @ b`` (either operand transposed, or the operands swapped) where one label is
    summed, shared by operands of one or two axes and the output's labels are the others in
    order; ``a[:, None] * b`` for two vectors' outer product; ``a * b`` where one operand is a
    number and the other's labels are the output's."""
    if len(arguments) != 2 or "->" not in spec or "." in spec:
        return None
    terms, output = spec.split("->")
    first, second = terms.split(",")
    a, b = arguments
    if any(len(set(t)) != len(t) for t in (first, second, output)):
        return None                                   # (a diagonal)
    if first == "" and second == output or second == "" and first == output:
        return gast.BinOp(a, gast.Mult(), b)
    if len(first) == len(second) == 1 and first != second and output == first + second:
        return gast.BinOp(gast.Subscript(a, gast.Tuple([gast.Slice(None, None, None),
                                                        gast.Constant(None, None)], gast.Load()),
                                         gast.Load()), gast.Mult(), b)
    for (left, x), (right, y) in (((first, a), (second, b)), ((second, b), (first, a))):
        matrix = _matrix_product(left, right, output, x, y)
        if matrix is not None:
            return matrix
    return None


def _matrix_product(left, right, output, x, y):
    """``x' @ y'`` for ``np.einsum(f'{left},{right}->{output}', x, y)`` where ``x'`` and ``y'``
    are the operands or their transposes, else None."""
    shared = set(left) & set(right)
    if len(shared) != 1 or not (1 <= len(left) <= 2 and 1 <= len(right) <= 2):
        return None
    summed = shared.pop()
    if summed in output or output != left.replace(summed, "") + right.replace(summed, ""):
        return None
    if len(left) == 2 and left[0] == summed:
        x = gast.Attribute(x, "T", gast.Load())
    if len(right) == 2 and right[1] == summed:
        y = gast.Attribute(y, "T", gast.Load())
    return gast.BinOp(x, gast.MatMult(), y)


def _is_einsum_grads(node):
    return is_runtime_helper_call(node, "einsum_grads") and len(node.args) == 3 \
        and not node.keywords


def _labels(call, known):
    """The call's :class:`EinsumLabels`, when its ``g`` and operands are names or numbers of
    the shapes it reads (``g`` of the output's shape) and its subscripts a constant."""
    g, subscripts, operands = call.args
    if not (isinstance(subscripts, gast.Constant) and isinstance(operands, gast.Tuple)) or \
            not all(isinstance(v, (gast.Name, gast.Constant)) for v in [g, *operands.elts]):
        return None
    labels = einsum_labels(subscripts.value, [shape_of(v, known) for v in operands.elts])
    return labels if labels is not None and shape_of(g, known) == labels.shape else None


def _cotangent(call, labels, k, numpy_alias):
    """``np.einsum(spec, g, *others)``: operand ``k``'s cotangent, or None."""
    spec = cotangent_subscripts(labels, k)
    if spec is None:
        return None
    g, _, operands = call.args
    others = [clone(v) for j, v in enumerate(operands.elts) if j != k]
    return _einsum(numpy_alias, spec, [clone(g), *others])

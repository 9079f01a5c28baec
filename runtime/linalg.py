"""Gradients of the products: matmul, dot, inner, outer, tensordot, einsum.

(The tangents of products are products again, written in the JVP rules
themselves, except for einsum's: :func:`einsum_jvp`.)

Each ``*_lhs(g, a, b)`` returns the gradient with respect to ``a`` and each
``*_rhs(g, a, b)`` the gradient with respect to ``b``, given the gradient
``g`` of the product; the result has the operand's shape. Operands are real.

``dot`` and ``inner`` are tensordots with particular axes, and a product with
a 0-d operand is elementwise multiplication, so most of this module reduces
to :func:`tensordot_lhs`/:func:`tensordot_rhs`. The gradient of an einsum
is another einsum, after the subscripts are made explicit
(:func:`einsum_grads`).
"""

import functools
import math
import string

import numpy as np

from .broadcast import unbroadcast
from .foreign import as_array, numpy_only


def matmul_lhs(g, a, b):
    """Gradient of ``a @ b`` with respect to ``a``, for every ndim case.

    1-D operands are promoted as matmul promotes them (``a`` to a row, ``b``
    to a column) and the gradient is summed over batch axes that ``a`` was
    broadcast along.

    >>> matmul_lhs(np.ones((4, 1, 2)), np.zeros((1, 3)), np.ones((4, 3, 2))).shape
    (1, 3)
    """
    if getattr(a, "ndim", 0) == 2 and getattr(b, "ndim", 0) == 2:
        return g @ b.T                                  # the common case, first
    if getattr(a, "ndim", 0) == 2 and getattr(b, "ndim", 0) == 1:
        return g[:, None] * b                           # a matrix times a vector
    a = as_array(a)
    b = as_array(b)
    g, a_matrix, b_matrix = _as_matrices(g, a, b)
    grad = np.matmul(g, np.swapaxes(b_matrix, -1, -2))
    if a.ndim == 1:
        grad = grad[..., 0, :]
    return unbroadcast(grad, a)


def matmul_rhs(g, a, b):
    """Gradient of ``a @ b`` with respect to ``b``, for every ndim case."""
    if getattr(a, "ndim", 0) == 2 and getattr(b, "ndim", 0) in (1, 2):
        return a.T @ g                                  # the common cases, first
    a = as_array(a)
    b = as_array(b)
    g, a_matrix, b_matrix = _as_matrices(g, a, b)
    grad = np.matmul(np.swapaxes(a_matrix, -1, -2), g)
    if b.ndim == 1:
        grad = grad[..., 0]
    return unbroadcast(grad, b)


def dot_lhs(g, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``a``.

    A 0-d operand makes dot a multiplication; otherwise dot contracts the
    last axis of ``a`` with the second-to-last axis of ``b`` (its only axis
    when ``b`` is 1-D).
    """
    if getattr(a, "ndim", 0) == 2 and getattr(b, "ndim", 0) == 2:
        return g @ b.T                                  # the common case, first
    a = as_array(a)
    b = as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(g * b, a)
    return tensordot_lhs(g, a, b, _dot_axes(a, b))


def dot_rhs(g, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``b``."""
    if getattr(a, "ndim", 0) == 2 and getattr(b, "ndim", 0) == 2:
        return a.T @ g                                  # the common case, first
    a = as_array(a)
    b = as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(g * a, b)
    return tensordot_rhs(g, a, b, _dot_axes(a, b))


def inner_lhs(g, a, b):
    """Gradient of ``np.inner(a, b)`` (last axis with last axis) w.r.t. ``a``."""
    a = as_array(a)
    b = as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(g * b, a)
    return tensordot_lhs(g, a, b, ([a.ndim - 1], [b.ndim - 1]))


def inner_rhs(g, a, b):
    """Gradient of ``np.inner(a, b)`` with respect to ``b``."""
    a = as_array(a)
    b = as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(g * a, b)
    return tensordot_rhs(g, a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer_lhs(g, a, b):
    """Gradient of ``np.outer(a, b)`` w.r.t. ``a``; outer flattens, so reshape back."""
    return np.reshape(g @ np.ravel(b), np.shape(a))


def outer_rhs(g, a, b):
    """Gradient of ``np.outer(a, b)`` with respect to ``b``."""
    return np.reshape(np.ravel(a) @ g, np.shape(b))


def tensordot_lhs(g, a, b, axes=2):
    """Gradient of ``np.tensordot(a, b, axes)`` with respect to ``a``.

    ``axes`` is an int ``n`` (the last ``n`` axes of ``a`` with the first
    ``n`` of ``b``) or a pair of sequences (or ints) of axes to contract.

    The product's axes are ``a``'s free axes then ``b``'s free axes, so
    contracting ``g``'s trailing axes with ``b``'s free axes leaves ``a``'s
    free axes followed by ``b``'s contracted axes, which a transpose puts
    where ``a`` had them.
    """
    a = as_array(a)
    b = as_array(b)
    a_summed, b_summed = _tensordot_axes(axes, a.ndim, b.ndim)
    a_free = [i for i in range(a.ndim) if i not in a_summed]
    b_free = [i for i in range(b.ndim) if i not in b_summed]
    g_b_part = list(range(len(a_free), len(a_free) + len(b_free)))
    grad = np.tensordot(g, b, (g_b_part, b_free))
    layout = a_free + [a_summed[b_summed.index(i)] for i in sorted(b_summed)]
    return np.transpose(grad, tuple(np.argsort(layout).tolist()))


def tensordot_rhs(g, a, b, axes=2):
    """Gradient of ``np.tensordot(a, b, axes)`` with respect to ``b``."""
    a = as_array(a)
    b = as_array(b)
    a_summed, b_summed = _tensordot_axes(axes, a.ndim, b.ndim)
    a_free = [i for i in range(a.ndim) if i not in a_summed]
    b_free = [i for i in range(b.ndim) if i not in b_summed]
    grad = np.tensordot(a, g, (a_free, list(range(len(a_free)))))
    layout = [b_summed[a_summed.index(i)] for i in sorted(a_summed)] + b_free
    return np.transpose(grad, tuple(np.argsort(layout).tolist()))


def _as_matrices(g, a, b):
    """``g``, ``a`` and ``b`` with matmul's 1-D promotion made explicit.

    ``a`` of shape ``(n,)`` becomes ``(1, n)``, ``b`` of shape ``(n,)``
    becomes ``(n, 1)``, and ``g`` gets back the length-1 axes that matmul
    removed from the product, so that ``g`` has shape ``(..., k, m)``.
    """
    if b.ndim == 1:
        b = b[:, np.newaxis]
        g = np.expand_dims(g, -1)
    if a.ndim == 1:
        a = a[np.newaxis, :]
        g = np.expand_dims(g, -2)
    return g, a, b


def _dot_axes(a, b):
    return [a.ndim - 1], [max(b.ndim - 2, 0)]


def _tensordot_axes(axes, a_ndim, b_ndim):
    """``axes`` as two equal-length lists of non-negative axis numbers."""
    if isinstance(axes, (int, np.integer)):
        return list(range(a_ndim - axes, a_ndim)), list(range(axes))
    a_axes, b_axes = axes
    a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
    b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot axes {axes!r} pair {len(a_axes)} axes of a "
                         f"with {len(b_axes)} axes of b")
    return [i % a_ndim for i in a_axes], [i % b_ndim for i in b_axes]


def einsum_grads(g, subscripts, operands):
    """Gradients of ``np.einsum(subscripts, *operands)``, one per operand.

    Supports explicit (``'ij,jk->ik'``) and implicit (``'ij,jk'``) output,
    ``'...'`` with broadcasting of length-1 axes, and labels repeated within
    one operand (``'ii->i'``, ``'ii'``): the gradient is zero off that
    diagonal. The gradient of each operand is the einsum of ``g`` with the
    other operands onto that operand's labels, broadcast along labels that
    only that operand has (the forward pass summed them away).

    Args:
      g: the gradient of the einsum's result.
      subscripts: the subscripts string the forward call used.
      operands: the forward call's operands, in order.

    Returns:
      A tuple with one array per operand, each of that operand's shape; some
      may be read-only broadcast views.

    Raises:
      NotImplementedError: the subscripts are not a string (the interleaved
        ``einsum(op, sublist, ...)`` form), or the operands need more labels
        than there are letters.
      ValueError: the subscripts do not fit the operands or ``g``.

    >>> einsum_grads(np.array([1., 2.]), "ii->i", [np.zeros((2, 2))])
    (array([[1., 0.],
           [0., 2.]]),)
    """
    operands = [as_array(operand) for operand in operands]
    terms, output = explicit_subscripts(subscripts, [op.ndim for op in operands])
    sizes = _label_sizes(terms, operands)
    unknown = sorted(set(output) - set(sizes))
    if unknown:
        raise ValueError(f"einsum subscripts {subscripts!r}: output labels "
                         f"{''.join(unknown)!r} are in no operand")
    expected = tuple(sizes[label] for label in output)
    if np.shape(g) != expected:
        raise ValueError(f"einsum gradient has shape {np.shape(g)} but "
                         f"{subscripts!r} produces shape {expected}")
    # An operand's length-1 axis broadcast against a longer one is the same
    # product without that axis; dropping it keeps the gradient einsums plain.
    terms, squeezed = zip(*(_drop_broadcast_axes(term, operand, sizes)
                            for term, operand in zip(terms, operands)))
    grads = []
    for k, operand in enumerate(operands):
        other_terms = (output,) + terms[:k] + terms[k + 1:]
        other_arrays = (g,) + squeezed[:k] + squeezed[k + 1:]
        grad = _einsum_onto(terms[k], other_terms, other_arrays, sizes)
        grads.append(np.reshape(grad, operand.shape))
    return tuple(grads)


def einsum_jvp(tangents, ans, subscripts, operands):
    """JVP of ``np.einsum(subscripts, *operands)``.

    The einsum is linear in each operand, so its tangent is the sum, over
    the operands with a tangent, of the same einsum with that operand
    replaced by its tangent.

    Args:
      tangents: one tangent per operand, each of its operand's shape; None
        for an operand without one (a constant).
      ans: the forward result (its shape and dtype give the zero tangent
        when no operand has a tangent).
      subscripts, operands: the forward call's arguments.

    Raises:
      NotImplementedError: the subscripts are not a string (the interleaved
        ``einsum(op, sublist, ...)`` form), as for :func:`einsum_grads`.

    >>> einsum_jvp((np.ones(2), None), 0., "i,i->", (np.zeros(2), np.array([1., 2.])))
    np.float64(3.0)
    """
    if not isinstance(subscripts, str):
        raise NotImplementedError(
            "einsum tangents need the subscripts as a string; the "
            "interleaved einsum(operand, sublist, ...) form is not supported")
    total = None
    for k, tangent in enumerate(tangents):
        if tangent is None:
            continue
        term = np.einsum(subscripts, *operands[:k], tangent, *operands[k + 1:])
        total = term if total is None else total + term
    return np.zeros_like(ans) if total is None else total


def explicit_subscripts(subscripts, ndims):
    """Input terms and output with '...' spelled out and the output explicit.

    Ellipsis axes get fresh letters, right-aligned across operands as
    broadcasting aligns them. An implicit output is the ellipsis axes then
    the labels used exactly once, in ASCII order (as NumPy orders them).
    """
    if not isinstance(subscripts, str):
        raise NotImplementedError(
            "einsum gradients need the subscripts as a string; the "
            "interleaved einsum(operand, sublist, ...) form is not supported")
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum subscripts {subscripts!r} name {len(terms)} "
                         f"operands but {len(ndims)} were given")
    for term in terms + [output]:
        if any(c not in string.ascii_letters for c in term.replace("...", "", 1)):
            raise ValueError(f"einsum subscripts {subscripts!r}: {term!r} is not "
                             f"letters with at most one '...'")
    ellipsis_ndims = []
    for term, ndim in zip(terms, ndims):
        letters = len(term.replace("...", ""))
        if ("..." in term and letters > ndim) or ("..." not in term and letters != ndim):
            raise ValueError(f"einsum subscripts {subscripts!r}: {term!r} does "
                             f"not fit an operand with {ndim} dimensions")
        ellipsis_ndims.append(ndim - letters)
    spare = [c for c in string.ascii_letters if c not in text]
    ellipsis = "".join(spare[:max(ellipsis_ndims)])
    if len(ellipsis) < max(ellipsis_ndims):
        raise NotImplementedError(
            f"einsum subscripts {subscripts!r} need more labels than there are "
            f"letters once '...' is spelled out")
    terms = [term.replace("...", ellipsis[len(ellipsis) - n:])
             for term, n in zip(terms, ellipsis_ndims)]
    if arrow:
        return terms, output.replace("...", ellipsis)
    used = "".join(terms)
    once = sorted(c for c in set(used) if used.count(c) == 1 and c not in ellipsis)
    return terms, ellipsis + "".join(once)


def _label_sizes(terms, operands):
    """Each label's length after broadcasting length-1 axes."""
    sizes = {}
    for term, operand in zip(terms, operands):
        for label, length in zip(term, operand.shape):
            known = sizes.get(label, 1)
            if label not in sizes or known == 1:
                sizes[label] = length
            elif length not in (1, known):
                raise ValueError(f"einsum label {label!r} has lengths {known} "
                                 f"and {length}")
    return sizes


def _drop_broadcast_axes(term, operand, sizes):
    """``term`` and ``operand`` without the length-1 axes that were broadcast."""
    keep = [i for i, label in enumerate(term)
            if not (operand.shape[i] == 1 and sizes[label] != 1)]
    if len(keep) == len(term):
        return term, operand
    kept_term = "".join(term[i] for i in keep)
    return kept_term, np.reshape(operand, [operand.shape[i] for i in keep])


def _einsum_onto(labels, other_terms, other_arrays, sizes):
    """The einsum of the other terms onto ``labels`` (which may repeat)."""
    unique = "".join(dict.fromkeys(labels))
    elsewhere = set("".join(other_terms))
    reachable = "".join(label for label in unique if label in elsewhere)
    spec = ",".join(other_terms) + "->" + reachable
    grad = np.einsum(spec, *other_arrays)
    if reachable != unique:
        grad = np.reshape(grad, [sizes[c] if c in elsewhere else 1 for c in unique])
        grad = np.broadcast_to(grad, [sizes[c] for c in unique])
    if unique != labels:
        numpy_only("np.einsum with a repeated index (a diagonal)", grad)
        diagonal = np.zeros([sizes[c] for c in labels], dtype=grad.dtype)
        np.einsum(labels + "->" + unique, diagonal)[...] = grad
        grad = diagonal
    return grad


# -- np.linalg.solve -----------------------------------------------------------------

_NUMPY_2 = int(np.__version__.split(".")[0]) >= 2


def cross_grads(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cotangents of ``a`` and ``b`` for ``c = np.cross(a, b, axisa, axisb, axisc, axis)``
    of 3-vectors (``axis`` sets all three axes): in the vectors' own axes, ``b x g`` and
    ``g x a``, each summed to its argument's shape."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a_last, b_last = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    g_last = np.moveaxis(g, axisc, -1) if np.ndim(g) else g
    da = np.moveaxis(unbroadcast(np.cross(b_last, g_last), a_last), -1, axisa)
    db = np.moveaxis(unbroadcast(np.cross(g_last, a_last), b_last), -1, axisb)
    return da, db


def solve_is_vector(a, b):
    """Whether ``np.linalg.solve(a, b)`` reads ``b`` as (stacked) vectors, not matrices:
    NumPy 2 when ``b`` is 1-D, NumPy 1 when ``b`` has one axis fewer than ``a``."""
    return np.ndim(b) == 1 if _NUMPY_2 else np.ndim(b) == np.ndim(a) - 1


def solve_column(v, a, b):
    """``v`` (shaped like ``solve(a, b)``) as stacked matrices: vectors become columns."""
    return np.expand_dims(v, -1) if solve_is_vector(a, b) else v


def solve_uncolumn(v, a, b):
    """The inverse of :func:`solve_column`: columns become vectors again."""
    return v[..., 0] if solve_is_vector(a, b) else v


def solve_grads(g, x, a, b):
    """``(cotangent of a, cotangent of b)`` for ``x = np.linalg.solve(a, b)``.

    With ``G``, ``X`` the cotangent and solution as matrices, ``B = solve(a.T, G)``
    is the cotangent of ``b`` and ``-B @ X.T`` that of ``a``; each is summed over
    the axes ``a`` or ``b`` was broadcast along. One solve, no inverse.

    >>> a = np.array([[2., 0.], [0., 4.]])
    >>> solve_grads(np.ones(2), np.linalg.solve(a, np.ones(2)), a, np.ones(2))[1]
    array([0.5 , 0.25])
    """
    if (type(a) is np.ndarray and type(g) is np.ndarray and type(x) is np.ndarray
            and a.ndim == 2 and g.shape == x.shape == np.shape(b) and 1 <= x.ndim <= 2
            and x.shape[0] == a.shape[0]):           # one matrix, no broadcasting: directly
        B = np.linalg.solve(a.T, g)
        return (-(B[:, None] * x) if x.ndim == 1 else -B @ x.T), B   # (np.outer: +4 us)
    X, B = _solution_and_adjoint(g, x, a, b)
    return (unbroadcast(-B @ np.swapaxes(X, -1, -2), a),
            unbroadcast(solve_uncolumn(B, a, b), b))


def _solution_and_adjoint(g, x, a, b):
    """``(X, B)``: the solution ``x`` as matrices, and ``B = solve(a.T, G)`` for its cotangent
    ``g`` as matrices (the cotangent of ``b``, before un-broadcasting)."""
    return (solve_column(x, a, b),
            np.linalg.solve(np.swapaxes(a, -1, -2), solve_column(g, a, b)))


def solve_grads_vjp(c, g, x, a, b):
    """The cotangents of ``g``, ``x`` and ``a`` for ``solve_grads(g, x, a, b)``, given the
    cotangent ``c`` of its pair (an entry may be None: zero)."""
    c_a, c_b = c
    X, B = _solution_and_adjoint(g, x, a, b)
    batch = B.shape[:-2]
    CA = np.broadcast_to(0.0 if c_a is None else c_a, batch + (B.shape[-2],) * 2)
    CB = np.broadcast_to(0.0 if c_b is None else solve_column(c_b, a, b), B.shape)
    CG = np.linalg.solve(np.broadcast_to(a, batch + np.shape(a)[-2:]), CB - CA @ X)
    return (solve_uncolumn(CG, a, b),
            solve_uncolumn(-np.swapaxes(CA, -1, -2) @ B, a, b),
            unbroadcast(-B @ np.swapaxes(CG, -1, -2), a))


def solve_grads_jvp(dg, dx, da, g, x, a, b):
    """The tangent of the pair ``solve_grads(g, x, a, b)`` along ``dg``, ``dx``, ``da``."""
    X, B = _solution_and_adjoint(g, x, a, b)
    dB = np.linalg.solve(np.swapaxes(a, -1, -2),
                         solve_column(dg, a, b) - np.swapaxes(da, -1, -2) @ B)
    dA = -dB @ np.swapaxes(X, -1, -2) - B @ np.swapaxes(solve_column(dx, a, b), -1, -2)
    return unbroadcast(dA, a), unbroadcast(solve_uncolumn(dB, a, b), b)


# -- np.linalg.cholesky ----------------------------------------------------------------

def tril_halved(x):
    """The lower triangle of (stacked) ``x`` with its diagonal halved; linear and its own
    transpose (an elementwise mask).

    >>> tril_halved(np.ones((2, 2)))
    array([[0.5, 0. ],
           [1. , 0.5]])
    """
    if type(x) is np.ndarray and x.ndim >= 2 and x.dtype.kind in "fc":
        lower, scale, weights = _halved_lower(x.shape[-2:], x.dtype)
        if math.isfinite(np.vdot(x, x).real):  # one product, when no entry is infinite or
            return x * weights                 # NaN (inf * 0 above the diagonal is NaN)
        return np.where(lower, x, 0) * scale           # (np.tril builds its mask per call)
    lower = np.tril(x)
    return lower - 0.5 * (lower * np.eye(np.shape(x)[-1], dtype=bool))     # keeps x's dtype


@functools.lru_cache(maxsize=64)
def _halved_lower(shape, dtype):
    """``(mask, scale, weights)`` for :func:`tril_halved` of matrices of ``shape`` and
    ``dtype``: the lower triangle as booleans, ``dtype``'s 0.5 on the diagonal and 1
    elsewhere (finite, so an infinite entry below the diagonal stays infinite), and their
    product (0 above the diagonal). All read-only: they are shared."""
    lower = np.tri(*shape, dtype=bool)
    scale = np.ones(shape, dtype=dtype)
    np.fill_diagonal(scale, 0.5)
    weights = scale * lower
    lower.flags.writeable = scale.flags.writeable = weights.flags.writeable = False
    return lower, scale, weights


def symmetric_sum(x):
    """``x + x.T`` over the last two axes; linear and its own transpose.

    >>> symmetric_sum(np.array([[1., 2.], [0., 3.]]))
    array([[2., 2.],
           [2., 6.]])
    """
    return x + np.swapaxes(x, -1, -2)

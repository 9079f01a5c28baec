"""What the derivatives of the runtime's own helpers call.

srctrans differentiates the code it generates (for Hessians, grad of grad,
jvp of grad), so the helpers that generated code calls have derivative rules
too (srctrans/rules/runtime_helpers.py). Most of those rules are a line of
NumPy or a call of another helper; the functions here are the rest.

Most names say which helper's derivative a function is:

  ``NAME_transpose(c, ...)``  the adjoint of the linear map ``v -> NAME(v, ...)``:
                              given the cotangent ``c`` of its result, the
                              cotangent of ``v``;
  ``NAME_dARG(t, ...)``       the derivative of ``NAME`` in its argument ``ARG``
                              applied to the tangent ``t``;
  ``NAME_tangent(...)``       the whole tangent of ``NAME``'s result.

The others are small pieces several rules share: ``ratio_or_zero``,
``unbroadcast_tree`` and ``power_base_second_factor``.

Where a helper takes the forward result of the function it differentiates
(``prod_grad(g, ans, x)``), the derivatives treat that result as an
independent input, as generated code does.
"""

import numpy as np

from .accumulate import add, zeros_like
from .broadcast import float_dtype as _float_dtype, unbroadcast
from .containers import entries, entries_like, is_container, rebuild, restored_entry
# the marker saved_entry returns for a key that did not exist yet
from .containers import _ABSENT
from .linalg import einsum_grads
from .objects import attribute_tangent
from .reductions import prod_grad, unreduce
from .reshaping import getitem_grad
from .foreign import as_array, is_array


# -- broadcasting --------------------------------------------------------------

def unbroadcast_transpose(c, v):
    """The transpose of ``g -> unbroadcast(g, x)`` for ``g`` shaped like ``v``.

    ``unbroadcast`` sums ``v`` over the axes ``x`` lacks or has length 1 in,
    and broadcasts it along the axes where ``v`` has length 1; the transpose
    takes ``c`` (shaped like ``x``) back: it sums over the axes that were
    broadcast and broadcasts along the axes that were summed.

    >>> unbroadcast_transpose(np.array([1., 2.]), np.zeros((3, 2))).shape
    (3, 2)
    >>> unbroadcast_transpose(np.ones((2, 3)), 0.0)
    array(6.)
    """
    return _unbroadcast_transpose(c, np.shape(v))


def _unbroadcast_transpose(c, shape):
    c_shape = np.shape(c)
    if c_shape == shape:
        return c
    # What unbroadcast reached by summing, before it broadcast: v's trailing
    # axes (as many as x has), of length 1 where x has length 1.
    trailing = shape[max(len(shape) - len(c_shape), 0):]
    x_trailing = c_shape[len(c_shape) - len(trailing):]
    summed = tuple(1 if n == 1 else m for m, n in zip(trailing, x_trailing))
    c = _sum_to(c, summed)
    return c if summed == shape else np.broadcast_to(c, shape)


def _sum_to(c, shape):
    """``c`` summed over its leading axes and over the axes where ``shape`` has length 1."""
    c_shape = np.shape(c)
    lead = len(c_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and c_shape[lead + i] != 1)
    if not axes:
        return c
    return np.reshape(np.sum(c, axis=axes, keepdims=True), shape)


def unbroadcast_tree(c, like):
    """``c`` summed to the shape of ``like``, entry by entry for containers.

    The cotangent of ``a`` in ``add(a, b)`` (which broadcasts like ``+``):
    None for a None ``like``, zeros for a container ``like`` when ``c`` is not
    one.
    """
    if c is None or like is None:
        return None
    if is_container(like):
        if not is_container(c):
            return zeros_like(like)
        theirs = entries_like(c, like)
        return rebuild(like, [(k, unbroadcast_tree(theirs.get(k), v)) for k, v in entries(like)])
    return unbroadcast(c, like)


def broadcast_tree(g, like):
    """The transpose of ``c -> unbroadcast_tree(c, like_c)``: ``g`` broadcast up to the shapes
    of ``like`` (the cotangent it was summed from), entry by entry for containers."""
    if like is None:
        return None
    if is_container(like):
        if not is_container(g):
            return zeros_like(like)
        theirs = entries_like(g, like)
        return rebuild(like, [(k, broadcast_tree(theirs.get(k), v)) for k, v in entries(like)])
    if g is None:
        return zeros_like(like)
    shape = np.shape(like)
    return g if np.shape(g) == shape else np.broadcast_to(g, shape).copy()


def ratio_or_zero(a, b):
    """``a / b`` where ``b`` is nonzero, and 0 where it is zero (without a warning).

    The derivatives of ``power_exponent_factor`` and ``std_grad`` divide by
    values whose zeros the forward helper treats as constants.

    >>> ratio_or_zero(np.array([1., 2.]), np.array([2., 0.]))
    array([0.5, 0. ])
    """
    if not is_array(b):                        # a Python or NumPy scalar keeps a's dtype
        if b != 0:
            return a / float(b)
        return np.zeros(np.shape(a), dtype=_float_dtype(a, b))
    if type(b) is np.ndarray and type(a) is np.ndarray and b.all():
        return a / b                           # no zero: the quotient as it is
    zero = np.equal(b, 0)
    return np.where(zero, 0, a / np.where(zero, 1, b))


def ratio_or_zero_times(g, b):
    """``g / b`` where ``b`` is nonzero, and ``g * 0`` where it is zero (NaN for a
    non-finite ``g``): ``ratio_or_zero_times(g, n) * x`` is ``g * ratio_or_zero(x, n)``, the
    cotangent of a Euclidean norm ``n`` of ``x``, up to rounding, NaN included (where ``n``
    is 0 its slice of ``x`` is zeros), with the quotient taken on the norms' shape.

    >>> ratio_or_zero_times(np.array([1., np.inf]), np.array([2., 0.]))
    array([0.5, nan])
    """
    if not is_array(b):
        return g / float(b) if b != 0 else g * 0.0
    if type(b) is np.ndarray and type(g) is np.ndarray and b.all():
        return g / b
    zero = np.equal(b, 0)
    with np.errstate(invalid="ignore"):               # (inf * 0: the NaN the product gives)
        return np.where(zero, g * 0.0, g / np.where(zero, 1, b))


# -- sums, choices, containers -------------------------------------------------

def spread_grads_transpose(c, v):
    """The transpose of ``g -> spread_grads(g, items)``: the entries of ``c`` summed to ``v``."""
    total = None
    for part in c:
        if part is not None:
            part = unbroadcast_transpose(part, v)
            total = part if total is None else total + part
    return zeros_like(v) if total is None else total


def choice_grads_transpose(c, v, choice, args):
    """The transpose of ``g -> choice_grads(g, choice, args)``.

    ``choice_grads`` gives each argument equal to ``choice`` its share of
    ``g``; the transpose adds up each entry of ``c`` times its share.
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return choice_grads_transpose(tuple(c[0]), v, choice, tuple(args[0]))
    hits = [np.equal(a, choice) for a in args]
    count = np.maximum(np.sum(hits, axis=0), 1)
    total = zeros_like(v)
    for part, hit in zip(c, hits):
        if part is None:
            continue
        share = hit / count
        scaled = np.broadcast_shapes(np.shape(v), np.shape(share))
        total = total + unbroadcast(_unbroadcast_transpose(part, scaled) * share, v)
    return total


def sum_tangents_transpose(c, tangents):
    """The transpose of ``t -> sum_tangents(t, ans)``: ``c`` summed to each tangent's shape.

    ``c`` has ``ans``'s shape. A None entry of ``tangents`` (an item without
    a tangent) gets None. An array ``tangents``, which ``sum`` iterated
    along its first axis, gets ``c`` summed to the shape of one row and
    repeated along that axis (a read-only view).

    >>> sum_tangents_transpose(np.ones((2, 3)), [np.zeros(3), None, np.zeros((2, 3))])
    [array([2., 2., 2.]), None, array([[1., 1., 1.],
           [1., 1., 1.]])]
    """
    if is_array(tangents):
        if len(tangents) == 0:
            return np.zeros(tangents.shape, dtype=_float_dtype(c, tangents))
        return np.broadcast_to(unbroadcast(c, tangents[0]), tangents.shape)
    parts = (None if t is None else unbroadcast(c, t) for t in tangents)
    return list(parts) if isinstance(tangents, list) else tuple(parts)


def choice_tangent_transpose(c, choice, args):
    """The transpose of ``t -> choice_tangent(t, choice, args)``.

    ``choice_tangent`` takes the mean of the tangents of the arguments equal
    to ``choice``, so each of them gets ``c`` divided by the number of ties,
    and the others zero: the cotangents :func:`choice_grads` gives, but in
    the dtype of ``c`` (a count of ties does not promote float32).
    One entry per argument; for a single sequence argument, one sequence
    of the same kind (a list, a tuple, or a 1-D array).

    >>> choice_tangent_transpose(1.0, 3.0, (3.0, 1.0, 3.0))
    (np.float64(0.5), np.float64(0.0), np.float64(0.5))
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        parts = choice_tangent_transpose(c, choice, tuple(args[0]))
        sequence = args[0]
        return (as_array(parts) if isinstance(sequence, np.ndarray) else type(sequence)(parts),)
    hits = [np.equal(a, choice) for a in args]
    ties = np.maximum(np.sum(hits, axis=0), 1)
    share = c / (int(ties) if np.ndim(ties) == 0 else ties.astype(_float_dtype(c)))
    return tuple(unbroadcast(share * hit, a) for hit, a in zip(hits, args))


def getattr_grad_transpose(c, obj, name):
    """The transpose of ``g -> getattr_grad(g, obj, name)``: the entry ``name`` of ``c`` (zero
    for a constant attribute, which getattr_grad leaves without a cotangent)."""
    return attribute_tangent(c, obj, name)


def last_and_rest_transpose(c):
    """The transpose of ``last_and_rest``: ``(last, rest)`` put back as ``rest + [last]``."""
    last, rest = c
    if isinstance(rest, (list, tuple)):
        return type(rest)([*rest, last])
    return np.concatenate([rest, np.expand_dims(last, 0)])


def entry_cotangent_transpose(c, mapping, key):
    """The cotangent of ``mapping`` for a read of ``mapping.get(key)``.

    The transpose of ``entry_cotangent`` (and of ``saved_entry``): ``c`` at
    ``key`` and zeros elsewhere, or all zeros when no value was read there.
    """
    if isinstance(mapping, dict) and mapping.get(key) is not None:
        return getitem_grad(c, mapping, key)
    return zeros_like(mapping)


def without_entry_transpose(c, mapping, key):
    """The transpose of ``without_entry``: ``c`` with a zero cotangent at ``key`` put back."""
    c = dict(c) if isinstance(c, dict) else {}
    if isinstance(mapping, dict) and key in mapping:
        c[key] = zeros_like(mapping[key])
    return c


def restored_entry_tangent(dmapping, dold, key, old):
    """The tangent of ``restored_entry(mapping, key, old)``.

    ``dold`` is put back at ``key``, unless ``old`` is the marker of an entry
    that did not exist: then the key is dropped, as the forward helper does.
    A ``dmapping`` that is not a dict is a zero tangent (no entry has one yet).
    """
    if not isinstance(dmapping, dict):
        dmapping = {}
    return restored_entry(dmapping, key, old if old is _ABSENT else dold)


# -- prod ----------------------------------------------------------------------

def prod_grad_dprod(t, v, x, axis=None, keepdims=False):
    """The derivative of ``prod_grad(v, prod, x, ...)`` in ``prod``, applied to ``t``.

    Without zeros in ``x``, ``prod_grad`` is ``v * prod / x`` (linear in
    ``prod``); with zeros it does not read ``prod`` at all.
    """
    x = as_array(x)
    if np.any(np.equal(x, 0)):
        return np.zeros(x.shape, dtype=_float_dtype(v, x))
    return prod_grad(v, t, x, axis, keepdims)


def prod_grad_dprod_transpose(c, v, x, axis=None, keepdims=False):
    """The transpose of :func:`prod_grad_dprod`: ``c`` (shaped like ``x``) to ``prod``'s shape."""
    x = as_array(x)
    if np.any(np.equal(x, 0)):
        return np.zeros(np.shape(v), dtype=_float_dtype(v, x))
    return np.sum(c * unreduce(v, x, axis, keepdims) / x, axis=axis, keepdims=keepdims)


def prod_grad_dx(t, v, prod, x, axis=None, keepdims=False):
    """The derivative of ``prod_grad(v, prod, x, ...)`` in ``x``, applied to ``t``.

    Without zeros in ``x`` it is ``-v * prod * t / x**2``. With zeros,
    ``prod_grad`` is ``v`` times the product of the other elements of each
    slice, whose derivative is the Hessian of the slice's product: entry
    ``(i, k)`` is the product of the elements other than ``i`` and ``k``
    (zero on the diagonal). Both are symmetric maps of ``t``, so this is
    also the transpose of itself (the VJP).
    """
    x = as_array(x)
    spread = unreduce(v, x, axis, keepdims)
    is_zero = np.equal(x, 0)
    if not np.any(is_zero):
        return -spread * unreduce(prod, x, axis, keepdims) * t / (x * x)
    return spread * _product_hessian_times(t, x, is_zero, axis)


def _product_hessian_times(t, x, is_zero, axis):
    """``H t`` per slice, ``H[i, k]`` the product of the slice without elements ``i`` and ``k``.

    Computed from the number of zeros in each slice: a product without two
    elements is nonzero only if those two include every zero of the slice.
    """
    def total(values):
        return np.sum(values, axis=axis, keepdims=True)

    zeros = np.count_nonzero(is_zero, axis=axis, keepdims=True)
    nonzero_x = np.where(is_zero, 1, x)
    others = np.prod(nonzero_x, axis=axis, keepdims=True)     # the nonzero elements' product
    t_over_x = np.where(is_zero, 0, t / nonzero_x)
    t_at_zeros = total(np.where(is_zero, t, 0))
    # no zero: sum over k != i of t_k * P / (x_i x_k)
    no_zero = others / nonzero_x * (total(t_over_x) - t_over_x)
    # one zero z: row z sums t_k P / x_k over the others; row i != z reads t_z P / x_i
    one_zero = np.where(is_zero, others * total(t_over_x), t_at_zeros * others / nonzero_x)
    # two zeros: each zero's row reads the other zero's t
    two_zeros = np.where(is_zero, others * (t_at_zeros - t), 0)
    return np.where(zeros == 0, no_zero, np.where(zeros == 1, one_zero,
                                                  np.where(zeros == 2, two_zeros, 0)))


# -- power -----------------------------------------------------------------------

def power_base_second_factor(x, y):
    """``d2(x ** y) / dx2 = y (y - 1) x ** (y - 2)``, and 0 where ``y`` is 0 or 1.

    The derivative in ``x`` of ``power_base_factor(x, y)``, with its
    convention: where ``y`` is 0 or 1 the factor is constant in ``x``, so
    this is 0 even at ``x == 0``.

    >>> power_base_second_factor(np.array([0., 2.]), np.array([1., 3.]))
    array([ 0., 12.])
    """
    if not is_array(y):                        # a Python or NumPy scalar exponent
        if y == 0 or y == 1:
            return np.zeros(np.broadcast_shapes(np.shape(x), np.shape(y)), dtype=_float_dtype(x, y))
        return y * (y - 1) * np.power(x, y - 2)
    constant = np.equal(y, 0) | np.equal(y, 1)
    return y * (y - 1) * np.power(x, np.where(constant, 1, y - 2))


# -- einsum ----------------------------------------------------------------------

def einsum_grads_transpose(c, subscripts, operands):
    """The transpose of ``g -> einsum_grads(g, subscripts, operands)``.

    ``einsum_grads`` gives operand ``k`` the gradient of ``<g, einsum(...)>``;
    since the einsum is linear in each operand, ``<c_k, that gradient>`` is
    ``<g, einsum with operand k replaced by c_k>``, so the transpose is the
    sum of those einsums.
    """
    total = None
    for k, part in enumerate(c):
        if part is not None:
            term = np.einsum(subscripts, *_replaced(operands, k, part))
            total = term if total is None else total + term
    return total if total is not None else np.zeros_like(np.einsum(subscripts, *operands))


def einsum_grads_doperands(t, v, subscripts, operands):
    """The derivative of ``einsum_grads(v, subscripts, operands)`` in the operands, along ``t``.

    Operand ``j``'s gradient does not read operand ``j`` and is linear in
    each other operand ``k``, so its tangent is the sum over ``k != j`` of
    that gradient with operand ``k`` replaced by its tangent ``t[k]``.
    """
    result = [None] * len(operands)
    for k, tangent in enumerate(t):
        if tangent is None:
            continue
        grads = einsum_grads(v, subscripts, _replaced(operands, k, tangent))
        for j, grad in enumerate(grads):
            if j != k:
                result[j] = add(result[j], grad)
    return tuple(np.zeros(np.shape(op), dtype=_float_dtype(op, v)) if r is None else r
                 for r, op in zip(result, operands))


def einsum_grads_doperands_transpose(c, v, subscripts, operands):
    """The transpose of :func:`einsum_grads_doperands`: one cotangent per operand.

    ``<c_j, gradient j with operand k replaced by t_k>`` is ``<v, einsum with
    operands j and k replaced by c_j and t_k>``, whose gradient in ``t_k`` is
    entry ``k`` of ``einsum_grads(v, ...)`` with operand ``j`` replaced by ``c_j``.
    """
    result = [None] * len(operands)
    for j, part in enumerate(c):
        if part is None:
            continue
        grads = einsum_grads(v, subscripts, _replaced(operands, j, part))
        for k, grad in enumerate(grads):
            if k != j:
                result[k] = add(result[k], grad)
    return tuple(np.zeros(np.shape(op), dtype=_float_dtype(op, v)) if r is None else r
                 for r, op in zip(result, operands))


def einsum_jvp_doperands(t, tangents, ans, subscripts, operands):
    """The derivative of ``einsum_jvp(tangents, ans, subscripts, operands)`` in the operands, along ``t``.

    ``einsum_jvp`` adds up the einsums with one operand ``k`` replaced by its
    tangent; each is linear in every other operand ``j``, so the derivative
    adds up the einsums with operand ``k`` replaced by ``tangents[k]`` and
    operand ``j != k`` by ``t[j]``. None entries (of either) contribute
    nothing; with no contribution at all the result is zeros like ``ans``.

    >>> einsum_jvp_doperands((None, np.ones(2)), (np.ones(2), None), 0., "i,i->",
    ...                      (np.zeros(2), np.zeros(2)))
    np.float64(2.0)
    """
    total = None
    for j, along in enumerate(t):
        if along is None:
            continue
        for k, tangent in enumerate(tangents):
            if k == j or tangent is None:
                continue
            term = np.einsum(subscripts, *_replaced(_replaced(operands, j, along), k, tangent))
            total = term if total is None else total + term
    return np.zeros_like(ans) if total is None else total


def _replaced(operands, k, value):
    return [value if i == k else op for i, op in enumerate(operands)]


# -- user-written cotangents ---------------------------------------------------------

def custom_cotangents_tangent(t, cotangents, args, single=False):
    """The tangent of ``custom_cotangents(cotangents, args, rule, single)`` along ``t``.

    ``custom_cotangents`` passes the rule's cotangents through, one per
    argument, and puts constant zeros where the rule returned None: it is
    linear in ``cotangents``. ``t``, the tangent of ``cotangents``, is read
    the way ``custom_cotangents`` read ``cotangents``; an entry whose
    cotangent was None (which forward-mode code gives a scalar zero tangent)
    or whose tangent is None gets zeros shaped like its argument. The
    primal call has checked the shapes already.
    """
    rows = _entries_per_argument(cotangents, single)
    moved = _entries_per_argument(t, single)
    return tuple(tangent if arg is None else
                 zeros_like(arg) if cotangent is None or tangent is None else tangent
                 for cotangent, tangent, arg in zip(rows, moved, args))


def custom_cotangents_transpose(c, cotangents, args, single=False):
    """The transpose of :func:`custom_cotangents_tangent` in ``t``.

    ``c`` has one entry per argument; the result has the form of what the
    rule returned (a bare cotangent, a tuple or a list), with None where the
    rule returned None (that entry became a constant).

    >>> custom_cotangents_transpose((1.0, 2.0), [None, 0.5], (3.0, 4.0))
    [None, 2.0]
    """
    rows = _entries_per_argument(cotangents, single)
    back = [part if arg is None or cotangent is not None else None
            for part, cotangent, arg in zip(c, rows, args)]
    if single or not _is_sequence(cotangents):
        return back[0]
    return type(cotangents)(back)


def _entries_per_argument(cotangents, single):
    """What a user-written rule returned, one entry per argument (as custom_cotangents reads it)."""
    if single or not _is_sequence(cotangents):
        return (cotangents,)
    return tuple(cotangents)


def _is_sequence(value):
    """A tuple or list of entries, one per argument (a named tuple is one cotangent)."""
    return isinstance(value, (tuple, list)) and not hasattr(value, "_fields")

"""Derivatives of reductions along axes: sum, mean, max/min, prod, var, std.

Every ``*_grad`` function takes the output gradient ``g``, the input ``x``
and the ``axis``/``keepdims`` the forward call used, and returns a gradient
with ``x``'s shape. ``axis`` is None (all axes), an int (negative counts from
the end), or a tuple of ints. ``g`` has the forward result's shape: with
``keepdims=False`` the reduced axes are gone, so each function first puts
them back with length 1 and then broadcasts along them.

Every ``*_jvp`` function takes the input's tangent ``dx`` (``x``'s shape)
and returns the result's tangent (the forward result's shape). Each follows
the same conventions as the gradient of the same reduction, so that
``<jvp(dx), g> == <dx, grad(g)>``; sum and mean are linear and need none.

None of them divides by zero or emits a RuntimeWarning for the inputs the
forward function accepts without one (zeros in prod, constant slices in std).
Where the derivative is undefined (a variance with ``n - ddof <= 0``) it is
NaN, except that a zero ``g`` or ``dx`` still gives zero.
"""

import math

import numpy as np

from .broadcast import float_dtype as _float_dtype
from .foreign import as_array, count_true, full_for, is_foreign, refuse_array
from .complex_numbers import conj_if_complex, real_if_complex


def unreduce(g, x, axis=None, keepdims=False):
    """VJP of ``np.sum(x, axis, keepdims=keepdims)``: ``g`` spread over ``x``.

    Returns an array of ``x``'s shape, possibly a read-only broadcast view.

    >>> unreduce(np.array([1., 2.]), np.zeros((2, 3)), axis=1)
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    if _number_over_whole_array(g, x, axis, keepdims):    # the common case: NumPy's
        spread = np.empty(x.shape, _float_dtype(g, x))     # (np.full, without its
        spread.fill(g)                                     # Python-level steps)
        return spread
    shape = np.shape(x)
    if axis is None and not keepdims and np.ndim(g) == 0:
        # the usual seed of a scalar loss: a filled array beats a broadcast view downstream
        return full_for(shape, g, _float_dtype(g, x), x)
    kept = _keep_reduced_axes(g, shape, axis, keepdims)
    if not _lengths_known(shape, range(len(shape))):     # Dask's NaN: spread by arithmetic
        return kept + np.zeros_like(x, dtype=_float_dtype(g, x))
    return np.broadcast_to(kept, shape)


def _number_over_whole_array(g, x, axis, keepdims):
    """Whether the reduction's cotangent ``g`` is a number spread over the whole of a NumPy
    array ``x`` (the seed of a scalar loss): the spreads' short path."""
    return (type(x) is np.ndarray and axis is None and not keepdims
            and (type(g) is float or isinstance(g, np.generic)))


def mean_grad(g, x, axis=None, keepdims=False):
    """VJP of ``np.mean(x, axis, keepdims=keepdims)``: ``g / n`` spread over ``x``.

    ``n`` is the number of elements averaged in each slice. Returns a new
    array of ``x``'s shape.
    """
    if _number_over_whole_array(g, x, axis, keepdims) and x.size:
        dtype = _float_dtype(g, x)               # the common case: one division, then a fill
        return np.full(x.shape, dtype.type(g) / x.size, dtype)
    if type(x) is np.ndarray and type(g) is np.ndarray and type(axis) is int \
            and -x.ndim <= axis < x.ndim and g.size * x.shape[axis] == x.size:
        kept = list(x.shape)                     # a NumPy array's mean along one axis: the
        kept[axis] = 1                           # division written into the new array
        out = np.empty(x.shape, g.dtype if g.dtype.kind in "fc" else np.float64)   # g / n's
        return np.divide(g.reshape(kept), x.shape[axis], out=out)
    return unreduce(g, x, axis, keepdims) / _count_of(x, axis)


def extremum_grad(g, ans, x, axis=None, keepdims=False):
    """VJP of ``np.max``/``np.min``/``np.amax``/``np.amin`` along ``axis``.

    Args:
      ans: the forward result (same shape as ``g``).

    Returns:
      An array of ``x``'s shape that is zero except where ``x`` equals the
      extremum of its slice; ties share their slice's gradient equally. A
      slice whose extremum is NaN gets zero gradient.
    """
    if type(x) is np.ndarray and type(g) is np.ndarray and type(ans) is np.ndarray \
            and type(axis) is int and -x.ndim <= axis < x.ndim and g.size == ans.size \
            and g.size * x.shape[axis] == x.size:
        kept = list(x.shape)                     # NumPy arrays along one axis: the methods
        kept[axis] = 1
        hits = x == ans.reshape(kept)
        same = g.dtype is x.dtype and g.dtype.kind == "f"
        if same and np.count_nonzero(hits) == ans.size and math.isfinite(ans.sum()):
            # no extremum is NaN, so each slice has a hit; as many hits as slices: one each,
            # no tie, and each slice's share is its whole gradient (g / 1 is g)
            return np.where(hits, g.reshape(kept), 0)
        dtype = g.dtype if same else _float_dtype(g, x)
        share = np.add.reduce(hits, axis=axis, keepdims=True, dtype=dtype)   # the ties, as
        np.maximum(share, 1, out=share)                  # floats: each slice's share of its
        np.divide(g.reshape(kept), share, out=share)     # gradient, in the count's array
        return np.where(hits, share, 0)
    shape = np.shape(x)
    g = _keep_reduced_axes(g, shape, axis, keepdims)
    ans = _keep_reduced_axes(ans, shape, axis, keepdims)
    hits = np.equal(x, ans)
    ties = count_true(hits, _axes(len(shape), axis), True)
    # three passes over x: compare, count, select; the share is computed per slice
    share = np.divide(g, np.maximum(ties, 1), dtype=_float_dtype(g, x))
    return np.where(hits, share, 0)


def extremum_jvp(dx, ans, x, axis=None, keepdims=False):
    """JVP of ``np.max``/``np.min``/``np.amax``/``np.amin`` along ``axis``.

    Args:
      dx: the tangent of ``x`` (``x``'s shape).
      ans: the forward result.

    Returns:
      An array of ``ans``'s shape: in each slice, the mean of ``dx`` over the
      positions where ``x`` equals the extremum (tied positions share
      equally, as in :func:`extremum_grad`); zero in a slice whose extremum
      is NaN.

    >>> extremum_jvp(np.array([1., 2., 4.]), 3., np.array([3., 1., 3.]))
    np.float64(2.5)
    """
    shape = np.shape(x)
    axes = _axes(len(shape), axis)
    hits = np.equal(x, _keep_reduced_axes(ans, shape, axis, keepdims))
    ties = count_true(hits, axes, keepdims)
    total = np.sum(np.where(hits, dx, 0), axis=axes, keepdims=keepdims)
    return np.divide(total, np.maximum(ties, 1), dtype=_float_dtype(dx, x))


def prod_grad(g, ans, x, axis=None, keepdims=False):
    """VJP of ``np.prod(x, axis, keepdims=keepdims)``; exact when ``x`` has zeros.

    The derivative of a slice's product with respect to one element is the
    product of the other elements (see :func:`_prod_partials`).

    Args:
      ans: the forward result (same shape as ``g``).
    """
    x = as_array(x)
    g = _keep_reduced_axes(g, x.shape, axis, keepdims)
    if not is_foreign(x) and not np.any(np.equal(x, 0)):     # the common case: one pass over x
        return g * _keep_reduced_axes(ans, x.shape, axis, keepdims) / x
    return g * _prod_partials(ans, x, axis, keepdims)


def prod_jvp(dx, ans, x, axis=None, keepdims=False):
    """JVP of ``np.prod(x, axis, keepdims=keepdims)``; exact when ``x`` has zeros.

    Each slice's tangent is the sum over its elements of ``dx`` times the
    product of the other elements.

    >>> prod_jvp(np.array([1., 1., 1.]), 0., np.array([2., 0., 3.]))
    np.float64(6.0)
    """
    axes = _axes(np.ndim(x), axis)
    return np.sum(_prod_partials(ans, x, axis, keepdims) * dx, axis=axes, keepdims=keepdims)


def _prod_partials(ans, x, axis, keepdims):
    """d prod(slice) / d x for every element of ``x`` (``x``'s shape).

    That is ``ans / x`` when the slice has no zero; at the only zero of a
    slice, the product of the nonzero elements; zero everywhere else (a slice
    with two or more zeros has zero derivative).
    """
    x = as_array(x)
    shape = x.shape
    axes = _axes(len(shape), axis)
    is_zero = np.equal(x, 0)
    if not is_foreign(x) and not np.any(is_zero):   # (a lazy array takes the exact path unlooked)
        return _keep_reduced_axes(ans, shape, axis, keepdims) / x
    zeros_in_slice = np.sum(is_zero, axis=axes, keepdims=True)
    nonzero_x = np.where(is_zero, 1, x)
    nonzero_product = np.prod(nonzero_x, axis=axes, keepdims=True)
    at_zero = np.where(zeros_in_slice == 1, nonzero_product, 0)
    elsewhere = np.where(zeros_in_slice == 0, nonzero_product / nonzero_x, 0)
    return np.where(is_zero, at_zero, elsewhere)


def var_grad(g, x, axis=None, ddof=0, keepdims=False):
    """VJP of ``np.var(x, axis, ddof=ddof, keepdims=keepdims)``.

    The gradient is ``2 (x - mean) / (n - ddof)`` times ``g``. When
    ``n - ddof <= 0`` the variance is undefined and the gradient is NaN
    (zero where ``g`` is zero).
    """
    shape = np.shape(x)
    g = _keep_reduced_axes(g, shape, axis, keepdims)
    dof = _known_count(shape, axis, 'np.var and np.std') - ddof
    if dof <= 0:
        return _undefined(np.equal(g, 0), shape, _float_dtype(g, x))
    return g * _deviation(x, axis) * (2.0 / dof)


def var_jvp(dx, x, axis=None, ddof=0, keepdims=False):
    """JVP of ``np.var(x, axis, ddof=ddof, keepdims=keepdims)``.

    Each slice's tangent is ``2 sum((x - mean) dx) / (n - ddof)``. When
    ``n - ddof <= 0`` it is NaN, except in slices where ``dx`` is all zero.
    """
    moved, dof = _deviation_along(dx, x, axis, ddof, keepdims)
    return moved if dof is None else moved * (2.0 / dof)


def _deviation_along(dx, x, axis, ddof, keepdims):
    """``(sum((x - mean) dx) per slice, n - ddof)`` for the JVPs of var and std.

    When ``n - ddof <= 0`` the tangent is undefined: ``(NaN except in slices
    where dx is all zero, None)``.
    """
    shape = np.shape(x)
    axes = _axes(len(shape), axis)
    dof = _known_count(shape, axis, 'np.var and np.std') - ddof
    if dof <= 0:
        still = ~np.any(np.not_equal(dx, 0), axis=axes, keepdims=keepdims)
        return _undefined(still, np.shape(still), _float_dtype(dx, x)), None
    return real_if_complex(np.sum(_deviation(x, axis) * dx, axis=axes, keepdims=keepdims), x), dof


def std_grad(g, ans, x, axis=None, ddof=0, keepdims=False):
    """VJP of ``np.std(x, axis, ddof=ddof, keepdims=keepdims)``.

    The gradient is ``(x - mean) / ((n - ddof) * std)`` times ``g``, and zero
    in slices whose standard deviation ``ans`` is zero (the one-sided limit).
    When ``n - ddof <= 0`` the gradient is NaN (zero where ``g`` is zero).

    Args:
      ans: the forward result (same shape as ``g``).
    """
    shape = np.shape(x)
    g = _keep_reduced_axes(g, shape, axis, keepdims)
    ans = _keep_reduced_axes(ans, shape, axis, keepdims)
    dof = _known_count(shape, axis, 'np.var and np.std') - ddof
    if dof <= 0:
        return _undefined(np.equal(g, 0), shape, _float_dtype(g, x))
    constant = np.equal(ans, 0)
    scale = g / (dof * np.where(constant, 1, ans))
    return np.where(constant, 0, scale * _deviation(x, axis))


def std_jvp(dx, ans, x, axis=None, ddof=0, keepdims=False):
    """JVP of ``np.std(x, axis, ddof=ddof, keepdims=keepdims)``.

    Each slice's tangent is ``sum((x - mean) dx) / ((n - ddof) * std)``, and
    zero in slices whose standard deviation ``ans`` is zero (as in
    :func:`std_grad`). When ``n - ddof <= 0`` it is NaN, except in slices
    where ``dx`` is all zero.

    Args:
      ans: the forward result.
    """
    moved, dof = _deviation_along(dx, x, axis, ddof, keepdims)
    if dof is None:
        return moved
    constant = np.equal(ans, 0)
    return np.where(constant, 0, moved / (dof * np.where(constant, 1, ans)))


def _undefined(zero, shape, dtype):
    """An array of ``shape``: 0 where ``zero`` (broadcast) is true, NaN elsewhere."""
    return np.where(np.broadcast_to(zero, shape), dtype.type(0), dtype.type(np.nan))


def _axes(ndim, axis):
    """The reduced axes as a tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(_nonnegative(a, ndim) for a in axis)
    return (_nonnegative(axis, ndim),)


def _nonnegative(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of "
                         f"dimension {ndim}")
    return axis % ndim


def _keep_reduced_axes(g, shape, axis, keepdims):
    """``g`` reshaped so the reduced axes are back, with length 1."""
    if keepdims:
        return g
    reduced = _axes(len(shape), axis)
    kept_shape = tuple(1 if i in reduced else n for i, n in enumerate(shape))
    return np.reshape(g, kept_shape)


def _count_of(x, axis):
    """How many elements of ``x`` went into each result element: a number, or (for an array
    of another library whose length along a reduced axis is not known yet, as a Dask array
    after a boolean selection has NaN there) an array counted lazily, broadcastable
    against ``x``."""
    shape = np.shape(x)
    axes = _axes(len(shape), axis)
    if _lengths_known(shape, axes):
        return _count(shape, axis)
    everywhere = np.equal(x, x) | np.not_equal(x, x)     # True at every element, NaN included
    return count_true(everywhere, axes, True)


def _known_count(shape, axis, function):
    """``_count(shape, axis)``, refused with a clear error when a reduced length is not known
    yet (a Dask array after a boolean selection)."""
    if _lengths_known(shape, _axes(len(shape), axis)):
        return _count(shape, axis)
    refuse_array(f"the derivative of {function} needs the length of each reduced axis, and "
                 f"this array's is not known yet (shape {shape})",
                 "compute the lengths first: x.compute_chunk_sizes() for a Dask array")


def _lengths_known(shape, axes):
    """Whether every length of ``shape`` along ``axes`` is known (not NaN, as a Dask array's
    after a boolean selection is)."""
    return all(shape[a] == shape[a] for a in axes)


def _count(shape, axis):
    """How many elements of ``x`` went into each result element."""
    count = 1
    for a in _axes(len(shape), axis):
        count *= shape[a]
    return count


def _deviation(x, axis):
    """``x - mean(x)``; its conjugate for a complex ``x`` (var and std are of ``|x - mean|``)."""
    x = as_array(x)
    return conj_if_complex(x - np.mean(x, axis=_axes(x.ndim, axis), keepdims=True))

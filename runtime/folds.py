"""A loop folding ``np.logaddexp`` over the slices of an array, as one call, and its derivatives.

``normalize/folds.py`` turns ``for j in range(start, stop): acc = np.logaddexp(acc, x[:, j])``
into ``acc = logaddexp_fold(acc, x, 1, start, stop)``, which runs the same loop: the values
are the loop's. Its derivatives are in closed form: the fold's result is the log of
``exp(acc) + sum_j exp(x_j)``, so its derivative in ``acc`` is ``exp(acc - ans)`` and in each
slice ``x_j`` is ``exp(x_j - ans)``, with no value of the loop's steps saved or read.
A fold from a slice of the array itself (``acc = x[:, 0]`` before a loop from 1) is
``logaddexp_fold_from(x, axis, start, stop)``, whose derivatives read the slices from
``start - 1``. ``logaddexp_fold`` and ``logaddexp_fold_from`` have rules
(``srctrans/rules/fold_helpers.py``); the other functions here are plain NumPy whose second
derivatives srctrans gets by reading this source.
"""

import numpy as np

from .broadcast import unbroadcast


def logaddexp_fold(acc, x, axis, start, stop):
    """What ``for j in range(start, stop): acc = np.logaddexp(acc, x[..., j, ...])`` leaves
    in ``acc`` (``j`` indexing ``x`` along ``axis``, the axes before it whole)."""
    lead = (slice(None),) * axis
    for j in range(start, stop):
        acc = np.logaddexp(acc, x[lead + (j,)])
    return acc


def logaddexp_fold_from(x, axis, start, stop):
    """What ``acc = x[..., start - 1, ...]`` and then ``for j in range(start, stop): acc =
    np.logaddexp(acc, x[..., j, ...])`` leave in ``acc``: a fold from a slice of ``x`` itself
    (``lse = z[:, 0]`` before a loop from 1), whose derivatives are the fold's over the
    slices from ``start - 1`` (:func:`logaddexp_fold_grad`, :func:`logaddexp_fold_tangent`):
    one expression, with no share of the first slice to add apart."""
    return logaddexp_fold(x[(slice(None),) * axis + (start - 1,)], x, axis, start, stop)


def logaddexp_fold_share(acc, ans, start, stop):
    """The derivative of :func:`logaddexp_fold`'s result ``ans`` in ``acc``: ``exp(acc -
    ans)``, and 1 when the loop takes no step (``ans`` is ``acc``)."""
    if start >= stop:
        return np.ones_like(acc, dtype=np.result_type(acc, 1.0))
    return np.exp(acc - ans)


def logaddexp_fold_grad(g, ans, x, axis, start, stop):
    """The cotangent of ``x`` in :func:`logaddexp_fold` for the cotangent ``g`` of its result
    ``ans``: ``g * exp(x_j - ans)`` at each slice ``x_j`` the loop read (summed to a slice's
    shape; a slice read twice, by an index that wraps round, gets both), 0 elsewhere."""
    if _each_slice_once(ans, x, axis, start, stop):
        return _grad_at_once(g, ans, x, axis, start, stop)
    return _grad_by_step(g, ans, x, axis, start, stop)


def logaddexp_fold_from_grad(g, x, axis, start, stop):
    """``logaddexp_fold_grad(g, logaddexp_fold_from(x, axis, start, stop), x, axis, start - 1,
    stop)`` without the fold's loop, for a fused gradient that reads the fold through this
    derivative alone (``optimise/fold_derivatives.py``): ``g`` times the softmax of the slices
    it read, ``exp(x_j - m) / sum_k exp(x_k - m)`` with ``m`` their maximum, which rounds as a
    log-sum-exp computed at once does, not as the fold's steps (a few units in the last place).
    A float array and more than four slices that lie in it (a fold of four steps costs what
    the six operations here do); anything else takes the fold and its derivative. Slices of
    at most ``SMALL_FOLD`` entries in all take ``exp(x_j - lse)`` with ``lse`` their
    ``np.logaddexp.reduce`` (one call where the fold takes one a step, and no maximum or
    sum: 5 us against 9 for a softmax of five rows of four)."""
    shape = _shape(x)
    if not (type(x) is np.ndarray and x.dtype.kind == "f" and 0 < start < stop <= shape[axis]):
        return logaddexp_fold_grad(g, logaddexp_fold_from(x, axis, start, stop), x, axis,
                                   start - 1, stop)
    steps = (slice(None),) * axis + (slice(start - 1, stop),)
    part = x[steps]
    if part.size <= SMALL_FOLD:
        share = _along(g, shape[:axis] + shape[axis + 1:], axis) * np.exp(
            part - logaddexp_reduced(part, axis))
        return _placed(share, shape, steps, stop - start + 1 == shape[axis])
    if start + 4 > stop:
        return logaddexp_fold_grad(g, logaddexp_fold_from(x, axis, start, stop), x, axis,
                                   start - 1, stop)
    e = np.exp(part - part.max(axis=axis, keepdims=True))
    share = _along(g, shape[:axis] + shape[axis + 1:], axis) * (e / e.sum(axis=axis, keepdims=True))
    return _placed(share, shape, steps, stop - start + 1 == shape[axis])


SMALL_FOLD = 128        # entries: above, a softmax's five array operations cost less


def logaddexp_reduced(x, axis):
    """``np.logaddexp.reduce(x, axis=axis, keepdims=True)``: the log of the sum of the
    exponentials of ``x``'s slices along ``axis``, folded in one call (its rules are in
    ``srctrans/rules/fold_helpers.py``)."""
    return np.logaddexp.reduce(x, axis=axis, keepdims=True)


def _each_slice_once(ans, x, axis, start, stop):
    """Whether the fold read each slice it read once (no index wraps round) into a result of
    a slice's shape: its derivatives are then one expression of the slices read."""
    shape = _shape(x)
    return _shape(ans) == shape[:axis] + shape[axis + 1:] and 0 <= start < stop <= shape[axis]


def _grad_at_once(g, ans, x, axis, start, stop):
    shape = _shape(x)
    reads = shape[:axis] + shape[axis + 1:]
    steps = (slice(None),) * axis + (slice(start, stop),)
    share = _along(g, reads, axis) * np.exp(x[steps] - _along(ans, reads, axis))
    return _placed(share, shape, steps, stop - start == shape[axis])


def _placed(share, shape, steps, whole):
    """``share``, the cotangent of the slices ``steps``, within zeros of the array's ``shape``:
    itself when the slices are the ``whole`` array."""
    if whole:
        return share
    g_x = np.zeros(shape, share.dtype) if type(share) is np.ndarray else \
        np.zeros_like(share, shape=shape)          # (a duck array's own kind, as share is)
    g_x[steps] = share
    return g_x


def _grad_by_step(g, ans, x, axis, start, stop):
    lead = (slice(None),) * axis
    # zeros of x's shape, of a duck array's kind when g or x is one (added, not written into)
    g_x = np.zeros_like(x, dtype=np.result_type(x, g, 1.0)) + np.zeros_like(np.sum(g))
    for j in range(start, stop):
        g_x[lead + (j,)] += unbroadcast(g * np.exp(x[lead + (j,)] - ans), x[lead + (j,)])
    return g_x


def logaddexp_fold_tangent(dx, ans, x, axis, start, stop):
    """The part of :func:`logaddexp_fold`'s tangent that the tangent ``dx`` of ``x`` gives:
    the sum over the slices the loop read of ``dx_j * exp(x_j - ans)``."""
    lead = (slice(None),) * axis
    if _each_slice_once(ans, x, axis, start, stop):
        steps = lead + (slice(start, stop),)
        return np.sum(dx[steps] * np.exp(x[steps] - _along(ans, _shape(ans), axis)), axis=axis)
    tangent = np.zeros_like(ans, dtype=np.result_type(ans, dx))
    for j in range(start, stop):
        tangent = tangent + dx[lead + (j,)] * np.exp(x[lead + (j,)] - ans)
    return tangent


def _shape(value):
    """``np.shape(value)``, without its cost for a NumPy array."""
    return value.shape if type(value) is np.ndarray else np.shape(value)


def _along(value, shape, axis):
    """``value`` spread to ``shape``, with an axis of length 1 put in at ``axis``: it then
    broadcasts along the slices a fold read (a duck array stays one)."""
    if type(value) is np.ndarray and value.shape == shape:
        return value[(slice(None),) * axis + (None,)]
    if _shape(value) != shape:
        value = np.broadcast_to(value, shape)
    return np.expand_dims(value, axis)

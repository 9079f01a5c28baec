"""Splitting the gradient of a join (concatenate, stack, ...) among its inputs.

Each function takes the gradient ``g`` of the joined array and the list of
arrays that were joined, and returns a tuple with one gradient per input, in
order, each of that input's shape. The pieces are views of ``g`` where NumPy
allows it.
"""

import math

import numpy as np

from .broadcast import unbroadcast
from .foreign import as_array


def concatenate_grads(g, arrays, axis=0):
    """Gradients of ``np.concatenate(arrays, axis)``.

    ``axis=None`` means the inputs were flattened before joining.

    >>> concatenate_grads(np.arange(5.), [np.zeros(2), np.zeros(3)])
    (array([0., 1.]), array([2., 3., 4.]))
    """
    if axis is None:
        return _split(np.ravel(g), [math.prod(np.shape(a)) for a in arrays], 0, arrays)
    return _split(g, [np.shape(a)[axis] for a in arrays], axis, arrays)


def block_grads(g, arrays):
    """Gradients of ``np.block(arrays)``: ``g`` cut back into the blocks of the nested lists,
    as nested tuples. The innermost lists were joined along the last axis, the outermost
    along axis ``-depth``, each block first given leading axes of length 1 up to the
    result's dimensions (as ``np.block`` does).

    >>> block_grads(np.arange(6.).reshape(2, 3), [[np.zeros((2, 1)), np.zeros((2, 2))]])
    ((array([[0.],
           [3.]]), array([[1., 2.],
           [4., 5.]])),)
    """
    depth = _block_depth(arrays)
    ndim = max(depth, max(np.ndim(leaf) for leaf in _block_leaves(arrays)))
    return _block_split(g, arrays, ndim, depth)


def block_of(parts):
    """``np.block`` of nested tuples or lists (the transpose of :func:`block_grads`)."""
    return np.block(_as_lists(parts))


def _as_lists(parts):
    return [_as_lists(p) for p in parts] if isinstance(parts, (list, tuple)) else parts


def _block_depth(part):
    return 1 + _block_depth(part[0]) if isinstance(part, list) else 0


def _block_leaves(part):
    return [leaf for p in part for leaf in _block_leaves(p)] if isinstance(part, list) else [part]


def _block_shape(part, ndim, depth):
    """The shape ``part`` (a block or a nested list of ``depth`` levels) takes in the result."""
    if not isinstance(part, list):
        return (1,) * (ndim - np.ndim(part)) + np.shape(part)
    shapes = [_block_shape(p, ndim, depth - 1) for p in part]
    axis = ndim - depth
    return shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1:]


def _block_split(g, part, ndim, depth):
    if not isinstance(part, list):
        return np.reshape(g, np.shape(part))
    axis = ndim - depth
    shapes = [_block_shape(p, ndim, depth - 1) for p in part]
    pieces = _split(g, [shape[axis] for shape in shapes], axis,
                    [np.broadcast_to(0.0, shape) for shape in shapes])
    return tuple(_block_split(piece, p, ndim, depth - 1) for piece, p in zip(pieces, part))


def stack_grads(g, arrays, axis=0):
    """Gradients of ``np.stack(arrays, axis)``: the slices of ``g`` along ``axis``."""
    pieces = np.moveaxis(g, axis, 0)
    return tuple(pieces[i] for i in range(len(arrays)))


def hstack_grads(g, arrays):
    """Gradients of ``np.hstack(arrays)``.

    hstack makes every input at least 1-D, then joins 1-D inputs along axis
    0 and others along axis 1.
    """
    shapes = [np.shape(np.atleast_1d(a)) for a in arrays]
    axis = 0 if len(shapes[0]) == 1 else 1
    return _split(g, [shape[axis] for shape in shapes], axis, arrays)


def vstack_grads(g, arrays):
    """Gradients of ``np.vstack(arrays)``.

    vstack makes every input at least 2-D (a length-``n`` vector becomes a
    ``(1, n)`` row) and joins along axis 0.
    """
    lengths = [np.shape(np.atleast_2d(a))[0] for a in arrays]
    return _split(g, lengths, 0, arrays)


def array_grads(g, arrays):
    """Gradients of ``np.array(arrays)`` for a list of arrays or scalars.

    The result stacks its elements along a new axis 0, so element ``i``'s
    gradient is ``g[i]``; a scalar element gets a NumPy scalar.
    """
    return tuple(g[i] for i in range(len(arrays)))


def r_concat(parts):
    """``np.r_[parts]`` for parts that are arrays or numbers (no slices or directives)."""
    return np.r_[tuple(parts)]


def c_concat(parts):
    """``np.c_[parts]`` for parts that are arrays or numbers (no slices or directives)."""
    return np.c_[tuple(parts)]


def r_concat_grads(g, parts):
    """Gradients of ``np.r_[parts]``: numbers and arrays join along axis 0 (a number as one
    entry)."""
    return _split(g, [np.shape(np.atleast_1d(p))[0] for p in parts], 0, parts)


def c_concat_grads(g, parts):
    """Gradients of ``np.c_[parts]``: parts join along the last axis, a vector as a column
    and a number as one entry."""
    lengths = [1 if np.ndim(p) < 2 else np.shape(p)[-1] for p in parts]
    return _split(g, lengths, np.ndim(g) - 1, parts)


def linspace_grads(g, start, stop, num=50, endpoint=True, axis=0):
    """Gradients of ``np.linspace(start, stop, num, endpoint, axis=axis)`` in its endpoints.

    Sample ``k`` is ``start * (1 - t_k) + stop * t_k`` with ``t_k = k / (num - 1)``
    (``k / num`` without the endpoint), so each endpoint gets ``g`` weighted by
    its share, summed over the samples and back to the endpoint's shape.
    """
    num = int(num)
    divisions = num - 1 if endpoint else num
    share = np.arange(num) / divisions if divisions > 0 else np.zeros(num)
    samples = np.moveaxis(as_array(g), axis, -1)
    to_stop = samples @ share.astype(samples.dtype if samples.dtype.kind == "f" else float)
    to_start = np.sum(samples, axis=-1) - to_stop
    return unbroadcast(to_start, start), unbroadcast(to_stop, stop)


def linspace_grads_transpose(c, g, start, stop, num=50, endpoint=True, axis=0):
    """The transpose of ``g -> linspace_grads(g, start, stop, ...)``: the samples of a
    linspace between the two cotangents, shaped like ``g``."""
    low = np.zeros(np.shape(start)) if c[0] is None else c[0]
    high = np.zeros(np.shape(stop)) if c[1] is None else c[1]
    return np.broadcast_to(np.linspace(low, high, int(num), endpoint, axis=axis), np.shape(g))


def arange_grads(g, start, stop=None, step=None):
    """Gradients of ``np.arange(start, stop, step)`` (entry ``k`` is ``start + k * step``; the
    length is piecewise constant). With one argument it is the stop: no gradient."""
    if stop is None:
        return 0.0 * start, None, None
    total = np.sum(g)
    weighted = np.sum(g * np.arange(np.size(g))) if step is not None else None
    return total, 0.0 * stop, weighted


def arange_tangent(dstart, dstop, dstep, ans, start, stop=None, step=None):
    """The tangent of ``np.arange(start, stop, step)``: ``dstart + k * dstep`` at entry ``k``
    (None tangents are zero); also the transpose of ``g -> arange_grads(g, ...)``."""
    k = np.arange(np.size(ans), dtype=np.result_type(ans, float))
    tangent = np.zeros_like(k)
    if stop is not None and dstart is not None:
        tangent = tangent + dstart
    if stop is not None and step is not None and dstep is not None:
        tangent = tangent + k * dstep
    return tangent


def _split(g, lengths, axis, arrays):
    """``g`` cut along ``axis`` into pieces of ``lengths``, shaped like ``arrays``."""
    starts = np.cumsum([0] + list(lengths)).tolist()
    before = (slice(None),) * (axis % np.ndim(g))
    pieces = [g[before + (slice(start, stop),)] for start, stop in zip(starts, starts[1:])]
    return tuple(piece if piece.shape == np.shape(a) else np.reshape(piece, np.shape(a))
                 for piece, a in zip(pieces, arrays))


def concat(x, y):
    """``x + y`` of two lists or two tuples: their concatenation (in generated code a tuple's
    cotangent may meet a list's: ``y`` then takes ``x``'s kind)."""
    if isinstance(x, list) != isinstance(y, list):
        y = list(y) if isinstance(x, list) else tuple(y)
    return x + y


def concat_grads(g, x, y):
    """The cotangents of ``x`` and ``y`` for ``concat(x, y)``: the two parts of ``g``."""
    g = list(g)
    return type(x)(g[:len(x)]), type(y)(g[len(x):])


def repeated(x, n):
    """``x * n`` of a list or tuple: ``n`` copies of its entries, one after the other."""
    return x * n


def repeated_grads(g, x, n):
    """The cotangent of ``x`` for ``repeated(x, n)``: each entry's copies, summed."""
    from .accumulate import add
    g, size = list(g), len(x)
    parts = [None] * size
    for k in range(n):
        for i in range(size):
            parts[i] = add(parts[i], g[k * size + i])
    return type(x)(parts)

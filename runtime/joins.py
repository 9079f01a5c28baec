"""Splitting the gradient of a join (concatenate, stack, ...) among its inputs.

Each function takes the gradient ``g`` of the joined array and the list of
arrays that were joined, and returns a tuple with one gradient per input, in
order, each of that input's shape. The pieces are views of ``g`` where NumPy
allows it.
"""

import numpy as np


def concatenate_grads(g, arrays, axis=0):
    """Gradients of ``np.concatenate(arrays, axis)``.

    ``axis=None`` means the inputs were flattened before joining.

    >>> concatenate_grads(np.arange(5.), [np.zeros(2), np.zeros(3)])
    (array([0., 1.]), array([2., 3., 4.]))
    """
    if axis is None:
        return _split(np.ravel(g), [np.size(a) for a in arrays], 0, arrays)
    return _split(g, [np.shape(a)[axis] for a in arrays], axis, arrays)


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


def _split(g, lengths, axis, arrays):
    """``g`` cut along ``axis`` into pieces of ``lengths``, shaped like ``arrays``."""
    boundaries = np.cumsum(lengths)[:-1]
    pieces = np.split(g, boundaries, axis=axis)
    return tuple(piece if piece.shape == np.shape(a) else np.reshape(piece, np.shape(a))
                 for piece, a in zip(pieces, arrays))

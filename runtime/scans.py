"""Transposes of linear maps that scan or select along axes: cumulative sums,
differences, diagonals and traces.

Each function is the VJP of a NumPy function that is linear in its array
argument (``np.cumsum``, ``np.diff``, ``np.diagonal``, ``np.trace``): it maps
the output's cotangent ``g`` to the cotangent of the input ``a``, shaped like
``a``. Each is linear in ``g`` too, and its own transpose is the NumPy
function again (rules/runtime_helpers.py), so derivatives of derivatives go
through them.
"""

import numpy as np


def cumsum_grad(g, a, axis=None):
    """The cotangent of ``a`` for ``np.cumsum(a, axis)``: ``g`` summed from the end.

    >>> cumsum_grad(np.array([1., 2., 3.]), np.zeros(3))
    array([6., 5., 3.])
    """
    if axis is None:                     # np.cumsum flattens a
        return np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def diff_grad(g, a, n=1, axis=-1):
    """The cotangent of ``a`` for ``np.diff(a, n, axis)``: the transpose of ``n`` differences.

    One difference ``x[1:] - x[:-1]`` transposes to ``-np.diff`` of ``g`` padded
    with a zero at each end.

    >>> diff_grad(np.array([1., 2.]), np.zeros(3))
    array([-1., -1.,  2.])
    """
    g = np.asarray(g)
    axis = axis % np.ndim(a)
    for _ in range(n):
        padding = [(0, 0)] * g.ndim
        padding[axis] = (1, 1)
        g = -np.diff(np.pad(g, padding), axis=axis)
    return g


def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """The cotangent of ``a`` for ``np.diagonal(a, offset, axis1, axis2)``: zeros with ``g``
    on that diagonal.

    >>> diagonal_grad(np.array([1., 2.]), np.zeros((2, 3)), 1)
    array([[0., 1., 0.],
           [0., 0., 2.]])
    """
    dtype = np.result_type(a, g)
    out = np.zeros(np.shape(a), dtype=dtype if np.issubdtype(dtype, np.inexact) else np.float64)
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))      # a view: writes reach out
    size = np.shape(g)[-1] if np.ndim(g) else 0
    rows = np.arange(size) + max(0, -offset)
    moved[..., rows, rows + offset] = g
    return out


def trace_grad(g, a, offset=0, axis1=0, axis2=1):
    """The cotangent of ``a`` for ``np.trace(a, offset, axis1, axis2)``: ``g`` on the diagonal.

    >>> trace_grad(2.0, np.zeros((2, 2)))
    array([[2., 0.],
           [0., 2.]])
    """
    size = np.diagonal(np.empty(np.shape(a)), offset, axis1, axis2).shape[-1]
    return diagonal_grad(np.expand_dims(g, -1) * np.ones(size), a, offset, axis1, axis2)

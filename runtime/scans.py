"""Transposes of linear maps that scan, select or repeat along axes: cumulative
sums, differences, uniform-grid gradients, diagonals, traces, takes, tiles, repeats
and pads.

Each function is the VJP of a NumPy function that is linear in its array
argument (``np.cumsum``, ``np.diff``, ``np.diagonal``, ``np.trace``,
``np.take``, ``np.tile``, ``np.repeat``, ``np.pad``): it maps
the output's cotangent ``g`` to the cotangent of the input ``a``, shaped like
``a``. Each is linear in ``g`` too, and its own transpose is the NumPy
function again (rules/runtime_helpers.py), so derivatives of derivatives go
through them.
"""

import numpy as np

from .broadcast import float_dtype as _float_dtype
from .foreign import as_array, numpy_only
from .refusals import error


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
    g = g if type(g) is np.ndarray else as_array(g)
    axis = axis % (a.ndim if type(a) is np.ndarray else np.ndim(a))
    for _ in range(n):
        if type(g) is np.ndarray and g.shape[axis]:
            g = _difference_transposed(g, axis)
        else:                            # (another library's array, or none left)
            padding = [(0, 0)] * g.ndim
            padding[axis] = (1, 1)
            g = -np.diff(np.pad(g, padding), axis=axis)
    return g


def _difference_transposed(g, axis):
    """``-np.diff(g padded with a zero at each end of axis)``, written into one array of zeros:
    ``g`` added from the second entry on, then taken away up to the last (each entry ``g[i -
    1] - g[i]``, the ends ``-g[0]`` and ``g[-1]``), two NumPy calls in place where slicing
    the difference out costs four."""
    shape = list(g.shape)
    shape[axis] += 1
    out = np.zeros(shape, g.dtype)
    lead = (slice(None),) * axis
    out[lead + (slice(1, None),)] += g
    out[lead + (slice(None, -1),)] -= g
    return out


def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """The cotangent of ``a`` for ``np.diagonal(a, offset, axis1, axis2)``: zeros with ``g``
    on that diagonal.

    >>> diagonal_grad(np.array([1., 2.]), np.zeros((2, 3)), 1)
    array([[0., 1., 0.],
           [0., 0., 2.]])
    """
    if (type(a) is np.ndarray and type(g) is np.ndarray and a.ndim == 2 and offset == 0
            and a.dtype == g.dtype and a.dtype.kind == "f" and g.shape == (min(a.shape),)):
        out = np.zeros(a.shape, a.dtype)             # a float matrix's own diagonal: written
        columns = a.shape[1]                         # in place, as np.fill_diagonal does
        out.flat[:columns * columns:columns + 1] = g
        return out                                   # (a matrix's diagonal is its transpose's)
    numpy_only("np.diagonal, np.diag or np.trace", g, a)
    out = np.zeros(np.shape(a), dtype=_float_dtype(a, g))
    if out.ndim == 2 and offset == 0 and {axis1, axis2} == {0, 1}:    # a matrix's own
        np.fill_diagonal(out, g)                     # (a matrix's diagonal is its transpose's)
        return out
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
    numpy_only("np.trace", g, a)
    shape = np.shape(a)
    if len(shape) == 2 and offset == 0 and {axis1, axis2} == {0, 1} and np.ndim(g) == 0:
        out = np.zeros(shape, _float_dtype(a, np.ones(1) * g))     # a matrix's own trace
        out.flat[:shape[1] * shape[1]:shape[1] + 1] = g             # (as diagonal_grad's)
        return out
    size = np.diagonal(np.empty(shape), offset, axis1, axis2).shape[-1]
    return diagonal_grad(np.expand_dims(g, -1) * np.ones(size), a, offset, axis1, axis2)


def take_grad(g, a, indices, axis=None):
    """The cotangent of ``a`` for ``np.take(a, indices, axis)``: ``g`` added at the indices
    taken (a repeated index gets the sum of its cotangents).

    >>> take_grad(np.array([1., 2., 3.]), np.zeros(3), [2, 0, 2])
    array([2., 0., 4.])
    """
    numpy_only("np.take", g, a)
    out = np.zeros(np.shape(a), dtype=_float_dtype(a, g))
    if axis is None:                       # np.take reads a flattened
        np.add.at(out.reshape(-1), indices, g)
        return out
    np.add.at(np.moveaxis(out, axis, 0), indices, np.moveaxis(
        as_array(g), tuple(range(axis, axis + np.ndim(indices))), tuple(range(np.ndim(indices)))))
    return out


def take_along_axis_grad(g, a, indices, axis):
    """The cotangent of ``a`` for ``np.take_along_axis(a, indices, axis)``: ``g`` added at
    the positions taken (a repeated index gets the sum of its cotangents).

    >>> take_along_axis_grad(np.array([[1., 2.]]), np.zeros((1, 3)), np.array([[2, 2]]), 1)
    array([[0., 0., 3.]])
    """
    numpy_only("np.take_along_axis", g, a)
    out = np.zeros(np.shape(a), dtype=_float_dtype(a, g))
    if axis is None:                       # np.take_along_axis reads a flattened
        np.add.at(out.reshape(-1), indices, g)
        return out
    axis = axis % out.ndim
    g = as_array(g)                      # shaped like the result: indices broadcast against a
    if (type(indices) is np.ndarray and indices.ndim == out.ndim == g.ndim
            and indices.shape[axis] == g.shape[axis] == 1
            and all(out.shape[k] == g.shape[k] for k in range(out.ndim) if k != axis)):
        # one position a slice (a label per row): none taken twice, so placed, not added
        where = [np.arange(n).reshape((n,) + (1,) * (out.ndim - k - 1)) for k, n in
                 enumerate(out.shape)]
        where[axis] = indices
        out[tuple(where)] = g
        return out
    grids = np.ogrid[tuple(slice(n) for n in g.shape)]
    where = tuple(np.broadcast_to(indices, g.shape) if k == axis
                  else grid if out.shape[k] == g.shape[k] else 0 * grid   # a broadcast axis of a
                  for k, grid in enumerate(grids))
    np.add.at(out, where, g)
    return out


def tile_grad(g, a, reps):
    """The cotangent of ``a`` for ``np.tile(a, reps)``: ``g`` summed over the copies.

    >>> tile_grad(np.arange(4.0), np.zeros(2), 2)
    array([2., 4.])
    """
    reps = (reps,) if isinstance(reps, (int, np.integer)) or np.ndim(reps) == 0 else tuple(reps)
    shape = np.shape(a)
    ndim = max(len(reps), len(shape))
    reps = (1,) * (ndim - len(reps)) + reps
    promoted = (1,) * (ndim - len(shape)) + shape
    split = [n for pair in zip(reps, promoted) for n in pair]
    copies = tuple(range(0, 2 * ndim, 2))
    if type(g) is np.ndarray:                             # (the methods: no dispatch)
        return g.reshape(split).sum(axis=copies).reshape(shape)
    return np.reshape(np.sum(np.reshape(g, split), axis=copies), shape)


def repeat_grad(g, a, repeats, axis=None):
    """The cotangent of ``a`` for ``np.repeat(a, repeats, axis)``: each repeated run summed.

    >>> repeat_grad(np.arange(5.0), np.zeros(2), [2, 3])
    array([1., 9.])
    """
    numpy_only("np.repeat", g, a)
    if axis is None:                       # np.repeat flattens a
        return np.reshape(repeat_grad(g, np.ravel(a), repeats, 0), np.shape(a))
    size = np.shape(a)[axis]
    runs = np.repeat(np.arange(size), repeats)
    out = np.zeros(np.shape(a), dtype=_float_dtype(a, g))
    np.add.at(np.moveaxis(out, axis, 0), runs, np.moveaxis(as_array(g), axis, 0))
    return out




# np.pad's modes that copy entries of the array (or zeros) into the border
PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_grad(g, array, pad_width, mode="constant"):
    """The cotangent of ``array`` for ``np.pad(array, pad_width, mode)``: every entry of ``g``
    goes back to the entry of ``array`` it was copied from (none for a zero border).

    Padding the entries' own positions tells where each one went, for every mode in
    ``PAD_MODES``.

    >>> pad_grad(np.ones(5), np.zeros(2), (1, 2), "edge")
    array([2., 3.])
    """
    _check_pad_mode(mode)
    shape = np.shape(array)
    if mode == "constant":                 # the border is new: g's middle is the cotangent
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(shape), 2))
        middle = tuple(slice(int(before), int(before) + n) for (before, _), n in zip(widths, shape))
        return as_array(g)[middle].astype(_float_dtype(array, g), copy=False)
    numpy_only("np.pad with a mode other than constant", g)
    positions = np.arange(int(np.prod(shape))).reshape(shape)
    source = (np.pad(positions, pad_width, mode, constant_values=-1) if mode == "constant"
              else np.pad(positions, pad_width, mode))
    copied = source >= 0
    weights = as_array(g)[copied]
    flat = np.bincount(source[copied], weights=np.real(weights), minlength=positions.size)
    if weights.dtype.kind == "c":           # bincount adds real weights only
        flat = flat + 1j * np.bincount(source[copied], weights=np.imag(weights),
                                       minlength=positions.size)
    return flat.reshape(shape).astype(_float_dtype(array, g), copy=False)


def pad_tangent(t, pad_width, mode="constant"):
    """The tangent of ``np.pad(array, pad_width, mode)`` for the tangent ``t`` of ``array``:
    padded the same way (for the modes in ``PAD_MODES``, which copy entries)."""
    _check_pad_mode(mode)
    return np.pad(t, pad_width, mode)


def _check_pad_mode(mode):
    """np.pad's other modes compute their border (a maximum, a mean): no rule here."""
    if mode not in PAD_MODES:
        raise error("UnsupportedSyntaxError", f"np.pad with mode={mode!r} has no derivative rule",
                    f"use one of the modes {', '.join(PAD_MODES)}")


# -- np.gradient along one axis of a uniform grid (runtime/stencils.py calls it there) ------

def uniform_gradient(f, h, axis, edge_order):
    """``np.gradient(f, h, axis=axis, edge_order=edge_order)`` for a number ``h`` and one
    ``axis``: NumPy's values. Linear in ``f``; ``D(f) / h`` for a stencil ``D`` of numbers, so
    its derivative in ``h`` is ``-ans / h`` (rules/scan_helpers.py).

    A NumPy float array is computed here with NumPy's own operations, in its order (the
    same values, without ``np.gradient``'s handling of its arguments, several times the
    arithmetic on a short array); anything else by ``np.gradient``."""
    if type(f) is not np.ndarray or f.dtype.kind not in "fc" or edge_order not in (1, 2) \
            or not -f.ndim <= axis < f.ndim or f.shape[axis] < edge_order + 1:
        return np.gradient(f, h, axis=axis, edge_order=edge_order)
    out = np.empty_like(f)
    g, o = (f, out) if axis == 0 else (f.swapaxes(0, axis), out.swapaxes(0, axis))
    o[1:-1] = (g[2:] - g[:-2]) / (2. * h)
    if edge_order == 1:
        o[0] = (g[1] - g[0]) / h
        o[-1] = (g[-1] - g[-2]) / h
    else:
        o[0] = (-1.5 / h) * g[0] + (2. / h) * g[1] + (-0.5 / h) * g[2]
        o[-1] = (0.5 / h) * g[-3] + (-2. / h) * g[-2] + (1.5 / h) * g[-1]
    return out


def axis_length(f, axis):
    """``np.size(f, axis)`` for one int ``axis`` (a fifth of its cost: no tuple of axes)."""
    return np.shape(f)[axis]


def uniform_gradient_grad(g, h, axis, edge_order):
    """The cotangent of ``f`` for ``uniform_gradient(f, h, axis, edge_order)``: the transpose
    of its stencil applied to ``g``, over ``h``. A NumPy ``g`` is summed into an array of
    zeros; another library's (Dask) is padded instead, without writes.

    >>> uniform_gradient_grad(np.ones(4), 1.0, 0, 1)
    array([-1.5,  0.5, -0.5,  1.5])
    """
    weights = _EDGE_WEIGHTS[edge_order]
    width = len(weights)
    if type(g) is np.ndarray:             # the common case: NumPy's, axis first as a view
        moved = g if axis == 0 else g.swapaxes(0, axis)
        n = moved.shape[0]
        half = moved[1:-1] * 0.5          # the central differences, (f[i+1] - f[i-1]) / 2
        back = np.zeros(moved.shape, np.result_type(g, h))
        back[2:] += half
        back[:-2] -= half
        if edge_order == 1:               # (weights -1 and 1: the loop below, unrolled)
            back[0] -= moved[0]
            back[1] += moved[0]
            back[-2] -= moved[-1]
            back[-1] += moved[-1]
        else:
            for k, (w_first, w_last) in enumerate(weights):
                back[k] += w_first * moved[0]
                back[n - width + k] += w_last * moved[-1]
        back /= h
        return back if axis == 0 else back.swapaxes(0, axis)
    g = np.moveaxis(g, axis, 0)
    n = np.shape(g)[0]
    half = g[1:-1] * 0.5
    first, last = g[0:1], g[-1:]
    ends = (np.concatenate([first * w for w, _ in weights]),
            np.concatenate([last * w for _, w in weights]))
    back = (_padded(half, 2, 0) - _padded(half, 0, 2) + _padded(ends[0], 0, n - width)
            + _padded(ends[1], n - width, 0))
    return np.moveaxis(back / h, 0, axis)


# edge_order -> (weight of the first value, weight of the last value) for each of the points
# the one-sided differences at the two ends read, in order (the last's counted from n - k)
_EDGE_WEIGHTS = {1: ((-1.0, -1.0), (1.0, 1.0)),
                 2: ((-1.5, 0.5), (2.0, -2.0), (-0.5, 1.5))}


def _padded(x, before, after):
    """``x`` with ``before`` and ``after`` zeros along its first axis."""
    return np.pad(x, [(before, after)] + [(0, 0)] * (np.ndim(x) - 1))

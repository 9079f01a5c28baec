"""``st.vmap(st.vmap(f))``: two levels of batching run as one batch of ``f``.

Requires: an outer and an inner ``batch_api._Vmapped`` whose ``in_axes`` are ints or None
(one per argument, or one for all) and whose ``out_axes`` are ints, called with arrays.
Guarantees: :func:`nested_call` returns what the outer vmap of the inner one returns,
computed by the batched form of ``f`` once, over a batch of ``outer size * inner size``
members: each argument's two batch axes are moved to the front and merged (an argument
batched at one level only is repeated along the other), and the output's merged axis is
split and moved to the inner and outer ``out_axes``. Anything else returns None (the
caller then runs the inner vmap once per outer member).
"""

import numpy as np


def nested_call(outer, args, kwargs):
    """The outer vmap of the inner one (``outer._f``) called with ``args``, or None."""
    inner = outer._f
    if kwargs or not all(isinstance(a, (np.ndarray, float, int)) for a in args):
        return None
    outer_found, inner_found = outer.simple_axes(args), inner.simple_axes(args)
    if outer_found is None or inner_found is None:
        return None
    (outer_axes, outer_out), (inner_axes, inner_out) = outer_found, inner_found
    arrays = [np.asarray(a) for a in args]
    moved, outer_size, inner_size = [], set(), set()
    for a, o, i in zip(arrays, outer_axes, inner_axes):
        if o is not None:
            a = np.moveaxis(a, o, 0)
            outer_size.add(a.shape[0])
        if i is not None:                # the inner axis counts in a member: after the outer
            at = (i % (a.ndim - (o is not None))) + (o is not None)
            a = np.moveaxis(a, at, 1 if o is not None else 0)
            inner_size.add(a.shape[1 if o is not None else 0])
        moved.append(a)
    if outer._axis_size is not None:
        outer_size.add(outer._axis_size)
    if inner._axis_size is not None:
        inner_size.add(inner._axis_size)
    if len(outer_size) != 1 or len(inner_size) != 1:
        return None                      # (the outer vmap reports the sizes' mismatch)
    n, m = outer_size.pop(), inner_size.pop()
    merged, axes = [], []
    for a, o, i in zip(moved, outer_axes, inner_axes):
        if o is None and i is None:
            merged.append(a)
            axes.append(None)
            continue
        if o is None:                    # the same for every outer member
            a = np.broadcast_to(a, (n,) + a.shape)
        elif i is None:                  # the same for every inner member
            a = np.broadcast_to(a[:, None], (n, m) + a.shape[1:])
        merged.append(np.reshape(a, (n * m,) + a.shape[2:]))
        axes.append(0)
    flat = type(inner)(inner._f, tuple(axes), 0, n * m)(*merged)
    return _split(flat, n, m, inner_out, outer_out)


def _split(out, n, m, inner_axis, outer_axis):
    if isinstance(out, tuple):
        return tuple(_split(o, n, m, inner_axis, outer_axis) for o in out)
    out = np.reshape(out, (n, m) + np.shape(out)[1:])
    out = np.moveaxis(out, 1, inner_axis + 1 if inner_axis >= 0 else inner_axis)
    return np.moveaxis(out, 0, outer_axis)

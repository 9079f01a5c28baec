"""``st.vmap``'s axes: ``in_axes`` checked and applied (each batched argument's batch axis
moved to the front, for every array of a container), the batch size found, and the
output's batch axis moved to ``out_axes`` (unbatched outputs spread over the batch).

Requires: arguments as a call of the vmapped function passes them; ``in_axes`` and
``out_axes`` as ``st.vmap`` takes them (ints, None, or containers of them).
Guarantees: the functions below raise ``UsageError`` naming the argument for an axis
that does not fit it, and batch sizes that differ.
"""

import numpy as np

from srctrans.differentiate.batched_names import truthy
from srctrans.errors import UsageError
from srctrans.pytrees import is_tree, tree_leaves, tree_map
from srctrans.runtime import batching as rt_batch
from srctrans.runtime.containers import entries, rebuild


def check_axes(axes, what):
    for leaf in (tree_leaves(axes) if is_tree(axes) else [axes]):
        if leaf is not None and not isinstance(leaf, (int, np.integer)):
            raise UsageError(f"{what} holds {leaf!r}: each entry must be an int or None",
                             hint=f"{what}=0, {what}=(0, None), or a container of ints and Nones")


def per_argument(in_axes, args):
    if isinstance(in_axes, (tuple, list)) and not isinstance(in_axes, (int, np.integer)):
        if len(in_axes) != len(args):
            raise UsageError(f"in_axes has {len(in_axes)} entries but the function was called "
                             f"with {len(args)} positional arguments",
                             hint="give one entry per positional argument (None for unbatched)")
        return list(in_axes)
    return [in_axes] * len(args)


def moved_in(argument, axes, what):
    """``(value, batched)``: the argument with each batched leaf's batch axis moved to 0, and
    True, False, or :class:`Mixed` (a container batched in some of its arrays only)."""
    if axes is None:
        return argument, False
    if not is_tree(argument):
        return moved_leaf(argument, axes, what), True
    if not is_tree(axes):
        return tree_map(lambda leaf: moved_leaf(leaf, axes, what), argument), True
    unwrapped = tree_map(lambda leaf, ax: leaf if ax is None else moved_leaf(leaf, ax, what),
                         argument, axes)
    leaf_flags = tree_map(lambda leaf, ax: ax is not None, argument, axes)
    flags = set(tree_leaves(leaf_flags))
    if flags <= {False}:
        return unwrapped, False
    return unwrapped, Mixed(leaf_flags) if flags == {True, False} else True


class Mixed:
    """The flag of a container argument batched in some of its arrays only: ``leaves``, a
    bool per array, in the argument's structure."""

    __slots__ = ("leaves",)

    def __init__(self, leaves):
        self.leaves = leaves

    def member(self, value, i):
        """Member ``i`` of the argument ``value``: its batched arrays' ``i``-th entries, and
        the others whole."""
        return tree_map(lambda leaf, batched: rt_batch.member(leaf, i, batched), value,
                        self.leaves)

    def batched_leaves(self, value):
        found = []
        tree_map(lambda leaf, batched: found.append(leaf) if batched else None, value,
                 self.leaves)
        return found


def moved_leaf(leaf, axis, what):
    array = np.asarray(leaf)
    if array.ndim == 0:
        raise UsageError(f"{what} is batched along axis {axis} but is a number",
                         hint="give it in_axes None, or pass an array with a batch axis")
    if not -array.ndim <= axis < array.ndim:
        raise UsageError(f"{what} has {array.ndim} axes: it has no axis {axis} to batch along")
    return np.moveaxis(array, axis, 0) if axis not in (0, -array.ndim) else array


def batch_size(moved, axis_size):
    sizes = set()
    for value, flag in moved:
        if flag:
            leaves = flag.batched_leaves(value) if isinstance(flag, Mixed) else \
                tree_leaves(value) if is_tree(value) else [value]
            sizes.update(np.shape(leaf)[0] for leaf in leaves if np.ndim(leaf) > 0)
    if axis_size is not None:
        sizes.add(axis_size)
    if not sizes:
        raise UsageError("vmap has no batched argument to take the batch size from",
                         hint="batch at least one argument (in_axes), or pass axis_size")
    if len(sizes) > 1:
        raise UsageError(f"the batched arguments have different batch sizes: "
                         f"{', '.join(map(str, sorted(sizes)))}",
                         hint="batch every argument along an axis of the same length")
    return sizes.pop()


def moved_out(out, flag, out_axes, size):
    """The output with its batch axes at ``out_axes`` (unbatched parts spread, unless their
    entry of ``out_axes`` is None)."""
    if is_tree(out) and is_tree(out_axes):
        parts, axes = entries(out), [ax for _, ax in entries(out_axes)]
        if len(parts) != len(axes):
            raise UsageError("out_axes does not have the output's structure")
        flags = flag if isinstance(flag, tuple) else (flag,) * len(parts)
        return rebuild(out, [(key, moved_out(e, f, ax, size))
                             for (key, e), f, ax in zip(parts, flags, axes)])
    if out_axes is None:
        if truthy(flag):
            raise UsageError("out_axes is None for an output that depends on the batch",
                             hint="give it an int out_axes")
        return out
    if is_tree(out):
        if isinstance(flag, tuple) and isinstance(out, (tuple, list)):
            return rebuild(out, [(key, moved_out(e, f, out_axes, size))
                                 for (key, e), f in zip(entries(out), flag)])
        return tree_map(lambda leaf: placed(leaf, truthy(flag), out_axes, size), out)
    return placed(out, truthy(flag), out_axes, size)


def placed(leaf, batched, axis, size):
    if leaf is None:
        return None
    array = leaf if batched else rt_batch.spread(leaf, size)
    array = np.asarray(array)
    return array if axis in (0, -array.ndim) else np.moveaxis(array, 0, axis)

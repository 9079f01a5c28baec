"""Every array srctrans returns is the caller's own.

Guarantees: :func:`owned` returns its value with each array that may share memory with
another value (a view, a read-only broadcast, one of the arrays ``taken``: the call's
arguments and what was returned before it) replaced by a copy, and nothing else copied.
So a gradient or a tangent can be changed in place (``g *= lr``) without changing an
argument or another result, on every path (generic, specialised, fused, the short path of
a repeated call, the persistent cache).
"""

import numpy as np

from srctrans.runtime.containers import is_container, leaves, map_leaves


def argument_arrays(arguments):
    """The ids of the NumPy arrays among ``arguments`` and the leaves of their containers."""
    taken = set()
    for argument in arguments:
        if type(argument) is np.ndarray:
            taken.add(id(argument))
        elif is_container(argument):
            taken.update(id(leaf) for leaf in leaves(argument) if type(leaf) is np.ndarray)
    return taken


def owned(value, taken):
    """``value`` with each array in it that may share memory with another copied (see the
    module); then its arrays are added to ``taken``."""
    def own(leaf):
        if type(leaf) is np.ndarray and (leaf.base is not None or not leaf.flags.writeable
                                         or id(leaf) in taken):
            leaf = leaf.copy()
        if type(leaf) is np.ndarray:
            taken.add(id(leaf))
        return leaf
    return map_leaves(own, value) if is_container(value) else own(value)


def owned_tangent(result, primals, tangents):
    """``(output, tangent)`` of a JVP with a tangent of the caller's own."""
    out, tangent = result
    return out, owned(tangent, argument_arrays((*primals, *tangents, out)))

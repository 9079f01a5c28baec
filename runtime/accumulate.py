"""Adding cotangents whose type is not known when the code is generated.

Arrays add with ``+`` (generated code does that inline when it knows both
sides are arrays). Cotangents of containers are containers of the same kind
(see :mod:`runtime.containers`).
"""

import functools
import numbers
import operator

import numpy as np

from .broadcast import unbroadcast
from .containers import entries, entries_like, is_container, rebuild
from .foreign import as_array, is_foreign, numpy_only


def add(a, b):
    """``a + b`` for cotangents: containers add entry by entry; None is zero."""
    if type(a) is np.ndarray and type(b) is np.ndarray:   # the commonest case, at once
        return a + b
    if type(a) is np.ndarray or type(a) is float:      # the common case first
        if b is not None and not is_container(b):
            return a + b
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: add(a.get(k), b.get(k)) for k in {**a, **b}}
    if is_container(a) and is_container(b):
        if hasattr(b, "_fields") and not hasattr(a, "_fields") and isinstance(a, tuple):
            a, b = b, a                   # keep the named tuple's kind
        theirs = entries_like(b, a)
        return rebuild(a, [(k, add(v, theirs.get(k))) for k, v in entries(a)])
    return a + b


def zeros_like(value):
    """A zero cotangent for ``value``: zeros of its shape, entry by entry for containers."""
    if type(value) is np.ndarray:                # the common case first
        return np.zeros(value.shape, _floating(value.dtype))
    if is_container(value):
        return rebuild(value, [(k, zeros_like(v)) for k, v in entries(value)])
    if value is None or type(value) in (float, int):   # unassigned yet, or a Python number
        return 0.0
    if isinstance(value, range):          # a loop's range (integers): a zero for each entry
        return [0.0] * len(value)
    if isinstance(value, (str, bytes)):   # text has no derivative (None, as for ints)
        return None
    if not isinstance(value, (numbers.Number, np.ndarray, np.generic)) and not is_foreign(value):
        return {}                         # an object: no attribute has a gradient yet
    # the dtype of the value itself (a Python float is float64, not a weak scalar)
    return np.zeros_like(value, dtype=np.result_type(as_array(value).dtype, np.float16))


def result_dtype(x, g):
    """``np.result_type(x, g)`` for a value ``x`` and a cotangent ``g`` to be placed in an
    array like it, without NumPy's cost where it is plain: ``x`` an array and ``g`` of its
    own dtype, or a Python float and ``x`` a float or complex array (either NumPy's casting
    rules keep the array's dtype then); NumPy's answer otherwise.

    >>> result_dtype(np.ones(2, np.float32), 0.5), result_dtype(np.ones(2), np.float32(1))
    (dtype('float32'), dtype('float64'))
    """
    if type(x) is np.ndarray:
        dtype = x.dtype
        if getattr(g, "dtype", None) is dtype or type(g) is float and dtype.kind in "fc":
            return dtype
    return np.result_type(x, g)


_FLOATING: dict = {}


def _floating(dtype):
    """The dtype of a zero cotangent of an array of ``dtype``: its own when it is a float or
    complex dtype, float64 otherwise (``np.result_type(dtype, np.float16)``, remembered)."""
    found = _FLOATING.get(dtype)
    if found is None:
        found = _FLOATING[dtype] = np.result_type(dtype, np.float16)
    return found


def spread_grads(g, items):
    """The cotangents of the items of ``sum(items)``: ``g`` for each, summed to its shape."""
    return type(items)(unbroadcast(g, item) for item in items) if isinstance(items, list) \
        else tuple(unbroadcast(g, item) for item in items)


def choice_grads(g, ans, args):
    """The cotangents of the arguments of ``max(*args)``/``min(*args)`` (or of one sequence).

    The chosen argument gets ``g``; ties share it equally. A single 1-D
    array argument is a sequence of numbers, like a list.
    """
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return (type(args[0])(choice_grads(g, ans, tuple(args[0]))),)
    if len(args) == 1 and is_foreign(args[0]):
        numpy_only("the builtin max or min of one array (np.max and np.min are lazy)", args[0])
    if len(args) == 1 and isinstance(args[0], np.ndarray):
        return (np.asarray(choice_grads(g, ans, tuple(args[0]))),)
    hits = [np.equal(a, ans) for a in args]
    count = np.maximum(np.sum(hits, axis=0), 1)
    return tuple(unbroadcast(g * h / count, a) for h, a in zip(hits, args))


def sum_tangents(tangents, ans):
    """The tangent of ``ans = sum(items)`` given the items' tangents: their sum.

    ``tangents`` is a sequence (or an array, summed along its first axis as
    ``sum`` iterates it); None entries are items without a tangent. The sum
    is broadcast to ``ans``'s shape (an item may have been broadcast against
    the others), as a read-only view where it had to grow; with no tangent
    at all it is zero.
    """
    total = functools.reduce(operator.add, (t for t in tangents if t is not None), 0.0)
    return total if np.shape(total) == np.shape(ans) else np.broadcast_to(total, np.shape(ans))


def choice_tangent(tangents, ans, args):
    """The tangent of ``max(*args)``/``min(*args)`` (or of one sequence or 1-D array).

    The chosen argument's tangent; ties take the mean of the tied
    arguments' tangents (as :func:`choice_grads` shares the cotangent).

    Args:
      tangents: one per argument (one sequence of them for a single
        sequence argument); None for an argument without a tangent.
      ans: the forward result.
      args: the forward call's arguments.

    >>> choice_tangent((1.0, 2.0, 4.0), 3.0, (3.0, 1.0, 3.0))
    np.float64(2.5)
    """
    if len(args) == 1 and is_foreign(args[0]):
        numpy_only("the builtin max or min of one array (np.max and np.min are lazy)", args[0])
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        return choice_tangent(tuple(tangents[0]), ans, tuple(args[0]))
    hits = [np.equal(a, ans) for a in args]
    ties = np.maximum(np.sum(hits, axis=0), 1)
    total = functools.reduce(operator.add, (t * h for t, h in zip(tangents, hits) if t is not None), 0.0)
    return total / (int(ties) if np.ndim(ties) == 0 else ties)

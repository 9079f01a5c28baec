"""Shortcuts that generated code takes where the general path costs more per iteration.

``pop_many`` hands a reversed loop the values it would pop one by one from the
tape, so that the loop iterates over them (``for x in rt.pop_many(tape, trips)``)
instead of calling ``tape.pop()`` at each iteration. ``zeros_of`` is
``zeros_like`` for a value known to be a number or an array, which specialised
code knows from its measured shapes: a Python float's zero without the checks
for containers.
"""

import builtins

import numpy as np

from .accumulate import zeros_like

reversed = builtins.reversed      # rt.reversed(steps): a loop's own saved values, last first


def pop_many(tape, count):
    """The values ``count`` successive ``tape.pop()`` would return, in that order, popped.

    >>> tape = [1, 2, 3, 4]
    >>> pop_many(tape, 3), tape
    ([4, 3, 2], [1])
    >>> pop_many(tape, 0), tape
    ([], [1])
    """
    start = len(tape) - count
    if start < 0:
        raise IndexError("pop from empty list")          # as the pops would
    values = tape[start:]
    del tape[start:]
    values.reverse()
    return values


def zeros_of(value):
    """``zeros_like(value)`` for a number or an array (never a container or another object).

    >>> import numpy as np
    >>> zeros_of(2.5)
    0.0
    >>> zeros_of(np.ones(2, np.float32))
    array([0., 0.], dtype=float32)
    >>> zeros_of(np.float32(2.5))
    array(0., dtype=float32)
    """
    kind = type(value)
    if kind is float:
        return 0.0
    if kind is np.float64 or kind is np.float32:     # an entry read from an array: a 0-d zero
        return np.zeros((), kind)                    # (NumPy's zeros_like costs 20 times more)
    return zeros_like(value)

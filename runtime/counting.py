"""Where a counted ``while`` loop stops, as the ``range`` of the same integers needs it.

``srctrans.normalize.counted_loops`` turns ``n = 0; while n < bound: ...; n += 1`` into
``for n in range(n, range_stop(n, bound, "<")): ...``; ``range`` takes ints only, while the
``while`` test compares its int counter with any real number.
"""

import math
import operator

from .refusals import error

# comparison -> (the rounding of a real bound to the int range stops before, then a shift)
_ROUNDED = {"<": (math.ceil, 0), "<=": (math.floor, 1), ">": (math.floor, 0),
            ">=": (math.ceil, -1)}


def range_stop(start, bound, comparison):
    """The int ``stop`` such that ``range(start, stop, step)`` holds the ints ``start,
    start + step, ...`` for which ``n COMPARISON bound`` holds, up to the first that fails
    (``step`` positive for ``<`` and ``<=``, negative for ``>`` and ``>=``).

    ``bound`` may be an int, a float, a NumPy scalar or a 0-d array. A NaN gives ``start``
    (every comparison with it is false: no step runs), as does an infinite bound that no
    int passes; one that every int passes, for which the ``while`` loop would never end,
    raises srctrans's ``UsageError``.

    >>> range_stop(0, 3, "<"), range_stop(0, 2.5, "<"), range_stop(0, 2.5, "<="), range_stop(2, -0.5, ">")
    (3, 3, 3, -1)
    >>> range_stop(0, float("nan"), "<")
    0
    """
    rounding, shift = _ROUNDED[comparison]
    try:
        return operator.index(bound) + shift           # an int, a NumPy int, a 0-d int array
    except TypeError:
        pass
    if bound != bound or bound == (-math.inf if comparison in ("<", "<=") else math.inf):
        return start                                   # no int compares true: no step runs
    if bound == math.inf or bound == -math.inf:
        raise error("UsageError", f"the bound of a counted `while` loop is {bound}: Python "
                    f"would run the loop forever", hint="give the loop a finite bound")
    return rounding(bound) + shift


_TESTS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def counted(start, bound, comparison, step):
    """The values a counter takes in ``n = start; while n COMPARISON bound: ...; n += step``:
    ``range(start, range_stop(...), step)`` for an int ``start``, else each value computed
    as the loop computes it (``n + step``, a new value each step).

    >>> counted(0, 2.5, "<", 1), counted(0.5, 2.5, "<", 1), counted(3.0, 0, ">", -2)
    (range(0, 3), [0.5, 1.5], [3.0, 1.0])
    """
    try:
        first = operator.index(start)
    except TypeError:
        values, test = [], _TESTS[comparison]
        while test(start, bound):
            values.append(start)
            start = start + step
        return values
    return range(first, range_stop(first, bound, comparison), step)

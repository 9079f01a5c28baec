"""Whether a loop over the entries of vectors may run on Python lists of their floats
(``optimise/float_lists.py`` writes the test before such a loop's list form), or keep the
entry it writes for its next step (``optimise/carried_entries.py``).

A float64 vector's entry, read into Python, is a NumPy float64, and arithmetic on it
dispatches through NumPy: about 70 ns an operation, where Python's own floats take 20. The
sums, differences and products of two float64 values are the same IEEE operations either
way, so a loop of such arithmetic on the entries of float64 vectors (a scalar recurrence:
an exponential smoothing, a filter, either pass of its derivative) gives the same numbers
on lists of the vectors' floats, written back after.
"""

import numpy as np

_FLOATS = frozenset({float, np.float64})

# A loop that keeps the entry it writes for its next step (``optimise/carried_entries.py``)
# tests ``v.dtype is rt.FLOAT64`` of its vectors and ``n.__class__ in rt.NUMBERS`` of its
# numbers: arithmetic of those that reads an entry is a float64, which the entry written
# gives back as it was.
FLOAT64 = np.dtype(np.float64)
NUMBERS = frozenset({float, int, np.float64})
FEWEST_STEPS = 16       # below, the test and the lists cost what they save


def runs_on_float_lists(vectors, written, steps, numbers):
    """Whether a loop of ``steps`` steps (a range or a list) may read the entries of
    ``vectors`` from lists, and write those of the first ``written`` into lists, written
    back after: each is a float64 ``np.ndarray`` of one axis, a written one shares no
    memory with another, each of ``numbers`` (the values the loop's arithmetic reads from
    outside it) is a float or a float64, and the loop takes at least 16 steps (below, the
    test and the lists cost what they save) and a quarter of the longest vector's length."""
    count = len(steps)
    if count < FEWEST_STEPS:
        return False
    for number in numbers:
        if type(number) not in _FLOATS:
            return False
    longest = 4 * count
    for vector in vectors:
        if type(vector) is not np.ndarray or vector.dtype is not FLOAT64 or vector.ndim != 1 \
                or len(vector) > longest:
            return False
    return not any(_shares_memory(vectors[index], vectors, index) for index in range(written))


def _shares_memory(vector, vectors, index):
    """Whether ``vector`` (``vectors[index]``) shares memory with another of ``vectors``: one
    that owns its memory only with itself and its views, whose base it is."""
    owner = vector.base is None
    for position, other in enumerate(vectors):
        if position != index and (other is vector or other.base is vector if owner
                                  else np.may_share_memory(vector, other)):
            return True
    return False

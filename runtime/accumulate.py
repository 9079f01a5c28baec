"""Adding cotangents whose type is not known when the code is generated.

Arrays add with ``+`` (generated code does that inline when it knows both
sides are arrays). Cotangents of tuples and lists are tuples and lists of the
same length.
"""

import numpy as np


def add(a, b):
    """``a + b`` for cotangents: tuples and lists add entry by entry; None is zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a)(add(x, y) for x, y in zip(a, b))
    return a + b



def zeros_like(value):
    """A zero cotangent for ``value``: zeros of its shape, entry by entry for tuples and lists."""
    if isinstance(value, (tuple, list)):
        return type(value)(zeros_like(v) for v in value)
    if value is None:                     # a name a loop had not assigned yet
        return 0.0
    # the dtype of the value itself (a Python float is float64, not a weak scalar)
    return np.zeros_like(value, dtype=np.result_type(np.asarray(value).dtype, np.float16))

"""Adding cotangents whose type is not known when the code is generated.

Arrays add with ``+`` (generated code does that inline when it knows both
sides are arrays). Cotangents of containers are containers of the same kind
(see :mod:`runtime.containers`).
"""

import numpy as np

from runtime.containers import entries, is_container, rebuild


def add(a, b):
    """``a + b`` for cotangents: containers add entry by entry; None is zero."""
    if a is None:
        return b
    if b is None:
        return a
    if is_container(a) and is_container(b):
        theirs = dict(entries(b))
        return rebuild(a, [(k, add(v, theirs.get(k))) for k, v in entries(a)])
    return a + b


def zeros_like(value):
    """A zero cotangent for ``value``: zeros of its shape, entry by entry for containers."""
    if is_container(value):
        return rebuild(value, [(k, zeros_like(v)) for k, v in entries(value)])
    if value is None:                     # a name a loop had not assigned yet
        return 0.0
    # the dtype of the value itself (a Python float is float64, not a weak scalar)
    return np.zeros_like(value, dtype=np.result_type(np.asarray(value).dtype, np.float16))

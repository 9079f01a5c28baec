"""Helpers of forward-mode (tangent) code."""

import numpy as np

from .foreign import copy_of


def broadcast_like(tangent, ans):
    """``tangent`` with the shape of ``ans`` (of which it is a broadcastable part).

    ``x + c`` with only ``x`` varying has the tangent ``dx``, which may be
    smaller than the sum; the caller of a JVP expects the output's shape.
    """
    shape = np.shape(ans)
    if np.shape(tangent) == shape:
        return tangent
    return copy_of(np.broadcast_to(tangent, shape))

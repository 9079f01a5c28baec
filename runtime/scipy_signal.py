"""Derivatives of ``scipy.signal.convolve`` and ``correlate``: N-dimensional, every mode.

Imported only through ``rt.scipy_signal``, by generated code of a program that
uses SciPy; plain NumPy and SciPy that srctrans differentiates again (registered
with ``differentiate_through`` in ``srctrans/rules/scipy_signal.py``).

Every mode is a centred window of the full convolution (``"same"``: the shape
of ``in1``; ``"valid"``: ``|s1 - s2| + 1`` in each axis, which is why SciPy may
swap the inputs), and ``correlate(in1, in2)`` is ``convolve(in1, flip(conj(in2)))``.
So a cotangent is placed back in the full output and correlated with the other input,
without ``correlate``'s conjugate (docs/complex.md).
"""

import numpy as np
import scipy.signal as signal

from .complex_numbers import conj_if_complex, real_for


def _full_cotangent(g, shape1, shape2):
    """``g`` (the cotangent of a mode's window) placed in the full convolution's shape."""
    widths = []
    for out, n1, n2 in zip(np.shape(g), shape1, shape2):
        full = n1 + n2 - 1
        start = (full - out) // 2
        widths.append((start, full - start - out))
    return np.pad(g, widths)


def convolve_grads(g, in1, in2, mode="full", method="auto"):
    """The cotangents of ``in1`` and ``in2`` for ``convolve(in1, in2, mode, method)``."""
    full = _full_cotangent(g, np.shape(in1), np.shape(in2))
    return (real_for(signal.convolve(full, np.flip(in2), "valid", method=method), in1),
            real_for(signal.convolve(full, np.flip(in1), "valid", method=method), in2))


def correlate_grads(g, in1, in2, mode="full", method="auto"):
    """The cotangents of ``in1`` and ``in2`` for ``correlate(in1, in2, mode, method)``."""
    g1, g2 = convolve_grads(g, in1, np.flip(conj_if_complex(in2)), mode, method)
    return g1, np.flip(conj_if_complex(g2))

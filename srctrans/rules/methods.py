"""Array methods and attributes as NumPy functions.

``x.sum(axis=0)`` is differentiated as ``np.sum(x, axis=0)``. A method listed
with ``pack=True`` takes its shape or axes either as one tuple or as several
integers (``x.reshape(2, 3)``); the generator packs the latter into a tuple.
"""

import numpy as np

from srctrans import runtime as rt


class Method:
    """How to read ``receiver.name(...)`` as a call of ``primal(receiver, ...)``."""

    __slots__ = ("primal", "pack")

    def __init__(self, primal, pack=False):
        self.primal = primal
        self.pack = pack


METHODS = {
    "sum": Method(np.sum), "mean": Method(np.mean), "prod": Method(np.prod),
    "var": Method(np.var), "std": Method(np.std), "max": Method(np.max),
    "min": Method(np.min), "dot": Method(np.dot), "trace": Method(np.trace), "clip": Method(np.clip),
    "reshape": Method(np.reshape, pack=True), "transpose": Method(np.transpose, pack=True),
    "ravel": Method(np.ravel), "flatten": Method(np.ravel), "squeeze": Method(np.squeeze),
    "swapaxes": Method(np.swapaxes), "copy": Method(rt.identity),
    "conj": Method(np.conj), "conjugate": Method(np.conjugate),
    "astype": Method(rt.identity),
    # constant results
    "argmax": Method(np.argmax), "argmin": Method(np.argmin), "argsort": Method(np.argsort),
    "nonzero": Method(np.nonzero), "any": Method(np.any), "all": Method(np.all),
    "round": Method(np.round),
}

# Attributes of arrays: the primal they read through, or None for constants.
ATTRIBUTES = {
    "T": np.transpose, "real": np.real, "imag": np.imag,
    **({"mT": np.matrix_transpose} if hasattr(np, "matrix_transpose") else {}),
    "shape": None, "ndim": None, "size": None, "dtype": None, "itemsize": None,
    "nbytes": None,
}

"""A Cholesky factor's inverse, computed once, for every solve against the factor in one
backward pass (``optimise/cholesky_solves.py`` writes the calls).

The cotangent of ``L = np.linalg.cholesky(a)`` already reads ``L``'s inverse, which
:func:`~srctrans.runtime.decompositions.cholesky_grad` is given; the solves with ``L`` or ``L.T``
in the same backward pass (a Gaussian process's ``np.linalg.solve(L.T, np.linalg.solve(L,
y))``) read it too, as products, rather than solving again. The derivatives are those of
:func:`~srctrans.runtime.linalg.solve_grads` and ``cholesky_grad``, up to rounding of the
order of the inverse's own. Plain NumPy: srctrans differentiates it through its source.
"""

import numpy as np

from .linalg import solve_grads


def solve_grads_by_inverse(g, x, a, b, a_inverse):
    """``solve_grads(g, x, a, b)`` for ``x = np.linalg.solve(a, b)``, with ``a_inverse``
    (``a``'s) given: the cotangent of ``b`` is ``a_inverse.T @ g``, no solve. One matrix and
    no broadcasting only; otherwise ``solve_grads`` itself."""
    if (type(a) is np.ndarray and type(g) is np.ndarray and type(x) is np.ndarray
            and type(a_inverse) is np.ndarray and a.ndim == 2 and a.dtype.kind == "f"
            and g.shape == x.shape == np.shape(b) and 1 <= x.ndim <= 2
            and x.shape[0] == a.shape[0]):
        B = a_inverse.T @ g
        return (-(B[:, None] * x) if x.ndim == 1 else -B @ x.T), B
    return solve_grads(g, x, a, b)

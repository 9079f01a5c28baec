"""``np.linalg.cholesky``, ``inv`` and ``solve`` of one float64 matrix, without their wrapper.

Each ``np.linalg`` function spends about 4 us a call outside LAPACK: checking and converting
its operands, and entering a floating-point error state (``np.errstate``) whose handler turns
the kernel's report of a failure into ``LinAlgError``. That is as long as factoring a 10 x 10
matrix, and the error state slows the small array operations after it too. Specialised
generated code (``optimise/linalg_kernels.py``) calls these instead. For a float64 ndarray
matrix (and a float64 ndarray right-hand side of matching shape) they call NumPy's kernel
itself with floating-point errors ignored; the kernel clears the error flags when it
succeeds and fills its result with NaN when it fails. A result with a NaN in its last entry,
and any other operands, go to the ``np.linalg`` function, so a call returns or raises what
``np.linalg``'s does. Where NumPy does not expose its kernels (before 2.0) every call goes to
the ``np.linalg`` function.

>>> float(cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))[1, 1])
1.0
"""

import numpy as np

_KERNELS: tuple | None
try:                              # NumPy 2's (private) error state and kernels
    from numpy._core import _ufunc_config
    from numpy.linalg import _umath_linalg
    _STATE = vars(_ufunc_config)["_extobj_contextvar"]
    _IGNORED = vars(_ufunc_config)["_make_extobj"](all="ignore")
    _KERNELS = (_umath_linalg.cholesky_lo, _umath_linalg.inv, _umath_linalg.solve,
                _umath_linalg.solve1)
except (ImportError, KeyError, AttributeError, TypeError):          # NumPy 1.x
    _KERNELS = None

_FLOAT64 = np.dtype(np.float64)


def _matrix(a):
    """Whether ``a`` is a float64 ndarray of shape ``(n, n)``, ``n >= 1``."""
    return (type(a) is np.ndarray and a.dtype is _FLOAT64 and a.ndim == 2
            and a.shape[0] == a.shape[1] and a.shape[0] > 0 and _KERNELS is not None)


def _run(kernel, *operands):
    """``kernel(*operands)`` on float64, with floating-point errors ignored."""
    token = _STATE.set(_IGNORED)
    try:
        return kernel(*operands, signature="d" * len(operands) + "->d")
    finally:
        _STATE.reset(token)


def cholesky(a):
    """``np.linalg.cholesky(a)``: the lower factor."""
    if _matrix(a):
        factor = _run(_KERNELS[0], a)
        if factor[-1, -1] == factor[-1, -1]:           # not NaN: the kernel succeeded
            return factor
    return np.linalg.cholesky(a)


def inv(a):
    """``np.linalg.inv(a)``."""
    if _matrix(a):
        inverse = _run(_KERNELS[1], a)
        if inverse[-1, -1] == inverse[-1, -1]:
            return inverse
    return np.linalg.inv(a)


def solve(a, b):
    """``np.linalg.solve(a, b)``, ``b`` a vector or a matrix of columns."""
    if _matrix(a) and type(b) is np.ndarray and b.dtype is _FLOAT64 and b.shape[0:1] == a.shape[:1]:
        if b.ndim == 1:
            x = _run(_KERNELS[3], a, b)
            if x[-1] == x[-1]:
                return x
        elif b.ndim == 2 and b.shape[1] > 0:
            x = _run(_KERNELS[2], a, b)
            if x[-1, -1] == x[-1, -1]:
                return x
    return np.linalg.solve(a, b)

"""Arrays of other libraries (Dask, CuPy, sparse, ...) kept as they are.

NumPy dispatches its functions and ufuncs to any array type that implements
``__array_function__`` and ``__array_ufunc__`` (NEP 13 and NEP 18), so
``np.tanh(x)`` on a Dask array builds a Dask graph. Generated code only stays
lazy if no helper turns such an array into a NumPy array: ``np.asarray`` would
compute a Dask array (or copy a CuPy array to the host), and ``np.zeros(shape)``
makes a NumPy array the size of the data. The helpers call these functions
instead: they behave exactly like the NumPy ones on NumPy arrays and numbers,
and keep an array of another library in its library.

A helper that cannot work without NumPy arrays (a scatter-add with
``np.add.at``, a search through the data in Python) calls :func:`numpy_only`
first, so the user gets an error naming the function rather than a silent
computation of all the data.
"""

import numpy as np

from .refusals import error


def is_foreign(value):
    """True for an array of another library: not a NumPy array, but NumPy dispatches to it."""
    kind = type(value)
    if kind in _PLAIN:                    # (a failed hasattr costs more than the whole test)
        return False
    return not isinstance(value, np.ndarray) and hasattr(kind, "__array_function__")


# NumPy's arrays and scalars and Python's numbers and containers: never another library's
_PLAIN = frozenset({np.ndarray, float, int, bool, complex, type(None), str, tuple, list, dict,
                    np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_,
                    np.complex128, np.complex64})


def as_array(value, dtype=None):
    """``np.asarray(value, dtype)``, except that an array of another library stays one
    (cast with ``astype`` when ``dtype`` differs), and a list or tuple holding such arrays
    becomes one stacked in their library."""
    if is_foreign(value):
        return value if dtype is None or value.dtype == dtype else value.astype(dtype)
    if isinstance(value, (list, tuple)) and any(is_foreign(v) for v in value):
        return as_array(np.stack([as_array(v) for v in value]), dtype)
    return np.asarray(value, dtype=dtype)


def is_array(value):
    """True for a NumPy array or an array of another library (not for numbers)."""
    return isinstance(value, np.ndarray) or is_foreign(value)


def copy_of(value):
    """A new, writable array with ``value``'s entries (``np.array(value, copy=True)``), in
    ``value``'s array library."""
    if is_foreign(value):
        return value.copy()
    return np.array(value, copy=True)


def zeros_for(shape, dtype, *sources):
    """``np.zeros(shape, dtype)``, in the array library of the first of ``sources`` that is an
    array of another library (NumPy's when none is)."""
    for source in sources:
        if is_foreign(source):
            return np.zeros_like(source, dtype=dtype, **_other(shape, source))
    return np.zeros(shape, dtype=dtype)


def ones_for(shape, dtype, *sources):
    """``np.ones(shape, dtype)``, in the library of the first foreign array of ``sources``."""
    for source in sources:
        if is_foreign(source):
            return np.ones_like(source, dtype=dtype, **_other(shape, source))
    return np.ones(shape, dtype=dtype)


def full_for(shape, value, dtype, *sources):
    """``np.full(shape, value, dtype)``, in the library of the first foreign array of
    ``sources`` or of ``value``: that library's ``full_like`` for a number ``value`` (one
    task a chunk in Dask), its zeros plus ``value`` for a lazy one."""
    for source in sources + (value,):
        if is_foreign(source):
            if not is_foreign(value):
                return np.full_like(source, value, dtype=dtype, **_other(shape, source))
            return np.zeros_like(source, dtype=dtype, **_other(shape, source)) + value
    return np.full(shape, value, dtype=dtype)


def _other(shape, source):
    """``{"shape": shape}`` unless ``source`` has that shape already: a Dask ``zeros_like``
    given a shape makes chunks of its own, which the arithmetic with ``source`` would have to
    rechunk."""
    return {} if tuple(shape) == source.shape else {"shape": shape}


def count_true(mask, axis, keepdims):
    """``np.count_nonzero(mask, axis, keepdims=keepdims)`` of a boolean array, also for the
    libraries whose ``count_nonzero`` takes no ``keepdims`` (Dask)."""
    if is_foreign(mask):
        return np.sum(mask, axis=axis, keepdims=keepdims, dtype=np.intp)
    return np.count_nonzero(mask, axis=axis, keepdims=keepdims)


def numpy_only(function, *values):
    """Raise srctrans's ``UnsupportedArrayError`` if one of ``values`` is an array of another
    library: the derivative of ``function`` (a name such as ``"np.interp"``) needs NumPy arrays.

    (A ``NotImplementedError`` in a module ``st.export`` wrote, which runs without srctrans.)
    """
    for value in values:
        if is_foreign(value) or (isinstance(value, (list, tuple))
                                 and any(is_foreign(v) for v in value)):
            kind = type(value if is_foreign(value) else next(v for v in value if is_foreign(v)))
            message = (f"the derivative of {function} needs NumPy arrays, and this call has a "
                       f"{kind.__module__}.{kind.__name__}")
            hint = ("srctrans would have to turn it into a NumPy array (for Dask: compute all of "
                    "it); convert it yourself where that is what you want (np.asarray(x), "
                    "x.compute()), or see docs/beyond_one_machine.md for what is supported")
            refuse_array(message, hint)


def refuse_array(message, hint):
    """Raise srctrans's ``UnsupportedArrayError`` (a ``NotImplementedError`` in a module
    ``st.export`` wrote, which runs without srctrans)."""
    raise error("UnsupportedArrayError", message, hint)

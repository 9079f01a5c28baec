"""A NEP-18 duck array that refuses to become a NumPy array, for tests.

``Duck`` wraps an ``np.ndarray`` and implements only NumPy's dispatch
protocols (``__array_ufunc__`` and ``__array_function__``), as Dask, CuPy and
``sparse`` arrays do. Every NumPy function applied to a ``Duck`` computes on
the wrapped data and wraps its array results again, so a ``Duck`` stays a
``Duck`` through any code that does not convert it.

Converting one to NumPy (``np.asarray``, ``np.array``, a ufunc's ``out=`` of
another type, the buffer protocol) raises ``Converted``, and so does asking
for a Python number (``float``, ``int``, ``bool``, ``len``-free truth tests)
unless the test allows it with :func:`allowing_scalars`: a Dask array would
compute there, so srctrans must not do it where the user's code does not.
"""

import contextlib
import threading

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin


class Converted(AssertionError):
    """A ``Duck`` was turned into a NumPy array or a Python number."""


_scalars_allowed = threading.local()


@contextlib.contextmanager
def allowing_scalars():
    """Let ``float(duck)``, ``bool(duck)`` and ``int(duck)`` through (user code that branches on
    a value computes there under Dask too)."""
    before = getattr(_scalars_allowed, "on", False)
    _scalars_allowed.on = True
    try:
        yield
    finally:
        _scalars_allowed.on = before


def unwrap(value):
    """``value`` with every ``Duck`` inside (lists, tuples, dicts) replaced by its data."""
    if isinstance(value, Duck):
        return value.data
    if hasattr(value, "_fields"):
        return type(value)(*(unwrap(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def wrap(value):
    """``value`` with every NumPy array (and array scalar) inside wrapped as a ``Duck``."""
    if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, (np.bool_,)):
        return Duck(value)
    if hasattr(value, "_fields"):                    # NumPy's named results (slogdet, svd...)
        return type(value)(*(wrap(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(wrap(v) for v in value)
    return value


class Duck(NDArrayOperatorsMixin):
    """An array of another library: NumPy dispatches to it, but it never becomes NumPy's."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = np.asarray(data)

    # what array libraries expose as attributes
    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)
    T = property(lambda self: Duck(self.data.T))
    mT = property(lambda self: Duck(np.swapaxes(self.data, -1, -2)))
    real = property(lambda self: Duck(self.data.real))
    imag = property(lambda self: Duck(self.data.imag))

    def __repr__(self):
        return f"Duck({self.data!r})"

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return Duck(self.data[unwrap(index)])

    def __setitem__(self, index, value):
        self.data[unwrap(index)] = unwrap(value)

    def __iter__(self):
        return (Duck(row) for row in self.data)

    def astype(self, dtype, copy=True):
        return Duck(self.data.astype(dtype, copy=copy))

    def copy(self):
        return Duck(self.data.copy())

    def __getattr__(self, name):          # methods: x.sum(axis=0), x.reshape(...), x.dot(y)
        if name in _METHODS:
            function = getattr(np, _METHODS[name])
            if name in ("reshape", "transpose"):       # x.reshape(2, 3) as x.reshape((2, 3))
                return lambda *args, **kwargs: function(
                    self, args if len(args) > 1 else args[0] if args else None, **kwargs)
            return lambda *args, **kwargs: function(self, *args, **kwargs)
        raise AttributeError(name)

    def __array__(self, dtype=None, copy=None):
        raise Converted("a duck array was converted to a NumPy array")

    def _scalar(self, kind):
        if not getattr(_scalars_allowed, "on", False):
            raise Converted(f"a duck array was converted to a Python {kind.__name__}")
        return kind(self.data)

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __index__(self):
        return self._scalar(int)

    def __bool__(self):
        return self._scalar(bool)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            if any(not isinstance(o, Duck) for o in out):
                return NotImplemented         # NumPy then raises: writing a Duck into NumPy
            kwargs["out"] = tuple(o.data for o in out)
        result = getattr(ufunc, method)(*unwrap(inputs), **unwrap(kwargs))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return None if method == "at" else wrap(result)

    def __array_function__(self, function, types, args, kwargs):
        if not all(issubclass(t, (Duck, np.ndarray)) for t in types):
            return NotImplemented
        return wrap(function(*unwrap(args), **unwrap(kwargs)))


_METHODS = {name: name for name in (
    "sum", "mean", "prod", "max", "min", "std", "var", "any", "all", "reshape", "transpose",
    "ravel", "squeeze", "swapaxes", "dot", "cumsum", "cumprod", "clip", "round", "conj",
    "argmax", "argmin", "nonzero", "repeat", "take", "trace", "diagonal", "flatten")}
_METHODS["flatten"] = "ravel"
_METHODS["conjugate"] = "conj"


def ducks(*values):
    """Each float array or number of ``values`` as a ``Duck`` (lists entry by entry)."""
    def one(value):
        if isinstance(value, list):
            return [one(v) for v in value]
        if isinstance(value, (np.ndarray, float)) and np.asarray(value).dtype.kind == "f":
            return Duck(np.array(value))
        return value
    return tuple(one(v) for v in values)

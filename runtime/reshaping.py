"""Cotangents of views: subscript reads, transposes, conversions to arrays."""

import numpy as np

from .accumulate import result_dtype, zeros_like
from .seeding import is_integer
from .containers import (PLAIN_FIELDS, REGISTERED, entries, is_container, rebuild, replace_entry)
from .joins import array_grads
from .complex_numbers import real_for
from .refusals import unsupported
from .objects import refuse_computed
from .foreign import copy_of, is_foreign, numpy_only, zeros_for


def identity(x):
    """Returns ``x``; its derivative is the identity (used for ``copy``, ``astype``)."""
    return x


def copied(value):
    """A copy of ``value`` when it is an array (a view may change under a later write); other
    values as they are (a number, NumPy's scalars included, at once: an entry read from an
    array in a loop is one)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, _IMMUTABLE_NUMBERS):
        return value
    return value.copy() if is_foreign(value) else value


_IMMUTABLE_NUMBERS = (float, int, complex, np.generic)


def getitem_grad(g, x, index):
    """The cotangent of ``x`` for ``ans = x[index]``: zeros with ``g`` placed at ``index``.

    Integer-array indices may repeat a position; their cotangents add up.
    For a container ``x`` (tuple, list, dict) the cotangent is a container of
    the same kind with ``g`` at ``index`` and zeros elsewhere; for a slice of a
    list or tuple, ``g`` holds the cotangents of the entries it selected. A ``range``
    (a loop's, read back by a derivative of a derivative) holds ints: no cotangent.
    """
    if type(x) is np.ndarray and (type(g) is np.ndarray or type(g) is float
                                  or isinstance(g, np.generic)):      # the common case: NumPy's
        out = np.zeros(x.shape, result_dtype(x, g))
        if is_basic_index(index) or getattr(index, "dtype", None) == np.bool_:
            out[index] = g                       # each position once (a mask too): placed
        else:                                    # an index of arrays may repeat a position
            np.add.at(out, index, g)
        return out
    if type(x) is dict:                          # parameters by name: the common container
        g = _entry_term(g, x[index])
        return {key: g if key == index else zeros_like(value) for key, value in x.items()}
    if isinstance(x, range):
        return None
    if is_container(x):
        if isinstance(x, (tuple, list)) and isinstance(index, slice):   # x[1:]: g is a list
            placed = dict(zip(range(len(x))[index], g))
            return rebuild(x, [(key, zeros_like(entry) if i not in placed or is_integer(entry)
                                else placed[i]) for i, (key, entry) in enumerate(entries(x))])
        if isinstance(x, (tuple, list)) and index < 0:
            index += len(x)
        return replace_entry(x, index, _entry_term(g, x[index]), zeros_like)
    out = zeros_for(np.shape(x), np.result_type(x, g), x, g)
    if is_basic_index(index):
        out[index] = g
    else:
        numpy_only("indexing with an array of integers (its gradient adds up with np.add.at)",
                   x, g)
        np.add.at(out, index, g)
    return out


def _entry_term(g, entry):
    """``g`` as the cotangent of a container's ``entry``: a zero for an int entry (a constant,
    no cotangent)."""
    if type(entry) is np.ndarray and entry.dtype.kind in "fc":      # the common case first
        return g
    return zeros_like(entry) if is_integer(entry) else g


def _is_named_tuple(kind):
    return issubclass(kind, tuple) and hasattr(kind, "_fields") and kind not in REGISTERED


def _note_plain_fields(kind, names):
    """Remember ``names`` (attributes of a container of class ``kind`` that no property
    computes) in ``PLAIN_FIELDS`` when ``kind`` is a named tuple class whose ``__new__`` is
    its own (taking the fields in order) and they are its fields."""
    if _is_named_tuple(kind) and set(kind._fields).issuperset(names) and kind.__new__ is next(
            c for c in kind.__mro__ if "_fields" in vars(c)).__new__:
        PLAIN_FIELDS.setdefault(kind, set()).update(names)


def is_basic_index(index):
    """Whether ``index`` selects each position at most once (ints, slices, ``...``, None)."""
    if type(index) is not tuple:
        return isinstance(index, _BASIC)
    return all(isinstance(part, _BASIC) for part in index)


_BASIC = (int, slice, np.integer, type(None), type(Ellipsis))


def reshape_like(g, x, order="C"):
    """``g`` reshaped to ``x``'s shape in ``order`` (the cotangent of ``np.reshape`` and
    ``np.ravel``); the default order is not passed on, so libraries whose ``reshape`` takes
    no ``order`` (Dask) work too."""
    if order == "C":
        if type(g) is np.ndarray and type(x) is np.ndarray:
            return g.reshape(x.shape)                    # (the method: no dispatch)
        return np.reshape(g, np.shape(x))
    return np.reshape(g, np.shape(x), order=order)


def transpose_grad(g, axes=None):
    """The cotangent of ``x`` for ``ans = np.transpose(x, axes)``; ``axes`` may be negative."""
    if axes is None:
        return np.transpose(g)
    ndim = np.ndim(g)
    return np.transpose(g, tuple(np.argsort([axis % ndim for axis in axes]).tolist()))


def asarray_grad(g, obj):
    """The cotangent of ``np.array(obj)``: split along axis 0 when ``obj`` is a
    list or tuple (one cotangent per element), else ``g`` itself."""
    if isinstance(obj, (list, tuple)):
        return array_grads(g, obj)
    return real_for(g, obj)


def zero_at(g, index):
    """A copy of the cotangent ``g`` with zeros at ``index`` (what an overwrite does to it).

    For a list's cotangent the entry at ``index`` becomes a zero of its shape."""
    if isinstance(g, list):
        g = list(g)
        g[index] = zeros_like(g[index])
        return g
    g = copy_of(g)
    g[index] = 0
    return g


def writable_copy(value):
    """A tangent of its own, for a tangent that is written into later: a list's a new list
    and a dict's a new dict (their entries shared: assigning to an entry replaces it),
    anything else a new array."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return copy_of(value)


def dict_copy(value):
    """A copy of a dict argument the function writes entries into (its entries shared:
    assigning to an entry replaces it), made first, so the caller's dict is left as it was.
    The source showed it is a dict (``d.get(...)``, ``d.items()``...); anything else is
    refused."""
    if not isinstance(value, dict):
        unsupported(f"writing entries into an argument used as a dict that is a "
                    f"{type(value).__name__}", "pass a dict, or copy it into one first")
    return dict(value)


def entry_copy(value):
    """The entry ``xs[t]`` of a chained write ``xs[t][i] = v``, copied to be written into: an
    array's copy, a new list (its entries shared). An entry that is a dict is refused: the
    passes after this one cannot tell that it is a dict."""
    if isinstance(value, dict):
        unsupported("writing through a chain of subscripts into a dict (`d[k][j] = v` with "
                    "`d[k]` a dict)", "write into the inner dict by its own name: "
                    "inner = dict(d[k]); inner[j] = v; d[k] = inner")
    return writable_copy(value)


def argument_copy(value):
    """A copy of an argument the function writes into, made first (the derivative is with
    respect to its value on entry; the caller's object is left as it was): a new list (its
    entries shared: assigning to an entry replaces it) or a new array. A dict is refused:
    srctrans cannot tell from the source that the argument is one."""
    if isinstance(value, dict):
        unsupported("writing into an entry of a dict passed as an argument",
                    "copy it first: d = dict(d)")
    return writable_copy(value)


def entry_zero_like(g, index, x):
    """For a list: ``g`` with a zero shaped like ``x[index]`` at ``index`` (the entry as it was
    before a write that may have changed its shape); anything else is returned as it is."""
    if isinstance(g, list) and isinstance(x, list):
        g = list(g)
        g[index] = zeros_like(x[index])
    return g


def saved_at(x, index):
    """A copy of ``x[index]``: the values a subscript write is about to overwrite.

    A list keeps the entry itself (assigning to ``xs[i]`` replaces the entry and
    leaves the old one as it was); an assignment to a slice of a list, which may
    change its length, is refused."""
    if isinstance(x, list):
        if not isinstance(index, (int, np.integer)):
            unsupported("assigning to a slice of a list (which may change its length)",
                        "build a new list: xs = xs[:i] + [v] + xs[j:]")
        return x[index]
    return copy_of(x[index])


def restored_at(x, index, old):
    """A copy of ``x`` with ``old`` put back at ``index`` (the value before a write)."""
    if isinstance(x, list):
        x = list(x)
        x[index] = old
        return x
    if is_foreign(x) and any(n != n for n in np.shape(old)):
        # a Dask array cannot take back values of unknown length through a mask
        numpy_only("writing through a boolean mask (y[mask] = v; np.where(mask, v, y) is lazy)",
                   x)
    x = copy_of(x)
    x[index] = old
    return x


def getattr_grad(g, obj, name):
    """The cotangent of ``obj`` for ``ans = obj.name``.

    A named tuple or dataclass gets one of its own kind (zeros in the other
    fields); any other object a dict of the attributes read (``{"W": dW}``),
    which leaves out an attribute holding an int or bool (a constant). An
    attribute the class computes (a property) is refused.
    """
    kind = type(obj)
    fields = PLAIN_FIELDS.get(kind)
    if fields is not None and name in fields:      # a recurrent state's: its own kind
        return tuple.__new__(kind, [zeros_like(value) if field != name or is_integer(value)
                                    else g for field, value in zip(kind._fields, obj)])
    refuse_computed(obj, name)
    field = getattr(obj, name)
    if is_container(obj):
        _note_plain_fields(kind, (name,))
        if is_integer(field):                    # an int field is a constant: no cotangent
            g = zeros_like(field)
        return replace_entry(obj, name, g, zeros_like)
    return {} if is_integer(field) else {name: g}


def sequence_grad(g, iterable):
    """The cotangent of ``iterable`` for ``ans = list(iterable)`` (or ``tuple``): ``g``, entry
    by entry, except for a dict, whose list is its keys: they carry no derivative."""
    return zeros_like(iterable) if isinstance(iterable, dict) else g


def sequence_grad_transpose(c, iterable):
    """The transpose of ``g -> sequence_grad(g, iterable)``: ``c``, or zeros for the keys of a
    dict."""
    return [0.0] * len(iterable) if isinstance(iterable, dict) else c


def pushed(g, value):
    """A list's cotangent ``g`` with ``value`` added at its end (the adjoint of a ``pop``)."""
    return list(g) + [value]


def pushed_many(g, values):
    """``g`` with ``values`` (popped last first, as ``rt.pop_many`` gives them) added at its end."""
    return list(g) + list(values)[::-1]


def pushed_many_transpose(c, values):
    """The transpose of ``(g, values) -> pushed_many(g, values)``: ``c`` cut into the part
    before the pushed values and those values, in the order ``values`` had."""
    count = len(values)
    split = len(c) - count
    return list(c[:split]), list(c[split:])[::-1]


def last_and_rest(g):
    """``(g[-1], g[:-1])`` of a list's cotangent: what an ``append`` added, and the rest.

    An empty cotangent stands for zeros (the zero cotangent of a list that
    another pass had popped empty): the entry's cotangent is then zero.
    """
    if len(g) == 0:
        return 0.0, g
    return g[-1], g[:-1]


def position(xs, index):
    """The non-negative position ``xs[index]`` reads now (``index`` may be negative, or a
    slice, as in code srctrans generated, which this pins again when it is differentiated)."""
    if isinstance(index, slice):
        return slice_position(xs, index.start, index.stop, index.step)
    return index + len(xs) if index < 0 else index


def slice_position(xs, start, stop, step):
    """The slice ``xs[start:stop:step]`` reads now, with bounds that do not count from the end."""
    start, stop, step = slice(start, stop, step).indices(len(xs))
    return slice(start, None if stop < 0 else stop, step)


def snapshot(xs):
    """A shallow copy of the list ``xs``: what a call reads of a list that grows later."""
    return list(xs)

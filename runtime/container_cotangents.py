"""Cotangents of containers made once from their entries' cotangents.

A function reading entries of a container parameter (``q["mu"]``, ``params[-1]``,
``weights[:-1]``) gets, read by read, the container's whole cotangent with zeros but at the
entry (``reshaping.getitem_grad``), summed with ``accumulate.add``. The specialised
backward passes (``optimise/container_cotangents.py``, ``entry_cotangents.py``,
``sparse_dicts.py``, ``picked_sums.py``) instead collect the entries' cotangents and make the
container's here, once: each helper gives what that sum of placements gives, and the
transposes are what derivatives of derivatives read.
"""

import numpy as np

from .accumulate import add, result_dtype, zeros_like
from .broadcast import unbroadcast
from .containers import (PLAIN_ATTRIBUTES, PLAIN_FIELDS, REGISTERED, entries, entries_like,
                         is_container, rebuild)
from .objects import refuse_computed
from .reshaping import _entry_term, _is_named_tuple, _note_plain_fields, getitem_grad
from .seeding import is_integer


def added_at_key(cotangent, key, g, mapping):
    """``add(cotangent, getitem_grad(g, mapping, key))`` for the cotangent of a dict
    ``mapping``, kept sparse: a new dict with ``g`` added at ``key`` (a zero for an int entry
    of ``mapping``) and the other entries as they are, with no zeros made for the keys no term
    reached (``entry_cotangent`` reads a missing entry as zeros). Only the specialised
    backward passes of ``optimise/sparse_dicts.py`` call it."""
    entry = mapping[key]
    out = dict(cotangent) if isinstance(cotangent, dict) else {}
    old = out.get(key)
    out[key] = add(zeros_like(entry) if old is None else old,      # (a new array, as the
                   _entry_term(g, entry))                           # zeros' sum made)
    return out


def added_at(total, index, g, x):
    """``add(total, getitem_grad(g, x, index))`` for a sum of an array's picks that no other
    name holds: ``total`` (None: no pick yet, zeros of ``x``'s shape made now, in the dtype
    ``getitem_grad`` gives) with ``g`` added at ``index`` in place, and returned. ``index``
    picks each entry once (ints, slices). Only the specialised backward passes of
    ``optimise/picked_sums.py`` call it."""
    if total is None:
        total = np.zeros(np.shape(x), result_dtype(x, g))
    total[index] += g
    return total


def sequence_cotangent(found, sequence):
    """The cotangent of a list or tuple ``sequence`` from ``found``, its entries' cotangents
    by position (None where none was written): what adding each to the sequence's zeros
    entry by entry gives (``add(zeros_like(sequence), ...)``), made once. Linear in
    ``found``. An array (which generated code may read by rows where it could not tell it
    from a list) gets the sum of ``getitem_grad``'s, as in :func:`container_cotangent`.

    >>> sequence_cotangent([np.array([1.0, 2.0]), None, 0.5], [np.ones(2), 3, 1.5])
    [array([1., 2.]), 0.0, 0.5]
    """
    kind = type(sequence)
    if (kind is list or kind is tuple) and kind not in REGISTERED:    # the common case first
        return kind([_entry_cotangent(g, entry) for entry, g in zip(sequence, found)])
    if not is_container(sequence):   # an array read by its rows where code could not tell it
        return _placed_sum(found, range(len(found)), sequence)        # from a list
    return rebuild(sequence, [(key, _entry_cotangent(g, entry))
                              for (key, entry), g in zip(entries(sequence), found)])


def container_cotangent(found, container):
    """The cotangent of a container (a dict, list, tuple, named tuple) from ``found``, the
    cotangents of some of its entries by key (a sequence's by position, a named tuple's by
    field or position): what adding ``getitem_grad(g, container, key)`` for each to the
    container's zeros gives, made once (zeros for the entries not in ``found`` and for int
    entries). Linear in ``found``.

    An array (which generated code may read by constant keys where it could not tell it
    from a list) gets the sum of ``getitem_grad``'s.

    >>> container_cotangent({"w": np.array([1.0, 2.0])}, {"w": np.ones(2), "b": 0.5, "n": 3})
    {'w': array([1., 2.]), 'b': 0.0, 'n': 0.0}
    """
    if type(container) is dict:                  # the common case, keyed as found is
        out = {}
        for key, entry in container.items():
            g = found.get(key)
            if type(g) is np.ndarray and type(entry) is np.ndarray:
                dtype = g.dtype
                if dtype is entry.dtype and dtype.kind == "f" and g.shape == entry.shape:
                    out[key] = g                 # (what _entry_cotangent gives, without a call)
                    continue
            if type(entry) is float and (type(g) is float or type(g) is np.float64):
                out[key] = 0.0 + g               # a Python float's: add(zeros_like(entry), g)
            elif g is None and type(entry) is str:
                out[key] = None                  # text's: zeros_like(entry)
            else:
                out[key] = _entry_cotangent(g, entry)
        return out
    kind = type(container)
    if not is_container(container):
        return _placed_sum(found.values(), found.keys(), container)
    if _is_named_tuple(kind):                    # a named tuple (a recurrent state, once a
        fields = kind._fields                    # step): by field
        found = {fields[key] if isinstance(key, int) else key: g for key, g in found.items()}
        return kind(**{name: _entry_cotangent(found.get(name), entry)
                       for name, entry in zip(fields, container)})
    found = _by_entry_key(found, container)
    return rebuild(container, [(key, _entry_cotangent(found.get(key), entry))
                               for key, entry in entries(container)])


def attributes_cotangent(found, obj):
    """The cotangent of ``obj`` from ``found``, the cotangents of some of its attributes by
    name: what adding ``getattr_grad(g, obj, name)`` for each gives, made once (a named
    tuple or dataclass gets one of its own kind, any other object a dict of the attributes
    read but those holding an int). Linear in ``found``."""
    kind = type(obj)
    fields = PLAIN_FIELDS.get(kind)
    if fields is not None and fields.issuperset(found):      # a recurrent state's, a step
        return _named_tuple_cotangent(found, obj)
    plain = PLAIN_ATTRIBUTES.get(kind)
    if plain is None or not plain.issuperset(found):
        for name in found:
            refuse_computed(obj, name)
        if is_container(obj):
            _note_plain_fields(kind, found)
            return container_cotangent(found, obj)
        PLAIN_ATTRIBUTES.setdefault(kind, set()).update(found)
    out = {}
    for name, g in found.items():
        value = getattr(obj, name)
        if value.dtype.kind not in "biu" if type(value) is np.ndarray else not is_integer(value):
            out[name] = g                 # (an int attribute: a constant, no cotangent)
    return out


def attributes_cotangent_transpose(c, found, obj):
    """The transpose of :func:`attributes_cotangent` in ``found``."""
    if is_container(obj):
        return container_cotangent_transpose(c, found, obj)
    theirs = c if isinstance(c, dict) else {}
    return {name: None if g is None or is_integer(getattr(obj, name)) or theirs.get(name) is None
            else unbroadcast(theirs[name], g) for name, g in found.items()}


def container_cotangent_transpose(c, found, container):
    """The transpose of :func:`container_cotangent` in ``found``: a dict like ``found`` with
    ``c``'s entry for each key summed to its ``found`` entry's shape (None where that was
    None, the container's entry an int, or ``c`` has none)."""
    if not is_container(container):              # an array: getitem_grad's transposes
        return {key: None if g is None or c is None else unbroadcast(c[key], g)
                for key, g in found.items()}
    theirs = entries_like(c, container) if c is not None else {}
    items = dict(entries(container))
    out = {}
    for original, g in found.items():
        key = _entry_key(original, container)
        part = theirs.get(key)
        out[original] = None if g is None or part is None or is_integer(items[key]) \
            else unbroadcast(part, g)
    return out


def _by_entry_key(found, container):
    """``found`` keyed as ``entries(container)`` keys its entries (a named tuple's by field)."""
    return {_entry_key(key, container): g for key, g in found.items()}


def _entry_key(key, container):
    """``key`` as ``entries(container)`` keys that entry (a named tuple's position: its field)."""
    if isinstance(container, tuple) and hasattr(container, "_fields") and isinstance(key, int):
        return container._fields[key]
    return key


def _named_tuple_cotangent(found, container):
    """:func:`container_cotangent` of a named tuple of a class in ``PLAIN_FIELDS`` (whose
    ``__new__`` takes the fields in order), ``found`` keyed by field."""
    cotangents = []
    for name, entry in zip(container._fields, container):
        g = found.get(name)
        if (type(g) is np.ndarray and type(entry) is np.ndarray and g.dtype is entry.dtype
                and g.dtype.kind == "f" and g.shape == entry.shape):
            cotangents.append(g)                 # (what _entry_cotangent gives, without a call)
        elif type(entry) is int:
            cotangents.append(0.0)               # (zeros_like's, for an int: a constant)
        else:
            cotangents.append(_entry_cotangent(g, entry))
    return tuple.__new__(type(container), cotangents)


def _entry_cotangent(g, entry):
    """What ``add(zeros_like(entry), g)`` gives (zeros for None and for an int entry)."""
    if type(g) is np.ndarray and type(entry) is np.ndarray:
        dtype = g.dtype
        if g.shape == entry.shape and (dtype is entry.dtype or dtype == entry.dtype) \
                and dtype.kind == "f":
            return g                             # zeros + g is g: no new array needed
    elif type(g) is dict and type(entry) is dict and g.keys() == entry.keys():
        return {key: _entry_cotangent(g[key], value) for key, value in entry.items()}
    if g is None or is_integer(entry):
        return zeros_like(entry)
    return add(zeros_like(entry), g)


def sequence_cotangent_transpose(c, found, sequence):
    """The transpose of :func:`sequence_cotangent` in ``found``: ``c``'s entries (a list or
    tuple like ``sequence``), each summed to its ``found`` entry's shape, None where that was
    None or the sequence's entry an int."""
    return [None if g is None or is_integer(entry) else unbroadcast(ci, g)
            for ci, g, entry in zip(c, found, sequence)]


def picks_cotangent(terms, indices, container):
    """The cotangent of ``container`` from ``terms``, the cotangents of ``container[index]``
    for each of ``indices``: what adding ``getitem_grad(term, container, index)`` of each
    gives, made once. Linear in ``terms``.

    For a list or tuple an index may count from the end (``-1``) or be a slice (its term the
    sequence of the cotangents of the entries it picks, paired as ``zip`` pairs them), and two
    indices may pick one entry (``-1`` and ``2`` of three), whose terms add; any other
    container (a named tuple, a dict keyed ``-1``) gets the sum of ``getitem_grad``'s. A None
    term is a zero.

    >>> picks_cotangent((np.ones(2), [2.0, 3.0]), (-1, slice(None, -1)), [1.0, 1.0, np.ones(2)])
    [2.0, 3.0, array([1., 1.])]
    """
    kind = type(container)
    if (kind is not list and kind is not tuple) or kind in REGISTERED:
        return _placed_sum(terms, indices, container)
    found = [None] * len(container)
    positions = range(len(container))
    for term, index in zip(terms, indices):
        if term is None:
            continue
        if type(index) is slice:
            for position, part in zip(positions[index], term):
                found[position] = part if found[position] is None else add(found[position], part)
        else:
            position = positions[index]
            found[position] = term if found[position] is None else add(found[position], term)
    return sequence_cotangent(found, container)


def _placed_sum(terms, indices, container):
    """The sum of ``getitem_grad(term, container, index)`` of each term (a None term is a
    zero), the container's zeros where there is none."""
    total = None
    for term, index in zip(terms, indices):
        if term is not None:
            total = add(total, getitem_grad(term, container, index))
    return zeros_like(container) if total is None else total


def picks_cotangent_transpose(c, terms, indices, container):
    """The transpose of :func:`picks_cotangent` in ``terms``: for each index, ``c``'s entry
    there (a slice's: its entries) summed to the term's shape; None where the term was None,
    the container's entry an int, or ``c`` has none."""
    out = []
    for term, index in zip(terms, indices):
        if term is None or c is None:
            out.append(None)
        elif type(index) is slice and isinstance(container, (list, tuple)):
            out.append(type(term)(_transposed(part, g, entry) for part, g, entry
                                  in zip(c[index], term, container[index])))
        else:
            out.append(_transposed(c[index], term, container[index]))
    return tuple(out)


def _transposed(part, g, entry):
    return None if g is None or part is None or is_integer(entry) else unbroadcast(part, g)

"""Cotangents of containers: tuples, lists, dicts, named tuples, dataclasses and the
classes registered with :func:`register_pytree`.

The cotangent of a container is a container of the same kind with a
cotangent in each entry (``{"W": dW, "b": db}`` for ``{"W": W, "b": b}``).
:func:`entries` and :func:`rebuild` take a container apart and put one of
the same kind back together, so every other function here is written once
for all kinds.
"""

import collections
import copy
import dataclasses

import numpy as np

from .refusals import unsupported

REGISTERED: dict[type, tuple] = {}
"""class -> (fields, rebuild) of each class registered with :func:`register_pytree`."""


def register_pytree(cls, fields, rebuild=None):
    """Make objects of ``cls`` containers whose entries are the attributes ``fields``.

    Their gradients and tangents are then objects of ``cls`` too (as a
    dataclass's are), made by ``rebuild(obj, values)``: ``obj`` an object of
    the class and ``values`` a dict field -> entry. The default copies ``obj``
    (``copy.copy``) and sets the fields on the copy; the attributes that are
    not fields are constants, carried over as they are.
    """
    REGISTERED[cls] = (tuple(fields), rebuild or _copy_with)
    PLAIN_ATTRIBUTES.clear()             # (a class registered is a container from now on)
    PLAIN_FIELDS.clear()


PLAIN_ATTRIBUTES: dict[type, set] = {}
"""class -> the attributes found to be plain (not computed by a property) in objects of a
class that is no container (``container_cotangents.attributes_cotangent``'s checks, made once)."""

PLAIN_FIELDS: dict[type, set] = {}
"""named tuple class -> the fields found plain (no property of a subclass computes them)
in its objects (``container_cotangents.attributes_cotangent``'s checks, made once)."""


def _copy_with(obj, values):
    new = copy.copy(obj)
    for name, value in values.items():
        setattr(new, name, value)
    return new


_NOT_CONTAINERS = frozenset({np.ndarray, float, int, bool, str, type(None), np.float64,
                             np.float32})


def is_container(value):
    kind = type(value)
    if kind in _NOT_CONTAINERS:                 # the common leaves, in one look-up
        return False
    return isinstance(value, (tuple, list, dict)) or kind in REGISTERED or (
        hasattr(kind, "__dataclass_fields__") and not isinstance(value, type))


def entries(value):
    """The (key, entry) pairs of a container, in its own order."""
    registered = REGISTERED.get(type(value))
    if registered is not None:
        return [(name, getattr(value, name)) for name in registered[0]]
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, tuple) and hasattr(value, "_fields"):      # a named tuple: by field
        return list(zip(value._fields, value))
    if isinstance(value, (tuple, list)):
        return list(enumerate(value))
    return [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]


def entries_like(other, like):
    """``other``'s entries keyed as ``like``'s are (a dict): by position when both are
    sequences -- a named tuple's cotangent may meet a plain tuple's, whose keys are
    positions, not field names -- and by key otherwise."""
    if isinstance(other, (tuple, list)) and isinstance(like, (tuple, list)):
        keys = [k for k, _ in entries(like)]
        return dict(zip(keys, other))
    return dict(entries(other))


def rebuild(like, pairs):
    """A container of the same kind as ``like`` holding ``pairs`` (key, entry)."""
    if isinstance(like, dict):
        if type(like) is dict:
            return dict(pairs)
        if isinstance(like, collections.defaultdict):     # (its factory comes first)
            return type(like)(like.default_factory, pairs)
        return type(like)(dict(pairs))       # (a Counter counts the pairs of an iterable)
    if isinstance(like, tuple) and hasattr(like, "_fields"):      # a named tuple
        return type(like)(**dict(pairs))
    values = [v for _, v in pairs]
    if isinstance(like, (tuple, list)):
        return type(like)(values)
    registered = REGISTERED.get(type(like))
    if registered is not None:
        return registered[1](like, dict(pairs))
    return dataclasses.replace(like, **dict(pairs))


def replace_entry(value, key, new, fill):
    """``value``'s kind with ``new`` at ``key`` and ``fill(entry)`` everywhere else.

    A named tuple's entries may be named by position too.
    """
    if isinstance(value, tuple) and hasattr(value, "_fields") and isinstance(key, int):
        key = value._fields[key]
    return rebuild(value, [(k, new if k == key else fill(v)) for k, v in entries(value)])


def map_leaves(fn, value, *others):
    """``fn`` applied to every non-container entry (and the matching entries of ``others``)."""
    if is_container(value):
        theirs = [entries_like(o, value) if o is not None else {} for o in others]
        return rebuild(value, [(k, map_leaves(fn, v, *(t.get(k) for t in theirs)))
                               for k, v in entries(value)])
    return fn(value, *others)


def leaves(value):
    """The non-container entries of ``value``, depth first."""
    if is_container(value):
        return [leaf for _, v in entries(value) for leaf in leaves(v)]
    return [value]


_ABSENT = object()


def saved_entry(mapping, key):
    """What ``mapping[key] = ...`` is about to overwrite (a marker if the key is new)."""
    return mapping.get(key, _ABSENT)


def restored_entry(mapping, key, old):
    """A copy of ``mapping`` as it was before ``mapping[key]`` was written."""
    mapping = dict(mapping)
    if old is _ABSENT:
        mapping.pop(key, None)
    else:
        mapping[key] = old
    return mapping


def entry_cotangent(cotangent, key, like):
    """``cotangent[key]``, or zeros shaped like ``like`` when no gradient reached that key."""
    value = cotangent.get(key) if isinstance(cotangent, dict) else None
    if value is None:
        from .accumulate import zeros_like      # (accumulate imports this module)
        return zeros_like(like)
    return value


def without_entry(cotangent, key):
    """A copy of a dict's cotangent without ``key`` (overwritten entries get no gradient)."""
    cotangent = dict(cotangent) if isinstance(cotangent, dict) else {}
    cotangent.pop(key, None)
    return cotangent


# -- what the builtins of containers select (constants: the derivative follows the
# entries they pick, through subscripts) ------------------------------------------------

def sequence_length(items):
    """``len(items)`` for a loop ``for x in items`` over an argument; a dict there is refused
    (srctrans compiled the loop to read ``items`` by position)."""
    if isinstance(items, dict):
        unsupported("`for k in d` over a dict passed in, when the loop does not read d[k]",
                    "write `for k in d.keys()` (or `for k, v in d.items()`, `for k in sorted(d)`)")
    return len(items)


def keys_of(mapping):
    """``list(mapping)`` for a dict (``d.keys()``, ``d.values()``, ``dict(d)``, ``sorted(d)``);
    anything else is refused, since srctrans wrote the call for a dict."""
    if not isinstance(mapping, dict):
        unsupported(f"a dict method or dict(...) of a {type(mapping).__name__}",
                    "for pairs, write dict(zip(keys, values)); for another kind of object, "
                    "read its entries by index or attribute")
    return list(mapping)


def has_key(mapping, key):
    """``key in mapping`` for a dict (``d.get(key, default)``); anything else is refused."""
    if not isinstance(mapping, dict):
        keys_of(mapping)                           # refuses it, saying why
    return key in mapping


def sort_order(items, key=None, reverse=False):
    """The positions of ``items`` in the order ``sorted(items, key=key, reverse=reverse)``
    puts them (stable, as ``sorted``): ``sorted(xs)`` is ``[xs[i] for i in sort_order(xs)]``."""
    def rank(i):
        return items[i] if key is None else key(items[i])
    return sorted(range(len(items)), key=rank, reverse=reverse)


def best_index(items, key, largest):
    """The position of the item ``max(items, key=key)`` (``largest``) or ``min`` returns:
    the first of the best, as Python's."""
    return (max if largest else min)(range(len(items)), key=lambda i: key(items[i]))


def record(kind, values, attributes=None):
    """``kind(*values)``: a dataclass, a named tuple, or an object of a class whose
    ``__init__`` only stores its parameters (``attributes``: the attribute each value is
    stored in) that the differentiated function makes (srctrans writes ``Params(w, b=x)``
    as ``rt.record(Params, [w, x])``)."""
    return kind(*values)


def record_fields(g, like, attributes=None):
    """The cotangents of the fields of ``like`` (a record :func:`record` made) held by its
    cotangent ``g`` (one of its kind, a dict of some fields or attributes, or None): a
    list, in field order, zeros for a field without one."""
    if type(g) is type(like) and attributes is None and hasattr(type(like), "_fields") \
            and type(None) not in map(type, g):      # a named tuple's own cotangent (its
        return list(g)                               # recurrent state's, once a step)
    if attributes is not None:                         # a plain object: by attribute
        found = {} if g is None else g if isinstance(g, dict) else {
            name: getattr(g, name, None) for name in attributes}
        fields = [(name, getattr(like, name)) for name in attributes]
    else:
        found = {} if g is None else g if isinstance(g, dict) else dict(entries_like(g, like))
        fields = entries(like)
    cotangents = [found.get(name) for name, _ in fields]
    if any(c is None for c in cotangents):
        from .accumulate import zeros_like             # (accumulate imports this module)
        cotangents = [zeros_like(value) if c is None else c
                      for c, (_, value) in zip(cotangents, fields)]
    return cotangents


def record_fields_transpose(c, like, attributes=None):
    """The transpose of ``g -> record_fields(g, like, attributes)``: the cotangents ``c`` (a
    list, in field order) as one of ``like``'s kind (a plain object's: a dict of them)."""
    if attributes is not None:
        return dict(zip(attributes, c))
    return rebuild(like, list(zip([name for name, _ in entries(like)], c)))

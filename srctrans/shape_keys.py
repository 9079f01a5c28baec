"""Shape keys: what the shapes inside a function can depend on in one call.

Requires: a call's arguments (and the non-local values its function reads).
Guarantees: :func:`shape_key` is equal for two calls exactly when the code
specialised for one (``instances.Instance.for_call``) is right for the other, or
None when a call cannot be keyed (it runs the generic code); :func:`args_key`
and :func:`key_part` are the narrower keys of arrays and numbers alone that
the JVP's and HVP's short paths test, :func:`guard_key` the key the gradient's
short path tests (``srctrans.repeat``).
"""

import inspect
import types

import numpy as np

from srctrans.runtime import objects
from srctrans.runtime.containers import entries, is_container


def shape_key(fn, args, kwargs, data_names, float_values=False, masks=False, value_floats=()):
    """What the shapes inside ``fn`` can depend on in this call, or None if not simple.

    Array arguments contribute their shapes (an int or bool array its kind too: code
    specialised for float arrays reads them without ``1.0 *``); ints, bools, strings and None
    their values (a shape may be computed from them); floats their type, or
    their value when ``float_values`` (the function turns numbers into ints,
    so a float may decide a shape), or when they are in the arguments named
    ``value_floats`` (a branch compares them). The non-local values the function reads
    count as arguments. With ``masks`` (the function indexes by values read
    from its arguments: ``analyse.indices``), a call whose arguments hold a
    boolean array or a 0-d integer array has no key: the count of a mask's
    true entries, or the value of a 0-d index, may decide a shape.
    """
    key = []
    by_value = value_positions(fn, value_floats, len(args)) if value_floats else ()
    for position, value in enumerate(args):
        part = _spec_part(value, float_values or position in by_value, masks=masks)
        if part is None:
            return None
        key.append(part)
    for name in sorted(kwargs) if kwargs else ():
        part = _spec_part(kwargs[name], float_values or name in value_floats, masks=masks)
        if part is None:
            return None
        key.append((name, part))
    for name, value in _keyed_data(fn, data_names):
        part = _spec_part(value) if type(value) is np.ndarray else key_part(value)
        if part is None:
            return None
        key.append((name, part))
    return tuple(key)


def value_positions(fn, names, count):
    """The positions, among a call's ``count`` positional arguments (a bound method's object
    first), of ``fn``'s parameters ``names``: those of the ``*args`` parameter too."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    positions = {i for i, name in enumerate(positional) if name in names}
    if code.co_flags & inspect.CO_VARARGS and \
            code.co_varnames[code.co_argcount + code.co_kwonlyargcount] in names:
        positions.update(range(len(positional), count))
    return positions


def holds_mask(args, kwargs=None):
    """Whether an argument holds (is, or has as an entry or attribute at any depth a shape
    key reads) a boolean array or a 0-d integer array: values whose shape does not fix the
    shape an index by them picks."""
    return any(map(_holds_mask, args)) or bool(kwargs) and any(map(_holds_mask, kwargs.values()))


def _holds_mask(value, depth=0):
    if type(value) is np.ndarray:
        return _is_mask(value)
    if key_part(value) is not None or depth >= DEEPEST_KEY:
        return False
    pairs = keyed_entries(value)
    return pairs is not None and any(_holds_mask(entry, depth + 1) for _, entry in pairs)


def _is_mask(array):
    """A boolean array, or a 0-d integer array (an index whose shape does not fix what it
    picks)."""
    return array.dtype.kind == "b" or array.ndim == 0 and array.dtype.kind in "iu"


def keyed_data(fn, data_names):
    """Whether some of the non-local values ``fn`` reads (``data_names``) are part of its
    shape key (:func:`shape_key`): any but modules, functions and classes."""
    return any(True for _ in _keyed_data(fn, data_names))


def reads_outside_data(fn, data_names):
    """Whether ``fn`` reads as values names of its globals or closure (``data_names``: a
    guard, which tests the arguments alone, would miss their rebinding); the modules it
    imports itself (``import math`` in its body) are its own."""
    code, namespace = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or namespace is None:
        return bool(data_names)
    return any(name in namespace or name in code.co_freevars for name in data_names)


def _keyed_data(fn, data_names):
    """``(name, value)`` of the non-local values ``fn`` reads that are part of its shape key."""
    if not data_names:
        return
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    for name in data_names:
        value = closure[name].cell_contents if name in closure else fn.__globals__.get(name)
        if not isinstance(value, (types.ModuleType, types.FunctionType, type)):
            yield name, value


DEEPEST_KEY = 6         # containers and objects nested deeper give no key (a cycle, say)


def keyed_entries(value):
    """A container's ``(key, entry)`` pairs in its own order, or a plain object's attributes
    sorted by name (a model's ``self``); None for any other value. A shape key holds their
    parts in this order."""
    if is_container(value):
        return entries(value)
    if objects.is_plain_object(value):
        return sorted(objects.attributes(value).items())
    return None


def _spec_part(value, float_values=False, depth=0, masks=False):
    """One argument's part of a shape key for specialising: as :func:`key_part` (a float's
    value too with ``float_values``), and for a container (a dict, list or tuple, a named
    tuple, a dataclass) or a plain object (a model's ``self``) its class and, in order, each
    entry's or attribute's part; None when one is not simple (a function, say), or, with
    ``masks``, a mask (:func:`holds_mask`)."""
    if float_values and isinstance(value, float):
        return (type(value), value)
    if type(value) is np.ndarray and value.dtype.kind in "iub":
        if masks and _is_mask(value):
            return None
        return (value.shape, value.dtype.kind)    # (what 1.0 * it is depends on its kind)
    part = key_part(value)
    if part is not None:
        return part
    pairs = keyed_entries(value) if depth < DEEPEST_KEY else None
    if pairs is None:
        return None
    parts = []
    for name, entry in pairs:
        part = _spec_part(entry, float_values, depth + 1, masks)
        if part is None:
            return None
        parts.append((name, part))
    return (type(value), tuple(parts))


def array_part_shape(part):
    """The shape an array's part of a shape key holds: the part itself for a float array,
    the first entry of ``(shape, kind)`` for an int or bool array (:func:`_spec_part`); None
    for a complex array's ``(shape, "complex")`` (complex values run the generic code)."""
    if part and type(part[-1]) is str:
        return None if part[-1] == "complex" else part[0]
    return part


def guard_key(args, by_value=()):
    """The positional arguments' parts of a shape key as the short path's guard tests them
    (containers and objects by their entries, as :func:`shape_key`; floats by value at the
    positions ``by_value`` (:func:`value_positions`)), or None."""
    key = [_spec_part(value, position in by_value) for position, value in enumerate(args)]
    return None if None in key else key


def args_key(args, float_values=False):
    """The positional arguments' part of a shape key (a list), or None if one is not simple."""
    if float_values:
        key = [value.shape if type(value) is np.ndarray and value.dtype.kind != "c" else
               (type(value), value) if isinstance(value, float) else key_part(value)
               for value in args]
    else:
        key = [value.shape if type(value) is np.ndarray and value.dtype.kind != "c" else
               key_part(value) for value in args]
    return None if None in key else key


def key_part(value):
    """One argument's part of a shape key: a shape, a type, or (type, value); None if not simple."""
    kind = type(value)
    if kind is np.ndarray:        # complex arrays run other code (they are not specialised)
        return value.shape if value.dtype.kind != "c" else (value.shape, "complex")
    if kind in (float, np.float64, np.float32, np.float16, complex, np.complex128, np.complex64):
        return kind
    if kind in (int, bool, str, type(None)) or isinstance(value, (np.integer, np.bool_)):
        return (kind, value)
    return None

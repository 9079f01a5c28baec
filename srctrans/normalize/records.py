"""Dataclasses and named tuples made inside the differentiated function.

Requires: a call node and the live object its function denotes. Guarantees:
:func:`record_fields` gives, for a call that makes a record -- an instance of a
dataclass whose fields are all set by its generated ``__init__`` (no
``__post_init__``), or of a named tuple class -- the expressions of its fields in
field order (arguments by position and keyword, defaults as constants), which ANF
writes as ``rt.record(Kind, [field, ...])``: a container whose derivative is its
fields' (``rules/container_helpers.py``). Any other call, or a record call srctrans
cannot bind statically (``*args``, a default made by a factory or that is not a
number, string, bool or None), gives None; a call of another class of the user's is
refused where it is differentiated.
"""

import dataclasses
import numbers

import gast


def record_fields(kind, call):
    """The field expressions of ``call`` (of ``kind``), in field order, or None."""
    names, defaults = _fields(kind)
    if names is None or any(isinstance(a, gast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords) or len(call.args) > len(names):
        return None
    given = dict(zip(names, call.args))
    for keyword in call.keywords:
        if keyword.arg not in names or keyword.arg in given:
            return None                             # Python's TypeError: let the call raise it
        given[keyword.arg] = keyword.value
    fields = []
    for name in names:
        if name in given:
            fields.append(given[name])
        elif name in defaults and _is_literal(defaults[name]):
            fields.append(gast.Constant(defaults[name], None))
        else:
            return None
    return fields


def _fields(kind):
    """(field names, {name: default}) of a record class, or (None, None)."""
    if not isinstance(kind, type):
        return None, None
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):          # a named tuple
        return list(kind._fields), dict(getattr(kind, "_field_defaults", {}))
    if dataclasses.is_dataclass(kind) and not hasattr(kind, "__post_init__"):
        fields = dataclasses.fields(kind)
        if not all(f.init for f in fields) or not kind.__dataclass_params__.init:
            return None, None
        defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
        return [f.name for f in fields], defaults
    return None, None


def _is_literal(value):
    return value is None or isinstance(value, (bool, str, numbers.Number)) and not \
        hasattr(value, "shape")

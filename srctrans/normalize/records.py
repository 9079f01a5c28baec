"""Dataclasses, named tuples and plain classes of the user's made inside the
differentiated function.

Requires: a call node and the live object its function denotes. Guarantees:
:func:`record_fields` gives, for a call that makes a record -- an instance of a
dataclass whose fields are all set by its generated ``__init__`` (no
``__post_init__``), of a named tuple class, or of a class whose ``__init__`` only
stores its parameters in attributes (``self.W, self.b = W, b``) -- the expressions of
its fields in order (arguments by position and keyword, defaults as constants) and,
for a plain class, the attribute each is stored in; ANF writes
``rt.record(Kind, [field, ...], attributes)``: a value whose derivative is its fields'
(``rules/container_helpers.py``; a plain object's cotangent is the dict of its
attributes' cotangents, as for an object argument). Any other call, or a record call
srctrans cannot bind statically (``*args``, a default made by a factory or that is not
a number, string, bool or None), gives None; a call of another class of the user's is
refused where it is differentiated.
"""

import dataclasses
import inspect
import numbers
import textwrap

import gast


def record_fields(kind, call):
    """``(field expressions of call, attribute names or None)``, in field order, or None."""
    names, defaults = _fields(kind)
    attributes = None
    if names is None:
        names, defaults, attributes = _stored_parameters(kind)
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
    return fields, attributes


def _stored_parameters(kind):
    """(parameter names, {name: default}, the attribute each is stored in) of a class whose
    ``__init__`` only stores its parameters, each in an attribute, or (None, None, None)."""
    init = vars(kind).get("__init__") if isinstance(kind, type) else None
    if not inspect.isfunction(init) or any(
            "__init__" in vars(base) or "__new__" in vars(base) or "__setattr__" in vars(base)
            for base in kind.__mro__[1:-1]) or "__new__" in vars(kind) \
            or "__setattr__" in vars(kind) or "__slots__" in vars(kind):
        return None, None, None
    try:
        node = gast.parse(textwrap.dedent(inspect.getsource(init))).body[0]
    except (OSError, TypeError, SyntaxError):
        return None, None, None
    parameters = list(inspect.signature(init).parameters.values())
    if not parameters or any(p.kind not in (p.POSITIONAL_OR_KEYWORD,) for p in parameters):
        return None, None, None
    this, names = parameters[0].name, [p.name for p in parameters[1:]]
    stored = {}
    for stmt in node.body:
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant):
            continue                                        # a docstring
        pairs = _stored(stmt, this)
        if pairs is None:
            return None, None, None
        for attribute, name in pairs:
            if name not in names or name in stored:
                return None, None, None
            stored[name] = attribute
    if set(stored) != set(names):
        return None, None, None
    defaults = {p.name: p.default for p in parameters[1:] if p.default is not p.empty}
    return names, defaults, tuple(stored[name] for name in names)


def _stored(stmt, this):
    """``[(attribute, parameter)]`` for ``self.a = p`` or ``self.a, self.b = p, q``, or None."""
    if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    targets = target.elts if isinstance(target, gast.Tuple) else [target]
    values = value.elts if isinstance(value, gast.Tuple) and isinstance(target, gast.Tuple) \
        else [value]
    if len(targets) != len(values):
        return None
    pairs = []
    for t, v in zip(targets, values):
        if not (isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name)
                and t.value.id == this and isinstance(v, gast.Name)):
            return None
        pairs.append((t.attr, v.id))
    return pairs


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

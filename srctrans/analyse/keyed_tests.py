"""Which ``if`` tests a call's shape key decides.

Requires: forward statements in A-normal form and the function's parameter names.
Guarantees: :func:`keyed_tests` returns the names of tests whose value is the same for
every call with the same shape key (``shape_keys.shape_key``), so the branch an ``if``
on one of them takes is too, and the names it assigns have the shapes of straight-line
code (``specialise.path_dependent_names`` does not count them as path dependent):

- ``rt.has_class(v, C)``, the test a method call through ``self`` (or a call through any
  object) desugars to: ``v``'s class is part of the key when ``v`` is an argument or a
  value read out of one (an attribute, an entry at a constant key: their classes are
  keyed too);
- ``rt.has_key(d, "k")``, the test ``d.get("k", default)`` desugars to: a dict argument's
  keys are part of the key, and so are those of its copy (``rt.dict_copy``) when every
  write into it is at a constant key;
- ``v is None``, ``v is not None``: a None argument (or entry, or attribute) is keyed as
  itself, anything else as something else;
- ``len(args) > 1``, ``v.ndim != 2`` (a comparison with an int of the length of the
  ``*args`` tuple, or of an argument's number of axes): the number of arguments a call
  passes and an array's shape are part of the key, when nothing changes them in place.
  (Not ``len(v)`` of any argument: an object's ``__len__`` may compute it from floats,
  whose values the key leaves out.)
"""

import gast

from srctrans import annotations as anno
from srctrans.analyse.indices import assigned_values
from srctrans.analyse.values import greatest_closed
from srctrans.annotations import Anno
from srctrans.nodes import changed_in_place, in_runtime, int_literal
from srctrans.treewalk import walk

_KEYED_TESTS = ("has_class", "has_key")


def keyed_tests(statements, parameters, vararg=None):
    """The names of ``statements`` assigned a test the shape key decides (see the module);
    ``vararg`` names the ``*args`` parameter, if any."""
    def saves(node):                       # the tape's pushes, pops and placeholders
        return anno.get(node, Anno.SAVES) is not None

    block = gast.Module(list(statements), [])
    values = assigned_values(block, skip=saves)
    written = set()
    for node in walk(block):
        changed = None if saves(node) else changed_in_place(node)
        if changed is not None and not (isinstance(node, gast.Subscript)
                                        and isinstance(node.slice, gast.Constant)):
            written.add(changed)
    everything = {**{p: [] for p in parameters}, **values}
    read = greatest_closed(everything, set(everything), _read_from)
    sizes = {name for name, assigned in values.items()
             if len(assigned) == 1 and _size_of(assigned[0], read, written, vararg)}
    return {name for name, assigned in values.items()
            if len(assigned) == 1 and _keyed_test(assigned[0], read, written, sizes)}


def _read_from(value, names):
    """An argument, a value read out of one, or a dict argument's copy (keys included)."""
    if isinstance(value, gast.Call) and _helper(value) == "dict_copy" and len(value.args) == 1:
        value = value.args[0]
    while isinstance(value, gast.Attribute) or isinstance(value, gast.Subscript) \
            and isinstance(value.slice, gast.Constant):      # (a computed index may pick
        value = value.value                                   # an entry of another class)
    return isinstance(value, gast.Name) and value.id in names


_ORDER = (gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Eq, gast.NotEq)


def _size_of(value, read, written, vararg):
    """Whether ``value`` is ``len(args)`` of the ``*args`` parameter ``vararg``, or
    ``v.ndim`` of an argument (or a value read from one), unchanged in place."""
    if isinstance(value, gast.Attribute) and value.attr == "ndim":
        subject = value.value
        return (isinstance(subject, gast.Name) and subject.id not in written
                and _read_from(subject, read))
    return (isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is len
            and len(value.args) == 1 and not value.keywords
            and isinstance(value.args[0], gast.Name) and value.args[0].id == vararg
            and vararg not in written)


def _keyed_test(value, read, written, sizes):
    if (isinstance(value, gast.Compare) and len(value.ops) == 1
            and isinstance(value.ops[0], _ORDER) and int_literal(value.comparators[0]) is not None):
        return isinstance(value.left, gast.Name) and value.left.id in sizes   # len(args) > 1
    if (isinstance(value, gast.Compare) and len(value.ops) == 1
            and isinstance(value.ops[0], (gast.Is, gast.IsNot))
            and isinstance(value.comparators[0], gast.Constant)
            and value.comparators[0].value is None):
        return _read_from(value.left, read)          # None is keyed as itself
    helper = _helper(value) if isinstance(value, gast.Call) else None
    if helper not in _KEYED_TESTS or len(value.args) != 2 or value.keywords:
        return False
    subject, what = value.args
    if not _read_from(subject, read):
        return False
    if helper == "has_key":
        return (isinstance(what, gast.Constant) and isinstance(subject, gast.Name)
                and subject.id not in written)
    return True


def _helper(call):
    """The name of the runtime helper a call calls (``rt.has_key`` -> ``has_key``), or None."""
    callee = anno.get(call, Anno.CALLEE)
    return callee.__name__ if in_runtime(callee) else None

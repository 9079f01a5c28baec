"""Which ``if`` tests a call's shape key decides.

Requires: forward statements in A-normal form and the function's parameter names.
Guarantees: :func:`keyed_tests` returns the names of tests whose value is the same for
every call with the same shape key (``shape_keys.shape_key``), so the branch an ``if``
on one of them takes is too, and the names it assigns have the shapes of straight-line
code (``fixed_shapes.path_dependent_names`` does not count them as path dependent):

- ``rt.has_class(v, C)``, the test a method call through ``self`` (or a call through any
  object) desugars to: ``v``'s class is part of the key when ``v`` is an argument or a
  value read out of one (an attribute, an entry at a constant key: their classes are
  keyed too); so are ``rt.has_method(v, C, "m")`` and ``rt.holds_own(v, C, "m")``, which
  also test whether ``v`` holds an attribute ``m`` of its own (a plain object's key holds
  the names of its attributes);
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
- ``clip > 0``, ``mode == "train"``, ``a < b``: a comparison of arguments (or values read
  out of them, unchanged in place) with each other or with literals. Their values decide
  it: an int's, bool's or string's are part of the key, and a float's is when the key holds
  the floats of the argument it comes from (``shape_keys.shape_key``'s ``value_floats``:
  :func:`keyed_tests` names those arguments). An array's value never is: a call decides
  such a test only when every operand is a number the key holds by value
  (``measuring.measure`` leaves the others out).
"""

import gast

from srctrans import annotations as anno
from srctrans.analyse.indices import assigned_values
from srctrans.analyse.values import greatest_closed
from srctrans.annotations import Anno
from srctrans.nodes import changed_in_place, in_runtime, int_literal
from srctrans.treewalk import walk, walk_names

_KEYED_TESTS = ("has_class", "has_method", "holds_own", "has_key")


def keyed_tests(statements, parameters, vararg=None, selected=()):
    """``(tests, roots)``: the names of ``statements`` assigned a test the shape key decides
    (see the module), each with the operands a call's values must hold by value for the key
    to decide it (none for a test of classes, keys, None or sizes), as the paths they are
    read by from the parameters (:func:`_path`); and the parameters those of the tests of
    ``if`` statements come from (whose floats the key must hold by value).

    ``vararg`` names the ``*args`` parameter, if any; the ``selected`` parameters
    (differentiated) are never held by value (a scalar function's ``if x > 0`` would get a
    build for every ``x``)."""
    def saves(node):                       # the tape's pushes, pops and placeholders
        return anno.get(node, Anno.SAVES) is not None

    block = gast.Module(list(statements), [])
    values = assigned_values(block, skip=saves)
    written, changed = set(), set()      # changed: any entry or attribute written too
    for node in walk(block):
        name = None if saves(node) else changed_in_place(node)
        if name is None and isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            changed.add(node.value.id)
        if name is not None:
            changed.add(name)
            if not (isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant)):
                written.add(name)
    everything = {**{p: [] for p in parameters}, **values}
    read = greatest_closed(everything, set(everything), _read_from)
    sizes = {name for name, assigned in values.items()
             if len(assigned) == 1 and _size_of(assigned[0], read, written, vararg)}
    def operands_of(value):
        """The operands a test ``value`` compares by value (() for a test of shapes), or
        None when it is no keyed test."""
        if isinstance(value, gast.Name):
            return tests.get(value.id)                     # a copy of a keyed test
        if isinstance(value, gast.Constant) and type(value.value) is bool:
            return ()
        if _keyed_test(value, read, written, sizes):
            return ()
        operands = _compared_values(value, read, changed)
        paths = [_path(o, values, parameters, changed) for o in operands or ()]
        if not operands or None in paths or any(path[0] in selected for path in paths):
            return None
        return tuple(paths)

    tests = {}
    assignments = _assignments(statements, saves)
    grown = True
    while grown:         # a copy of a keyed test, or a name each branch gives one, is keyed
        grown = False
        for name, places in assignments.items():
            if name in tests:
                continue
            operands = _combined(places, tests, operands_of, len(values.get(name, ())) == 1)
            if operands is not None:
                tests[name] = operands
                grown = True
    # (the floats an if's test reads: a keyed name no if reads needs none)
    decided = {node.test.id for node in walk(block)
               if isinstance(node, gast.If) and isinstance(node.test, gast.Name)}
    return tests, {path[0] for name, operands in tests.items() if name in decided
                   for path in operands}


def _combined(places, tests, operands_of, once):
    """The operands of the test a name holds, when every one of its assignments (``places``)
    gives a keyed test (``operands_of``), and, for a name assigned more than ``once``, they
    are outside loops and under ``if`` statements on keyed ``tests`` only: the branches the
    key decides then pick which (``a and b`` is ``a``, else ``b``, in ANF); else None."""
    operands = []
    for value, conditions, in_loop in places:
        if value is None or not once and (in_loop or not all(c in tests for c in conditions)):
            return None
        found = operands_of(value)
        if found is None:
            return None
        operands.extend(found)
        if not once:                        # which assignment ran: their tests decide
            operands.extend(o for c in conditions for o in tests[c])
    return tuple(dict.fromkeys(operands))


def _assignments(statements, skip):
    """Each name's assignments in ``statements``: ``(value, the names of the tests of the
    ifs around it, whether a loop is around it)``; ``value`` None for a store that is not
    ``name = value``."""
    found = {}
    pending = [(stmt, (), False) for stmt in statements]
    while pending:
        stmt, conditions, in_loop = pending.pop()
        if skip(stmt):
            continue
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name):
            found.setdefault(stmt.targets[0].id, []).append((stmt.value, conditions, in_loop))
        elif isinstance(stmt, gast.If):
            inner = conditions + ((stmt.test.id,) if isinstance(stmt.test, gast.Name) else ("",))
            pending.extend((s, inner, in_loop) for s in stmt.body + stmt.orelse)
        elif isinstance(stmt, (gast.For, gast.While)):
            stores = walk_names(stmt.target) \
                if isinstance(stmt, gast.For) else []
            for node in stores:
                found.setdefault(node.id, []).append((None, conditions, True))
            pending.extend((s, conditions, True) for s in stmt.body + stmt.orelse)
        else:
            for node in walk(stmt):
                if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                    found.setdefault(node.id, []).append((None, conditions, in_loop))
    return found


def _compared_values(value, read, changed):
    """The names ``value`` compares, when it is a comparison of names read from arguments
    (none ``changed`` in place) with each other or with literals; else None."""
    if not (isinstance(value, gast.Compare) and len(value.ops) == 1
            and isinstance(value.ops[0], _ORDER)):
        return None
    names = []
    for operand in (value.left, value.comparators[0]):
        if isinstance(operand, gast.Name) and operand.id in read and operand.id not in changed:
            names.append(operand.id)
        elif not (isinstance(operand, gast.Constant) or int_literal(operand) is not None):
            return None
    return tuple(names) or None


def _path(name, values, parameters, changed):
    """``(parameter, (step, ...))``: how ``name`` is read from a parameter, through names
    assigned once, none of them ``changed`` in place, each step an attribute
    (``("attr", "clip")``) or a constant entry (``("item", "clip")``) in the order read;
    None when it is not read so."""
    steps = []                                     # the last read first
    for _ in range(len(values) + 1):
        if name in changed:
            return None
        if name in parameters:
            return name, tuple(steps)
        assigned = values.get(name, ())
        if len(assigned) != 1:
            return None
        value, read = _read_out(assigned[0])
        if not isinstance(value, gast.Name):
            return None
        steps[:0] = read
        name = value.id
    return None


def _read_from(value, names):
    """An argument, a value read out of one, or a dict argument's copy (keys included)."""
    read, _ = _read_out(value)
    return isinstance(read, gast.Name) and read.id in names


def _read_out(value):
    """``(what value reads out of, steps)``: through a dict's copy, attributes and entries at
    constant keys (a computed index may pick an entry of another class) to the value they
    start from; the steps (``("attr", "clip")``, ``("item", "clip")``) in the order read."""
    if isinstance(value, gast.Call) and _helper(value) == "dict_copy" and len(value.args) == 1:
        value = value.args[0]
    steps = []
    while isinstance(value, gast.Attribute) or isinstance(value, gast.Subscript) \
            and isinstance(value.slice, gast.Constant):
        steps.append(("attr", value.attr) if isinstance(value, gast.Attribute)
                     else ("item", value.slice.value))
        value = value.value
    return value, steps[::-1]


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

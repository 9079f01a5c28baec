"""Which names certainly hold arrays or numbers (never tuples or lists).

Requires: a body in A-normal form with SSA names.
Guarantees: :func:`array_valued` returns names defined by arithmetic on an
array or number, by a NumPy function with a derivative rule, or by an array
method or ``.T``. Their cotangents add with ``+``; other cotangents (of
parameters, subscripts, unpacked values, results of user functions) may be
tuples and add through ``rt.add``.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.rules import METHODS, REGISTRY


def array_valued(function):
    """The set of names of ``function`` that certainly hold arrays or numbers."""
    known, doubtful = set(), set()
    for stmt in gast.walk(function):            # every assignment, nested ones too
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Name) and _is_array(stmt.value, known):
                known.add(target.id)
            else:
                doubtful.update(n.id for n in gast.walk(target) if isinstance(n, gast.Name))
    return known - doubtful


def _is_array(value, known):
    if isinstance(value, gast.Constant):
        return isinstance(value.value, (int, float, complex))
    if isinstance(value, gast.Name):
        return value.id in known
    if isinstance(value, gast.BinOp):
        if not isinstance(value.op, (gast.Add, gast.Mult)):
            return True                 # only + and * also mean something for tuples and lists
        return _is_array(value.left, known) or _is_array(value.right, known)
    if isinstance(value, gast.UnaryOp):
        return True
    if isinstance(value, gast.Attribute):
        return value.attr == "T"
    if isinstance(value, gast.Call):
        callee = anno.get(value, Anno.CALLEE)
        if callee is None:
            return isinstance(value.func, gast.Attribute) and value.func.attr in METHODS
        return REGISTRY.lookup(callee) is not None
    return False

"""Which subscripts pick shapes that a call's shape key fixes.

Requires: a function in A-normal form whose ``for`` loops run over ranges.
Guarantees: :class:`Indexing` sorts the names a subscript's index reads into

- ``ints``: Python ints whatever the values: counters of ``range`` loops, ``len(...)``,
  a shape's entries (``x.shape[0]``, ``N, T, _ = x.shape``, ``x.ndim``, ``x.size``),
  int literals, and ``+ - * // %`` of those. An index or a slice bound among them picks
  the same shape on every call with the same shape key.
- ``bounds``: ``ints`` and those made from the parameters and their attributes
  (``stride``, ``self.H``, ``i * stride``). An int's value is part of the shape key, and
  an int attribute of an object is too, so a slice bound among them picks the same shape
  on every call with the key (an array as a bound is refused, see below).
- ``indices``: ``bounds``, and what is read from the parameters (``labels``,
  ``targets[t]``, ``i, j, r = ratings[k]``) or made of ints (``np.arange(N)``,
  ``np.argmax(z, axis=1)``). An int, or an int array, as an index picks a shape fixed by
  its own shape, which the key fixes; a boolean array (a mask) would not.

:meth:`Indexing.unfixed` names what in a subscript is none of these (the shape it picks
may depend on values); :meth:`Indexing.fed_callees` names the functions called with
arguments among ``indices`` alone. :attr:`Indexing.arguments_read` says whether a subscript the
function may be specialised with reads a value from its arguments; if so, the shape key
refuses calls whose arguments hold a boolean array or a 0-d integer array
(``shape_keys.shape_key``'s ``masks``), the values whose shapes the key does not fix.
"""

import types

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.analyse.values import greatest_closed
from srctrans.annotations import Anno
from srctrans.builds import callee_name
from srctrans.nodes import parameter_names
from srctrans.optimise.dce import reads_of
from srctrans.treewalk import walk

_INT_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)
_SHAPE_INTS = ("ndim", "size")
# calls whose result is an int array shaped by their arguments' shapes
_INT_ARRAYS = (np.argmax, np.argmin, np.argsort)


class Indexing:
    """The names of ``function`` a subscript may read and still pick a shape the key fixes."""

    def __init__(self, function):
        values = assigned_values(function)
        self._parameters = set(parameter_names(function))
        everything = {**{p: [] for p in self._parameters}, **values}
        shapes = greatest_closed(values, set(values), lambda v, names: _is_shape(v, names))
        ints = _IntExpressions(shapes)
        self.ints = greatest_closed(values, set(values), ints)
        self.bounds = greatest_closed(
            everything, set(everything),
            lambda v, names: ints(v, names) or _attribute_of(v, names))
        self.indices = greatest_closed(
            everything, set(everything),
            lambda v, names: ints(v, _Either(names, self.bounds))
            or _read_from(v, names) or _int_array(v, _Either(names, self.bounds), ints))
        self._reads = {name: {n for v in vs if v is not None for n in reads_of(v)}
                       for name, vs in values.items()}
        self.arguments_read = False
        self._function = function

    def fed_callees(self):
        """The ``module:qualname`` of each function ``function`` calls, at every call, with
        arguments among ``indices`` and constants alone: an index it reads from its own
        arguments is one this function's key fixes too."""
        fed, unfed = set(), set()
        for node in walk(self._function):
            callee = anno.get(node, Anno.CALLEE) if isinstance(node, gast.Call) else None
            if not isinstance(callee, types.FunctionType):
                continue
            name = callee_name(callee)
            values = list(node.args) + [k.value for k in node.keywords]
            if all(isinstance(v, gast.Constant) or isinstance(v, gast.Name)
                   and v.id in self.indices for v in values):
                fed.add(name)
            else:
                unfed.add(name)
        return tuple(sorted(fed - unfed))

    def unfixed(self, subscript):
        """The first name in ``subscript``'s index whose value may decide the shape it picks
        (not an int, or an index array, the key fixes), or None."""
        bounds = {id(n) for part in walk(subscript.slice) if isinstance(part, gast.Slice)
                  for n in walk(part)}
        for node in walk(subscript.slice):
            if isinstance(node, gast.Name):
                allowed = self.bounds if id(node) in bounds else self.indices
                if node.id not in allowed:
                    return node.id
                if node.id not in self.ints and self._from_arguments(node.id):
                    self.arguments_read = True
        return None

    def _from_arguments(self, name):
        """Whether ``name``'s value is read from the parameters (through its assignments)."""
        seen, work = {name}, [name]
        while work:
            current = work.pop()
            if current in self._parameters:
                return True
            for read in self._reads.get(current, ()):
                if read not in seen:
                    seen.add(read)
                    work.append(read)
        return False


class _Either:
    """Membership in either of two sets, without making their union."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __contains__(self, name):
        return name in self.first or name in self.second


def assigned_values(function, skip=None):
    """Each name's assigned values in ``function`` (any node; None for a value the analysis
    cannot read): an unpacked entry ``a, b = v`` as ``v[0]`` and ``v[1]``, a ``range``
    loop's target as its range. Statements ``skip`` accepts do not count."""
    values = {}
    for node in walk(function):
        if skip is not None and skip(node):
            continue
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    values.setdefault(target.id, []).append(node.value)
                    continue
                unpacked = isinstance(target, (gast.Tuple, gast.List)) and not any(
                    isinstance(e, gast.Starred) for e in target.elts)
                for position, element in enumerate(getattr(target, "elts", ())):
                    if isinstance(element, gast.Name):
                        values.setdefault(element.id, []).append(gast.Subscript(
                            node.value, gast.Constant(position, None), gast.Load())
                            if unpacked else None)
                for name in walk(target):
                    if (isinstance(name, gast.Name) and isinstance(name.ctx, gast.Store)
                            and not any(name is e for e in getattr(target, "elts", ()))):
                        values.setdefault(name.id, []).append(None)
        elif isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            values.setdefault(node.target.id, []).append(
                node.iter if _is_call_of(node.iter, range) else None)
        elif isinstance(node, (gast.AugAssign, gast.AnnAssign)) and isinstance(node.target, gast.Name):
            values.setdefault(node.target.id, []).append(None)
    return values


def _is_shape(value, names):
    """``x.shape``, or a name among ``names`` (those holding one)."""
    return (isinstance(value, gast.Attribute) and value.attr == "shape"
            or isinstance(value, gast.Name) and value.id in names)


class _IntExpressions:
    """``ints(value, names)``: whether ``value`` is a Python int when the ``names`` it reads
    are, given the names holding shapes (``_shape = x.shape``; ``_shape[1]`` is an int)."""

    def __init__(self, shapes):
        self.shapes = shapes

    def __call__(self, value, names):
        if isinstance(value, gast.Constant):
            return type(value.value) is int
        if isinstance(value, gast.Name):
            return value.id in names
        if isinstance(value, gast.BinOp):
            return (isinstance(value.op, _INT_OPERATORS) and self(value.left, names)
                    and self(value.right, names))
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
            return self(value.operand, names)
        if isinstance(value, gast.Attribute) and value.attr in _SHAPE_INTS:
            return True
        if isinstance(value, gast.Subscript) and _is_shape(value.value, self.shapes):
            return self(value.slice, ())
        return _is_call_of(value, range) or _is_call_of(value, len)    # (a loop's range too)


def _attribute_of(value, names):
    """``self.H``, ``cfg.n``: an attribute (chain) of a name among ``names``."""
    if not isinstance(value, gast.Attribute):
        return False
    while isinstance(value, gast.Attribute):
        value = value.value
    return isinstance(value, gast.Name) and value.id in names


def _read_from(value, names):
    """``a``, ``a[k]``, ``a.b``, ``a[k][0]``: a value read out of a name among ``names``."""
    while isinstance(value, (gast.Subscript, gast.Attribute)):
        value = value.value
    return isinstance(value, gast.Name) and value.id in names


def _int_array(value, names, ints):
    """``np.arange(N)`` (of ints among ``names``), ``np.argmax(z, axis=1)``: an int array
    whose shape the shapes of its arguments fix."""
    if _is_call_of(value, np.arange):
        return not value.keywords and all(ints(a, names) for a in value.args)
    return any(_is_call_of(value, f) for f in _INT_ARRAYS)


def _is_call_of(value, function):
    return isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is function

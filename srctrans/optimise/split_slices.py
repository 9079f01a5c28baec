"""A split of an array of known shape is read as the slices it is made of.

Requires: statements of specialised code (calls annotated with what they call), the shapes
measured, and NumPy's alias.
Guarantees: the values computed are unchanged. ``np.split(z, 4, axis=1)`` (and
``np.array_split``, ``np.hsplit``, ``np.vsplit``) of an array ``z`` whose shape the key
fixes gives the views ``z[:, 0:5]``, ``z[:, 5:10]``, ... that slicing gives; NumPy makes
them in Python (its axis swapped to the front and back for each piece: about 10 us for an
LSTM's four gates), a slice costs one subscript. Unpacked into names the slices do not
read, ``i, f, o, g = np.split(z, 4, axis=1)`` becomes one assignment per name::

    i, f, o, g = np.split(z, 4, axis=1)     ->      i = z[:, 0:5]
                                                    f = z[:, 5:10]
                                                    ...

otherwise the call becomes the list display of the slices (a split returns a list). A
split NumPy would refuse (sections that do not divide the axis, for ``np.split``), or of
sections or an axis that are not int literals, is left as it is.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import clone, int_literal, load
from srctrans.optimise.in_place import statement_blocks
from srctrans.treewalk import own_nodes, replace_children, walk_names

_SPLITS = {np.split: None, np.array_split: None, np.hsplit: "h", np.vsplit: "v"}


def slice_splits(body, shapes):
    """``body`` (changed in place, and returned) with its splits of arrays of known shape
    read as slices (see the module); ``shapes``: name -> shape measured."""
    for block in list(statement_blocks(body)):
        position = 0
        while position < len(block):
            stmt = block[position]
            made = {}                       # id of a split -> the display of its slices
            for node in own_nodes(stmt):         # (nested blocks come on their own)
                pieces = _pieces(node, shapes) if isinstance(node, gast.Call) else None
                if pieces is not None:
                    made[id(node)] = pieces
            if made:
                replace_children(stmt, lambda n, made=made: made.get(id(n), n))
                if id(getattr(stmt, "value", None)) in {id(d) for d in made.values()}:
                    unpacked = _unpacked(stmt)
                    if unpacked is not None:
                        block[position:position + 1] = unpacked
                        position += len(unpacked) - 1
            position += 1
    return body


def _pieces(call, shapes):
    """The list display of the slices ``call`` (a split of a name of known shape) gives,
    or None."""
    kind = anno.get(call, Anno.CALLEE)
    try:
        if kind not in _SPLITS:
            return None
    except TypeError:                        # (an unhashable callee)
        return None
    arguments = list(call.args) + [k.value for k in call.keywords if k.arg == "axis"]
    if (len(call.args) < 2 or len(arguments) > (2 if _SPLITS[kind] else 3)
            or any(k.arg != "axis" for k in call.keywords)
            or not isinstance(call.args[0], gast.Name)):
        return None
    shape = shapes.get(call.args[0].id)
    if not shape or not all(type(n) is int for n in shape):
        return None
    axis = _axis(kind, arguments, len(shape))
    if axis is None:
        return None
    points = _division_points(kind, call.args[1], shape[axis])
    if points is None:
        return None
    name = call.args[0].id
    return gast.List([_slice(name, axis, start, stop, shape[axis])
                      for start, stop in zip(points, points[1:])], gast.Load())


def _axis(kind, arguments, ndim):
    """The axis a split cuts along, or None (not an int literal, out of range)."""
    if _SPLITS[kind] == "h":
        return 1 if ndim > 1 else 0
    if _SPLITS[kind] == "v":
        return 0 if ndim > 1 else None
    axis = int_literal(arguments[2]) if len(arguments) == 3 else 0
    if axis is None or not -ndim <= axis < ndim:
        return None
    return axis % ndim


def _division_points(kind, sections, length):
    """Where the pieces start and end along the axis, as NumPy cuts them, or None."""
    count = int_literal(sections)
    if count is not None:
        if count <= 0 or kind is not np.array_split and length % count:
            return None                      # (NumPy refuses: left to say so)
        each, extra = divmod(length, count)
        points = [0]
        for piece in range(count):
            points.append(points[-1] + each + (piece < extra))
        return points
    if isinstance(sections, (gast.List, gast.Tuple)):
        indices = [int_literal(e) for e in sections.elts]
        if None in indices:
            return None
        return [0] + indices + [length]
    return None


def _slice(name, axis, start, stop, length):
    """``name[:, ..., start:stop]`` (no bound at the axis's ends: as NumPy slices)."""
    whole = [gast.Slice(None, None, None) for _ in range(axis)]
    cut = gast.Slice(None if start == 0 else _int(start),
                     None if stop == length else _int(stop), None)
    index = cut if not whole else gast.Tuple(whole + [cut], gast.Load())
    return gast.Subscript(load(name), index, gast.Load())


def _int(value):
    return gast.Constant(value, None) if value >= 0 else \
        gast.UnaryOp(gast.USub(), gast.Constant(-value, None))


def _unpacked(stmt):
    """``a = s0``, ``b = s1``, ... for ``a, b = [s0, s1]`` (names the slices do not read,
    as many as the slices), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Tuple)):
        return None
    names, pieces = stmt.targets[0].elts, stmt.value.elts
    if len(names) != len(pieces) or not all(isinstance(n, gast.Name) for n in names) \
            or not all(isinstance(p, gast.Subscript) for p in pieces):
        return None
    read = {n.id for piece in pieces for n in walk_names(piece)}
    if read & {n.id for n in names}:
        return None
    return [anno.copy(stmt, gast.Assign([clone(target)], piece, None))
            for target, piece in zip(names, pieces)]

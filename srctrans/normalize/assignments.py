"""Assignments in A-normal form: one name, one subscript, or a flat unpacking each.

Requires: the A-normal form's normaliser (:mod:`srctrans.normalize.anf`), which flattens
the values.
Guarantees: ``x[i] = v`` writes an atom at a flat index; ``x = e`` assigns ``e``'s flat
form (through a temporary when a block reassigns ``x`` from itself, so the reverse pass
tells the old ``x`` from the new); ``a, (b, c) = s`` becomes flat unpackings of names;
``a, b = e1, e2`` becomes one assignment a name, in Python's order (every value before
any target: a target a later value reads is assigned, through a temporary, last)::

    a, b = b, a * b      ->      _value = b
                                 b = a * b
                                 a = _value
"""

import gast

from srctrans.naming import temporary_word
from srctrans.nodes import assign
from srctrans.normalize.local_functions import renamed_apart
from srctrans.treewalk import walk, walk_names


class Assignments:
    """The assignments' part of the A-normal form's normaliser, which it is mixed into: the
    host provides ``namer``, ``_built``, ``_depth``, ``_atom``, ``_flat`` and ``_index``."""

    def _write(self, array, index, value):
        """``array[index] = value``."""
        target = gast.Subscript(gast.Name(array, gast.Load(), None, None), index, gast.Store())
        return gast.Assign([target], value, None)

    def _assign(self, targets, value, out):
        if len(targets) == 1 and isinstance(targets[0], gast.Subscript):
            value = self._atom(value, out)
            index = self._index(targets[0].slice, out)
            out.append(self._write(targets[0].value.id, index, value))
            return
        if len(targets) == 1 and isinstance(targets[0], gast.Name):
            name = targets[0].id
            start = len(out)
            flat = self._flat(value, out)
            if isinstance(flat, gast.Name) and flat.id in self._built and not any(
                    isinstance(n, gast.Name) and n.id == name for stmt in out[start:]
                    for n in walk(stmt)):
                # d = {k: ... for ...}, d = dict(e): build d itself, not a temporary that d
                # would alias (a later d[k] = v would change the temporary the loop saved)
                for stmt in out[start:]:
                    renamed_apart(stmt, {flat.id: name})
                return
            if self._depth > 0 and not isinstance(flat, gast.Name) and any(
                    isinstance(n, gast.Name) and n.id == name for n in walk(flat)):
                # x = f(x) inside a block (SSA renames it outside): compute into a
                # temporary first, so that the new x and the old x have different
                # names for the reverse pass (y = y * x in a loop)
                temporary = self.namer.temporary(temporary_word(flat))
                out.append(assign(temporary, flat))
                flat = gast.Name(temporary, gast.Load(), None, None)
            out.append(assign(name, flat))
            return
        if len(targets) == 1 and _parallel(targets[0], value):
            self._assign_in_parallel(targets[0].elts, value.elts, out)
            return
        source = self._atom(value, out)
        for target in targets:
            if isinstance(target, gast.Name):
                out.append(assign(target.id, source))
            else:
                self._unpack(target, source, out)

    def _assign_in_parallel(self, targets, values, out):
        """``a, b = e1, e2`` as ``a = e1`` and ``b = e2`` (no tuple whose cotangent the reverse
        pass would pack and pick apart). Python evaluates every value before it assigns a
        target, so a target a later value reads is assigned, through a temporary, last."""
        late = []
        for position, (target, value) in enumerate(zip(targets, values)):
            later_reads = {n.id for v in values[position + 1:] for n in walk(v)
                           if isinstance(n, gast.Name)}
            if later_reads.isdisjoint(_stored_names(target)):
                self._assign([target], value, out)
            else:
                temporary = self.namer.temporary("value")
                out.append(assign(temporary, self._flat(value, out)))
                late.append((target, gast.Name(temporary, gast.Load(), None, None)))
        for target, temporary in late:
            self._assign([target], temporary, out)

    def _unpack(self, target, source, out):
        """``a, (b, c) = source`` becomes flat unpackings of names."""
        names, nested = [], []
        for element in target.elts:
            if isinstance(element, gast.Name):
                names.append(element.id)
            else:
                temporary = self.namer.temporary("unpacked")
                names.append(temporary)
                nested.append((element, temporary))
        stores = [gast.Name(n, gast.Store(), None, None) for n in names]
        out.append(gast.Assign([gast.Tuple(stores, gast.Store())], _load(source), None))
        for element, temporary in nested:
            self._unpack(element, gast.Name(temporary, gast.Load(), None, None), out)


def _parallel(target, value):
    """Whether ``target = value`` is ``a, (b, c) = e1, (e2, e3)``: literal sequences of one
    length, without ``*``, storing into distinct names."""
    if not (isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple, gast.List))
            and len(target.elts) == len(value.elts)):
        return False
    if any(isinstance(e, gast.Starred) for e in target.elts + value.elts):
        return False
    stored = [n for n in walk(target) if not isinstance(n, (gast.Tuple, gast.List, gast.expr_context))]
    return all(isinstance(n, gast.Name) for n in stored) and len({n.id for n in stored}) == len(stored)


def _stored_names(target):
    return {n.id for n in walk_names(target)}


def _load(node):
    if isinstance(node, gast.Name):
        return gast.Name(node.id, gast.Load(), None, None)
    return node

"""Which parts of an array basic indices pick, compared without running the code.

Requires: a generated function's body (top-level statements and the blocks nested in them).
Guarantees: :class:`Regions` reads an index of an array of known shape (``x[:, :H]``,
``x[:, 2 * H:3 * H]``, ``x[-1]``, ``np.s_[1:]``'s) as one interval per leading axis, its
bounds integer linear forms in names that hold sizes, never negative (``H = h0.shape[1]``,
``N, T, D = x.shape`` of an array, ``len(xs)``, ``n // 2`` of those), each assigned once,
at the top level, where its value is fixed for the rest of the call. :func:`disjoint` is
True only when two indices pick no common entry for any such values; :func:`cover` only
when indices together pick every entry. Anything else (an index read from a value, a bound
that could be negative, a step, ``None`` or ``...``) gives no region, and so no claim.

A bound's form maps each name to its coefficient and ``None`` to the constant:
``3 * H + 1`` is ``{"H": 3, None: 1}``. A slice's bounds, each at least 0, give the
interval ``[lower, upper)``; Python clips both to the axis's length, which keeps apart
intervals that were apart. A negative constant counts from the end of the axis, whose
length the shape gives.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import int_literal
from srctrans.treewalk import walk

_DEPTH = 16         # operators and definitions followed into one another (deeper: no form)


class Regions:
    """The regions of indices of the arrays of one function body (see the module)."""

    def __init__(self, body, known, parameters):
        """``known``: name -> shape, of the names known to hold arrays (and numbers);
        ``parameters``: the function's (a parameter assigned in the body held another value
        before: it counts as assigned twice)."""
        stores = dict.fromkeys(parameters, 1)
        for node in (n for stmt in body for n in walk(stmt)):
            if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
                stores[node.id] = stores.get(node.id, 0) + 1
        self.sizes, self.definitions = set(), {}
        for stmt in body:
            if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1:
                continue
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, gast.Name) and stores[target.id] == 1:
                if _is_size(value, known):
                    self.sizes.add(target.id)
                else:
                    self.definitions[target.id] = value
            elif isinstance(target, gast.Tuple) and _is_shape(value, known):
                self.sizes.update(e.id for e in target.elts
                                  if isinstance(e, gast.Name) and stores[e.id] == 1)

    def form(self, node, depth=0):
        """The integer linear form of ``node`` (see the module), else None."""
        literal = int_literal(node)
        if literal is not None:
            return {None: literal}
        if depth > _DEPTH:
            return None
        if isinstance(node, gast.Name):
            if node.id in self.sizes:
                return {node.id: 1}
            definition = self.definitions.get(node.id)
            if definition is None:
                return None
            if (isinstance(definition, gast.BinOp)       # n // 2, n % 4: an int, at least 0
                    and isinstance(definition.op, (gast.FloorDiv, gast.Mod))
                    and (int_literal(definition.right) or 0) > 0):
                counted = self.form(definition.left, depth + 1)
                return {node.id: 1} if counted is not None and _never_negative(counted) else None
            return self.form(definition, depth + 1)
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
            left, right = self.form(node.left, depth + 1), self.form(node.right, depth + 1)
            if left is None or right is None:
                return None
            if isinstance(node.op, gast.Mult):
                if set(left) == {None}:
                    return _scaled(right, left[None])
                return _scaled(left, right[None]) if set(right) == {None} else None
            return _sum(left, _scaled(right, -1) if isinstance(node.op, gast.Sub) else right)
        return None

    def region(self, index, shape):
        """The region of ``x[index]`` (``index`` a subscript's slice) for ``x`` of ``shape``:
        a list of ``(lower, upper)`` forms, one per leading axis, else None."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        if len(parts) > len(shape):
            return None
        region = []
        for part, length in zip(parts, shape):
            if isinstance(part, gast.Slice):
                if part.step is not None and int_literal(part.step) != 1:
                    return None
                lower = {None: 0} if part.lower is None else self._bound(part.lower, length)
                upper = {None: length} if part.upper is None else self._bound(part.upper, length)
            else:
                lower = self._bound(part, length)
                if lower is None or set(lower) == {None} and not 0 <= lower[None] < length:
                    return None                   # (an index error: left as it is)
                upper = _sum(lower, {None: 1})
            if lower is None or upper is None:
                return None
            region.append((lower, upper))
        return region

    def _bound(self, node, length):
        """A bound's form: at least 0 (a negative constant counted from ``length``)."""
        form = self.form(node)
        if form is None:
            return None
        if set(form) == {None}:                   # (Python clips what is still below 0)
            return {None: max(form[None] + length, 0) if form[None] < 0 else form[None]}
        return form if _never_negative(form) else None


def disjoint(first, second):
    """Whether the regions ``first`` and ``second`` share no entry: apart along an axis."""
    return any(_never_negative(_sum(a_lower, _scaled(b_upper, -1)))
               or _never_negative(_sum(b_lower, _scaled(a_upper, -1)))
               for (a_lower, a_upper), (b_lower, b_upper) in zip(first, second))


def cover(regions, shape):
    """Whether ``regions`` (each apart from the others) together hold every entry of an
    array of ``shape``: whole along every axis but one, along which they run from 0 to the
    axis's length, each starting where another ends."""
    if not regions:
        return False
    for axis, length in enumerate(shape):
        if all(_whole(region, shape, other) for region in regions
               for other in range(len(shape)) if other != axis):
            reached, pending = {None: 0}, [r[axis] for r in regions if len(r) > axis]
            if len(pending) < len(regions):
                continue                          # one is whole along it: covers alone
            while pending:
                following = next((p for p in pending if _same(p[0], reached)), None)
                if following is None:
                    break
                pending.remove(following)
                reached = following[1]
            if _same(reached, {None: length}):
                return True
    return len(regions) == 1 and all(_whole(regions[0], shape, a) for a in range(len(shape)))


def _whole(region, shape, axis):
    return axis >= len(region) or (_same(region[axis][0], {None: 0})
                                   and _same(region[axis][1], {None: shape[axis]}))


def _is_size(value, known):
    """``x.shape[k]`` of an array ``x`` or ``len(x)``: an int, never negative."""
    if isinstance(value, gast.Subscript):
        return _is_shape(value.value, known) and int_literal(value.slice) is not None
    return (isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is len
            and len(value.args) == 1 and not value.keywords)


def _is_shape(value, known):
    """``x.shape`` of a name known to hold an array."""
    return (isinstance(value, gast.Attribute) and value.attr == "shape"
            and isinstance(value.value, gast.Name) and len(known.get(value.value.id, ())) >= 1)


def _sum(a, b):
    out = dict(a)
    for name, coefficient in b.items():
        out[name] = out.get(name, 0) + coefficient
    return {name: c for name, c in out.items() if c or name is None}


def _scaled(form, factor):
    return {name: c * factor for name, c in form.items() if c * factor or name is None}


def _never_negative(form):
    """Whether ``form`` is at least 0 for any values of its names (each at least 0)."""
    return all(c >= 0 for c in form.values())


def _same(a, b):
    return _sum(a, _scaled(b, -1)) in ({}, {None: 0})

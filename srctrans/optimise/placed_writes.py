"""A fresh cotangent's parts written once each are assigned, not added into zeros.

Requires: a specialised fused gradient's body (after ``optimise.in_place`` and
``optimise.negated_names``: a part subtracted is one whose sign was moved there), the shapes
known of its names, and the aliases of NumPy and the runtime.
Guarantees: the values computed are unchanged (an entry that was ``0.0 + -0.0`` may now be
``-0.0``). The cotangent of an array read in parts (an LSTM's gates ``a[:, :H]``,
``a[:, H:2 * H]``, ...; a parameter vector's ``p[0]``, ``p[1]``) starts as zeros with one
part placed (``rt.getitem_grad``, which checks at every call what kind of index and values
it has) and adds the others in place; ``d[i] += e`` reads the part, adds, and writes it
back, three NumPy calls where an assignment is one. Where the index is a basic one
:mod:`srctrans.analyse.index_regions` reads, the zeros are made and the part placed
directly, and each later part apart from every part written before it is assigned, up to
the first statement that reads the cotangent otherwise than by adding into a part of it.
When the parts assigned cover the whole array before any is read, it starts empty::

    da = rt.getitem_grad(dg, a, np.s_[:, 3 * H:])    da = np.empty(a.shape, np.result_type(a, dg))
    ...                                               da[:, 3 * H:] = dg
    da[:, 2 * H:3 * H] += do                  ->      ...
    da[:, H:2 * H] += df                              da[:, 2 * H:3 * H] = do
    da[:, :H] += di                                   da[:, H:2 * H] = df
                                                      da[:, :H] = di

``np.result_type(a, dg)`` is the dtype ``rt.getitem_grad`` gives. A part subtracted,
``d[:-1] -= e``, is written ``np.multiply(e, -1, out=d[:-1])``: no negated array is made
(an entry, which is no view, gets ``d[0] = -e``). Not ``np.negative(e, out=...)``: NumPy
2.4's ``negative`` writes wrong values into a strided ``out`` from some strided ``e`` (a
column of an array of 8 float64 columns, or of 4 float32 ones). A cotangent made as
zeros of an array (``rt.zeros_of(a)``) gets the same assignments, and keeps its zeros;
when a loop reads it first, and writes it once a step, ``d[:, t, :] += e`` at the top of its
body with ``t`` the step's element of a range counted from 0 (an RNN's input read a step
at a time, the backward pass's loop), each step writes a slot no step wrote before, and the
write is assigned too.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.analyse.index_regions import Regions, cover, disjoint
from srctrans.analyse.values import natural_ranges
from srctrans.nodes import clone, dotted, int_literal, load, store
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.optimise.expression_shapes import called, index_of
from srctrans.optimise.in_place import statement_blocks
from srctrans.optimise.zeroings import step_element
from srctrans.treewalk import walk


def assign_placed_parts(body, known, parameters, numpy_alias, runtime_alias):
    """``body`` with its fresh cotangents' parts assigned (see the module); ``known``:
    name -> the shape of the names known to hold arrays (and numbers); ``parameters``: the
    function's."""
    regions, ranges = Regions(body, known, parameters), natural_ranges(body)
    for block in list(statement_blocks(body)):
        position = 0
        while position < len(block):
            made = _made(block[position], known, regions, numpy_alias, runtime_alias)
            if made is not None:
                block[position:position + 1] = _placed(block, position, made, known, regions,
                                                       ranges, numpy_alias)
            position += 1
    return body


def _made(stmt, known, regions, numpy_alias, runtime_alias):
    """``(d, x, first)`` for ``d = rt.getitem_grad(e, x, index)`` (``first``: ``(index, e,
    its region)``; ``index`` basic, as read by ``regions``, or picking distinct entries,
    region None: :func:`_picks_distinct`; ``e`` :func:`_plain`) or ``d = rt.zeros_of(x)``
    (``first`` None), ``x`` a name holding an array of known shape; else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    name, value = stmt.targets[0].id, stmt.value
    if is_runtime_call(value, runtime_alias, "zeros_of", 1):
        x = value.args[0]
        first = None
    elif is_runtime_call(value, runtime_alias, "getitem_grad", 3):
        term, x, index = value.args
        index = index_of(index, numpy_alias)
        if not _plain(term) or _mentions(term, name) or not isinstance(x, gast.Name):
            return None
        region = regions.region(index, known.get(x.id, ()))
        if region is None and not _picks_distinct(index, known, regions):
            return None
        first = (index, term, region)
    else:
        return None
    if not isinstance(x, gast.Name) or x.id == name or len(known.get(x.id, ())) < 1:
        return None
    return name, x.id, first


def _placed(block, position, made, known, regions, ranges, numpy_alias):
    """The statements replacing ``block[position]``, a fresh cotangent ``made`` (see
    :func:`_made`); the later parts written into it are assigned, in place in ``block``."""
    name, x, first = made
    shape = known[x]
    if first is not None and first[2] is None:     # entries picked by arrays: placed alone
        return _made_and_placed(block, position, name, x, first[0], first[1], "zeros",
                                numpy_alias)
    written = [] if first is None else [first[2]]
    covered = None                      # whether they covered the array when first read
    for later in range(position + 1, len(block)):
        stmt = block[later]
        part = _added_part(stmt, name)
        region = None if part is None else regions.region(part.slice, shape)
        if region is not None and all(disjoint(region, other) for other in written):
            block[later] = anno.copy(stmt, _assignment(stmt, numpy_alias))
        elif region is not None:        # added into a part written before: reads that part
            covered = cover(written, shape) if covered is None else covered
        elif _mentions(stmt, name):     # read (or written otherwise): zeros from here
            if isinstance(stmt, gast.For) and not written:
                _assign_steps(stmt, name, shape, regions, ranges, numpy_alias)
            break
        else:
            continue
        written.append(region)
    if first is None:
        return [block[position]]
    make = "empty" if (cover(written, shape) if covered is None else covered) else "zeros"
    return _made_and_placed(block, position, name, x, first[0], first[1], make, numpy_alias)


def _made_and_placed(block, position, name, x, index, term, make, numpy_alias):
    """``name = np.zeros(x.shape, np.result_type(x, term))`` (or ``np.empty``) and
    ``name[index] = term``, for ``block[position]``."""
    dtype = gast.Call(dotted(numpy_alias, "result_type"), [load(x), clone(term)], [])
    shaped = gast.Call(dotted(numpy_alias, make),
                       [gast.Attribute(load(x), "shape", gast.Load()), dtype], [])
    target = gast.Subscript(load(name), clone(index), gast.Store())
    made_at = block[position]
    return [anno.copy(made_at, gast.Assign([store(name)], shaped, None)),
            anno.copy(made_at, gast.Assign([target], clone(term), None))]


def _assign_steps(loop, name, shape, regions, ranges, numpy_alias):
    """Assign, in place, the one write of the loop ``loop`` into ``name`` (zeros, nothing
    written yet), ``name[..., t, ...] += e`` at the top of its body, when ``t`` is the
    step's element of a natural range and the index's other parts pick the same part at
    every step: each step writes a slot of its own, which no step wrote before."""
    counter = step_element(loop, ranges)
    writes = [stmt for stmt in loop.body if _mentions(stmt, name)]
    if counter is None or not _never_negative_steps(loop.iter) or len(writes) != 1 \
            or any(_mentions(stmt, name) for stmt in loop.orelse):
        return
    part = _added_part(writes[0], name)
    if part is None:
        return
    parts = part.slice.elts if isinstance(part.slice, gast.Tuple) else [part.slice]
    steps = [k for k, p in enumerate(parts) if isinstance(p, gast.Name) and p.id == counter]
    if len(steps) != 1 or sum(_mentions(p, counter) for p in parts) != 1:
        return
    probe = [gast.Constant(0, None) if k == steps[0] else p for k, p in enumerate(parts)]
    if regions.region(gast.Tuple(probe, gast.Load()), shape) is None:
        return                          # (the other parts: fixed, basic)
    position = loop.body.index(writes[0])
    loop.body[position] = anno.copy(writes[0], _assignment(writes[0], numpy_alias))


def _never_negative_steps(call):
    """Whether the ``range(...)`` call ``call`` counts through numbers at least 0 (a range's
    entries at distinct such positions are distinct): ``range(n)``, ``range(start, stop,
    step)`` up from a literal start at least 0, or down to a literal stop at least -1 (the
    backward pass's ``range(trips - 1, -1, -1)``)."""
    args = call.args
    if len(args) == 1:
        return True
    step = int_literal(args[2]) if len(args) == 3 else 1
    if step is None or step == 0:
        return False
    bound = int_literal(args[0] if step > 0 else args[1])
    return bound is not None and bound >= (0 if step > 0 else -1)


def _assignment(stmt, numpy_alias):
    """``name[index] = e`` for ``name[index] += e``; for ``name[index] -= e``,
    ``np.multiply(e, -1, out=name[index])`` when the part is a view (slices only: no new
    array), else ``name[index] = -e``."""
    if isinstance(stmt.op, gast.Add):
        return gast.Assign([stmt.target], stmt.value, None)
    index = stmt.target.slice
    if all(isinstance(part, gast.Slice)
           for part in (index.elts if isinstance(index, gast.Tuple) else [index])):
        view = gast.Subscript(stmt.target.value, index, gast.Load())
        return gast.Expr(gast.Call(dotted(numpy_alias, "multiply"),
                                   [stmt.value, gast.Constant(-1, None)],
                                   [gast.keyword("out", view)]))
    return gast.Assign([stmt.target], gast.UnaryOp(gast.USub(), stmt.value), None)


def _added_part(stmt, name):
    """The target ``name[index]`` of ``name[index] += e`` (or ``-=``), neither ``index``
    nor ``e`` reading ``name``, else None."""
    if (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, (gast.Add, gast.Sub))
            and isinstance(stmt.target, gast.Subscript)
            and isinstance(stmt.target.value, gast.Name) and stmt.target.value.id == name
            and not _mentions(stmt.value, name) and not _mentions(stmt.target.slice, name)):
        return stmt.target
    return None


def _picks_distinct(index, known, regions):
    """Whether ``index``, a tuple of arrays and ints, picks distinct entries: one part is
    ``np.arange(n)`` (distinct rows), written there or a name assigned it once at the top
    level, and every other is an int or a name known to hold at most one axis (a label per
    row: ``p[np.arange(n), y]``), so that they broadcast along the range's one axis. Such
    an index puts each entry of its term in a place of its own, as ``np.add.at`` does
    into zeros."""
    parts = index.elts if isinstance(index, gast.Tuple) else []
    ranges = [part for part in parts if _is_arange(regions.definitions.get(part.id)
                                                   if isinstance(part, gast.Name) else part)]
    return bool(ranges) and all(
        part in ranges or int_literal(part) is not None
        or isinstance(part, gast.Name) and len(known.get(part.id) or (0, 0)) <= 1
        for part in parts)


def _is_arange(node):
    """``np.arange(n)``, one argument."""
    return (isinstance(node, gast.Call) and called(node) is np.arange and len(node.args) == 1
            and not node.keywords)


def _plain(term):
    """Whether ``term`` is read twice as cheaply as once, with the same value: a name, a
    constant, or an entry of a name at a constant index (``p[2]``)."""
    if isinstance(term, gast.Subscript):
        return isinstance(term.value, gast.Name) and int_literal(term.slice) is not None
    return isinstance(term, (gast.Name, gast.Constant))


def _mentions(node, name):
    """Whether ``name`` occurs in ``node`` (read or written)."""
    return any(isinstance(n, gast.Name) and n.id == name for n in walk(node))

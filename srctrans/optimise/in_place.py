"""Add a parameter's gradient into its own array, in a fused gradient of specialised code.

Requires: the body of a fused gradient (its last statement the ``return``), the
names of its parameters measured as arrays (ndarrays with at least one
dimension) that the body never assigns, the names the ``return`` gives as their
gradients, and the names measured as numbers (shape ``()``).
Guarantees: a gradient ``dW`` that starts as ``dW = rt.zeros_of(W)`` (``W`` such
a parameter: a new array of ``W``'s shape and dtype) or, where ``dW`` is the
name returned as ``W``'s gradient, as arithmetic (a new array of ``W``'s shape:
the cotangent of ``W``, where specialising dropped ``rt.unbroadcast``), or as a copy
``dW = d`` of a name assigned once, and only, arithmetic, when nothing reads ``d`` once
``dW`` may have changed (``d = -1.0 * T``, read by ``d.sum(axis=1)`` before a loop adds
each column's cotangent into ``dW``), and
afterwards is only ever assigned ``dW = dW + e`` or ``dW = dW - e`` (``e`` not
reading ``dW``) and read only there, by the ``return`` and by statements of the
function's own block after the last of them (``dx = rt.asarray_grad(dx_2, x)``: the
array changes no more), has ``dW += e`` (``dW -= e``) instead::

    dWh = rt.zeros_of(Wh)                    dWh = rt.zeros_of(Wh)
    for _iteration in ...:           ->      for _iteration in ...:
        dWh = dWh + h.T @ d_add                  dWh += h.T @ d_add

A term that is the cotangent of a read ``W[i]`` (``rt.getitem_grad(e, W, i)``:
zeros of ``W``'s shape with ``e`` at ``i``) by an index that picks each entry
at most once (numbers, slices, constants) is added at its index alone, where
the general code makes and adds a whole array of zeros per term::

    dU = dU + rt.getitem_grad(d, U, i)   ->   dU[i] += d

The cotangent of an array the function fills (``level[t] = ...``), which starts as a
new array (``dlevel = rt.getitem_grad(d, level, i)``, ``level`` measured as an array),
is changed in place too, and so are a write's ``dX = rt.zero_at(dX, i)`` (``dX[i] =
0.0``) and its reads ``rt.written_part(dX, i)`` (``dX[i]`` where specialising knew
``i`` picks each entry once), taken out as a copy (``rt.copied``: a row of ``dX`` is a
view, which the zeroing would change)::

    d_add = rt.unbroadcast(rt.written_part(dlevel, t), v)       d_add = rt.unbroadcast(
    dlevel = rt.zero_at(dlevel, t)                      ->         rt.copied(rt.written_part(dlevel, t)), v)
    dlevel = dlevel + rt.getitem_grad(d, level, t - 1)          dlevel[t] = 0.0
                                                                 dlevel[t - 1] += d

No other name ever holds that array, so changing it in place changes
nothing else; the sum needs no third array (the old sum, the term and the new
sum at once), which is what an expert's ``+=`` saves. The array keeps the dtype
it starts with (``W``'s, for ``rt.zeros_of``): where a term is wider (a float32
``W``, float64 data) each step rounds to it, as the gradients of JAX and PyTorch
do, where the general code rounds once at the end.
"""

import gast

from srctrans import annotations as anno
from srctrans.analyse.values import index_integers, makes_new_value
from srctrans.annotations import Anno
from srctrans.nodes import load, single_target
from srctrans.optimise.dce import name_counts
from srctrans.optimise.entry_cotangents import is_runtime_call, runtime_call
from srctrans.optimise.expression_shapes import REDUCTION_METHODS, INTEGER, basic_index_shape
from srctrans.treewalk import walk, walk_names

_IN_PLACE = (gast.Add, gast.Sub)


def accumulate_in_place(body, parameter_arrays, runtime_alias, gradients=None, numbers=(),
                        arrays=(), shapes=None):
    """``body`` with each qualifying gradient accumulated in place (see above), changed in
    place. ``gradients`` maps a name the ``return`` gives to its parameter; ``numbers`` are
    the names measured as numbers, ``arrays`` those measured as arrays, ``shapes`` their
    shapes (a part taken out that is one entry, a number, is no view to copy)."""
    if not body or not isinstance(body[-1], gast.Return):
        return body
    gradients = gradients or {}
    known = None            # the shapes a part taken out is read with (ints found when needed)
    starts = {}
    fresh = _fresh_arithmetic(body)
    for stmt in body:
        parameter = _zeros_of(stmt, runtime_alias) or _arithmetic_start(stmt, gradients) \
            or _copied_start(stmt, gradients, fresh)
        if parameter in parameter_arrays:
            starts.setdefault(stmt.targets[0].id, []).append((stmt, parameter))
        local = entry_start(stmt, runtime_alias)
        if local is not None and local in arrays:
            starts.setdefault(stmt.targets[0].id, []).append((stmt, local))
    replaced = {}
    for name, made in starts.items():
        if len(made) != 1:
            continue
        (start, parameter), = made
        entries = _Entries(name, parameter, runtime_alias, numbers)
        sums = _sums_only(body, name, start, entries)
        if sums and isinstance(start.value, gast.Name) and any(
                _read_from(body, holder, sums[0])
                for holder in _holders(body, start.value.id, name)):
            continue                 # dW = d: d (or a name that may share its memory, dv = d,
                                     # dv = d.T), read after dW changes, would see it change
        for stmt in sums or ():
            if _zeroing(stmt, name, runtime_alias):      # dX = rt.zero_at(dX, i): dX[i] = 0
                replaced[id(stmt)] = anno.copy(stmt, gast.Assign(
                    [_entry(name, unwrapped(stmt.value.args[1]))], gast.Constant(0.0, None),
                    None))
            elif entries.is_sum(stmt):                   # dX = dX + getitem_grad: dX[i] += e
                term, index = entries.term(stmt.value)
                replaced[id(stmt)] = anno.copy(stmt, gast.AugAssign(
                    _entry(name, index), gast.Add(), term))
            elif _is_sum(stmt, name):                    # dX = dX + e: dX += e
                replaced[id(stmt)] = anno.copy(stmt, gast.AugAssign(
                    gast.Name(name, gast.Store(), None, None), stmt.value.op, stmt.value.right))
            else:                                        # it reads a written part: a copy
                if known is None:
                    known = dict.fromkeys(index_integers(body), INTEGER)
                if shapes and parameter in shapes:
                    known[name] = shapes[parameter]      # the cotangent has its array's shape
                _copy_written_parts(stmt, name, runtime_alias, known)
    for block in statement_blocks(body):
        block[:] = [replaced.get(id(stmt), stmt) for stmt in block]
    return body


def _entry(name, index):
    """``name[index]``, a target."""
    return gast.Subscript(gast.Name(name, gast.Load(), None, None), index, gast.Store())


def _zeros_of(stmt, runtime_alias):
    """``P`` when ``stmt`` is ``name = rt.zeros_of(P)`` (a name ``P``), else None."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and is_runtime_call(stmt.value, runtime_alias, "zeros_of", 1)
            and isinstance(stmt.value.args[0], gast.Name)):
        return stmt.value.args[0].id
    return None


def _arithmetic_start(stmt, gradients):
    """``W`` when ``stmt`` is ``dW = <arithmetic>`` and ``dW`` the name returned as ``W``'s
    gradient, else None: a new array (never one another name holds) of ``W``'s shape."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in gradients
            and (isinstance(stmt.value, gast.BinOp) or isinstance(stmt.value, gast.UnaryOp)
                 and isinstance(stmt.value.op, (gast.USub, gast.UAdd)))
            and not any(isinstance(n, gast.Name) and n.id == stmt.targets[0].id
                        for n in walk(stmt.value))):          # (dW = dW + e is a sum)
        return gradients[stmt.targets[0].id]
    return None


def _fresh_arithmetic(body):
    """The names ``body``'s own block assigns once, and only, arithmetic (a new array)."""
    stores, _ = name_counts(body)
    return {stmt.targets[0].id for stmt in body
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stores.get(stmt.targets[0].id) == 1
            and (isinstance(stmt.value, gast.BinOp) or isinstance(stmt.value, gast.UnaryOp)
                 and isinstance(stmt.value.op, (gast.USub, gast.UAdd)))}


def _copied_start(stmt, gradients, fresh):
    """``W`` when ``stmt`` is ``dW = d`` (``dW`` the name returned as ``W``'s gradient, ``d``
    of ``fresh``: a new array the function made by arithmetic), else None. ``d`` holds the
    array too: :func:`_read_from` tells whether it is read once ``dW`` changes."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in gradients
            and isinstance(stmt.value, gast.Name) and stmt.value.id in fresh):
        return gradients[stmt.targets[0].id]
    return None


def _holders(body, name, but):
    """``name`` and every name but ``but`` that may share its array: assigned, at any depth,
    a value reading one of them that is not certainly new memory (a copy ``dv = d``, a view
    ``dv = d.T`` or ``rt.unbroadcast(d, x)``, which may be ``d`` itself; not arithmetic, a
    call :func:`~srctrans.analyse.values.makes_new_value` knows, nor a reduction)."""
    holders, grown = {name}, True
    while grown:
        grown = False
        for stmt in _statements(body):
            target = single_target(stmt)
            if (target is not None and target != but and target not in holders
                    and not _new_memory(stmt.value)
                    and any(isinstance(node, gast.Name) and node.id in holders
                            for node in walk(stmt.value))):
                holders.add(target)
                grown = True
    return holders


def _new_memory(value):
    """Whether ``value`` is certainly an array (or number) of its own: arithmetic, a
    comparison, a call that makes new memory, or a reduction (``d.sum(axis=0)``)."""
    if isinstance(value, gast.Compare) or makes_new_value(value):
        return True
    if not isinstance(value, gast.Call) or any(k.arg == "out" for k in value.keywords):
        return False
    callee = anno.get(value, Anno.CALLEE)
    if callee is None:                                    # a method: d.sum(axis=0)
        return isinstance(value.func, gast.Attribute) \
            and value.func.attr in REDUCTION_METHODS.values()
    return any(callee is reduction for reduction in REDUCTION_METHODS)


def _read_from(body, name, first):
    """Whether ``name`` is read once ``first`` may have run: by a statement of ``body`` from
    the one of its own block holding ``first`` on (a loop's statements before ``first`` run
    after it at its next step)."""
    holder = next(stmt for stmt in body if any(node is first for node in _statements([stmt])))
    started = False
    for stmt in _statements(body):
        started = started or stmt is holder
        if started and not isinstance(stmt, (gast.If, gast.For, gast.While)) and any(
                isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                for n in walk(stmt)):
            return True
        if started and isinstance(stmt, (gast.If, gast.For, gast.While)):
            header = stmt.test if not isinstance(stmt, gast.For) else stmt.iter
            if any(isinstance(n, gast.Name) and n.id == name for n in walk(header)):
                return True
    return False


class _Entries:
    """Recognises ``dW = dW + rt.getitem_grad(e, W, index)`` (or ``rt.add(dW, ...)``) for an
    index that picks each entry at most once: of ``numbers``, constants and slices."""

    def __init__(self, name, parameter, runtime_alias, numbers):
        self.name, self.parameter = name, parameter
        self.runtime_alias, self.numbers = runtime_alias, numbers

    def is_sum(self, stmt):
        return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == self.name
                and self.term(stmt.value) is not None)

    def term(self, value):
        """``(e, index)`` of such a sum's value, else None."""
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
            total, added = value.left, value.right
        elif is_runtime_call(value, self.runtime_alias, "add", 2):
            total, added = value.args
        else:
            return None
        if not (isinstance(total, gast.Name) and total.id == self.name
                and is_runtime_call(added, self.runtime_alias, "getitem_grad", 3)):
            return None
        term, of, index = added.args
        index = unwrapped(index)
        if not (isinstance(of, gast.Name) and of.id == self.parameter and self._picks_once(index)
                and not any(isinstance(n, gast.Name) and n.id == self.name
                            for n in walk(added))):
            return None
        return term, index

    def _picks_once(self, index):
        return picks_once(index, self.numbers)


def picks_once(index, numbers):
    """Whether ``index`` (a node; ``np.s_[...]`` read as its index) picks each entry at most
    once: slices, int constants, names of ``numbers`` (measured as numbers), ``+ - *`` of
    those (``t - 1``)."""
    index = unwrapped(index)
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return all(isinstance(part, gast.Slice) or _number(part, numbers) for part in parts)


def _number(part, numbers):
    if isinstance(part, gast.BinOp) and isinstance(part.op, (gast.Add, gast.Sub, gast.Mult)):
        return _number(part.left, numbers) and _number(part.right, numbers)
    return (isinstance(part, gast.Constant) and type(part.value) is int
            or isinstance(part, gast.Name) and part.id in numbers)


def unwrapped(index):
    """``np.s_[...]``'s index, as a subscript reads it; ``index`` itself otherwise."""
    if (isinstance(index, gast.Subscript) and isinstance(index.value, gast.Attribute)
            and index.value.attr == "s_"):
        return index.slice
    return index


def entry_start(stmt, runtime_alias):
    """``X`` when ``stmt`` is ``name = rt.getitem_grad(e, X, i)`` (a new array of ``X``'s
    shape), else None."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and is_runtime_call(stmt.value, runtime_alias, "getitem_grad", 3)
            and isinstance(stmt.value.args[1], gast.Name)
            and stmt.targets[0].id not in {n.id for n in walk_names(stmt.value)}):
        return stmt.value.args[1].id
    return None


def _zeroing(stmt, name, runtime_alias):
    """Whether ``stmt`` is ``name = rt.zero_at(name, i)``."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name
            and is_runtime_call(stmt.value, runtime_alias, "zero_at", 2)
            and isinstance(stmt.value.args[0], gast.Name) and stmt.value.args[0].id == name
            and not any(isinstance(n, gast.Name) and n.id == name
                        for n in walk(stmt.value.args[1])))


def _written_parts_only(stmt, name, runtime_alias):
    """Whether every read of ``name`` in ``stmt`` is ``rt.written_part(name, i)`` or
    ``name[i]`` (what specialising made of one where ``i`` picks each entry once): a part
    taken out, which :func:`_copy_written_parts` makes a copy of its own."""
    allowed = {id(_part_of(node, name, runtime_alias)) for node in walk(stmt)} - {id(None)}
    return all(id(n) in allowed for n in walk_names(stmt) if n.id == name)


def _part_of(node, name, runtime_alias):
    """The read of ``name`` in ``node`` when ``node`` takes a part of it out
    (``rt.written_part(name, i)``, ``name[i]``, ``i`` not reading ``name``), else None."""
    if is_runtime_call(node, runtime_alias, "written_part", 2):
        whole, index = node.args
    elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
        whole, index = node.value, node.slice
    else:
        return None
    if (isinstance(whole, gast.Name) and whole.id == name
            and not any(isinstance(n, gast.Name) and n.id == name for n in walk(index))):
        return whole
    return None


def _copy_written_parts(stmt, name, runtime_alias, known):
    """``rt.written_part(name, i)`` (``name[i]``) in ``stmt`` ->
    ``rt.copied(rt.written_part(name, i))``: a slice of an array changed in place later must
    not be a view of it. Where ``known`` (shapes, :data:`INTEGER` for int names) tells that
    ``name[i]`` is one entry (an int index into a vector, ints into each axis), the part is a
    number, no view: as it is."""
    def copied(value):
        if _part_of(value, name, runtime_alias) is not None and \
                basic_index_shape(load(name), _index_of(value), known) != ():
            return runtime_call(runtime_alias, "copied", [value])
        return value

    for node in list(walk(stmt)):
        for field, value in gast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, field, [copied(v) for v in value])
            else:
                setattr(node, field, copied(value))


def _index_of(part):
    """The index of a part taken out (``rt.written_part(name, i)`` or ``name[i]``)."""
    return part.args[1] if isinstance(part, gast.Call) else part.slice


def _sums_only(body, name, start, entries):
    """The statements ``name = name + e`` (or ``-``, or an entry's sum: :class:`_Entries`),
    ``name = rt.zero_at(name, i)`` and those reading ``rt.written_part(name, i)`` when,
    besides ``start``, the first two are all that assign ``name``, and they, the third, the
    final ``return`` and statements of ``body``'s own block after the last of them (when
    the array changes no more) all that read it; else None."""
    sums, later_reads, last_store = [], [], -1
    top_level = {id(stmt) for stmt in body}
    for position, node in enumerate(_statements(body)):
        if node is start:
            continue
        stores = [n for n in walk_names(node) if n.id == name
                  and isinstance(n.ctx, gast.Store)]
        if isinstance(node, (gast.If, gast.For, gast.While)):
            header = node.test if not isinstance(node, gast.For) else node.iter
            if any(isinstance(n, gast.Name) and n.id == name for n in walk(header)) or (
                    isinstance(node, gast.For) and any(
                        isinstance(n, gast.Name) and n.id == name for n in walk(node.target))):
                return None
            continue                                      # its statements come one by one
        if stores:
            if not (_is_sum(node, name) or entries.is_sum(node)
                    or _zeroing(node, name, entries.runtime_alias)):
                return None
            sums.append(node)
            last_store = position
            continue
        if isinstance(node, gast.Delete):
            continue
        if node is not body[-1] and any(isinstance(n, gast.Name) and n.id == name
                                        for n in walk(node)):
            if _written_parts_only(node, name, entries.runtime_alias):
                sums.append(node)
            elif id(node) in top_level:
                later_reads.append(position)
            else:
                return None
    if any(position < last_store for position in later_reads):
        return None
    return sums


def _is_sum(stmt, name):
    """``name = name + e`` or ``name = name - e``, ``e`` not reading ``name``."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name
            and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, _IN_PLACE)
            and isinstance(stmt.value.left, gast.Name) and stmt.value.left.id == name
            and not any(isinstance(n, gast.Name) and n.id == name for n in walk(stmt.value.right)))


def _statements(body):
    """Every statement of ``body``, nested ones too (a compound one before its own)."""
    pending = list(reversed(body))
    while pending:
        stmt = pending.pop()
        yield stmt
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            pending.extend(reversed(stmt.orelse))
            pending.extend(reversed(stmt.body))


def statement_blocks(body):
    """Every block of ``body`` (a list of statements): itself, then the bodies and ``else``
    blocks of its ``if``, ``for`` and ``while`` statements, nested ones too."""
    pending = [body]
    while pending:
        block = pending.pop()
        yield block
        for stmt in block:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                pending.extend([stmt.body, stmt.orelse])

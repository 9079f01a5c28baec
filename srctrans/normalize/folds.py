"""A loop that folds ``np.logaddexp`` over the slices of an array is one call of the runtime.

Requires: a function in A-normal form (a loop's body is one call or subscript per
statement), its calls resolved, before SSA renames the accumulator the call assigns again.
Guarantees: the function computes what it did. A log-sum-exp accumulated in a loop, the
idiom of sums of probabilities kept in log space::

    for j in range(1, n):                   _logaddexp = rt.logaddexp_fold(lse, z, 1, 1, n)
        _item = z[:, j]               ->    lse = _logaddexp
        _logaddexp = np.logaddexp(lse, _item)
        lse = _logaddexp

becomes a call of ``rt.logaddexp_fold``, which runs the same loop (``runtime/folds.py``), into
the sum's own name (a call's result has a name of its own in A-normal form, which the
reverse pass relies on where the accumulator is assigned again in a block), when
the body is those three statements (the slice's other axes whole, ``j`` at one place of the
index; ``np.logaddexp`` of the accumulator and the slice, either way round), ``range`` has
no step, and the loop's names are read nowhere else: the counter, the slice and the sum are
assigned once and read once, in the body, and the loop has no ``else``. The derivatives are
then the fold's closed forms (``exp(x_j - lse)`` for each slice): no value of the loop's
steps is saved, and the backward pass is one expression where it was a loop. When the
accumulator's last binding before the loop is the array's slice before the first the loop
reads (``lse = z[:, 0]`` before ``range(1, n)``: ``start`` an int literal; the statements
between bind other names, calling nothing but ``len``), that statement is part of the fold,
``rt.logaddexp_fold_from(z, 1, 1, n)``, whose derivative covers that slice too.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import assign, load, resolved_runtime_call, single_target, whole_slice
from srctrans.normalize.desugar import is_range
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import statement_lists, walk


def fold_loops(function, aliases):
    """Rewrite, in place, each loop of ``function`` the module describes (``aliases``: the
    names generated code gives NumPy and the runtime)."""
    blocks = statement_lists(function)
    if not any(isinstance(stmt, gast.For) for block in blocks for stmt in block):
        return                                       # (no loop: no walk of the function)
    stores, reads = name_counts([function])          # (a parameter counts as assigned)
    for block in blocks:
        for position in reversed(range(len(block))):
            loop = block[position]
            fold = _fold(loop, stores, reads)
            if fold is not None:
                accumulator, array, axis, start, stop = fold
                summed = loop.body[1].targets[0].id       # the sum's own name, as ANF has it
                first = _first_slice(block, position, accumulator, array, axis, start)
                if first is not None:                     # acc = x[:, start - 1] before it
                    call = resolved_runtime_call(aliases, "logaddexp_fold_from", [
                        load(array), gast.Constant(axis, None), start, stop])
                else:
                    call = resolved_runtime_call(aliases, "logaddexp_fold", [
                        load(accumulator), load(array), gast.Constant(axis, None), start, stop])
                block[position:position + 1] = [
                    anno.copy(loop, gast.copy_location(statement, loop))
                    for statement in (assign(summed, call), assign(accumulator, load(summed)))]
                if first is not None:
                    del block[first]


def _fold(loop, stores, reads):
    """``(accumulator, array, axis, start, stop)`` of a loop the module describes, or None."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) and not loop.orelse
            and is_range(loop.iter) and not loop.iter.keywords and 1 <= len(loop.iter.args) <= 2
            and len(loop.body) == 3):
        return None
    counter = loop.target.id
    picked, summed, kept = (single_target(stmt) for stmt in loop.body)
    if None in (picked, summed, kept):
        return None
    pick, total, carry = (stmt.value for stmt in loop.body)
    if not (isinstance(pick, gast.Subscript) and isinstance(pick.value, gast.Name)):
        return None
    axis = _axis(pick.slice, counter)
    if axis is None or not (isinstance(total, gast.Call)
                            and anno.get(total, Anno.CALLEE) is np.logaddexp
                            and len(total.args) == 2 and not total.keywords
                            and all(isinstance(a, gast.Name) for a in total.args)):
        return None
    operands = {a.id for a in total.args}
    if not (isinstance(carry, gast.Name) and carry.id == summed and len(operands) == 2
            and operands == {kept, picked}):
        return None
    array = pick.value.id
    once = (counter, picked, summed)
    if any(stores.get(name) != 1 or reads.get(name) != 1 for name in once) \
            or len({array, kept, *once}) != 5:
        return None
    args = loop.iter.args
    start = args[0] if len(args) == 2 else gast.Constant(0, None)
    return kept, array, axis, start, args[-1]


def _first_slice(block, position, accumulator, array, axis, start):
    """The position in ``block`` of ``accumulator = array[..., start - 1, ...]`` (the fold's
    axis, the axes before it whole, ``start`` an int literal), the accumulator's last binding
    before the loop at ``position``, or None. The statements between bind other names by
    calls of ``len`` at most (``_item = z.shape[1]``): they neither read the accumulator nor
    change the array."""
    if not (isinstance(start, gast.Constant) and type(start.value) is int and start.value >= 1):
        return None
    for at in range(position - 1, -1, -1):
        stmt = block[at]
        target = single_target(stmt)
        if target == accumulator:
            value = stmt.value
            return at if (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
                          and value.value.id == array
                          and _index_at(value.slice, axis, start.value - 1)) else None
        if not (isinstance(stmt, gast.Assign) and target is not None and target != array
                and all(_leaves_alone(node, accumulator) for node in walk(stmt.value))):
            return None
    return None


def _leaves_alone(node, accumulator):
    """Whether ``node`` neither reads ``accumulator`` nor calls anything but ``len``."""
    if isinstance(node, gast.Name):
        return node.id != accumulator
    return not isinstance(node, gast.Call) or anno.get(node, Anno.CALLEE) is len


def _index_at(index, axis, value):
    """Whether ``index`` is the int ``value`` at ``axis``, the other axes whole slices (an
    ``...`` after it too)."""
    one = _one_part(index, ellipsis_after=True)
    return (one is not None and one[0] == axis and isinstance(one[1], gast.Constant)
            and type(one[1].value) is int and one[1].value == value)


def _axis(index, counter):
    """The axis ``counter`` indexes in ``index`` (the counter alone, or a tuple of whole
    slices ``:`` holding it once: ``x[:, j]``, ``x[j, :]``), or None."""
    one = _one_part(index)
    return one[0] if one is not None and isinstance(one[1], gast.Name) \
        and one[1].id == counter else None


def _one_part(index, ellipsis_after=False):
    """``(position, part)`` of the one part of ``index`` that is not a whole slice ``:`` (an
    index of one part: that part), or None; with ``ellipsis_after``, a ``...`` after that part
    counts as whole."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    picked = [i for i, part in enumerate(parts) if not whole_slice(part)]
    if ellipsis_after:
        picked = picked[:1] + [i for i in picked[1:] if not (
            isinstance(parts[i], gast.Constant) and parts[i].value is Ellipsis)]
    return (picked[0], parts[picked[0]]) if len(picked) == 1 else None

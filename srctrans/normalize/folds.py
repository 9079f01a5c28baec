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
steps is saved, and the backward pass is one expression where it was a loop.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import assign, load, resolved_runtime_call, single_target, whole_slice
from srctrans.normalize.desugar import is_range, statement_lists
from srctrans.optimise.dce import name_counts


def fold_loops(function, aliases):
    """Rewrite, in place, each loop of ``function`` the module describes (``aliases``: the
    names generated code gives NumPy and the runtime)."""
    stores, reads = name_counts([function])          # (a parameter counts as assigned)
    for block in statement_lists(function):
        for position in reversed(range(len(block))):
            loop = block[position]
            fold = _fold(loop, stores, reads)
            if fold is not None:
                accumulator, array, axis, start, stop = fold
                summed = loop.body[1].targets[0].id       # the sum's own name, as ANF has it
                call = resolved_runtime_call(aliases, "logaddexp_fold", [
                    load(accumulator), load(array), gast.Constant(axis, None), start, stop])
                block[position:position + 1] = [
                    anno.copy(loop, gast.copy_location(statement, loop))
                    for statement in (assign(summed, call), assign(accumulator, load(summed)))]


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


def _axis(index, counter):
    """The axis ``counter`` indexes in ``index`` (the counter alone, or a tuple of whole
    slices ``:`` holding it once: ``x[:, j]``, ``x[j, :]``), or None."""
    if isinstance(index, gast.Name):
        return 0 if index.id == counter else None
    if not isinstance(index, gast.Tuple):
        return None
    at = [i for i, part in enumerate(index.elts)
          if isinstance(part, gast.Name) and part.id == counter]
    whole = all(whole_slice(part) for i, part in enumerate(index.elts) if i not in at)
    return at[0] if len(at) == 1 and whole else None

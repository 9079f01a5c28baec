"""A fold that a fused gradient reads only through its derivative is not run.

Requires: the body of a fused gradient specialised on shapes, after its temporaries are
inlined (a value read once sits in the expression that reads it), and the name generated
code calls the runtime by.
Guarantees: the derivatives are those of the body, up to rounding of a few units in the last
place. A fold of ``np.logaddexp`` from the array's own slice (``lse = z[:, 0]``, then ``lse =
np.logaddexp(lse, z[:, j])`` for ``j`` from 1: ``normalize/folds.py``) whose value the
gradient reads only as its derivative's ``ans``::

    rt.logaddexp_fold_grad(g, rt.logaddexp_fold_from(z, 1, 1, n), z, 1, 0, n)

becomes ``rt.logaddexp_fold_from_grad(g, z, 1, 1, n)``: the softmax of the slices the fold
read, computed at once (``runtime/folds.py``), where the fold ran a step of Python and NumPy
per slice before the derivative read its result.
"""

import gast

from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.treewalk import walk


def skip_derivative_only_folds(body, runtime_alias):
    """``body`` with each fold read only by its derivative written as the derivative alone
    (see the module), in place."""
    for stmt in body:
        for node in walk(stmt):
            if not is_runtime_call(node, runtime_alias, "logaddexp_fold_grad", 6):
                continue
            g, fold, x, axis, first, stop = node.args
            if is_runtime_call(fold, runtime_alias, "logaddexp_fold_from", 4) \
                    and all(_same(a, b) for a, b in zip((x, axis, stop),
                                                        (fold.args[0], fold.args[1], fold.args[3]))) \
                    and _one_before(first, fold.args[2]):
                node.func.attr = "logaddexp_fold_from_grad"
                node.args = [g] + fold.args
    return body


def _one_before(first, start):
    """Whether ``first`` is ``start - 1``: an int literal one less, or that subtraction."""
    if isinstance(first, gast.Constant) and isinstance(start, gast.Constant):
        return type(first.value) is type(start.value) is int and first.value == start.value - 1
    return isinstance(first, gast.BinOp) and isinstance(first.op, gast.Sub) \
        and _same(first.left, start) and isinstance(first.right, gast.Constant) \
        and type(first.right.value) is int and first.right.value == 1


def _same(a, b):
    """Whether two arguments are the same name or the same constant."""
    if isinstance(a, gast.Name) and isinstance(b, gast.Name):
        return a.id == b.id
    return isinstance(a, gast.Constant) and isinstance(b, gast.Constant) \
        and type(a.value) is type(b.value) and a.value == b.value

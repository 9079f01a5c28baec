"""Add a parameter's gradient into its own array, in a fused gradient of specialised code.

Requires: the body of a fused gradient (its last statement the ``return``), and
the names of its parameters measured as arrays (ndarrays with at least one
dimension) that the body never assigns.
Guarantees: a gradient ``dW`` that starts as ``dW = rt.zeros_of(W)`` (``W`` such
a parameter: a new array of ``W``'s shape and dtype), and afterwards is only
ever assigned ``dW = dW + e`` or ``dW = dW - e`` (``e`` not reading ``dW``) and
read only there and by the ``return``, has ``dW += e`` (``dW -= e``) instead::

    dWh = rt.zeros_of(Wh)                    dWh = rt.zeros_of(Wh)
    for _iteration in ...:           ->      for _iteration in ...:
        dWh = dWh + h.T @ d_add                  dWh += h.T @ d_add

No other name ever holds that array, so changing it in place changes
nothing else; the sum needs no third array (the old sum, the term and the new
sum at once), which is what an expert's ``+=`` saves. The array keeps ``W``'s
dtype, the dtype the gradient is returned in: where a term is wider (a
float32 ``W``, float64 data) each step rounds to it, as the gradients of JAX
and PyTorch do, where the general code rounds once at the end.
"""

import gast

from srctrans import annotations as anno
from srctrans.treewalk import walk

_IN_PLACE = (gast.Add, gast.Sub)


def accumulate_in_place(body, parameter_arrays, runtime_alias):
    """``body`` with each qualifying gradient accumulated in place (see above), changed in place."""
    if not body or not isinstance(body[-1], gast.Return):
        return body
    starts = {}
    for stmt in body:
        parameter = _zeros_of(stmt, runtime_alias)
        if parameter in parameter_arrays:
            starts.setdefault(stmt.targets[0].id, []).append(stmt)
    replaced = {}
    for name, made in starts.items():
        if len(made) == 1:
            for stmt in _sums_only(body, name, made[0]) or ():
                augmented = gast.AugAssign(gast.Name(name, gast.Store(), None, None),
                                           stmt.value.op, stmt.value.right)
                replaced[id(stmt)] = anno.copy(stmt, augmented)
    for block in _blocks(body):
        block[:] = [replaced.get(id(stmt), stmt) for stmt in block]
    return body


def _zeros_of(stmt, runtime_alias):
    """``P`` when ``stmt`` is ``name = rt.zeros_of(P)`` (a name ``P``), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    call = stmt.value
    if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "zeros_of" and isinstance(call.func.value, gast.Name)
            and call.func.value.id == runtime_alias and len(call.args) == 1
            and not call.keywords and isinstance(call.args[0], gast.Name)):
        return call.args[0].id
    return None


def _sums_only(body, name, start):
    """The statements ``name = name + e`` (or ``-``) when, besides ``start``, they are all that
    assigns ``name``, and they and the final ``return`` all that read it; else None."""
    sums = []
    for node in _statements(body):
        if node is start:
            continue
        stores = [n for n in walk(node) if isinstance(n, gast.Name) and n.id == name
                  and isinstance(n.ctx, gast.Store)]
        if isinstance(node, (gast.If, gast.For, gast.While)):
            header = node.test if not isinstance(node, gast.For) else node.iter
            if any(isinstance(n, gast.Name) and n.id == name for n in walk(header)) or (
                    isinstance(node, gast.For) and any(
                        isinstance(n, gast.Name) and n.id == name for n in walk(node.target))):
                return None
            continue                                      # its statements come one by one
        if stores:
            if not _is_sum(node, name):
                return None
            sums.append(node)
            continue
        if isinstance(node, gast.Delete):
            continue
        if node is not body[-1] and any(isinstance(n, gast.Name) and n.id == name
                                        for n in walk(node)):
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


def _blocks(body):
    pending = [body]
    while pending:
        block = pending.pop()
        yield block
        for stmt in block:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                pending.extend([stmt.body, stmt.orelse])

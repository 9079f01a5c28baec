"""Add a parameter's gradient into its own array, in a fused gradient of specialised code.

Requires: the body of a fused gradient (its last statement the ``return``), the
names of its parameters measured as arrays (ndarrays with at least one
dimension) that the body never assigns, the names the ``return`` gives as their
gradients, and the names measured as numbers (shape ``()``).
Guarantees: a gradient ``dW`` that starts as ``dW = rt.zeros_of(W)`` (``W`` such
a parameter: a new array of ``W``'s shape and dtype) or, where ``dW`` is the
name returned as ``W``'s gradient, as arithmetic (a new array of ``W``'s shape:
the cotangent of ``W``, where specialising dropped ``rt.unbroadcast``), and
afterwards is only ever assigned ``dW = dW + e`` or ``dW = dW - e`` (``e`` not
reading ``dW``) and read only there and by the ``return``, has ``dW += e``
(``dW -= e``) instead::

    dWh = rt.zeros_of(Wh)                    dWh = rt.zeros_of(Wh)
    for _iteration in ...:           ->      for _iteration in ...:
        dWh = dWh + h.T @ d_add                  dWh += h.T @ d_add

A term that is the cotangent of a read ``W[i]`` (``rt.getitem_grad(e, W, i)``:
zeros of ``W``'s shape with ``e`` at ``i``) by an index that picks each entry
at most once (numbers, slices, constants) is added at its index alone, where
the general code makes and adds a whole array of zeros per term::

    dU = dU + rt.getitem_grad(d, U, i)   ->   dU[i] += d

No other name ever holds that array, so changing it in place changes
nothing else; the sum needs no third array (the old sum, the term and the new
sum at once), which is what an expert's ``+=`` saves. The array keeps the dtype
it starts with (``W``'s, for ``rt.zeros_of``): where a term is wider (a float32
``W``, float64 data) each step rounds to it, as the gradients of JAX and PyTorch
do, where the general code rounds once at the end.
"""

import gast

from srctrans import annotations as anno
from srctrans.treewalk import walk

_IN_PLACE = (gast.Add, gast.Sub)


def accumulate_in_place(body, parameter_arrays, runtime_alias, gradients=None, numbers=()):
    """``body`` with each qualifying gradient accumulated in place (see above), changed in
    place. ``gradients`` maps a name the ``return`` gives to its parameter; ``numbers`` are
    the names measured as numbers."""
    if not body or not isinstance(body[-1], gast.Return):
        return body
    gradients = gradients or {}
    starts = {}
    for stmt in body:
        parameter = _zeros_of(stmt, runtime_alias) or _arithmetic_start(stmt, gradients)
        if parameter in parameter_arrays:
            starts.setdefault(stmt.targets[0].id, []).append((stmt, parameter))
    replaced = {}
    for name, made in starts.items():
        if len(made) != 1:
            continue
        (start, parameter), = made
        entries = _Entries(name, parameter, runtime_alias, numbers)
        for stmt in _sums_only(body, name, start, entries) or ():
            if entries.is_sum(stmt):
                term, index = entries.term(stmt.value)
                target, op = gast.Subscript(gast.Name(name, gast.Load(), None, None), index,
                                            gast.Store()), gast.Add()
            else:
                target, op, term = gast.Name(name, gast.Store(), None, None), stmt.value.op, \
                    stmt.value.right
            replaced[id(stmt)] = anno.copy(stmt, gast.AugAssign(target, op, term))
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


def _arithmetic_start(stmt, gradients):
    """``W`` when ``stmt`` is ``dW = <arithmetic>`` and ``dW`` the name returned as ``W``'s
    gradient, else None: a new array (never one another name holds) of ``W``'s shape."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in gradients
            and (isinstance(stmt.value, gast.BinOp) or isinstance(stmt.value, gast.UnaryOp)
                 and isinstance(stmt.value.op, (gast.USub, gast.UAdd)))):
        return gradients[stmt.targets[0].id]
    return None


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
        elif self._runtime(value, "add") and len(value.args) == 2:
            total, added = value.args
        else:
            return None
        if not (isinstance(total, gast.Name) and total.id == self.name
                and self._runtime(added, "getitem_grad") and len(added.args) == 3):
            return None
        term, of, index = added.args
        index = _unwrapped(index)
        if not (isinstance(of, gast.Name) and of.id == self.parameter and self._picks_once(index)
                and not any(isinstance(n, gast.Name) and n.id == self.name
                            for n in walk(added))):
            return None
        return term, index

    def _runtime(self, value, helper):
        return (isinstance(value, gast.Call) and not value.keywords
                and isinstance(value.func, gast.Attribute) and value.func.attr == helper
                and isinstance(value.func.value, gast.Name)
                and value.func.value.id == self.runtime_alias)

    def _picks_once(self, index):
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        return all(isinstance(part, gast.Slice)
                   or isinstance(part, gast.Constant) and type(part.value) is int
                   or isinstance(part, gast.Name) and part.id in self.numbers
                   for part in parts)


def _unwrapped(index):
    """``np.s_[...]``'s index, as a subscript reads it; ``index`` itself otherwise."""
    if (isinstance(index, gast.Subscript) and isinstance(index.value, gast.Attribute)
            and index.value.attr == "s_"):
        return index.slice
    return index


def _sums_only(body, name, start, entries):
    """The statements ``name = name + e`` (or ``-``, or an entry's sum: :class:`_Entries`)
    when, besides ``start``, they are all that assigns ``name``, and they and the final
    ``return`` all that read it; else None."""
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
            if not (_is_sum(node, name) or entries.is_sum(node)):
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

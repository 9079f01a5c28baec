"""The cotangent of a dict the function fills (states kept by step) stays sparse.

Requires: a specialised backward pass (its statements; the fused gradient is made from it),
and the names that hold dicts (``analyse.values.dict_valued``).
Guarantees: the gradients are unchanged. A function writing ``hs[t] = ...`` and reading
``hs[t - 1]`` at each step of a loop gets a dict cotangent ``dhs``: made as the dict's zeros
(``rt.zeros_like(hs)``, an array per key), and for each read a whole dict again
(``rt.getitem_grad``: zeros but at the key read) added to it (``rt.add``: an array per key),
so ``T`` steps cost ``T * T`` arrays where an expert adds ``T``. The writes read their
entry back (``rt.entry_cotangent``: zeros where no read reached it) and drop it
(``rt.without_entry``). When those are all the statements that assign or read ``dhs`` (it is
no gradient returned, and no other cotangent is added to it), its missing entries are zeros
to every one of them, so it starts empty and each read adds its term at its key alone::

    dhs = rt.zeros_like(hs)                          dhs = {}
    ...                                      ->      ...
    dhs = rt.add(dhs, rt.getitem_grad(d, hs, t))     dhs = rt.added_at_key(dhs, t, d, hs)
    d_tanh = rt.entry_cotangent(dhs, t, _tanh)       d_tanh = rt.entry_cotangent(dhs, t, _tanh)
    dhs = rt.without_entry(dhs, t)                   dhs = rt.without_entry(dhs, t)

(``rt.entry_cotangent`` reads an entry no read reached as zeros shaped like the value the
write stored: the dict's entry at the end of the forward pass, for a key's last write, which
is the shape the dict's zeros had.)
"""

import gast

from srctrans.nodes import load
from srctrans.optimise.entry_cotangents import is_runtime_call, runtime_call
from srctrans.treewalk import walk


def keep_dict_cotangents_sparse(body, runtime_alias, dicts, returned):
    """``body`` (changed in place) with each qualifying dict cotangent kept sparse (see the
    module). ``dicts``: the names that hold dicts; ``returned``: the names the gradients
    read (their cotangents stay whole)."""
    assigns, reads, stores, callers = {}, {}, {}, {}    # callers: id(argument) -> call
    for node in walk(gast.Module(body, [])):
        if isinstance(node, gast.Call):
            for arg in node.args:
                callers[id(arg)] = node
        if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name):
            assigns.setdefault(node.targets[0].id, []).append(node)
        elif isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Load):
                reads.setdefault(node.id, []).append(node)
            else:
                stores[node.id] = stores.get(node.id, 0) + 1
    for name, statements in assigns.items():
        if name in returned or stores.get(name) != len(statements):     # (+=, a loop target)
            continue
        kinds = [_kind(stmt, name, runtime_alias) for stmt in statements]
        starts = [stmt for stmt, kind in zip(statements, kinds) if kind == "zeros"]
        mappings = {stmt.value.args[0].id for stmt in starts} | {
            stmt.value.args[1].args[1].id for stmt, kind in zip(statements, kinds) if kind == "add"}
        if None in kinds or not starts or len(mappings) != 1 or not mappings <= dicts:
            continue
        allowed = {id(stmt.value.args[0]) for stmt, kind in zip(statements, kinds)
                   if kind in ("add", "without")}
        if not all(id(read) in allowed or _entry_read(read, callers.get(id(read)), runtime_alias)
                   for read in reads.get(name, ())):
            continue
        for stmt, kind in zip(statements, kinds):
            if kind == "zeros":
                stmt.value = gast.Dict([], [])
            elif kind == "add":
                term, mapping, key = stmt.value.args[1].args
                stmt.value = runtime_call(runtime_alias, "added_at_key",
                                          [load(name), key, term, mapping])
    return body


def _kind(stmt, name, runtime_alias):
    """What ``stmt`` (``name = ...``) does to the cotangent ``name``: ``"zeros"``
    (``name = rt.zeros_like(d)``), ``"add"`` (``name = rt.add(name, rt.getitem_grad(e, d,
    key))``), ``"without"`` (``name = rt.without_entry(name, key)``), else None."""
    value = stmt.value
    if is_runtime_call(value, runtime_alias, "zeros_like", 1) and isinstance(value.args[0],
                                                                             gast.Name):
        return "zeros"
    own = bool(getattr(value, "args", None)) and isinstance(value.args[0], gast.Name) \
        and value.args[0].id == name
    if is_runtime_call(value, runtime_alias, "without_entry", 2) and own:
        return "without"
    if is_runtime_call(value, runtime_alias, "add", 2) and own and is_runtime_call(
            value.args[1], runtime_alias, "getitem_grad", 3) and isinstance(
            value.args[1].args[1], gast.Name) and not any(
            isinstance(n, gast.Name) and n.id == name for n in walk(value.args[1])):
        return "add"
    return None


def _entry_read(read, call, runtime_alias):
    """Whether the Name ``read`` is the cotangent ``call``, ``rt.entry_cotangent(read, key,
    like)``, reads (an entry, zeros where none is)."""
    return call is not None and is_runtime_call(call, runtime_alias, "entry_cotangent", 3) \
        and call.args[0] is read

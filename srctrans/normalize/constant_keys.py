"""An entry the function writes into a dict it makes, read back at a constant key, is read as
the value written.

Requires: a function in SSA form (:mod:`~srctrans.normalize.ssa`; A-normal form: an entry's
value is a name or a constant).
Guarantees: the function computes what it did. Take a dict made once by a statement of a
block, ``d = {"a": x}`` (constant keys) or ``d = rt.dict_copy(p)`` (what ``dict(p)`` and
``dict(p, k=v)`` become), each of whose names (``d``, and any ``q = d`` of the block after it)
is assigned once and used only by statements of that block after it, and only as
``name[key]`` with a constant key: read anywhere in them, written by a whole statement
``name[key] = value`` of the block. Each read of a key written (or displayed) before it is
that value, and each other read is a read of ``d``; the writes and the other names go::

    _dict = rt.dict_copy(p)                 _dict = rt.dict_copy(p)
    _value = _item * _item_2                _value = _item * _item_2
    _dict['w_eff'] = _value          ->     _item_3 = _value
    p_2 = _dict                             _item_4 = _dict['b']
    _item_3 = p_2['w_eff']
    _item_4 = p_2['b']

A name bound once holds the object the entry held, and no other name or call sees the dict,
so no read can tell. The derivatives then pass through names, not through a dict's entries
written, read back and dropped (``dict(p, w_eff=p["w"] * p["scale"])`` in a ridge loss: no
cotangent of the copy with the key added, read back and taken out again). A dict used any
other way is left as it is.
"""

import gast

from srctrans.nodes import clone, constant_key, load, subscripts_of
from srctrans.normalize.desugar import statement_lists
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import replace_children, walk


def forward_constant_keys(function, runtime_alias):
    """Rewrite, in place, the reads of each dict of ``function`` the module describes
    (``runtime_alias``: the name generated code calls the runtime by)."""
    blocks = statement_lists(function)
    if not any(_made(stmt, runtime_alias) for block in blocks for stmt in block):
        return                                       # (no dict made: no walk of the function)
    stores, reads = name_counts([function])          # (a parameter counts as assigned)
    uses = {name: stores.get(name, 0) + reads.get(name, 0) for name in stores.keys() | reads}
    for block in blocks:
        made = [stmt for stmt in block if _made(stmt, runtime_alias) and stores[stmt.targets[0].id] == 1]
        for stmt in made:        # (forwarding one dict's reads leaves another's uses as counted)
            _forward(block, stmt, stores, uses)


def _made(stmt, runtime_alias):
    """Whether ``stmt`` is ``d = {constant keys: ...}`` or ``d = rt.dict_copy(name)``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    value = stmt.value
    if isinstance(value, gast.Dict):
        return all(constant_key(key) is not None for key in value.keys)
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "dict_copy" and isinstance(value.func.value, gast.Name)
            and value.func.value.id == runtime_alias and len(value.args) == 1
            and isinstance(value.args[0], gast.Name) and not value.keywords)


def _forward(block, made, stores, uses):
    """Forward the reads of the dict ``made`` assigns (see the module), when it qualifies
    (``stores``, ``uses``: how often each name is assigned, and appears, in the function)."""
    name = made.targets[0].id
    start = block.index(made)
    names, aliases = {name}, []
    for stmt in block[start + 1:]:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name) \
                and stmt.value.id in names and stores.get(stmt.targets[0].id) == 1:
            names.add(stmt.targets[0].id)
            aliases.append(stmt)
    plan, seen = [], 1 + 2 * len(aliases)             # the assignment, each alias's two names
    for stmt in block[start + 1:]:
        if any(stmt is alias for alias in aliases):
            continue
        entries = _entries(stmt, names)
        if entries is None:
            return
        reads, write = entries
        if write is not None and _value(stmt.value, stores) is None:
            return
        seen += len(reads) + (write is not None)
        plan.append((stmt, reads, write))
    if seen != sum(uses[name] for name in names):
        return                                        # a name used elsewhere, or another way
    written = {}
    if isinstance(made.value, gast.Dict):
        for key, value in zip(made.value.keys, made.value.values):
            if _value(value, stores) is None:
                return
            written[constant_key(key)] = value
    dropped = {id(alias) for alias in aliases}
    for stmt, reads, write in plan:
        replaced = {id(node): clone(written[key]) if key in written
                    else gast.Subscript(load(name), gast.Constant(key, None), gast.Load())
                    for node, key in reads}
        if replaced:
            replace_children(stmt, lambda node, found=replaced: found.get(id(node), node))
        if write is not None:
            written[write[1]] = stmt.value
            dropped.add(id(stmt))
    remaining = [stmt for stmt in block if id(stmt) not in dropped]
    if not any(isinstance(n, gast.Name) and n.id == name for s in remaining for n in walk(s)
               if s is not made):
        remaining.remove(made)                        # every read forwarded: the dict is not made
    block[:] = remaining


def _entries(stmt, names):
    """``([(read node, key)], write)`` of the names' entries in ``stmt`` (``write``: (the
    target's node, its key) when ``stmt`` is ``name[key] = value``, else None); None when a
    name is used any other way, or an entry's key is not a constant."""
    subscripts = subscripts_of(stmt, names)
    if subscripts is None:
        return None
    reads, write = [], None
    for node in subscripts:
        key = constant_key(node.slice)
        if key is None:
            return None
        if isinstance(node.ctx, gast.Load):
            reads.append((node, key))
        elif isinstance(stmt, gast.Assign) and stmt.targets == [node] and write is None:
            write = (node, key)
        else:
            return None
    return reads, write


def _value(node, stores):
    """``node`` when it is a constant or a local name assigned once (its value then holds),
    else None."""
    if isinstance(node, gast.Constant) or isinstance(node, gast.Name) and stores.get(node.id) == 1:
        return node
    return None

"""A tuple the function packs and only unpacks again is not made: each target is bound to
the entry's value.

Requires: a function in SSA form (:mod:`~srctrans.normalize.ssa`; A-normal form: a tuple
display's entries are names or constants).
Guarantees: the function computes what it did. Take a tuple made once by a statement of a
block, ``t = (a, b)``, whose entries are constants or names assigned once and not between it
and where it is unpacked, and each of whose names (``t``, and any ``u = t`` of the block
after it) is assigned once and used only by statements of that block after it that unpack
it into as many names: each such unpacking binds its names to the entries, and the tuple and
its other names go::

    _forward_2 = (_add_3, cache_2)          out = _add_3
    _t = _forward_2                  ->     cache = cache_2
    out, cache = _t

Each target then holds the object it held, and no other name or call saw the tuple. This is
what a helper returning ``out, cache`` becomes once it is inlined, so the passes after see
``cache`` as the dict the helper made (:mod:`~srctrans.normalize.constant_keys` then reads
its entries as their values). A tuple used any other way is left as it is.
"""

import gast

from srctrans import annotations as anno
from srctrans.nodes import assign, clone, single_target
from srctrans.normalize.desugar import located, statement_lists
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import walk


def forward_packed_tuples(function):
    """Rewrite, in place, the unpackings of each tuple of ``function`` the module describes."""
    blocks = statement_lists(function)
    if not any(single_target(stmt) is not None and isinstance(stmt.value, gast.Tuple)
               for block in blocks for stmt in block):
        return                                       # (no tuple packed: no walk of the function)
    stores, reads = name_counts([function])          # (a parameter counts as assigned)
    uses = {name: stores.get(name, 0) + reads.get(name, 0) for name in stores.keys() | reads}
    for block in blocks:
        packed = [stmt for stmt in block if _packs(stmt, stores)]
        for stmt in packed:
            _forward(block, stmt, stores, uses)


def _packs(stmt, stores):
    """Whether ``stmt`` is ``t = (entries)``, ``t`` assigned once, each entry a constant or a
    name assigned once."""
    return stores.get(single_target(stmt)) == 1 and isinstance(stmt.value, gast.Tuple) and all(
            isinstance(e, gast.Constant) or isinstance(e, gast.Name) and stores.get(e.id) == 1
            for e in stmt.value.elts)


def _unpacked(stmt, names, count):
    """The target names when ``stmt`` is ``x, y = name`` (``count`` plain names, ``name``
    among ``names``), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.value, gast.Name) and stmt.value.id in names):
        return None
    target = stmt.targets[0]
    if isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == count \
            and all(isinstance(e, gast.Name) for e in target.elts):
        return target.elts
    return None


def _forward(block, packed, stores, uses):
    """Bind the targets of each unpacking of the tuple ``packed`` assigns to its entries
    (see the module), when the tuple qualifies."""
    entries = packed.value.elts
    start = block.index(packed)
    names, aliases, unpackings = {packed.targets[0].id}, [], []
    entry_names = {e.id for e in entries if isinstance(e, gast.Name)}
    for index in range(start + 1, len(block)):
        stmt = block[index]
        if single_target(stmt) is not None and isinstance(stmt.value, gast.Name) \
                and stmt.value.id in names and stores.get(stmt.targets[0].id) == 1:
            names.add(stmt.targets[0].id)
            aliases.append(stmt)
            continue
        targets = _unpacked(stmt, names, len(entries))
        if targets is not None:
            if _stores_between(block[start + 1:index], entry_names):
                return                                # an entry's name rebound before it
            unpackings.append((stmt, targets))
    seen = 1 + 2 * len(aliases) + len(unpackings)     # the packing, the aliases' two names
    if not unpackings or seen != sum(uses[name] for name in names):
        return                                        # a name used elsewhere, or another way
    rewritten = {}
    for stmt, targets in unpackings:
        rewritten[id(stmt)] = [located(assign(target.id, clone(entry)), stmt)
                               for target, entry in zip(targets, entries)]
    dropped = {id(packed)} | {id(alias) for alias in aliases}
    new = []
    for stmt in block:
        if id(stmt) in rewritten:
            new.extend(anno.copy(stmt, s) for s in rewritten[id(stmt)])   # (its line)
        elif id(stmt) not in dropped:
            new.append(stmt)
    block[:] = new


def _stores_between(statements, names):
    return any(isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)
               and node.id in names for stmt in statements for node in walk(stmt))


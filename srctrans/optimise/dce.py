"""Dead-code elimination and copy propagation.

Requires: a list of gast statements; ``if`` statements and the bodies of loops with no
``else`` are looked into (a loop's liveness is a fixed point over its steps).
Guarantees: :func:`eliminate_dead_code` keeps exactly the statements that have
an effect or whose targets are read later (or are in ``live_out``), in the
branches of an ``if`` too, and drops an ``if`` left with nothing to do;
:func:`propagate_copies` removes ``a = b`` copies whose names are never
reassigned and renames the later reads of ``a`` to ``b``.
"""

import gast

from srctrans import annotations as anno
from srctrans.analyse.values import makes_fresh
from srctrans.annotations import Anno
from srctrans.nodes import rename_reads
from srctrans.treewalk import own_nodes, walk, walk_names


_COMPOUND = (gast.If, gast.For, gast.While)


def targets_of(stmt):
    """The names a statement assigns."""
    if isinstance(stmt, gast.Assign):
        return [n.id for t in stmt.targets for n in walk_names(t)
                if isinstance(n.ctx, gast.Store)]
    return []


def reads_of(node):
    """The names an expression or statement reads."""
    return {n.id for n in walk_names(node) if isinstance(n.ctx, gast.Load)}


def needs_of(node):
    """The names a statement needs bound: those it reads (:func:`reads_of`), an augmented
    assignment's target, and those it deletes (for liveness: ``del x`` raises unless ``x``
    holds a value)."""
    found = set()
    for n in walk(node):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Store):
            found.add(n.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            found.add(n.target.id)
    return found


def stores_of(node):
    """The names a statement (and the blocks inside it) assigns or deletes."""
    return _stored_names(walk_names(node))


def name_positions(statements):
    """``(stores, reads)``: name -> the indices of ``statements`` that assign it, and that
    read it, once for each time they do."""
    stores, reads = {}, {}
    for index, stmt in enumerate(statements):
        for node in walk_names(stmt):
            table = reads if isinstance(node.ctx, gast.Load) else stores
            table.setdefault(node.id, []).append(index)
    return stores, reads


def name_counts(statements):
    """``(stores, reads)``: name -> how many times ``statements`` assign it, and read it."""
    stores, reads = {}, {}
    for stmt in statements:
        for node in walk_names(stmt):
            counts = reads if isinstance(node.ctx, gast.Load) else stores
            counts[node.id] = counts.get(node.id, 0) + 1
    return stores, reads


def eliminate_dead_code(statements, live_out, is_pure):
    """The statements of ``statements`` that matter for ``live_out`` or have effects.

    ``is_pure(stmt)`` tells whether a statement can be dropped when its targets
    are dead. An entry written into a dict the statements make and only ever index
    (:func:`private_dicts`) is dead when nothing reads the dict after it (a copy of a
    dict argument the function writes running statistics into, say, in a gradient).
    """
    return _Liveness(statements, is_pure).block(statements, set(live_out))[0]


def private_dicts(statements):
    """The names assigned once, a new dict (a display, a comprehension, ``rt.dict_copy(...)``)
    or a new array (``np.zeros(...)``: ``analyse.values.makes_fresh``), and read only as the
    container an entry is read from or written into: no other name holds it, so a write into
    it is seen only through a later read of its name."""
    made, indexed = set(), {}
    stores, loads = name_counts(statements)
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], gast.Name) \
                    and (_new_dict(node.value) or _new_array(node.value)):
                made.add(node.targets[0].id)
            elif isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
                indexed[node.value.id] = indexed.get(node.value.id, 0) + 1
    return {name for name in made if stores.get(name) == 1
            and loads.get(name, 0) == indexed.get(name, 0)}


def _new_dict(value):
    """A dict display or comprehension, or ``rt.dict_copy(...)`` (what ``dict(d)`` is made)."""
    if isinstance(value, (gast.Dict, gast.DictComp)):
        return True
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "dict_copy" and isinstance(value.func.value, gast.Name))


def _new_array(value):
    return isinstance(value, gast.Call) and makes_fresh(anno.get(value, Anno.CALLEE), value)


def _dead_entry_write(stmt, live, private, is_pure):
    """Whether ``stmt`` is ``d[k] = v`` into a private dict no later statement reads."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Subscript)
            and isinstance(stmt.targets[0].value, gast.Name)
            and stmt.targets[0].value.id in private and stmt.targets[0].value.id not in live
            and is_pure(stmt))


class _Liveness:
    """Dead-code elimination of one list of statements: ``is_pure`` (as
    :func:`eliminate_dead_code` takes it), the private dicts of the statements, and the
    names they assign only ``range(...)`` of arguments that call nothing (a loop over one
    whose steps do nothing can go)."""

    def __init__(self, statements, is_pure):
        self.is_pure = is_pure
        self.private = private_dicts(statements)
        values = {}
        for stmt in statements:
            for node in walk(stmt):
                if isinstance(node, gast.Assign):
                    for name in targets_of(node):
                        values.setdefault(name, []).append(node.value)
        self.ranges = {name for name, assigned in values.items() if all(map(_range, assigned))}
        self.names = {}                         # statement -> (targets, reads)

    def block(self, statements, live, prune=True):
        """(the statements of one block that are kept, the names live before it); ``live``
        (the names live after the block) is updated in place. With ``prune`` false the
        blocks of compound statements are left as they are (a loop's rounds of
        :meth:`loop`)."""
        kept = []
        for stmt in reversed(statements):
            if isinstance(stmt, gast.If):
                body, live_body = self.block(stmt.body, set(live), prune)
                orelse, live_else = self.block(stmt.orelse, set(live), prune)
                if not body and not orelse and not _calls(stmt.test):
                    continue                              # a branch left with nothing to do
                if prune:
                    stmt.body, stmt.orelse = body, orelse
                    if not stmt.body and stmt.orelse:     # if c: pass else: B  ->  if not c: B
                        stmt.test = gast.UnaryOp(gast.Not(), stmt.test)
                        stmt.body, stmt.orelse = stmt.orelse, []
                    stmt.body = stmt.body or [gast.Pass()]
                live.clear()
                live |= live_body | live_else | reads_of(stmt.test)
                kept.append(stmt)
                continue
            if isinstance(stmt, (gast.For, gast.While)) and not stmt.orelse:
                if self.loop(stmt, live, prune):
                    kept.append(stmt)
                continue
            if isinstance(stmt, gast.Pass):
                continue
            targets, reads = self._names(stmt)
            if targets and (self.is_pure(stmt) or anno.get(stmt, Anno.CHANGES_ONLY)) \
                    and not live.intersection(targets) \
                    or self.private and _dead_entry_write(stmt, live, self.private, self.is_pure):
                continue
            live.difference_update(targets)
            live |= reads
            kept.append(stmt)
        kept.reverse()
        return kept, live

    def _names(self, stmt):
        """``(targets, reads)`` of a simple statement, read once however many rounds of a
        loop's fixed point (and of the loops around it) look at it."""
        found = self.names.get(stmt)
        if found is None:
            changed = anno.get(stmt, Anno.CHANGES_ONLY)    # a list's append, dead with it
            found = self.names[stmt] = ([changed] if changed else targets_of(stmt),
                                        reads_of(stmt))
        return found

    def loop(self, loop, live, prune):
        """Whether ``loop`` stays (a loop over a ``range`` whose steps do nothing live does
        not). Update ``live`` (the names live after ``loop``) to those live before it, and
        with ``prune`` drop the body's dead statements. Live after a step is what follows the
        loop and what the next step needs (a ``while`` loop's test too): a fixed point,
        reached when a round adds no name, so an accumulator nothing after the loop reads is
        dead with the statements that update it."""
        if isinstance(loop, gast.For):
            header = reads_of(loop.iter)                  # read once, before the first step
            assigned = set(targets_of(gast.Assign(targets=[loop.target], value=loop.iter)))
            target_reads = reads_of(loop.target)          # (a subscript or attribute target)
        else:
            header, assigned, target_reads = set(), set(), reads_of(loop.test)
        after = set(live) | (set() if isinstance(loop, gast.For) else reads_of(loop.test))
        while True:
            step = self.block(loop.body, set(after), prune=False)[1]
            step = (step - assigned) | target_reads
            if step <= after:
                break
            after |= step
        body = self.block(loop.body, set(after), prune)[0]
        if not body and self._counted(loop) and not live.intersection(assigned):
            return False                              # nothing to do, and no count to keep
        if prune:
            loop.body = body or [gast.Pass()]
        live.clear()
        live |= after | header
        return True

    def _counted(self, loop):
        """Whether ``loop`` is ``for NAME in range(...)`` (or a name of :attr:`ranges`)."""
        return (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
                and (_range(loop.iter) or isinstance(loop.iter, gast.Name)
                     and loop.iter.id in self.ranges))


def _range(value):
    """Whether ``value`` is ``range(...)`` of arguments that call nothing."""
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and value.func.id == "range" and not value.keywords
            and not any(_calls(a) for a in value.args))


def _calls(node):
    return any(isinstance(n, gast.Call) for n in walk(node))


def _without_self_copies(statements):
    """``statements`` without ``a = a``, in nested blocks too (changed in place)."""
    kept = [stmt for stmt in statements
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name)
                    and stmt.targets[0].id == stmt.value.id)]
    for stmt in kept:
        if isinstance(stmt, _COMPOUND):
            stmt.body = _without_self_copies(stmt.body) or [gast.Pass()]
            stmt.orelse = _without_self_copies(stmt.orelse)
    return kept


def propagate_copies(statements):
    """Remove single-assignment copies ``a = b``; return (statements, renaming).

    A copy inside an ``if``'s branch or a loop's body stays, and the reads after it
    there may read ``b`` instead (see :func:`_propagate_in_branch`). A copy of a name to
    itself, ``a = a`` (what a loop's adjoint carried unchanged leaves), goes anywhere.
    """
    statements = _without_self_copies(statements)
    count, last = {}, {}
    for index, stmt in enumerate(statements):
        for node in walk(stmt):                # assignments inside blocks count too
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                count[node.id] = count.get(node.id, 0) + 1
                last[node.id] = index
    renaming = {}
    kept = []
    for index, stmt in enumerate(statements):
        rename_reads(stmt, renaming)
        if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Name)):
            target, source = stmt.targets[0].id, stmt.value.id
            if count[target] == 1 and last.get(source, -1) < index:
                renaming[target] = source
                continue
        kept.append(stmt)
    compound = [stmt for stmt in kept if isinstance(stmt, _COMPOUND)]
    stores = _nested_stores(compound)
    blocks = [block for stmt in compound for block in _blocks_of(stmt, stores)]
    while blocks:
        blocks.extend(_propagate_in_block(*blocks.pop(), stores))
    return kept, renaming


def _blocks_of(stmt, stores):
    """``(block, carried)`` for each block of a compound statement: ``carried`` names what
    a loop's body reads before it assigns it (a value from the step before), else None."""
    if isinstance(stmt, gast.If):
        return [(stmt.body, None), (stmt.orelse, None)]
    return [(stmt.body, _read_before_assigned(stmt.body, stores))]


def _read_before_assigned(block, stores):
    assigned, exposed = set(), set()
    for stmt in block:
        exposed |= reads_of(stmt) - assigned
        assigned |= stores[id(stmt)]
    return exposed


def _nested_stores(statements):
    """``id(stmt) -> the names stmt assigns`` for each of ``statements`` and each statement in
    their blocks, a compound statement's from its own nodes and its blocks' statements: each
    node is read once, where :func:`stores_of` of each statement read a node once for each
    block around it."""
    order, todo = [], list(statements)
    while todo:                             # parents before the statements of their blocks
        stmt = todo.pop()
        order.append(stmt)
        if isinstance(stmt, _COMPOUND):
            todo.extend(stmt.body + stmt.orelse)
    stores = {}
    for stmt in reversed(order):            # and so a block's statements before their parent
        if isinstance(stmt, _COMPOUND):
            names = _stored_names(own_nodes(stmt))
            for inner in stmt.body + stmt.orelse:
                names |= stores[id(inner)]
        else:
            names = stores_of(stmt)
        stores[id(stmt)] = names
    return stores


def _propagate_in_block(block, carried, nested_stores):
    """Rename, in place, the reads of a copy ``a = b`` made in an ``if``'s branch or a
    loop's body by the statements after it there (and the blocks inside them), until
    ``a`` or ``b`` is assigned again; the copy stays for reads after the block, and
    dead-code elimination drops it if there are none. In a branch ``b`` must come from
    before the branch (a value the branch computed is left to
    :func:`inline_temporaries`); in a loop's body ``a`` must not be ``carried`` (read
    by the next step before it is assigned: the copy stays, and ``a`` reads better).
    Returns the blocks of the compound statements inside."""
    copies, inner, assigned = {}, [], set()
    for stmt in block:
        stores = nested_stores[id(stmt)]
        if isinstance(stmt, _COMPOUND):
            for name in [a for a, b in copies.items() if a in stores or b in stores]:
                del copies[name]              # changed inside it: reads there see the change
            rename_reads(stmt, copies)
            inner.extend(_blocks_of(stmt, nested_stores))
            assigned |= stores
            continue
        rename_reads(stmt, copies)
        for name in [a for a, b in copies.items() if a in stores or b in stores]:
            del copies[name]
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name)
                and stmt.value.id != stmt.targets[0].id
                and (stmt.targets[0].id not in carried if carried is not None
                     else stmt.value.id not in assigned)):
            copies[stmt.targets[0].id] = stmt.value.id
        assigned |= stores
    return inner


def _stored_names(nodes):
    return {n.id for n in nodes if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}

"""A parameter that is a container gets its cotangent entry by entry, made once at the end.

Requires: a specialised backward pass (its statements, no ``return``; the fused
gradient is made from it afterwards).
Guarantees: the values computed are unchanged. A function reading entries of a
dict (or list, tuple) parameter by constant keys (``q["mu"]``, ``params[0]``) gets,
for each read, the container's cotangent in full: zeros everywhere but at the key
(``rt.getitem_grad``), added to the sum so far (``rt.add``), entry by entry. For ``m``
reads of a container of ``k`` entries that is ``m * k`` arrays made and added where an
expert adds ``m``. When every statement that assigns the cotangent ``dq`` is one of
those, in the function's own block (no loop or branch), and only they, the ``return``
and statements after the last of them read it, each key's terms are summed in a name of
their own and the container is made once, after the last of them::

    dq = rt.getitem_grad(a, q, 'mu')                 dq_entry = a
    ...                                      ->      ...
    dq = rt.add(dq, rt.getitem_grad(b, q, 'sd'))     dq_entry_2 = b
    ...                                              ...
    dq = rt.add(dq, rt.getitem_grad(c, q, 'mu'))     dq_entry = rt.add(dq_entry, c)
                                                     dq = rt.container_cotangent(
                                                         {'mu': dq_entry, 'sd': dq_entry_2}, q)

The same holds when the cotangent starts as the container's zeros (``dq =
rt.zeros_like(q)``) or as a first read's term, in the function's own block, and the
reads that add to it run in loops or branches: each key's sum starts there, as that term
or as None (``rt.add`` of None and a term is the term), and the container is made after
the statement of the function's block holding the last read::

    demb = rt.zeros_like(emb)                        demb_entry = None
    for _iteration in ...:                   ->      for _iteration in ...:
        demb = rt.add(demb, rt.getitem_grad(             demb_entry = rt.add(demb_entry, d)
            d, emb, 'out'))                          demb = rt.container_cotangent(
                                                         {'out': demb_entry}, emb)

A term that is a whole cotangent of the container (``dp = rt.add(dp, d_rest)``: what the
copy ``dict(p, k=v)`` passes back for ``p``'s other entries) is summed in a name of its
own, and added to the container made from the entries' sums::

    dp = rt.getitem_grad(a, p, 'w')                  dp_entry = a
    dp = rt.add(dp, d_rest)                  ->      dp_rest = d_rest
    dp = rt.add(dp, rt.getitem_grad(b, p, 'b'))      dp_entry_2 = b
                                                     dp = rt.add(rt.container_cotangent(
                                                         {'w': dp_entry, 'b': dp_entry_2}, p),
                                                         dp_rest)

Within any one block (a loop's step, a branch) a run of such statements (a first read's
term, then sums onto it, of one container no statement between them assigns, with no
other statement between them using the cotangent) is summed alike, and the container made
after the last of them: a recurrent step reading ``state.h`` three times makes the state's
cotangent once per step (:func:`sum_chains_in_blocks`).

A list's reads from its end or by a slice (``weights[-1]``, ``weights[:-1]``, as a network's
last layer and the others are read) are summed alike, each index's terms by the index as
written, and the container made by ``rt.picks_cotangent`` from the indices and their sums
(two indices may pick one entry, ``-1`` and ``2`` of three: it adds them)::

    dw = rt.getitem_grad(a, w, -1)                   dw_entry = a
    ...                                      ->      ...
    dw = rt.add(dw, rt.getitem_grad(b, w,            dw_entry_2 = b
                                    np.s_[:-1]))     dw = rt.picks_cotangent(
                                                         (dw_entry, dw_entry_2), (-1, np.s_[:-1]), w)

``rt.container_cotangent`` gives each entry what ``rt.add`` of its zeros and its terms
gives (zeros where no read wrote one, and for an int entry). An object's attributes read
by name (``self.W``, ``p.mu``: ``rt.getattr_grad``) are summed alike, and
``rt.attributes_cotangent`` makes the object's cotangent (a dict of the attributes read).
"""

import collections

import gast

from srctrans.nodes import assign, clone, load
from srctrans.optimise.dce import reads_of, stores_of
from srctrans.optimise.entry_cotangents import is_runtime_call, runtime_call
from srctrans.treewalk import walk

_Placement = collections.namedtuple("_Placement", "stmt first container key term helper index")
_WHOLE = "whole"              # a placement's helper when its term is the whole container's
# what a read leaves in the cotangent -> what makes the cotangent from the sums by key
_MADE_BY = {"getitem_grad": "container_cotangent", "getattr_grad": "attributes_cotangent"}


def write_container_cotangents(body, runtime_alias, fresh, arrays=frozenset()):
    """``body`` with each qualifying container cotangent summed key by key (see above);
    ``fresh(base)`` names the sums. ``arrays``: names known to hold arrays or numbers (of a
    measured shape), whose entries' cotangents are no container's (``v[0] += e`` of an
    array ``v``)."""
    stores, loads = _uses(body)
    replaced, inserted = {}, {}       # id(statement) -> its replacements, what follows it
    starts = _zeros_starts(body, runtime_alias)
    top_level = {id(stmt) for stmt in body}
    for name, placements in _placements(body, runtime_alias).items():
        if any(p.container in arrays for p in placements):
            continue
        start = starts.get(name)
        if start is None and placements[0].first and id(placements[0].stmt) in top_level:
            start = placements[0]                    # the first read's term starts the sums
        nested = not all(id(p.stmt) in top_level for p in placements)
        position = _holding(body, placements[-1].stmt)    # the statement holding the last
        later = _loads_after(body, name, position)
        if nested and start is not None and _qualifies_from_start(
                name, start, placements, stores, loads, later):
            sums = {}
            for placement in placements:
                if placement.key not in sums:
                    sums[placement.key] = fresh(_sum_name(name, placement))
                if placement is not start:
                    known = sums[placement.key]
                    replaced[id(placement.stmt)] = [gast.copy_location(assign(
                        known, runtime_call(runtime_alias, "add", [load(known), placement.term])),
                        placement.stmt)]
            replaced[id(start.stmt)] = [gast.copy_location(assign(
                total, start.term if key == start.key else gast.Constant(None, None)), start.stmt)
                for key, total in sums.items()]
            last = body[position]
        elif not nested and _qualifies(name, placements, stores, loads, later):
            sums = {}
            for placement in placements:
                known = sums.get(placement.key)
                if known is None:
                    sums[placement.key] = known = fresh(_sum_name(name, placement))
                    value = placement.term
                else:
                    value = runtime_call(runtime_alias, "add", [load(known), placement.term])
                replaced[id(placement.stmt)] = [gast.copy_location(assign(known, value),
                                                                   placement.stmt)]
            last = placements[-1].stmt
        else:
            continue
        rest = sums.pop(None, None)
        made = _made(placements, sums, runtime_alias)
        if rest is not None:
            made = runtime_call(runtime_alias, "add", [made, load(rest)])
        inserted.setdefault(id(last), []).append(assign(name, made))  # (two containers'
    return _rewritten(body, replaced, inserted)                     # last reads may share one)


def _made(placements, sums, runtime_alias):
    """The expression making the container's cotangent from ``sums`` (key -> the name of its
    terms' sum) of ``placements``: ``rt.container_cotangent({key: sum, ...}, q)`` (or
    ``rt.attributes_cotangent``), or, where a key is a list's own (from the end, a slice),
    ``rt.picks_cotangent((sum, ...), (index, ...), q)``."""
    container = load(placements[0].container)
    if not any(_is_list_index(key) for key in sums):
        found = gast.Dict([gast.Constant(key, None) for key in sums],
                          [load(total) for total in sums.values()])
        return runtime_call(runtime_alias, _MADE_BY[placements[0].helper], [found, container])
    written = {p.key: p.index for p in placements if p.key in sums}
    indices = [clone(written[key]) for key in sums]
    return runtime_call(runtime_alias, "picks_cotangent", [
        gast.Tuple([load(total) for total in sums.values()], gast.Load()),
        gast.Tuple(indices, gast.Load()), container])


def _key(node):
    """The key a read's index constant stands for: a str or int (``-1`` written either way),
    or, for a slice of constant ints (``np.s_[:-1]``), ``("slice", start, stop, step)``;
    None for any other index."""
    if isinstance(node, gast.Constant) and (isinstance(node.value, str) or
                                            type(node.value) is int):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute) and \
            node.value.attr == "s_" and isinstance(node.slice, gast.Slice):
        bounds = [None if part is None else _key(part) for part in
                  (node.slice.lower, node.slice.upper, node.slice.step)]
        if all(bound is None or type(bound) is int for bound in bounds) and not (
                node.slice.step is not None and bounds[2] in (None, 0)):
            parts = (node.slice.lower, node.slice.upper, node.slice.step)
            if all(part is None or bound is not None for part, bound in zip(parts, bounds)):
                return ("slice", *bounds)
    return None


def _is_list_index(key):
    """Whether a read's key is a list's own: from the end, or a slice."""
    return type(key) is tuple or type(key) is int and key < 0


def _sum_name(name, placement):
    return f"{name}_rest" if placement.helper == _WHOLE else f"{name}_entry"


def _rewritten(block, replaced, inserted):
    """``block`` with its statements (nested ones too) replaced and followed as asked."""
    result = []
    for stmt in block:
        for kept in replaced.get(id(stmt), [stmt]):
            for field in ("body", "orelse"):
                inner = getattr(kept, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(kept, field, _rewritten(inner, replaced, inserted))
            result.append(kept)
        result.extend(inserted.get(id(stmt), ()))
    return result


def _zeros_starts(body, runtime_alias):
    """name -> the statement of ``body``'s own block ``name = rt.zeros_like(q)`` (or
    ``rt.zeros_of``), ``q`` a name, as a placement-like record (its ``container``)."""
    found = {}
    for stmt in body:
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and any(is_runtime_call(stmt.value, runtime_alias, h, 1)
                        for h in ("zeros_like", "zeros_of"))
                and isinstance(stmt.value.args[0], gast.Name)):
            found[stmt.targets[0].id] = _Placement(stmt, True, stmt.value.args[0].id, None,
                                                   None, None, None)    # (no key, no term)
    return found


def _qualifies_from_start(name, start, placements, stores, loads, later):
    """``name`` starts as ``start`` (its container's zeros, or the first read's term, in the
    function's own block), every other assignment is one of ``placements`` (sums onto it,
    of that container, anywhere), and only they, the return and the ``later`` reads (in
    the function's block, after the statement holding the last placement) read it; the
    container is never assigned."""
    container, helper = start.container, placements[0].helper
    zeros = start is not placements[0]
    sums = placements if zeros else placements[1:]
    return (not any(p.first for p in sums) and helper != _WHOLE
            and all(p.container == container and p.helper == helper
                    for p in placements if p.helper != _WHOLE)
            and stores.get(name) == len(sums) + 1
            and loads.get(name, 0) == len(sums) + later
            and not stores.get(container))


def _qualifies(name, placements, stores, loads, later):
    """Every assignment of ``name`` is one of ``placements`` (the first a placement, the others
    sums, all of one container no statement assigns), and only they, the return and the
    ``later`` reads (after the last placement) read it."""
    container, helper = placements[0].container, placements[0].helper
    return (len(placements) >= 2 and placements[0].first and helper != _WHOLE
            and not any(p.first for p in placements[1:])
            and all(p.container == container and p.helper == helper
                    for p in placements if p.helper != _WHOLE)
            and stores.get(name) == len(placements)
            and loads.get(name, 0) == len(placements) - 1 + later
            and not stores.get(container))


def _holding(body, stmt):
    """The position in ``body``'s own block of the statement that is or holds ``stmt``."""
    return next(i for i, top in enumerate(body) if any(n is stmt for n in walk(top)))


def _loads_after(body, name, position):
    """How many times the statements of ``body``'s own block after ``position`` read
    ``name``."""
    return sum(1 for top in body[position + 1:] for n in walk(top)
               if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load))


def _placements(body, runtime_alias):
    """name -> the statements of ``body``'s own block that place a term in ``name``, a
    container's (or an object's) cotangent, in order: ``name = rt.getitem_grad(term, q,
    key)`` and ``name = rt.add(name, rt.getitem_grad(term, q, key))``, ``key`` a constant
    (``rt.getattr_grad`` and an attribute's name alike); ``name = rt.add(name, d)``, ``d``
    another name, adds a whole cotangent (key None)."""
    found = {}
    for stmt in (node for top in body for node in walk(top) if isinstance(node, gast.stmt)):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)):
            continue
        name, value, first = stmt.targets[0].id, stmt.value, True
        if is_runtime_call(value, runtime_alias, "add", 2) and \
                isinstance(value.args[0], gast.Name) and value.args[0].id == name:
            value, first = value.args[1], False
        if not first and isinstance(value, gast.Name) and value.id != name:
            found.setdefault(name, []).append(_Placement(stmt, False, None, None, value, _WHOLE,
                                                          None))
            continue
        helper = next((h for h in _MADE_BY if is_runtime_call(value, runtime_alias, h, 3)), None)
        if helper is None:
            continue
        term, container, index = value.args
        key = _key(index)
        if (isinstance(container, gast.Name) and key is not None
                and (helper == "getitem_grad" or isinstance(key, str))
                and not any(isinstance(n, gast.Name) and n.id == name for n in walk(term))):
            found.setdefault(name, []).append(
                _Placement(stmt, first, container.id, key, term, helper, index))
    return found


def _uses(body):
    """``(stores, loads)``: how many times each name is assigned and read in ``body``,
    nested blocks too."""
    stores, loads = collections.Counter(), collections.Counter()
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name):
                (stores if isinstance(node.ctx, gast.Store) else loads)[node.id] += 1
    return stores, loads


def sum_chains_in_blocks(body, runtime_alias, fresh, arrays=frozenset()):
    """``body`` (changed in place, nested blocks too) with each run of reads that place terms
    in one container's cotangent, within one block, summed key by key (see the module): in
    each block, ``name = rt.getitem_grad(a, q, k)`` then ``name = rt.add(name,
    rt.getitem_grad(b, q, j))`` ... (``rt.getattr_grad`` alike), where the statements between
    them neither read nor assign ``name`` nor assign ``q``, become sums by key and ``name =
    rt.container_cotangent({k: ..., j: ...}, q)`` after the last. ``arrays``: names of
    measured shape (an array's entries are no container's)."""
    pending = [body]
    while pending:
        block = pending.pop()
        block[:] = _block_chains_summed(block, runtime_alias, fresh, arrays)
        for stmt in block:
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    pending.append(inner)
    return body


def _block_chains_summed(block, runtime_alias, fresh, arrays):
    chains, closed = {}, []                 # name -> its open run of placements
    for stmt in block:
        placement = _placement(stmt, runtime_alias)
        if placement is not None and placement.container in arrays:
            placement = None
        name = stmt.targets[0].id if placement is not None else None
        run = chains.get(name)
        extends = (placement is not None and not placement.first and run is not None
                   and run[0].container == placement.container
                   and run[0].helper == placement.helper)
        stored, loaded = stores_of(stmt), reads_of(stmt)
        for other in list(chains):          # what this statement does to the open runs
            if other == name and extends:
                continue
            first = chains[other][0]
            if other in stored or other in loaded or first.container in stored:
                closed.append(chains.pop(other))
        if extends:
            run.append(placement)
        elif placement is not None and placement.first and placement.container not in stored:
            chains[name] = [placement]
    closed.extend(chains.values())
    replaced, after = {}, {}
    for run in closed:
        if len(run) < 2:
            continue
        name = run[0].stmt.targets[0].id
        sums = {}
        for placement in run:
            total = sums.get(placement.key)
            if total is None:
                sums[placement.key] = total = fresh(f"{name}_entry")
                value = placement.term
            else:
                value = runtime_call(runtime_alias, "add", [load(total), placement.term])
            replaced[id(placement.stmt)] = gast.copy_location(assign(total, value),
                                                              placement.stmt)
        after[id(run[-1].stmt)] = gast.copy_location(
            assign(name, _made(run, sums, runtime_alias)), run[-1].stmt)
    if not replaced:
        return block
    result = []
    for stmt in block:
        result.append(replaced.get(id(stmt), stmt))
        if id(stmt) in after:
            result.append(after[id(stmt)])
    return result


def _placement(stmt, runtime_alias):
    """The :class:`_Placement` of ``stmt`` when it places a term by a constant key (the
    first read's, or a sum onto it), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    found = _placements([stmt], runtime_alias).get(stmt.targets[0].id)
    return found[0] if found and found[0].helper != _WHOLE and found[0].stmt is stmt else None


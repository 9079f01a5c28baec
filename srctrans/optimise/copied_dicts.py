"""The cotangent of a copy of a dict, added to the cotangent of the dict copied, is made with it.

Requires: the forward statements of a build (to find the copies) and its specialised
backward pass, after the containers' cotangents are made once
(:mod:`~srctrans.optimise.container_cotangents`).
Guarantees: the values computed are unchanged. ``dict(p, k=v)`` is a copy of ``p`` with a
key written (``rt.dict_copy(p)``; the write is gone when ``normalize.constant_keys`` reads
its key as the value written). The reads of the copy's other keys, ``_dict['b']``, stay reads
of the copy: a dict subclass (``defaultdict``, ``Counter``) reads a key it lacks otherwise
than its plain copy does. The backward pass then makes the copy's cotangent and adds it to
the source's, dict to dict::

    d_dict = rt.container_cotangent({'w': a, 'b': c}, _dict)
    ...
    dp = rt.add(rt.container_cotangent({'scale': s, 'w': e}, p), d_dict)

When the forward pass uses the copy only to read it at constant keys, and the source only so
and to copy it (so both have the same keys when the cotangents are made), and the copy's
cotangent is assigned once and read by nothing else, the source's is made once with each
key's terms added (a cotangent of one entry, ``rt.getitem_grad(a, _dict, 'w')``, counts as
one of a dict with that key alone)::

    dp = rt.container_cotangent({'scale': s, 'w': rt.add(e, a), 'b': c}, p)

``rt.add`` of two dicts adds them key by key, and ``rt.container_cotangent`` makes an entry
of the dict's keys from the terms given for it, or zeros; a key's two terms added first give
the same entry. (The specialiser then writes ``rt.add`` of two arrays as ``+``.)
"""

import gast

from srctrans.nodes import constant_key, load, single_target
from srctrans.optimise.dce import name_counts, reads_of, stores_of
from srctrans.optimise.entry_cotangents import is_runtime_call, runtime_call
from srctrans.treewalk import walk


def dicts_copied(forward, runtime_alias):
    """``{copy: source}`` for each ``copy = rt.dict_copy(source)`` of the statements
    ``forward`` whose copy and source are used only as ``name[key]`` (a constant key), read,
    the source also as the dict copied, and each assigned at most once."""
    copies = {}
    for stmt in forward:
        name = single_target(stmt)
        if name is not None and is_runtime_call(stmt.value, runtime_alias, "dict_copy", 1) \
                and isinstance(stmt.value.args[0], gast.Name):
            copies[name] = stmt.value.args[0].id
    if not copies:
        return {}
    stores, reads = name_counts(forward)
    keyed = {}
    for node in (n for stmt in forward for n in walk(stmt)):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and isinstance(node.ctx, gast.Load) and constant_key(node.slice) is not None:
            keyed[node.value.id] = keyed.get(node.value.id, 0) + 1
    sources = {}
    for source in copies.values():
        sources[source] = sources.get(source, 0) + 1

    def read_by_key(name, copied=0):
        return stores.get(name, 0) <= 1 and reads.get(name, 0) == keyed.get(name, 0) + copied

    return {copy: source for copy, source in copies.items()
            if stores[copy] == 1 and read_by_key(copy) and read_by_key(source, sources[source])}


def merge_copied_dict_cotangents(statements, copies, live_out, runtime_alias):
    """``statements`` (a flat backward block) with each sum of a copy's cotangent and its
    source's made as the source's (see the module); ``copies``: :func:`dicts_copied`;
    ``live_out``: the names read after ``statements``."""
    if not copies:
        return statements
    stores, reads = name_counts(statements)
    made = {}                    # name -> (its statement's index, the container, its terms)
    dropped = set()
    for index, stmt in enumerate(statements):
        name = single_target(stmt)
        if name is None:
            continue
        cotangent = _container_cotangent(stmt.value, runtime_alias)
        if cotangent is not None:
            made[name] = (index, *cotangent)
            continue
        if not is_runtime_call(stmt.value, runtime_alias, "add", 2):
            continue
        for own, other in ((0, 1), (1, 0)):
            source = _container_cotangent(stmt.value.args[own], runtime_alias)
            copied = stmt.value.args[other]
            if source is None or not isinstance(copied, gast.Name) or copied.id not in made \
                    or stores.get(copied.id) != 1 or reads.get(copied.id) != 1 \
                    or copied.id in live_out:
                continue
            at, copy, copy_terms = made[copied.id]
            terms_read = {n for term in copy_terms.values() for n in reads_of(term)}
            if copies.get(copy) != source[0] or any(
                    stores_of(between) & terms_read for between in statements[at + 1:index]):
                continue                     # (a term the copy's cotangent read changed since)
            terms = _merged(source[1], copy_terms, runtime_alias)
            stmt.value = runtime_call(runtime_alias, "container_cotangent",
                                      [terms, load(source[0])])
            dropped.add(at)
            break
    return [stmt for k, stmt in enumerate(statements) if k not in dropped]


def _container_cotangent(node, runtime_alias):
    """``(container's name, {key: term node})`` of ``rt.container_cotangent({...}, name)``
    with constant keys, or of ``rt.getitem_grad(term, name, key)`` (a cotangent of one
    entry: the container's zeros with the term at the key), else None."""
    if is_runtime_call(node, runtime_alias, "getitem_grad", 3):
        term, container, key = node.args
        if isinstance(container, gast.Name) and constant_key(key) is not None:
            return container.id, {key.value: term}
        return None
    if not is_runtime_call(node, runtime_alias, "container_cotangent", 2):
        return None
    terms, container = node.args
    if not (isinstance(terms, gast.Dict) and isinstance(container, gast.Name)
            and all(constant_key(key) is not None for key in terms.keys)):
        return None
    return container.id, {key.value: value for key, value in zip(terms.keys, terms.values)}


def _merged(first, second, runtime_alias):
    """The dict display of ``first``'s and ``second``'s terms, a key in both with
    ``rt.add`` of its two."""
    merged = dict(first)
    for key, term in second.items():
        merged[key] = term if key not in merged else \
            runtime_call(runtime_alias, "add", [merged[key], term])
    return gast.Dict([gast.Constant(key, None) for key in merged], list(merged.values()))

"""An array's cotangent summed from its picks alone is added pick by pick into one array.

(And :func:`add_picks_into_made`: picks of one array added into the cotangent a first pick
made, as an LSTM step's four gate slices of one pre-activation.)

Requires: a specialised backward pass (its statements; the fused gradient is made from it,
and neither is differentiated again) and the shapes measured for its names.
Guarantees: the gradients are unchanged but for rounding (below). The cotangent of an array
read by picks in a loop (an embedding's rows, ``emb["out"][k] @ v`` for each negative
sample ``k``), an entry of a container's cotangent that starts as None (no term yet:
``optimise.container_cotangents``), sums a whole array of zeros per pick,
``rt.add(s, rt.getitem_grad(d, X, k))``, where an expert adds ``d`` at ``k``. When the sum
``s`` starts as None, every other assignment of it is such a sum over arrays ``X`` of one
measured shape, by an index that picks each entry once (numbers, int constants, slices),
and nothing reads ``s`` but those sums and statements after the last of them, no other name
ever holds its array, and it is added into in place::

    s = None                                         s = None
    for ...:                                 ->      for ...:
        d = rt.getitem_grad(e, X, k)                     s = rt.added_at(s, k, e, X)
        s = rt.add(s, d)

(the sum is made where ``d`` was, which is dropped, when that sum is its only read and
nothing between reads or assigns ``s``.) ``rt.added_at`` makes the zeros on the first
pick, in the dtype ``rt.getitem_grad`` gives, and adds each later term into them: a wider
term (float64 into float32) rounds at each step, as JAX's and PyTorch's sums do, where the
generic code rounds once at the end.
"""

import gast

from srctrans import annotations as anno
from srctrans.nodes import load, none_literal
from srctrans.optimise.dce import name_counts
from srctrans.optimise.entry_cotangents import is_runtime_call, runtime_call
from srctrans.optimise.in_place import entry_start, picks_once, statement_blocks, unwrapped
from srctrans.treewalk import walk


def add_picks_in_place(body, runtime_alias, shapes):
    """``body`` (changed in place, and returned) with each qualifying sum of picks (see the
    module) added in place; ``shapes``: the measured shapes (name -> tuple)."""
    numbers = {name for name, shape in shapes.items() if shape == ()}
    stores, reads = name_counts(body)
    assigns = {}
    for node in walk(gast.Module(body, [])):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], gast.Name):
            assigns.setdefault(node.targets[0].id, []).append(node)
    blocks = {id(stmt): block for block in statement_blocks(body) for stmt in block}
    for name, statements in assigns.items():
        if stores.get(name) != len(statements) or len(statements) < 2 \
                or not none_literal(statements[0].value):
            continue
        sums = []
        for stmt in statements[1:]:
            pick = _pick(stmt, name, runtime_alias, blocks, assigns, reads)
            if pick is None or _shape(pick[2], shapes) is None:
                break
            sums.append((stmt, pick))
        if len(sums) != len(statements) - 1 or len({_shape(p[2], shapes) for _, p in sums}) != 1 \
                or not all(picks_once(p[3], numbers) for _, p in sums) \
                or not _read_only_after(body, name, {id(stmt) for stmt, _ in sums}):
            continue
        for stmt, (term, made, of, index) in sums:
            target = made if made is not None else stmt
            block = blocks[id(target)]
            call = runtime_call(runtime_alias, "added_at", [load(name), index, term, of])
            block[block.index(target)] = anno.copy(target, gast.Assign(
                [gast.Name(name, gast.Store(), None, None)], call, None))
            if made is not None:
                blocks[id(stmt)].remove(stmt)
    return body


def _pick(stmt, name, runtime_alias, blocks, assigns, reads):
    """``(e, made, X, index)`` for ``name = rt.add(name, rt.getitem_grad(e, X, index))``,
    or for ``rt.add(name, d)`` with ``d = rt.getitem_grad(e, X, index)`` (``made``) earlier
    in the same block, read only there, nothing between reading or assigning ``name`` (the
    sum is made where ``d`` was, of the values ``d`` was made of); else None."""
    value = stmt.value
    if not (is_runtime_call(value, runtime_alias, "add", 2) and isinstance(value.args[0], gast.Name)
            and value.args[0].id == name):
        return None
    term, made = value.args[1], None
    if isinstance(term, gast.Name):
        found = assigns.get(term.id, [])
        if len(found) != 1 or reads.get(term.id) != 1 or blocks.get(id(found[0])) is not \
                blocks.get(id(stmt)):
            return None
        made = found[0]
        block = blocks[id(stmt)]
        start, end = block.index(made), block.index(stmt)
        if start > end:
            return None
        for between in block[start + 1:end]:          # (the sum moves up to where d is made)
            if any(isinstance(n, gast.Name) and n.id == name for n in walk(between)):
                return None
        term = made.value
    if not (is_runtime_call(term, runtime_alias, "getitem_grad", 3)
            and isinstance(term.args[1], gast.Name)
            and not any(isinstance(n, gast.Name) and n.id == name for n in walk(term))):
        return None
    g, of, index = term.args
    return g, made, of, index


def _shape(node, shapes):
    shape = shapes.get(node.id)
    return shape if shape else None             # an array (not a number, not unknown)


def _read_only_after(body, name, sums):
    """Whether every read of ``name`` outside the statements ``sums`` (ids) is in a
    top-level statement after the last top-level statement holding one of them."""
    inside = {id(n) for stmt in body for node in walk(stmt) if id(node) in sums
              for n in walk(node)}
    last = max(i for i, stmt in enumerate(body) if any(id(n) in sums for n in walk(stmt)))
    return not any(isinstance(node, gast.Name) and node.id == name
                   and isinstance(node.ctx, gast.Load) and id(node) not in inside
                   for stmt in body[:last + 1] for node in walk(stmt))


def add_picks_into_made(body, runtime_alias, shapes):
    """``body`` (changed in place, and returned) with the picks added into a cotangent that a
    pick made: in a block, ``s = rt.getitem_grad(e, X, i)`` (a new array of zeros, ``e`` at
    ``i``) followed by sums ``s = s + rt.getitem_grad(f, X, j)`` of the same array ``X``, an
    index ``j`` that picks each entry once, with nothing else reading or assigning ``s``
    between, adds each ``f`` at ``j`` in place, ``s[j] += f`` (with the rounding the module
    describes), where each sum made a whole array of zeros and a whole new sum: the
    cotangent of an LSTM step's gate pre-activations, four slices of one array."""
    numbers = {name for name, shape in shapes.items() if shape == ()}
    for block in statement_blocks(body):
        made = {}                                  # s -> the array its picks are of
        for index, stmt in enumerate(block):
            for name in list(made):
                if _reads_or_assigns(stmt, name) and not _adds_pick(stmt, name, made[name],
                                                                     runtime_alias, numbers):
                    del made[name]
            if _adds_pick(stmt, None, None, runtime_alias, numbers) and \
                    stmt.targets[0].id in made:
                g, _, where = stmt.value.right.args
                block[index] = anno.copy(stmt, gast.AugAssign(gast.Subscript(
                    load(stmt.targets[0].id), unwrapped(where), gast.Store()), gast.Add(), g))
            elif (of := entry_start(stmt, runtime_alias)) is not None \
                    and picks_once(stmt.value.args[2], numbers):
                made[stmt.targets[0].id] = of
    return body


def _adds_pick(stmt, name, of, runtime_alias, numbers):
    """Whether ``stmt`` is ``s = s + rt.getitem_grad(f, X, j)`` (``s`` the name ``name`` and
    ``X`` the name ``of`` when given), ``j`` picking each entry once, ``f`` not reading ``s``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add)
            and isinstance(stmt.value.left, gast.Name)
            and stmt.value.left.id == stmt.targets[0].id
            and is_runtime_call(stmt.value.right, runtime_alias, "getitem_grad", 3)):
        return False
    s = stmt.targets[0].id
    g, x, where = stmt.value.right.args
    return ((name is None or s == name) and isinstance(x, gast.Name)
            and (of is None or x.id == of) and picks_once(where, numbers)
            and not any(isinstance(n, gast.Name) and n.id == s for n in walk(g)))


def _reads_or_assigns(stmt, name):
    return any(isinstance(n, gast.Name) and n.id == name for n in walk(stmt))

"""A name holding a negated name is not made where every read of it takes the sign in.

Requires: the body of a fused gradient (its top level straight-line or not), and the
names read after it (its returned gradients).
Guarantees: the values computed are unchanged, bit for bit (a negation is exact, and
``a + -x`` is ``a - x``, ``-(-x).sum()`` is ``x.sum()`` in floating point too). A name
``n`` the body assigns once, at its top level, to ``-x`` (``x`` a name the body does not
assign after), read after it only where the sign goes into the expression around the
read (``-n``, ``a + n``, ``n + a``, ``a - n``, ``-n.sum(...)``, ``-n.mean(...)``), with no
write into an array up to the last read (``x`` may be one, under another name) and ``x``
not read there otherwise, is read as ``x`` there with the sign taken in, and its
assignment is dropped: a cross-entropy's cotangent ``-T`` read by a sum and by an
addition costs no array::

    d_sub = -T                                 d_lse = T.sum(axis=1, keepdims=True)
    d_lse = -d_sub.sum(axis=1, keepdims=True)  ->  dz = rt.f(d_lse, z) - T
    dz = d_sub + rt.f(d_lse, z)

(``optimise/negation.py`` moves a sign along a chain of names read once each.)
"""

import gast

from srctrans.nodes import load
from srctrans.treewalk import walk

_LINEAR_METHODS = ("sum", "mean")


def absorb_negated_names(body, live_out):
    """``body`` (changed in place, and returned) with each negated name whose reads all take
    the sign in read so (see the module); ``live_out``: the names read after ``body``."""
    stores = {}
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
    index = 0
    while index < len(body):
        stmt = body[index]
        negated = _negated_name(stmt)
        if negated is None or negated[0] in live_out or stores.get(negated[0]) != 1 \
                or any(negated[1] in _stored(later) for later in body[index + 1:]):
            index += 1
            continue
        name, source = negated
        rewrites = _absorbing_reads(body[index + 1:], name, source)
        if rewrites is None:
            index += 1
            continue
        for rewrite in rewrites:
            rewrite(source)
        del body[index]
    return body


def _negated_name(stmt):
    """``(n, x)`` for ``n = -x`` (two names), else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.UnaryOp) \
            and isinstance(stmt.value.op, gast.USub) and isinstance(stmt.value.operand, gast.Name):
        return stmt.targets[0].id, stmt.value.operand.id
    return None


def _stored(stmt):
    return {node.id for node in walk(stmt)
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)}


def _absorbing_reads(statements, name, source):
    """A rewrite ``rewrite(x)`` for each read of ``name`` in ``statements``, each taking the
    sign into the expression around the read; None when a read does not take it in, two
    reads are in one statement, ``source`` is read again, or a statement up to the last
    read writes into an array (``x`` may be one, under another name)."""
    reading = [stmt for stmt in statements
               if any(isinstance(n, gast.Name) and n.id == name for n in walk(stmt))]
    if not reading:
        return None
    for stmt in statements[:statements.index(reading[-1]) + 1]:
        if sum(isinstance(n, gast.Name) and n.id == name for n in walk(stmt)) > 1 or \
                any(isinstance(n, gast.Name) and n.id == source for n in walk(stmt)) or \
                _writes_in_place(stmt):
            return None
    parents = {}
    for stmt in statements:
        for node in walk(stmt):
            for field, value in gast.iter_fields(node):
                children = value if isinstance(value, list) else [value]
                for position, child in enumerate(children):
                    if isinstance(child, gast.AST):
                        parents[id(child)] = (node, field, position if isinstance(value, list)
                                              else None)
    rewrites = []
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and node.id == name:
                if not isinstance(node.ctx, gast.Load):
                    return None
                rewrite = _absorbing(node, parents)
                if rewrite is None:
                    return None
                rewrites.append(rewrite)
    return rewrites


def _writes_in_place(stmt):
    """Whether ``stmt`` may write into an array: an entry's assignment, an augmented one,
    a call given ``out=``."""
    return any(isinstance(n, gast.AugAssign)
               or isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
               or isinstance(n, gast.keyword) and n.arg == "out" for n in walk(stmt))


def _absorbing(read, parents):
    """The rewrite that reads ``x`` for the read ``read`` of ``n = -x`` with the sign taken
    into its context, or None."""
    parent, field, position = parents.get(id(read), (None, None, None))
    if isinstance(parent, gast.UnaryOp) and isinstance(parent.op, gast.USub):
        return lambda source: _put(parent, parents, load(source))            # -n
    if isinstance(parent, gast.BinOp) and isinstance(parent.op, gast.Add):
        other = parent.right if field == "left" else parent.left               # a + n, n + a
        return lambda source: _put(parent, parents, gast.BinOp(other, gast.Sub(), load(source)))
    if isinstance(parent, gast.BinOp) and isinstance(parent.op, gast.Sub) and field == "right":
        return lambda source: _put(parent, parents,                            # a - n
                                   gast.BinOp(parent.left, gast.Add(), load(source)))
    if isinstance(parent, gast.Attribute) and parent.attr in _LINEAR_METHODS:
        call, _, _ = parents.get(id(parent), (None, None, None))
        outer, _, _ = parents.get(id(call), (None, None, None))
        if isinstance(call, gast.Call) and call.func is parent and \
                isinstance(outer, gast.UnaryOp) and isinstance(outer.op, gast.USub):
            def through(source):                                               # -n.sum(...)
                parent.value = load(source)
                _put(outer, parents, call)
            return through
    return None


def _put(node, parents, replacement):
    """Put ``replacement`` where ``node`` is in its parent."""
    parent, field, position = parents[id(node)]
    if position is None:
        setattr(parent, field, replacement)
    else:
        getattr(parent, field)[position] = replacement

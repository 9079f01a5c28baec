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

import bisect

import gast

from srctrans.nodes import load, writes_in_place
from srctrans.treewalk import walk, walk_names

_LINEAR_METHODS = ("sum", "mean")


def absorb_negated_names(body, live_out):
    """``body`` (changed in place, and returned) with each negated name whose reads all take
    the sign in read so (see the module); ``live_out``: the names read after ``body``.

    One walk of the body records which top-level statements read, assign and write into
    what; each negated name then looks only at the statements that read it (linear in the
    body, however many negated names it holds)."""
    statements = _Statements(body)
    dropped = set()
    for index, stmt in enumerate(body):
        negated = _negated_name(stmt)
        if negated is None or negated[0] in live_out or statements.stores(negated[0]) != 1:
            continue
        name, source = negated
        readers = statements.readers(name, index)
        if not readers or statements.stored_after(source, index) \
                or statements.read_between(source, index, readers[-1]) \
                or statements.writes_in_place_between(index, readers[-1]) \
                or any(statements.reads(k, name) > 1 for k in readers):
            continue
        rewrites = [_absorbing(read, _parents(body[k])) for k in readers
                    for read in walk_names(body[k]) if read.id == name]
        if None in rewrites:
            continue
        for rewrite in rewrites:
            rewrite(source)
        statements.now_read(source, readers)
        dropped.add(index)
    body[:] = [stmt for index, stmt in enumerate(body) if index not in dropped]
    return body


class _Statements:
    """What each top-level statement of a body reads (how often), assigns and whether it
    writes into an array, with the statements reading each name in order."""

    def __init__(self, body):
        self._reads = []                        # per statement: name -> how many reads
        self._readers = {}                      # name -> indices of the statements reading it
        self._stored = {}                       # name -> indices of the statements storing it
        self._writes = [0]                      # statements up to each that write in place
        for index, stmt in enumerate(body):
            reads = {}
            for node in walk(stmt):
                if isinstance(node, gast.Name):
                    if isinstance(node.ctx, gast.Load):
                        reads[node.id] = reads.get(node.id, 0) + 1
                    else:
                        self._stored.setdefault(node.id, []).append(index)
            self._reads.append(reads)
            for name in reads:
                self._readers.setdefault(name, []).append(index)
            self._writes.append(self._writes[-1] + writes_in_place(stmt))

    def stores(self, name):
        return len(self._stored.get(name, ()))

    def reads(self, index, name):
        return self._reads[index].get(name, 0)

    def readers(self, name, after):
        found = self._readers.get(name, [])
        return found[bisect.bisect_right(found, after):]

    def stored_after(self, name, index):
        found = self._stored.get(name, [])
        return bisect.bisect_right(found, index) < len(found)

    def read_between(self, name, first, last):
        """Whether a statement after ``first``, up to ``last``, reads ``name``."""
        found = self._readers.get(name, [])
        return bisect.bisect_right(found, first) < bisect.bisect_right(found, last)

    def writes_in_place_between(self, first, last):
        return self._writes[last + 1] > self._writes[first + 1]

    def now_read(self, name, indices):
        """Statements ``indices`` read ``name`` now (a rewrite put it there)."""
        found = self._readers.setdefault(name, [])
        for index in indices:
            self._reads[index][name] = self._reads[index].get(name, 0) + 1
            position = bisect.bisect_left(found, index)
            if position == len(found) or found[position] != index:
                found.insert(position, index)


def _negated_name(stmt):
    """``(n, x)`` for ``n = -x`` (two names), else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.UnaryOp) \
            and isinstance(stmt.value.op, gast.USub) and isinstance(stmt.value.operand, gast.Name):
        return stmt.targets[0].id, stmt.value.operand.id
    return None


def _parents(stmt):
    """``{id(node): (parent, field, position)}`` of the nodes below ``stmt`` (``position``:
    the index in a list field, else None)."""
    parents = {}
    for node in walk(stmt):
        for field, value in gast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for position, child in enumerate(children):
                if isinstance(child, gast.AST):
                    parents[id(child)] = (node, field, position if isinstance(value, list)
                                          else None)
    return parents


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

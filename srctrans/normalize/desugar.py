"""Rewrite loops over sequences and jumps into the forms the reverse pass knows.

Requires: a fenced function.
Guarantees: afterwards

* a loop over a short display of names (``for W, b in ((W1, b1), (W2, b2))``) is written
  out step by step (``normalize/unrolled_loops.py``);
* every other ``for`` loops over ``range(...)``: ``for x in xs`` becomes
  ``for _index in range(len(xs)): x = xs[_index]``, and ``zip``/``enumerate``
  of sequences (``enumerate(zip(a, b))`` too), ``reversed(xs)`` (read from
  the end, ``xs[-1 - _index]``) and ``d.items()``/``.values()``/``.keys()``
  (over ``list(d)``) become index loops the same way; a target may be a
  nested tuple of names (``for i, (u, v) in ...``), assigned from the item;
  ``reversed(range(...))`` becomes the ``range`` of the same integers;
* no loop has an ``else`` block: Python runs it when the loop ends without
  ``break``, so it follows the loop, under ``if not _broke:`` when a ``break``
  of that loop sets ``_broke = True``;
* a sequence is evaluated once, before the loop, as Python evaluates it: one
  that is not a name, or is a name the loop assigns, is assigned to a new
  name (``_items``) before the loop, which the loop reads;
* there is no ``continue`` and no ``return`` but the last statement, and a
  ``break`` only as ``if stop: break`` at the end of a loop body: a jump sets
  flags, the statements it would skip run under ``if not flag:``, and an
  early ``return`` stores its value and stops every enclosing loop.

The behaviour of the function is unchanged; the reverse pass then sees only
straight-line code, branches and counted loops.
"""

import gast

from srctrans.normalize.unrolled_loops import write_out_loops
from srctrans.nodes import assign, load, store
from srctrans.treewalk import holding_statements, statement_lists, walk

_LOOPS = (gast.For, gast.While)


def desugar(function, namer, runtime_name="rt"):
    """Apply the rewrites to ``function`` (a gast FunctionDef), in place; a function
    that can end without a ``return`` gets its implicit ``return None``.

    ``runtime_name`` is the name generated code uses for the runtime package.
    """
    if not isinstance(function.body[-1], gast.Return):    # it falls off its end: returns None
        function.body.append(located(gast.Return(gast.Constant(None, None)), function.body[-1]))
    _loop_else_blocks(function, namer)
    write_out_loops(function)
    _index_loops(function, namer, runtime_name)
    _Jumps(namer).run(function)


# -- else blocks of loops ----------------------------------------------------------

def _loop_else_blocks(function, namer):
    """Move each loop's ``else`` block after the loop, guarded by a flag its breaks set."""
    for block in reversed(statement_lists(function)):      # inner blocks first (_blocks is breadth-first)
        if not any(isinstance(stmt, _LOOPS) and stmt.orelse for stmt in block):
            continue
        rewritten = []
        for stmt in block:
            rewritten.append(stmt)
            if isinstance(stmt, _LOOPS) and stmt.orelse:
                rewritten[-1:] = _else_after(stmt, namer)
        block[:] = rewritten


def _else_after(loop, namer):
    """``loop`` without its ``else`` block, and the statements that run that block as Python
    does: when the loop ends without a ``break`` (a ``return`` inside leaves the function)."""
    orelse, loop.orelse = loop.orelse, []
    breaks = [node for node in _own_nodes(loop) if isinstance(node, gast.Break)]
    if not breaks:
        return [loop] + orelse
    broke = namer.fresh("_broke")
    for statements in _own_blocks(loop):
        if any(isinstance(stmt, gast.Break) for stmt in statements):
            statements[:] = [new for stmt in statements for new in (
                [located(assign(broke, gast.Constant(True, None)), stmt), stmt]
                if isinstance(stmt, gast.Break) else [stmt])]
    start = located(assign(broke, gast.Constant(False, None)), loop)
    after = located(gast.If(gast.UnaryOp(gast.Not(), load(broke)), orelse, []), orelse[0])
    return [start, loop, after]


def _own_blocks(loop):
    """The statement lists of ``loop``'s body outside nested loops and local functions (where a
    ``break`` belongs to ``loop``)."""
    stack = [loop.body]
    while stack:
        statements = stack.pop()
        yield statements
        for stmt in statements:
            if not isinstance(stmt, (*_LOOPS, gast.FunctionDef)):
                stack.extend(value for field in ("body", "orelse", "finalbody")
                             if isinstance(value := getattr(stmt, field, None), list))


# -- loops over sequences ---------------------------------------------------------

def _index_loops(function, namer, runtime_name):
    dicts = _dict_names(function)
    parameters = {a.id for a in function.args.args + function.args.posonlyargs
                  + function.args.kwonlyargs}
    for block in statement_lists(function):
        rewritten = []
        for stmt in block:
            if isinstance(stmt, gast.For) and _walks_saved_values_back(stmt.iter, runtime_name):
                stmt.iter.func = gast.Name("reversed", gast.Load(), None, None)   # read by index
            if isinstance(stmt, gast.For) and _pops_many(stmt.iter):
                _to_pop_loop(stmt, namer)
            elif isinstance(stmt, gast.For) and _reverses_range(stmt.iter):
                rewritten.extend(_to_reversed_range(stmt, namer))
            elif isinstance(stmt, gast.For) and not is_range(stmt.iter):
                over_keys = _iterates_keys(stmt, dicts)
                iterated = stmt.iter.args[0] if _is_call_of(stmt.iter, "reversed") else stmt.iter
                rewritten.extend(to_index_loop(stmt, namer, over_keys))
                if not over_keys and isinstance(iterated, gast.Name) and iterated.id in parameters:
                    # for x in xs, xs an argument: a dict there is an error that says what to write
                    stmt.iter.args[0].func = gast.Attribute(
                        gast.Name(runtime_name, gast.Load(), None, None), "sequence_length",
                        gast.Load())
            rewritten.append(stmt)
        block[:] = rewritten


def _dict_names(function):
    """The names the function assigns a dict display, ``dict(...)`` or a dict comprehension."""
    return {target.id for node in walk(function) if isinstance(node, gast.Assign)
            and (isinstance(node.value, (gast.Dict, gast.DictComp)) or _is_call_of(node.value, "dict"))
            for target in node.targets if isinstance(target, gast.Name)}


def _iterates_keys(loop, dicts):
    """``for k in d`` over a dict: ``d`` is assigned a dict, or the body reads ``d[k]``."""
    iterator, target = loop.iter, loop.target
    if not isinstance(iterator, gast.Name):
        return False
    if iterator.id in dicts:
        return True
    return isinstance(target, gast.Name) and any(
        isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)
        and n.value.id == iterator.id and isinstance(n.slice, gast.Name)
        and n.slice.id == target.id for stmt in loop.body for n in walk(stmt))


def _pops_many(iterator):
    """``rt.pop_many(tape, n)``: the saved values of a generated backward loop (the fence
    accepts it only in generated code)."""
    return (isinstance(iterator, gast.Call) and isinstance(iterator.func, gast.Attribute)
            and iterator.func.attr == "pop_many")


def _walks_saved_values_back(iterator, runtime_name):
    """``rt.reversed(steps)``: a loop's own saved values in a generated fused gradient (the
    fence accepts it only in generated code), read as ``reversed(steps)``."""
    return (isinstance(iterator, gast.Call) and isinstance(iterator.func, gast.Attribute)
            and iterator.func.attr == "reversed" and isinstance(iterator.func.value, gast.Name)
            and iterator.func.value.id == runtime_name)


def _to_pop_loop(loop, namer):
    """``for x in rt.pop_many(tape, n)`` -> ``for i in range(n): x = tape.pop()``: the pops it
    stands for, which the reverse pass knows how to undo."""
    tape, count = loop.iter.args
    pop = gast.Call(gast.Attribute(_copy_load(tape), "pop", gast.Load()), [], [])
    read = located(gast.Assign([loop.target], pop, None), loop)
    loop.target = gast.Name(namer.fresh("_index"), gast.Store(), None, None)
    loop.iter = _call("range", [_copy_load(count)])
    loop.body[:0] = [read]
    located(loop, loop)


def is_range(iterator):
    """Whether ``iterator`` is a call of ``range``."""
    return (isinstance(iterator, gast.Call) and isinstance(iterator.func, gast.Name)
            and iterator.func.id == "range")


def _reverses_range(iterator):
    """``reversed(range(...))``."""
    return (_is_call_of(iterator, "reversed") and len(iterator.args) == 1
            and is_range(iterator.args[0]) and not iterator.args[0].keywords)


def _to_reversed_range(loop, namer):
    """``for t in reversed(range(...))`` -> ``for t in range(last, before_first, -step)``, the
    same integers, each bound evaluated once as Python does; returns the assignments of the
    bounds to put before the loop (none for names and numbers)."""
    bounds = loop.iter.args[0].args
    before = []
    down = gast.Constant(-1, None)
    if len(bounds) == 1:                               # range(stop): stop - 1 down to 0
        (stop,) = bounds
        loop.iter = _call("range", [_minus(stop, 1), gast.Constant(-1, None), down])
    elif len(bounds) == 2:                             # range(start, stop): stop - 1 down to start
        start, stop = bounds
        loop.iter = _call("range", [_minus(stop, 1), _minus(start, 1), down])
    else:
        start, stop, step = (_once(bound, loop, namer, before) for bound in bounds)
        count = _call("len", [_call("range", [_copy_load(start), _copy_load(stop),
                                              _copy_load(step)])])
        last = gast.BinOp(_copy_load(start), gast.Add(),
                          gast.BinOp(_minus(count, 1), gast.Mult(), _copy_load(step)))
        loop.iter = _call("range", [last, gast.BinOp(_copy_load(start), gast.Sub(), _copy_load(step)),
                                    gast.UnaryOp(gast.USub(), _copy_load(step))])
    located(loop, loop)
    return before


def _minus(node, number):
    return gast.BinOp(node, gast.Sub(), gast.Constant(number, None))


def _once(node, loop, namer, before, rebound=frozenset()):
    """``node``, or a new name assigned its value before ``loop`` (appended to ``before``) when
    reading ``node`` again in the loop could give another value or do the work again: any
    expression but a name or a number, and a name the loop assigns."""
    if isinstance(node, gast.Constant) or (isinstance(node, gast.Name) and node.id not in rebound):
        return node
    name = namer.fresh("_items")
    before.append(located(assign(name, node), loop))
    return load(name)


def _assigned_in(loop):
    """The names ``loop`` assigns: its target's and those its body stores."""
    return {node.id for part in [loop.target] + loop.body for node in walk(part)
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)}


def to_index_loop(loop, namer, over_keys=False):
    """``for t in seq`` -> ``for i in range(len(seq)): t = seq[i]`` (zip, enumerate alike;
    ``reversed(seq)`` reads ``seq[-1 - i]``); ``over_keys``: ``seq`` is a dict, whose keys the
    loop takes (as ``seq.keys()``).

    Python evaluates ``seq`` once, before the first step, so a sequence that is not a name, or
    is a name the loop assigns, is assigned to a new name before the loop: returns those
    assignments, which the caller puts before the loop.
    """
    index = namer.fresh("_index")
    iterator, target = loop.iter, loop.target
    rebound = _assigned_in(loop)
    before = []

    def once(node):
        return _once(node, loop, namer, before, rebound)

    def part(node):
        """``(sequence, its item at this step)``; ``reversed(seq)`` counts from the end."""
        if _is_call_of(node, "reversed") and len(node.args) == 1:
            sequence = once(node.args[0])
            backwards = gast.BinOp(gast.Constant(-1, None), gast.Sub(), load(index))
            return sequence, _item(sequence, backwards)
        sequence = once(node)
        return sequence, _item(sequence, load(index))

    reads = []                                    # (target, value expression for this index)
    view = (iterator, "keys") if over_keys else _dict_view(iterator)
    if view is not None:                          # for k, v in d.items(): over list(d), the keys
        mapping, kind = view
        mapping = once(mapping)
        keys = _call("list", [_copy_load(mapping)])  # read at each step: an inactive key
        key = gast.Subscript(_copy_load(keys), load(index), gast.Load())
        value = gast.Subscript(_copy_load(mapping), _copy_load(key), gast.Load())
        if kind == "items" and isinstance(target, gast.Tuple) and len(target.elts) == 2:
            reads = [(target.elts[0], _copy_load(key)), (target.elts[1], value)]
        else:
            reads = [(target, _copy_load(key) if kind == "keys" else value)]
        sequences = [keys]
    elif _is_call_of(iterator, "enumerate") and isinstance(target, gast.Tuple) and len(target.elts) == 2:
        zipped = _is_call_of(iterator.args[0], "zip")   # enumerate(zip(a, b)): the items of each
        sequences, items = zip(*[part(s) for s in (iterator.args[0].args if zipped
                                                   else iterator.args[:1])])
        item = gast.Tuple(list(items), gast.Load()) if zipped else items[0]
        count = load(index)
        if len(iterator.args) > 1:                 # enumerate(xs, start)
            count = gast.BinOp(count, gast.Add(), once(iterator.args[1]))
        reads = [(target.elts[0], count), (target.elts[1], item)]
    elif _is_call_of(iterator, "zip") and isinstance(target, gast.Tuple) \
            and len(target.elts) == len(iterator.args):
        sequences, items = zip(*[part(s) for s in iterator.args])
        reads = list(zip(target.elts, items))
    else:
        sequence, item = part(iterator)
        sequences = [sequence]
        reads = [(target, item)]
    lengths = [_call("len", [_copy_load(s)]) for s in sequences]
    count = lengths[0] if len(lengths) == 1 else _call("min", lengths)
    loop.iter = _call("range", [count])
    loop.target = store(index)
    loop.body[:0] = [gast.Assign([t], value, None) for t, value in reads]
    for stmt in loop.body[:len(reads)]:
        gast.copy_location(stmt, loop)
    return before


def _dict_view(node):
    """``(mapping, "items"|"values"|"keys")`` for ``d.items()`` and the like, else None."""
    if (isinstance(node, gast.Call) and not node.args and not node.keywords
            and isinstance(node.func, gast.Attribute) and node.func.attr in ("items", "values", "keys")):
        return node.func.value, node.func.attr
    return None


def _is_call_of(node, name):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == name and not node.keywords)


def _item(sequence, index):
    return gast.Subscript(_copy_load(sequence), index, gast.Load())


def _copy_load(node):
    import copy
    node = copy.deepcopy(node)
    for sub in walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = gast.Load()
    return node


def _call(name, args):
    return gast.Call(gast.Name(name, gast.Load(), None, None), args, [])


# -- jumps -------------------------------------------------------------------------

class _Loop:
    """The flags of one loop: ``stop`` (a break happened) and ``skip`` (end this iteration)."""

    def __init__(self, namer, jumps_out):
        self.stop = namer.fresh("_stop")
        self.skip = namer.fresh("_skip")
        self.jumps_out = jumps_out


class _Jumps:
    def __init__(self, namer):
        self.namer = namer
        self.returned = self.value = None

    def run(self, function):
        body = function.body
        early = [n for stmt in body[:-1] for n in walk_own(stmt) if isinstance(n, gast.Return)]
        early += [n for stmt in body[-1:] if not isinstance(stmt, gast.Return)
                  for n in walk_own(stmt) if isinstance(n, gast.Return)]
        jumps = any(isinstance(n, (gast.Break, gast.Continue))
                    for stmt in body for n in walk_own(stmt))
        if not early and not jumps:
            return
        if early:
            self.returned = self.namer.fresh("_returned")
            self.value = self.namer.fresh("_result")
            last = body[-1]
            if isinstance(last, gast.Return):
                body = body[:-1] + [located(gast.If(
                    gast.UnaryOp(gast.Not(), load(self.returned)),
                    [assign(self.value, last.value or gast.Constant(None, None))], []), last)]
            start = [assign(self.returned, gast.Constant(False, None)),
                     assign(self.value, gast.Constant(None, None))]
            for stmt in start:
                gast.copy_location(stmt, function.body[0])
            body = start + self._block(body, [], self.returned)
            final = gast.Return(load(self.value))
            function.body = body + [gast.copy_location(final, function.body[-1])]
        else:
            function.body = self._block(body, [], None)

    def _block(self, statements, loops, guard):
        """``statements`` with jumps replaced; what follows a possible jump runs under ``guard``."""
        out = []
        for position, stmt in enumerate(statements):
            replaced = self._statement(stmt, loops)
            out.extend(replaced)
            rest = statements[position + 1:]
            if rest and guard is not None and _sets(replaced, guard):
                condition = gast.UnaryOp(gast.Not(), load(guard))
                out.append(located(gast.If(condition, self._block(rest, loops, guard), []), rest[0]))
                return out
        return out

    def _statement(self, stmt, loops):
        if isinstance(stmt, gast.Return) and self.returned is None:
            return [stmt]                            # the function's one, final return
        if isinstance(stmt, gast.Return):
            flags = [(self.returned, True)] + [(f, True) for loop in loops for f in (loop.stop, loop.skip)]
            value = [assign(self.value, stmt.value or gast.Constant(None, None))]
            return [located(s, stmt) for s in value + [assign(f, gast.Constant(v, None)) for f, v in flags]]
        if isinstance(stmt, gast.Break):
            loop = loops[-1]
            return [located(assign(f, gast.Constant(True, None)), stmt) for f in (loop.stop, loop.skip)]
        if isinstance(stmt, gast.Continue):
            return [located(assign(loops[-1].skip, gast.Constant(True, None)), stmt)]
        if isinstance(stmt, gast.If):
            guard = loops[-1].skip if loops else self.returned
            stmt.body = self._block(stmt.body, loops, guard) or [gast.Pass()]
            stmt.orelse = self._block(stmt.orelse, loops, guard)
            return [stmt]
        if isinstance(stmt, _LOOPS):
            return self._loop(stmt, loops)
        if isinstance(stmt, gast.With):              # the fence lets no jump out of it
            stmt.body = self._block(stmt.body, loops, None) or [gast.Pass()]
        return [stmt]

    def _loop(self, loop, loops):
        jumps = any(isinstance(n, (gast.Break, gast.Return)) for n in _own_nodes(loop))
        continues = any(isinstance(n, gast.Continue) for n in _own_nodes(loop))
        if not (jumps or continues):
            loop.body = self._block(loop.body, loops, loops[-1].skip if loops else self.returned)
            return [loop]
        this = _Loop(self.namer, jumps)
        body = self._block(loop.body, loops + [this], this.skip)
        start = located(assign(this.skip, gast.Constant(False, None)), loop)
        ending = []
        if jumps:
            ending = [located(gast.If(load(this.stop), [gast.Break()], []), loop)]
        loop.body = [start] + body + ending
        before = [located(assign(this.stop, gast.Constant(False, None)), loop)] if jumps else []
        return before + [loop]



def _sets(statements, flag):
    """Whether ``statements`` may set ``flag`` (then what follows them must be guarded)."""
    return any(isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and node.id == flag
               for stmt in statements for node in walk(stmt))


def walk_own(node):
    """``node`` and the statements below it (a ``try``'s handlers and a ``match``'s cases
    too), depth first, without the insides of local functions (their returns are their own):
    what a search for returns, jumps or imports needs, which no expression holds."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            held = node.__dict__
            for field in holding_statements(node.__class__):
                value = held.get(field)
                if value.__class__ is list:
                    stack.extend(item for item in value if isinstance(item, gast.AST))


def _own_nodes(loop):
    """The nodes of a loop's body that are not inside a nested loop (jumps belong to it)."""
    stack = list(loop.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _LOOPS):
            stack.extend(gast.iter_child_nodes(node))
        else:
            for sub in walk(node):         # a return in a nested loop exits this one too
                if isinstance(sub, gast.Return):
                    yield sub


def located(stmt, origin):
    """``stmt`` with ``origin``'s line on each of its nodes that has none (made by a rewrite)."""
    for node in walk(stmt):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            gast.copy_location(node, origin)
    return stmt

"""Loops marked ``st.checkpointed(...)``: the mark leaves the source, the loop keeps it.

Requires: a fenced function, before desugaring (the marked iterable is still
the loop's own).
Guarantees, after :func:`mark_checkpointed_loops`:

* ``for t in st.checkpointed(ITER, snapshots=S):`` reads ``for t in ITER:``;
* in reverse mode the loop is annotated ``Anno.CHECKPOINTED`` with the name of
  a new variable, assigned ``S`` (``None`` when it is not given) by a statement
  just before the loop; the reverse pass reads the annotation
  (:mod:`srctrans.differentiate.checkpointing`). Forward mode keeps nothing, so
  there the loop is a plain loop and ``S`` is not evaluated;
* a marked loop that can leave early (``break`` or ``return`` in its body), a
  mark with other arguments, and ``st.checkpointed`` called anywhere but as a
  ``for`` loop's iterable raise :class:`UnsupportedSyntaxError` at the line.
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.errors import UnsupportedSyntaxError
from srctrans.nodes import assign
from srctrans.runtime.checkpoints import checkpointed
from srctrans.treewalk import walk

_BLOCKS = ("body", "orelse")


def mark_checkpointed_loops(parsed, resolver, namer, mode):
    """Take the marks off ``parsed``'s loops (in place), annotating them in ``"reverse"`` mode."""
    marks = [node for node in walk(parsed.node)
             if isinstance(node, gast.Call) and is_mark(node, resolver)]
    if not marks:
        return
    iterables = {id(node.iter) for node in walk(parsed.node) if isinstance(node, gast.For)}
    for mark in marks:
        if id(mark) not in iterables:
            _refuse(parsed, mark, "st.checkpointed(...) other than as a `for` loop's iterable",
                    "write the loop as `for t in st.checkpointed(range(T)):`")
    for node in list(walk(parsed.node)):
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list) and any(_is_marked(s, marks) for s in block):
                setattr(node, field, _unmarked(parsed, block, marks, namer, mode))


def is_mark(call, resolver):
    """Whether ``call`` calls ``st.checkpointed`` (however it was imported)."""
    return isinstance(call.func, (gast.Name, gast.Attribute)) and \
        resolver.resolve(call.func) is checkpointed


def _is_marked(stmt, marks):
    return isinstance(stmt, gast.For) and any(stmt.iter is mark for mark in marks)


def _unmarked(parsed, block, marks, namer, mode):
    """``block`` with each marked loop's mark taken off (and its count assigned before it)."""
    out = []
    for stmt in block:
        if not _is_marked(stmt, marks):
            out.append(stmt)
            continue
        iterable, snapshots = _arguments(parsed, stmt.iter)
        _check_no_early_exit(parsed, stmt)
        stmt.iter = iterable
        if mode == "reverse":
            count = namer.fresh("_snapshots")
            before = assign(count, snapshots)
            gast.copy_location(before, stmt)
            out.append(before)
            anno.set_(stmt, Anno.CHECKPOINTED, count)
        out.append(stmt)
    return out


def _arguments(parsed, call):
    """``(iterable, snapshots)`` of ``st.checkpointed(iterable, snapshots=None)``."""
    keywords = {k.arg: k.value for k in call.keywords}
    if (not 1 <= len(call.args) <= 2 or set(keywords) - {"snapshots"}
            or len(call.args) == 2 and keywords):
        _refuse(parsed, call, "this form of st.checkpointed(...)",
                "write st.checkpointed(range(T)) or st.checkpointed(range(T), snapshots=s)")
    snapshots = call.args[1] if len(call.args) == 2 else keywords.get("snapshots")
    return call.args[0], snapshots if snapshots is not None else gast.Constant(None, None)


def _check_no_early_exit(parsed, loop):
    """Refuse a ``break`` of ``loop`` or a ``return`` inside it: the steps must be counted first."""
    for node in _own_nodes(loop.body):
        if isinstance(node, (gast.Break, gast.Return)):
            word = "break" if isinstance(node, gast.Break) else "return"
            _refuse(parsed, node, f"`{word}` in a loop marked st.checkpointed",
                    "a checkpointed loop runs all its steps (its schedule is made from their "
                    "number): compute how many steps to run before the loop, or drop the mark")


def _own_nodes(statements):
    """The nodes of ``statements``, a ``break`` of an inner loop left out (a ``return`` is not)."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, (gast.For, gast.While)):
            pending.extend(n for n in walk(node) if isinstance(n, gast.Return))
            continue
        yield node
        pending.extend(gast.iter_child_nodes(node))


def _refuse(parsed, node, construct, hint):
    raise UnsupportedSyntaxError(f"{construct} is not supported", parsed.location(node), hint)

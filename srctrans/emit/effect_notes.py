"""Generated code counts the calls it makes of the user's functions that may write.

Requires: generated functions (gast ``FunctionDef``\\ s whose calls carry ``Anno.CALLEE``),
the unit's aliases and the user's function they derive from.
Guarantees: each statement that calls a user's function which may change an object its
caller holds (``normalize.callees.writes_of``: ``layer.act = np.sin`` in a helper whose
value needs no derivative, so the generated code calls it as it is), or a module global
that a function of its module or of the user's function's module reads (``names_read_by``:
not a log only the helper touches), is preceded by ``rt.note_effect()`` (a statement
heading a loop or a branch with such a call in its test or iterable: before the loop or
branch); nothing else changes. The API reads the count before running a call again
(``runtime.effects``, ``reporting.rerun_refusal``): a run again after such a call started
from changed objects, and gets a clear error instead.
"""

import types

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import resolved_runtime_call
from srctrans.normalize.callees import names_read_by, writes_of
from srctrans.treewalk import walk

_COMPOUND = (gast.For, gast.While, gast.If)


def note_effects(functions, aliases, user_fn):
    """``functions`` (changed in place; derivatives of ``user_fn``), each call of a user's
    function that may write preceded by ``rt.note_effect()`` (see the module); whether any
    was."""
    noted = False
    reads = {}         # (id of a module's globals, writer) -> the names its other functions read

    def writes(node):
        if not isinstance(node, gast.Call):
            return False
        callee = anno.get(node, Anno.CALLEE)
        if not isinstance(callee, (types.FunctionType, types.MethodType)):
            return False
        held, names = writes_of(callee)
        if held or not names:
            return held
        function = getattr(callee, "__func__", callee)
        read = set()
        for globals_ in {id(g): g for g in (user_fn.__globals__, function.__globals__)}.values():
            key = (id(globals_), function)
            if key not in reads:
                reads[key] = names_read_by(globals_, besides=function)
            read |= reads[key]
        return bool(names & read)

    blocks = [function.body for function in functions]
    while blocks:
        block = blocks.pop()
        position = 0
        while position < len(block):
            stmt = block[position]
            if isinstance(stmt, _COMPOUND):
                blocks += [stmt.body, stmt.orelse]
                header = [stmt.test] if isinstance(stmt, (gast.While, gast.If)) else [stmt.iter]
            else:
                header = [stmt]
            if any(writes(node) for part in header for node in walk(part)):
                note = gast.Expr(resolved_runtime_call(aliases, "note_effect", []))
                anno.set_(note, Anno.ORIGIN, anno.get(stmt, Anno.ORIGIN))
                block.insert(position, note)
                position += 1
                noted = True
            position += 1
    return noted

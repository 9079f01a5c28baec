"""Generated code counts the calls it makes of the user's functions that may write.

Requires: generated functions (gast ``FunctionDef``\\ s whose calls carry ``Anno.CALLEE``)
and the unit's aliases.
Guarantees: each statement that calls a user's function which may change an object its
caller holds (``normalize.callees.may_write``: ``layer.act = np.sin`` in a helper whose
value needs no derivative, so the generated code calls it as it is) is preceded by
``rt.note_effect()`` (a statement heading a loop or a branch with such a call in its test
or iterable: before the loop or branch); nothing else changes. The API reads the count
before running a call again (``runtime.effects``, ``reporting.rerun_refusal``): a run again
after such a call started from changed objects, and gets a clear error instead.
"""

import types

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import resolved_runtime_call
from srctrans.normalize.callees import may_write
from srctrans.treewalk import walk

_COMPOUND = (gast.For, gast.While, gast.If)


def note_effects(functions, aliases):
    """``functions`` (changed in place), each call of a user's function that may write
    preceded by ``rt.note_effect()`` (see the module); whether any was."""
    noted = False
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
            if any(_writes(node) for part in header for node in walk(part)):
                note = gast.Expr(resolved_runtime_call(aliases, "note_effect", []))
                anno.set_(note, Anno.ORIGIN, anno.get(stmt, Anno.ORIGIN))
                block.insert(position, note)
                position += 1
                noted = True
            position += 1
    return noted


def _writes(node):
    if not isinstance(node, gast.Call):
        return False
    callee = anno.get(node, Anno.CALLEE)
    return isinstance(callee, (types.FunctionType, types.MethodType)) and may_write(callee)

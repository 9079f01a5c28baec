"""Which ``if`` tests specialised code may take as the measuring call took them.

Requires: forward statements in A-normal form (an ``if`` tests a name).
Guarantees: :func:`branch_tests` lists each ``if`` of the statements with the tests (and the
sides) that enclose it; ``measuring.taken_branches`` says, from one measuring run's values, which
way each test went, or None when some ``if`` the run reached is left undecided (a test
whose value changed as a loop ran, or one in a loop that ran no step): specialised code then
keeps every ``if``. When every ``if`` is decided or lies in a branch not taken, the
specialised code is straight-line code, and a name assigned in a branch has the shape that
branch gave it (``fixed_shapes.path_dependent_names`` with every test counted as keyed).
Tests the shape key does not decide are checked as the code runs (``runtime.branches``).
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno


def branch_tests(statements):
    """``((test, enclosing), ...)``: the name each ``if`` of ``statements`` tests (None for a
    test that is not a name) in source order, with the ``(test, side)`` pairs of the ``if``
    statements it lies in, outermost first (``side``: True in the body, False in the
    ``orelse``). The tape's pushes, pops and placeholders are not the program's."""
    found, pending = [], [(stmt, ()) for stmt in reversed(statements)]
    while pending:
        stmt, enclosing = pending.pop()
        if anno.get(stmt, Anno.SAVES) is not None:
            continue
        if isinstance(stmt, gast.If):
            test = stmt.test.id if isinstance(stmt.test, gast.Name) else None
            found.append((test, enclosing))
            inner = [(s, enclosing + ((test, False),)) for s in stmt.orelse] + \
                    [(s, enclosing + ((test, True),)) for s in stmt.body]
            pending.extend(reversed(inner))
        elif isinstance(stmt, (gast.For, gast.While)):
            pending.extend((s, enclosing) for s in reversed(stmt.body + stmt.orelse))
    return tuple(found)


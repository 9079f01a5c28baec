"""Which ``if`` tests specialised code may take as the measuring call took them.

Requires: forward statements in A-normal form (an ``if`` tests a name).
Guarantees: :func:`branch_tests` lists each ``if`` of the statements with the tests (and the
sides) that enclose it, and :func:`rebound_in_blocks` says whether a name assigned in one
may hold another shape elsewhere; ``measuring.taken_branches`` says, from one measuring
run's values, which way each test went, or None when some ``if`` the run reached is left
undecided (a test whose value changed as a loop ran, or one in a loop that ran no step):
specialised code then keeps every ``if``. When every ``if`` is decided or lies in a branch not taken, the
specialised code is straight-line code, and a name assigned in a branch has the shape that
branch gave it (``fixed_shapes.path_dependent_names`` with every test counted as keyed).
Tests the shape key does not decide are checked as the code runs (``runtime.branches``).
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.analyse.fixed_shapes import stored_names


def branch_tests(statements):
    """``((test, enclosing), ...)``: the name each ``if`` of ``statements`` tests (None for a
    test that is not a name) in source order, with the ``(test, side)`` pairs of the ``if``
    statements it lies in, outermost first (``side``: True in the body, False in the
    ``orelse``)."""
    return tuple((_test_of(stmt), enclosing) for stmt, enclosing in _within_branches(statements)
                 if isinstance(stmt, gast.If))


def rebound_in_blocks(statements, parameters):
    """Whether a name of forward ``statements`` is assigned at several places (a parameter
    counts as one of them), one inside an ``if``: SSA renames no name inside a block, so a
    run's last value of it may have another shape than the others had where they were read,
    and code that takes the branch as straight-line code renames them apart. A measuring
    run then watches its lines (``measuring.run_keeping_locals``) to see whether it does."""
    sites, in_blocks = dict.fromkeys(parameters, 1), set()
    for stmt, enclosing in _within_branches(statements):
        if isinstance(stmt, gast.For):
            names = stored_names(stmt.target)
        elif isinstance(stmt, gast.Assign):
            names = [n for t in stmt.targets for n in stored_names(t)]
        else:
            continue
        for name in names:
            sites[name] = sites.get(name, 0) + 1
            if enclosing:
                in_blocks.add(name)
    return any(sites[name] > 1 for name in in_blocks)


def _within_branches(statements):
    """Each statement of ``statements``, nested ones too, in source order, with the ``(test,
    side)`` pairs of the ``if`` statements it lies in (:func:`branch_tests`). The tape's
    pushes, pops and placeholders are not the program's."""
    pending = [(stmt, ()) for stmt in reversed(statements)]
    while pending:
        stmt, enclosing = pending.pop()
        if anno.get(stmt, Anno.SAVES) is not None:
            continue
        yield stmt, enclosing
        if isinstance(stmt, gast.If):
            test = _test_of(stmt)
            inner = [(s, enclosing + ((test, False),)) for s in stmt.orelse] + \
                    [(s, enclosing + ((test, True),)) for s in stmt.body]
            pending.extend(reversed(inner))
        elif isinstance(stmt, (gast.For, gast.While)):
            pending.extend((s, enclosing) for s in reversed(stmt.body + stmt.orelse))


def _test_of(branch):
    """The name an ``if`` tests, or None when its test is not a name."""
    return branch.test.id if isinstance(branch.test, gast.Name) else None

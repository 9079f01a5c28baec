"""The tests a short path's guard writes out that a built derivative still holds.

Requires: the generic instance behind a guard (:class:`~srctrans.assumed.Assumed`) and the
function it was built from.
Guarantees: :func:`stale_tests` returns Python expressions, one per thing the build fixed,
each true when that thing changed since: the function's defaults; each global or closure
name it resolved (the object it denoted); each attribute chain ending at a user's function
(``helpers.smooth``) and each method a call was compiled to call (``getattr(Net, "act")``);
the same for every user function it differentiates through, at any depth; the rules'
version; and, when a kind of callee was met through a value since, whether its callees'
call sites are still covered (asked once a version). :mod:`srctrans.repeat` joins them into
the guard's ``if``: one failing test sends the call down the full path, which rebuilds. A
global the build read that is gone raises ``KeyError``, which the guard takes as a failed
test (a subscript is cheaper than ``dict.get``).
"""

import builtins

from srctrans.assumed import callees_current
from srctrans.parse.resolve import current_value
from srctrans.rules import REGISTRY
from srctrans.runtime import objects


def stale_tests(fn, instance, namespace, passed=None):
    """The tests that ``instance`` no longer holds for ``fn`` (its defaults, the objects its
    called names denote, here and in its callees); adds what they read to ``namespace``.

    ``passed``: the number of positional arguments every call the guard admits passes
    ``fn``, and no keywords (None: unknown). Defaults such a call does not use are not
    tested: those of the positional parameters when it passes them all, and keyword-only
    ones (of ``fn`` and its callees) when it has no keyword-only parameters (about 0.1 us a
    call).

    The callees' tests are written out too (each user function the build differentiates
    through, once), with the registry's version (a rule registered since); a kind of
    callee met through a value since (``objects.VERSION``) asks ``callees_current``, which
    knows whether the sites it met are covered, once a version (:func:`_sites_current`)."""
    namespace.update({"builtin": builtins.__dict__, "cell_changed": _cell_changed,
                      "sites_current": _sites_current, "build": instance.build})
    stale = _stale_tests_of(fn, instance, "", namespace, passed=passed)
    if instance.build.callees:
        namespace.update({"registry": REGISTRY, "rules_version": REGISTRY.version,
                          "sites_version": objects.VERSION, "sites_at": [objects.VERSION[0]]})
        stale.append("registry.version != rules_version")
        stale.append("sites_version[0] != sites_at[0] and not sites_current(build, sites_at)")
        pending, seen = list(instance.build.callees), set()
        while pending:
            callee, found = pending.pop()
            if id(found) not in seen:
                seen.add(id(found))
                prefix = f"c{len(seen)}_"
                namespace[f"{prefix}fn"] = callee
                stale += _stale_tests_of(callee, found, prefix, namespace, f"{prefix}fn")
                pending.extend(found.build.callees)
    return stale


def _sites_current(build, seen):
    """``callees_current(build)``, and if so the sites' version it held at kept in ``seen[0]``:
    the kinds met through values change only with that version, and the guard's other tests
    check the rest of what ``callees_current`` does on every call (a guard made before
    another function's build met a new kind would otherwise walk the callees every call)."""
    if not callees_current(build):
        return False
    seen[0] = objects.VERSION[0]
    return True


def _stale_tests_of(fn, instance, prefix, namespace, called="fn", passed=None):
    """The tests that ``instance`` alone no longer holds for ``fn``, the name ``called``
    in the guard, their names in ``namespace`` starting with ``prefix`` (``passed``: as
    :func:`stale_tests` has it)."""
    namespace[f"{prefix}namespace"] = fn.__globals__
    stale = []
    code = fn.__code__
    if passed is None or passed < code.co_argcount:
        namespace[f"{prefix}defaults"] = fn.__defaults__
        stale.append(f"{called}.__defaults__ is not {prefix}defaults")
    if code.co_kwonlyargcount:
        namespace[f"{prefix}kwdefaults"] = fn.__kwdefaults__
        stale.append(f"{called}.__kwdefaults__ is not {prefix}kwdefaults")
    for n, (name, value) in enumerate(instance.assumed_globals()):
        namespace[f"{prefix}assumed_{n}"] = value
        if fn.__globals__.get(name, _MISSING) is value:
            stale.append(f"{prefix}namespace[{name!r}] is not {prefix}assumed_{n}")
        else:
            stale.append(f"{name!r} in {prefix}namespace "
                         f"or builtin.get({name!r}) is not {prefix}assumed_{n}")
    for n, (cell, value) in enumerate(instance.assumed_cells()):
        namespace[f"{prefix}cell_{n}"], namespace[f"{prefix}in_cell_{n}"] = cell, value
        stale.append(f"cell_changed({prefix}cell_{n}, {prefix}in_cell_{n})")
    for n, (kind, name, function) in enumerate(instance.build.methods):
        namespace[f"{prefix}kind_{n}"], namespace[f"{prefix}method_{n}"] = kind, function
        stale.append(f"getattr({prefix}kind_{n}, {name!r}, None) is not {prefix}method_{n}")
    for n, (chain, value) in enumerate(instance.assumed_chains()):
        namespace["current_value"], namespace[f"{prefix}chained_{n}"] = current_value, value
        stale.append(f"current_value({called}, {chain!r}) is not {prefix}chained_{n}")
    return stale


def _cell_changed(cell, value):
    try:
        return cell.cell_contents is not value
    except ValueError:                       # the enclosing scope deleted it
        return True


_MISSING = object()

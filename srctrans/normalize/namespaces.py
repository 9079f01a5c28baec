"""A local name for a module (``xp = np``) is the module itself.

Requires: a fenced function and its resolver (before desugar: the name's one
binding is still a plain statement of the body).
Guarantees: :func:`inline_module_aliases` replaces every read of a local name
whose only binding is one unconditional ``name = <module>`` at the top level
of the body (``<module>`` a global, closure or builtin name, or an attribute
chain, that denotes a module, as ``xp = np`` or ``la = np.linalg``) by that
expression, and drops the binding; reads before it, or any other binding of
the name (a parameter, a loop, a second assignment, ``del``), leave the name
as it is. So ``xp.sum(x * x, 0)`` is the call ``np.sum(x * x, 0)`` with its
rule, as Python runs it, never a method of a value named ``xp``.

>>> import gast, types, numpy as np
>>> from srctrans.parse.resolve import Resolver
>>> f = gast.parse("def f(x):\\n    xp = np\\n    return xp.sum(x, 0)").body[0]
>>> fn = types.FunctionType(compile("def f(x): pass", "<doc>", "exec").co_consts[0], {"np": np})
>>> inline_module_aliases(f, Resolver(fn, {"x", "xp"}))
>>> import ast; print(ast.unparse(gast.gast_to_ast(f)))
def f(x):
    return np.sum(x, 0)
"""

import types

import gast

from srctrans.nodes import clone, parameter_names
from srctrans.treewalk import replace_names, walk


def inline_module_aliases(function, resolver):
    """Replace the reads of local names bound once to a module by the module's expression."""
    aliases = bound_once(function, lambda value: value if isinstance(
        value, (gast.Name, gast.Attribute)) and isinstance(resolver.resolve(value),
                                                            types.ModuleType) else None)
    if not aliases:
        return
    dropped = {position for position, _ in aliases.values()}
    function.body[:] = [stmt for position, stmt in enumerate(function.body) if position not in dropped]

    def module(name):
        if isinstance(name.ctx, gast.Load) and name.id in aliases:
            return gast.copy_location(clone(aliases[name.id][1]), name)
        return name
    replace_names(function, module)


def bound_once(function, accept):
    """Local name -> ``(position, accept(value))`` for each name the function binds exactly
    once, by a plain ``name = value`` statement of its body (not a parameter, no other
    binding or ``del``) that no statement before it reads, where ``accept(value)`` is not
    None."""
    bindings = {}                              # name -> how many statements bind it
    for node in walk(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            bindings[node.id] = bindings.get(node.id, 0) + 1
    parameters = set(parameter_names(function))
    found = {}
    for position, stmt in enumerate(function.body):
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)):
            name = stmt.targets[0].id
            if bindings.get(name) == 1 and name not in parameters:
                accepted = accept(stmt.value)
                if accepted is not None:
                    found[name] = (position, accepted)
    if not found:
        return found
    for position, stmt in enumerate(function.body):
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
                    and node.id in found and position <= found[node.id][0]:
                del found[node.id]             # read before its binding: Python's error stays
    return found

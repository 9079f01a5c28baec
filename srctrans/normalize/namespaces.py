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
from srctrans.treewalk import walk


def inline_module_aliases(function, resolver):
    """Replace the reads of local names bound once to a module by the module's expression."""
    bindings = {}                              # name -> how many statements bind it
    for node in walk(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            bindings[node.id] = bindings.get(node.id, 0) + 1
    parameters = set(parameter_names(function))
    aliases = {}                               # name -> (position of its binding, expression)
    for position, stmt in enumerate(function.body):
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, (gast.Name, gast.Attribute))):
            name = stmt.targets[0].id
            if bindings.get(name) == 1 and name not in parameters and \
                    isinstance(resolver.resolve(stmt.value), types.ModuleType):
                aliases[name] = (position, stmt.value)
    if not aliases:
        return
    for position, stmt in enumerate(function.body):
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
                    and node.id in aliases and position <= aliases[node.id][0]:
                del aliases[node.id]           # read before its binding: Python's error stays
    if not aliases:
        return
    dropped = {position for position, _ in aliases.values()}
    function.body[:] = [stmt for position, stmt in enumerate(function.body) if position not in dropped]
    for node in walk(function):
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, gast.Name) and isinstance(value.ctx, gast.Load) and value.id in aliases:
                setattr(node, field, gast.copy_location(clone(aliases[value.id][1]), value))
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    if isinstance(item, gast.Name) and isinstance(item.ctx, gast.Load) \
                            and item.id in aliases:
                        value[index] = gast.copy_location(clone(aliases[item.id][1]), item)

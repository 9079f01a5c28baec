"""``import`` statements inside the function: the names they bind are the modules (or the
objects ``from ... import`` names), as a module-level import would bind them.

Requires: the parsed function, before the fence (which refuses the imports this pass
leaves). Guarantees: :func:`hoist_imports` imports each module named by an ``import`` or
``from ... import`` statement of the function's body (at any depth, not in functions
defined inside), removes the statement, and returns the names it bound with their
objects, for the resolver to read as globals. An import is left (and refused by the fence)
where the name it binds is also bound otherwise in the function, or ``from m import *``.

Importing once, when the derivative is built, is what running the statement each call
does after the first: Python imports a module once per process (``sys.modules``). An
import that fails raises its ``ImportError`` when the derivative is built.
"""

import importlib

import gast

from srctrans.normalize.desugar import statement_lists, walk_own
from srctrans.treewalk import walk, walk_names



def hoist_imports(function, package=None):
    """Remove the imports of ``function`` (a gast FunctionDef) this pass handles and return
    ``{name: object}``; ``package`` resolves relative imports (the function's module's
    ``__package__``)."""
    imports = [node for stmt in function.body for node in walk_own(stmt)
               if isinstance(node, (gast.Import, gast.ImportFrom))]
    if not imports:
        return {}
    others = _bound_otherwise(function)
    bound = {}
    for stmt in imports:
        names = _names(stmt)
        if names is None or any(name in others for name, _ in names):
            continue
        for name, load in names:
            bound[name] = load(package)
        for statements in statement_lists(function):
            if any(s is stmt for s in statements):
                statements[:] = ([s for s in statements if s is not stmt]
                                 or [gast.copy_location(gast.Pass(), stmt)])
    return bound


def _names(stmt):
    """``[(name, load)]`` for the names ``stmt`` binds, ``load(package)`` giving each
    object; None for ``from m import *``."""
    if isinstance(stmt, gast.Import):
        found = []
        for alias in stmt.names:
            if alias.asname is None:              # import a.b binds a, the top package
                top = alias.name.split(".")[0]
                found.append((top, lambda package, full=alias.name, top=top: (
                    importlib.import_module(full), importlib.import_module(top))[1]))
            else:
                found.append((alias.asname, lambda package, full=alias.name:
                              importlib.import_module(full)))
        return found
    if any(alias.name == "*" for alias in stmt.names):
        return None
    module = "." * (stmt.level or 0) + (stmt.module or "")

    def attribute(package, name):
        found = importlib.import_module(module, package)
        try:
            return getattr(found, name)
        except AttributeError:                    # a submodule: from pkg import sub
            return importlib.import_module(f"{found.__name__}.{name}")
    return [(alias.asname or alias.name, lambda package, name=alias.name: attribute(package, name))
            for alias in stmt.names]


def _bound_otherwise(function):
    """The names ``function`` binds by anything but an import (parameters included)."""
    names = {a.id for a in walk_names(function.args)}
    for node in walk(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            names.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)) and node is not function:
            names.add(node.name)
    return names

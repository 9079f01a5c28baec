"""Copy the runtime helpers a generated module calls, so that it runs without srctrans.

Requires: generated source text whose only use of the runtime is attribute
access on one name (``rt.unbroadcast(...)``); the runtime package's modules
import only the standard library, NumPy and each other (relatively).
Guarantees: :func:`runtime_section` returns the text of a function
``_srctrans_runtime()`` holding the definitions the named helpers need (and
those they need, transitively), in an order in which every module-level
statement runs after what it reads, returning a namespace with the helpers.
Being a function, its names never collide with the exported module's own; it
reads NumPy as the module's global ``np``. Copied helpers keep the first
sentence of their docstrings.
An imported name the runtime does not define (a lazily loaded SciPy module)
becomes an import of that module.
"""

import ast
import pathlib
import textwrap

from srctrans import runtime
from srctrans.errors import UsageError

# the runtime package's folder, wherever it was installed from (runtime/ in a checkout,
# srctrans/runtime/ in a wheel)
RUNTIME_DIR = pathlib.Path(str(runtime.__file__)).resolve().parent
# the runtime's lazy attributes that are another library's modules (rt.special)
_LAZY_MODULES = {name: module for name, module in runtime._ON_DEMAND.items()
                 if not module.startswith(runtime.__name__ + ".")}
_tables: dict[str, "_Module"] = {}                               # module name -> _Module


class _Module:
    """One runtime module: its top-level statements by the names they bind."""

    def __init__(self, name):
        path = _module_path(name)
        self.name = name
        self.text = path.read_text()
        tree = ast.parse(self.text)
        self.defines = {}           # name -> statement that binds it at top level
        self.relative = {}          # name -> (module, name there) for `from .m import n as name`
        self.absolute = {}          # name -> the import statement's text
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.level == 1:
                for alias in statement.names:
                    self.relative[alias.asname or alias.name] = (statement.module, alias.name)
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                for alias in statement.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    self.absolute[bound] = ast.unparse(ast.Import([alias])) if isinstance(
                        statement, ast.Import) else ast.unparse(
                        ast.ImportFrom(statement.module, [alias], 0))
            else:
                for target in _bound_names(statement):
                    self.defines[target] = statement
        if name == "__init__":      # the package binds its exports on first read, from a table
            self.relative.update((helper, (module, helper))
                                 for helper, module in runtime._HOMES.items())

    def segment(self, statement):
        """The statement's text as written (decorators, comments inside it and all), but its
        relative imports inside functions (``from .accumulate import zeros_like``, written
        there against a circular import): what they bind is defined beside it."""
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
        lines = self.text.splitlines()[first - 1:statement.end_lineno]
        for inner in inner_relative_imports(statement):
            for lineno in range(inner.lineno, inner.end_lineno + 1):
                line = lines[lineno - first]
                lines[lineno - first] = line[:len(line) - len(line.lstrip())] + "pass"
        for start, end, summary in sorted(_docstrings(statement), reverse=True):
            line = lines[start - first]
            indent = line[:len(line) - len(line.lstrip())]
            lines[start - first:end - first + 1] = _docstring_lines(summary, indent)
        return textwrap.dedent("\n".join(lines))


def _docstrings(statement):
    """``(first line, last line, first sentence)`` of each docstring in ``statement``: a copied
    helper keeps its docstring's first sentence (its arguments, doctests and notes stay in
    the runtime's source)."""
    found = []
    for node in ast.walk(statement):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                text = " ".join(docstring.split())
                summary = text.split(". ")[0].rstrip(".") + "."
                found.append((node.body[0].lineno, node.body[0].end_lineno, summary))
    return found


def _docstring_lines(summary, indent):
    """The lines of a docstring saying ``summary``, wrapped to fit 92 columns."""
    if '"""' in summary or "\\" in summary or summary.endswith('"'):
        return [indent + repr(summary)]
    wrapped = textwrap.wrap('"""' + summary + '"""', width=92 - len(indent))
    return [indent + line for line in wrapped]


def inner_relative_imports(statement):
    """The ``from .m import n`` statements inside ``statement`` (a function or class)."""
    return [node for node in ast.walk(statement) if node is not statement
            and isinstance(node, ast.ImportFrom) and node.level == 1]


def _module_path(name):
    return RUNTIME_DIR / ("__init__.py" if name == "__init__" else f"{name}.py")


def _table(name):
    if name not in _tables:
        _tables[name] = _Module(name)
    return _tables[name]


def _bound_names(statement):
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _read_names(statement):
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)}


def runtime_section(helpers, alias="rt", batch_helpers=()):
    """The text of ``_srctrans_runtime()`` and of the line binding ``alias`` to its result.

    ``helpers`` are the attribute names generated code reads from the
    runtime; ``alias`` is the name the runtime has in that code; ``batch_helpers`` those
    batched code reads as ``rt.batch.NAME`` (``runtime/batching.py``'s, its own or those
    it imports from ``runtime/batched_derivatives.py``).
    """
    helpers = set(helpers) - {"batch"}
    order, seen, imports, lazy = [], set(), {}, {}
    owner = {}                                   # emitted name -> what it means, (module, name)

    def claim(bound, meaning):
        """Reserve the name ``bound`` for ``meaning`` (module, name); False if it already is."""
        if bound not in owner:
            owner[bound] = meaning
            return True
        if owner[bound] != meaning:
            raise UsageError(f"cannot export: runtime/{meaning[0]}.py and "
                             f"runtime/{owner[bound][0]}.py both define {bound}")
        return False

    def need(module, name):
        key = (module, name)
        if key in seen:
            return
        table = _table(module)
        if name in table.relative:
            target = table.relative[name]
            seen.add(key)
            need(*target)
            if target[1] != name and claim(name, target):     # `from .m import n as name`
                order.append(f"{name} = {target[1]}")
            return
        if name in table.absolute:
            imports[table.absolute[name]] = None
            seen.add(key)
            return
        if module == "__init__" and name in _LAZY_MODULES:
            lazy[name] = _LAZY_MODULES[name]
            seen.add(key)
            return
        statement = table.defines.get(name)
        if statement is None:
            return                                # a builtin or a name local to the helper
        seen.add(key)
        for bound in _bound_names(statement):
            claim(bound, key)
        for inner in inner_relative_imports(statement):
            for alias in inner.names:
                if alias.asname not in (None, alias.name):
                    raise UsageError(f"cannot export: runtime/{module}.py imports "
                                     f"{alias.name} as {alias.asname} inside {name}")
                need(inner.module, alias.name)
        for read in sorted(_read_names(statement) - {name}):
            need(module, read)
        order.append(table.segment(statement))

    for helper in sorted(helpers):
        if helper not in _table("__init__").relative and helper not in _table("__init__").defines \
                and helper not in _LAZY_MODULES:
            raise UsageError(f"cannot export: the runtime has no helper {helper!r}")
        need("__init__", helper)
    for helper in sorted(batch_helpers):
        if helper not in _table("batching").defines and helper not in _table("batching").relative:
            raise UsageError(f"cannot export: the runtime has no batching helper {helper!r}")
        need("batching", helper)
    imports.pop("import numpy as np", None)      # the exported module's own import serves
    body = ["import types"] + sorted(imports)
    for name, module in sorted(lazy.items()):
        package, _, leaf = module.rpartition(".")
        body.append(f"from {package} import {leaf} as {name}")
    names = "".join(f"\n    {h}={h}," for h in sorted(helpers))
    if batch_helpers:
        names += "\n    batch=types.SimpleNamespace(" + "".join(
            f"{h}={h}, " for h in sorted(batch_helpers)).rstrip(", ") + "),"
    body += ["", "\n\n".join(order), "", f"return types.SimpleNamespace({names}\n)"]
    text = "def _srctrans_runtime():\n"
    text += '    """The srctrans runtime helpers the functions below call, copied."""\n'
    text += textwrap.indent("\n".join(body), "    ") + "\n"
    text += f"\n\n{alias} = _srctrans_runtime()\n"
    return text

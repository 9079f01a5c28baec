"""Write a derivative as a standalone Python module that needs only NumPy.

``st.export(f, path, wrt=..., mode=...)`` (and ``srctrans export``) writes
the functions srctrans generates for ``f`` -- in reverse mode the forward
pass ``f_fwd``, the backward pass ``f_bwd`` and the gradient ``f_grad``; in
forward mode ``f_jvp`` -- with those of every user function they
differentiate through, the runtime helpers they call (copied from
``srctrans.runtime``), and the globals they read: modules become imports,
numbers, strings and small arrays become literals, and user functions and
classes are copied from their source. Anything else is a ``UsageError``
naming the global, so an exported module never depends on srctrans or on the
file it came from.
"""

import builtins
import inspect
import math
import numbers
import os
import symtable
import sys
import textwrap
import types

import numpy as np

from srctrans import examples
from srctrans import runtime
from srctrans.emit.compile import is_generated
from srctrans.emit.standalone import runtime_section
from srctrans.export_specialised import CHECK, edited, specialised_export
from srctrans.naming import function_base
from srctrans.places import is_installed_file
from srctrans.errors import UsageError
from srctrans.reporting import definition, user_facing
from srctrans.hints import Function, Mode, Wrt

MODES = ("reverse", "forward")
MAX_ARRAY_ENTRIES = 10_000         # larger global arrays are not written out as literals


@user_facing
def export(f: Function, path: str | os.PathLike | None = None, wrt: Wrt = 0,
           mode: Mode = "reverse", args: tuple | None = None) -> str:
    """The text of a standalone module computing ``f``'s derivative; written to ``path`` if given.

    Args:
      f: a function defined with ``def`` in a file (or a cell).
      path: where to write the module (None: only return the text).
      wrt: the selected arguments, as in [`grad`][srctrans.grad].
      mode: ``"reverse"``: ``NAME_fwd(*args) -> (output, residuals)``,
        ``NAME_bwd(residuals, cotangent) -> gradients`` (a VJP with any
        cotangent) and ``NAME_grad(*args) -> gradients`` (of the output's
        sum; one array for one selected argument, else a tuple); or
        ``"forward"``: ``NAME_jvp(*args, dx=..., ...) -> (output, tangent)``
        with a keyword tangent per selected argument.
      args: example arguments (a tuple). For ``f`` an ``st.vmap`` function, the module
        holds its batched code for arguments of their ranks (``wrt`` and ``mode`` unused;
        docs/batching.md). The derivative is built for the objects
        and functions they reach (a model object called), and, where srctrans
        specialises a call on its shapes, the module holds the code specialised
        on theirs (in reverse mode ``NAME_grad`` is then the fused gradient,
        as fast as [`grad`][srctrans.grad]), whose entry points raise
        ``ValueError`` for arguments of other shapes, dtypes or types.

    The module imports NumPy (and SciPy where a rule calls it) and nothing
    of srctrans. A global the derivative reads that is neither a module, a
    number, a string, a small array, nor a function or class with source
    is a [`UsageError`][srctrans.UsageError] naming it: pass it as an argument instead.
    """
    from srctrans.selection import Selection, unwrap     # the API builds on this module's callers
    if hasattr(f, "argument_axes") and hasattr(f, "batched_source"):     # an st.vmap function
        from srctrans.export_batched import export_batched
        return export_batched(f, path, args, _module_text)
    if mode not in MODES:
        raise UsageError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    fn, bound_self = unwrap(f)
    if bound_self is not None:
        raise UsageError(f"cannot export the bound method {fn.__qualname__}: export a "
                         "function that takes the object as an argument")
    selection = Selection(fn, wrt)
    names, base = selection.names, function_base(fn)
    single = len(names) == 1
    if args is None:
        found = examples.instance_for(fn, names, mode, True,
                                      gradient="single" if single else "tuple")
        examples.refuse_unseen_callees(found.build, fn.__qualname__,
                                       "st.export(f, path, args=(...)), or on the command line "
                                       "srctrans export ... --args '...'")
        text = _module_text(fn, names, mode, _builds(fn, found.build))
    else:
        call = inspect.signature(fn).bind(*args)
        call.apply_defaults()
        args = tuple(call.arguments.values())
        found = examples.instance_for(fn, names, mode, True, args, selection.values(args, {}),
                                      guess=False)      # (no branch taken as measured)
        specialised = specialised_export(found, args, base, mode, single)
        if specialised is None:                   # the generic code, built for these arguments
            if mode == "reverse":
                found = examples.instance_for(fn, names, mode, True,
                                              gradient="single" if single else "tuple")
            text = _module_text(fn, names, mode, _builds(fn, found.build))
        else:
            build, edits = specialised
            text = _module_text(fn, names, mode, _builds(fn, build),
                                (edits, list(call.arguments)))
    if path is not None:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    return text


def _builds(fn, root):
    """``(user function, build)`` of ``root`` and of every callee, callers first, each once."""
    found, pending, seen = [], [(fn, root)], set()
    while pending:
        user_fn, build = pending.pop(0)
        if id(build) not in seen:
            seen.add(id(build))
            found.append((user_fn, build))
            pending.extend((callee, instance.build) for callee, instance in build.callees)
    return found


def _module_text(fn, names, mode, builds, specialised=None, header=None):
    """The module's text; ``specialised``: ``(edits, parameters)`` of
    `edited` for the first build's entry points; ``header``: the module's docstring, if
    not the derivative's (batched code's)."""
    texts = [build.source.rstrip("\n") + "\n" for _, build in builds]
    check = None
    if specialised is not None:
        texts[0], check = edited(texts[0], *specialised)
        texts[0] = texts[0].rstrip("\n") + "\n"
    generated = "\n\n".join(texts)
    defined = _top_level_names(generated) | {CHECK}
    globals_ = _Globals()
    runtime_alias = "rt"                 # (every build's closure binds the runtime to a name)
    for (user_fn, build), text in zip(builds, texts):
        seen_here = _user_scope(user_fn)
        read = _free_names(text)
        for name, value in build.compiled._closure.items():
            if value is runtime:
                runtime_alias = name
            elif value is np:
                globals_.add(name, np, definition(user_fn))
            elif name not in read or is_generated(value):
                continue
            elif isinstance(value, type) and _importable(value):
                globals_.import_class(name, value)   # its objects are passed in: the user's class
            else:
                raise UsageError(f"cannot export {fn.__qualname__}: its derivative calls "
                                 f"{name}, which is not generated code")
        for name in sorted(read - defined - set(build.compiled._closure)):
            globals_.resolve(name, seen_here, definition(user_fn))
    parts = [header or _header(fn, names, mode, specialised is not None),
             "\n".join(["import numpy as np"] + globals_.imports)]
    if globals_.definitions:
        parts.append("\n\n\n".join(globals_.definitions))
    helpers = _runtime_attributes(generated, runtime_alias) | globals_.runtime_helpers
    batch_helpers = _batch_attributes(generated, runtime_alias)
    if helpers:
        parts.append(runtime_section(helpers, runtime_alias, batch_helpers) + "".join(
            f"\n{name} = {runtime_alias}.{name}" for name in sorted(globals_.runtime_helpers)))
    if check is not None:
        parts.append(check)
    parts.append(generated)
    return "\n\n\n".join(part.rstrip("\n") for part in parts) + "\n"


def _user_scope(user_fn):
    """The names ``user_fn``'s body can read: its closure variables, then its globals."""
    cells = dict(zip(user_fn.__code__.co_freevars, user_fn.__closure__ or ()))
    scope = dict(user_fn.__globals__)
    for name, cell in cells.items():
        try:
            scope[name] = cell.cell_contents
        except ValueError:                        # deleted in the enclosing scope
            pass
    return scope


def _header(fn, names, mode, specialised=False):
    import srctrans
    file = inspect.getsourcefile(fn) or "<unknown>"
    relative = os.path.relpath(file) if os.path.isabs(file) else file
    file = file if relative.startswith("..") else relative      # the command, run from here
    name = function_base(fn)
    entries = ([f"{name}_jvp(*args, {', '.join('d' + n + '=...' for n in names)}) -> "
                "(output, tangent)"] if mode == "forward" else
               [f"{name}_grad(*args) -> the gradient of the output's sum",
                f"{name}_fwd(*args) -> (output, residuals)",
                f"{name}_bwd(residuals, cotangent) -> the vector-Jacobian product"])
    entry = "".join(f"\n            {line}" for line in entries)
    wrt = ",".join(names)
    example = " --args ..." if specialised else ""
    scope = ("Specialised on the example arguments' shapes: other arguments raise ValueError."
             if specialised else "For arguments of any shape.")
    return textwrap.dedent(f'''\
        """The {mode}-mode derivative of {fn.__qualname__} with respect to {", ".join(names)}.

        Generated by srctrans {srctrans.__version__} from {file}; it needs only NumPy.
        {scope}
        Entry points:{entry}
        Regenerate it with:
            srctrans export {file}:{fn.__qualname__} --wrt {wrt} --mode {mode}{example} -o OUT.py
        Edits to this file are lost when it is regenerated.
        """''')


def _top_level_names(text):
    return {symbol.get_name() for symbol in symtable.symtable(text, "<export>", "exec").get_symbols()
            if symbol.is_assigned() or symbol.is_imported()}


def _free_names(text):
    """The global names any scope of ``text`` reads (builtins included)."""
    free, pending = set(), [symtable.symtable(text, "<export>", "exec")]
    while pending:
        table = pending.pop()
        pending.extend(table.get_children())
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table.get_type() == "module" or symbol.is_global()):
                free.add(symbol.get_name())
    return free


def _runtime_attributes(text, alias):
    import ast
    return {node.attr for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == alias}


def _batch_attributes(text, alias):
    """The names batched code reads as ``rt.batch.NAME``."""
    import ast
    return {node.attr for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "batch" and isinstance(node.value.value, ast.Name)
            and node.value.value.id == alias}


class _Globals:
    """The imports and definitions that give the exported module the globals it reads."""

    def __init__(self):
        self.imports, self.definitions = [], []
        self.runtime_helpers = set()     # runtime helpers read as globals (differentiated helpers)
        self._bound = {"np": np}                  # name -> the object it was bound to

    def add(self, name, value, where):
        """Bind ``name`` to ``value``: True if done (or done before), False if ``value``
        is neither a module nor a constant."""
        if name in self._bound:
            if self._bound[name] is not value and not _same_constant(self._bound[name], value):
                raise UsageError(f"cannot export: two different globals are named {name!r} "
                                 f"(one read at {where}); rename one")
            return True
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] == "srctrans":
                raise UsageError(f"cannot export: {where} reads {name}, part of srctrans; an "
                                 "exported derivative cannot call srctrans")
            self.imports.append(f"import {value.__name__}" if name == value.__name__ else
                                f"import {value.__name__} as {name}")  # (np is bound already)
        elif _literal(value) is not None:
            self.definitions.append(f"{name} = {_literal(value)}")
        else:
            return False
        self._bound[name] = value
        return True

    def import_class(self, name, cls):
        """Bind ``name`` to the user's class ``cls`` by importing it from its module: the
        derivative tells objects passed in by their class, which a copy would not be."""
        if self._bound.get(name, cls) is not cls:
            raise UsageError(f"cannot export: two different globals are named {name!r}; "
                             "rename one")
        if name not in self._bound:
            self.imports.append(f"from {cls.__module__} import {cls.__qualname__}"
                                + (f" as {name}" if name != cls.__qualname__ else ""))
            self._bound[name] = cls

    def resolve(self, name, namespace, where):
        """Bind the global ``name`` as code reading ``namespace`` (at ``where``) sees it."""
        if name not in namespace:
            if name in vars(builtins):
                return
            raise UsageError(f"cannot export: {where} reads {name}, which is not defined")
        value = namespace[name]
        if self.add(name, value, where):
            return
        if getattr(runtime, name, None) is value and callable(value):
            self.runtime_helpers.add(name)     # a helper's derivative reads another helper
            return
        library = _library_import(value)
        if library is not None:                # `dataclass` for a copied class: imported
            module, qualname = library
            self.imports.append(f"from {module} import {qualname}"
                                + (f" as {name}" if name != qualname else ""))
            self._bound[name] = value
            return
        if isinstance(value, (types.FunctionType, type)) and not is_generated(value) \
                and value.__module__.split(".")[0] != "srctrans":
            self._copy_source(name, value, where)
            return
        raise UsageError(
            f"cannot export: {where} reads the global {name}, a {type(value).__name__}, which "
            "an exported module cannot rebuild; make it an argument of the function, or a "
            "number, string, small array, module, or a function or class defined in a file")

    def _copy_source(self, name, value, where):
        try:
            text = textwrap.dedent(inspect.getsource(value))
        except (OSError, TypeError):
            raise UsageError(f"cannot export: {where} reads {name}, whose source cannot be "
                             "read") from None
        if value.__name__ != name:
            text += f"\n{name} = {value.__name__}\n"
        self._bound[name] = self._bound[value.__name__] = value
        namespace = getattr(value, "__globals__", None) or vars(sys.modules[value.__module__])
        inner = f"{inspect.getsourcefile(value)}, {value.__qualname__}"
        for read in sorted(_free_names(text) - _top_level_names(text)):
            self.resolve(read, namespace, inner)
        self.definitions.append(text.rstrip("\n"))


def _importable(cls):
    """Whether the class ``cls`` can be imported by its module's name and its own."""
    module = sys.modules.get(cls.__module__)
    return (module is not None and cls.__module__ != "__main__" and "." not in cls.__qualname__
            and getattr(module, cls.__qualname__, None) is cls)


def _library_import(value):
    """``(module, name)`` to import ``value`` from, for a function or class of the standard
    library or an installed package (not srctrans) that its module binds by its name;
    else None."""
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    qualname = getattr(value, "__qualname__", "")
    if module is None or "." in qualname or getattr(module, qualname, None) is not value \
            or module.__name__.split(".")[0] in ("srctrans", "__main__"):
        return None
    path = getattr(module, "__file__", None)
    if path is not None and not is_installed_file(path):
        return None                            # the user's own module: its source is copied
    return module.__name__, qualname


def _same_constant(a, b):
    return _literal(a) is not None and _literal(a) == _literal(b)


def _literal(value):
    """Python source that rebuilds ``value`` (None when it is not a plain constant)."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return repr(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, np.generic):
        return repr(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return "float('nan')"
        if math.isinf(number):
            return "float('inf')" if number > 0 else "-float('inf')"
        return repr(number) if isinstance(value, float) else f"np.{value.dtype.name}({number!r})"
    if isinstance(value, tuple) and type(value) is tuple:
        entries = [_literal(v) for v in value]
        if any(e is None for e in entries):
            return None
        return "(" + "".join(e + ", " for e in entries).rstrip(" ") + ")"
    if isinstance(value, np.ndarray) and value.size <= MAX_ARRAY_ENTRIES and \
            value.dtype.kind in "biuf":
        return f"np.array({_nested(value.tolist())}, dtype=np.{value.dtype.name})"
    return None


def _nested(entries):
    if isinstance(entries, list):
        return "[" + ", ".join(map(_nested, entries)) + "]"
    return _literal(entries)

"""What a build depends on, as plain data that a later process recomputes and compares.

Requires: live objects (the function being built, what its names denote).
Guarantees: each function returns JSON-ready data (lists, strings, numbers)
that is equal in two processes only when what it describes is the same for
srctrans, or None when the object cannot be described that way (a local
function, an object of a user class, a large array): a build that depends on
such an object is not kept on disk.

  * :func:`of_function` -- a user function: its source and its code object;
  * :func:`of_object` -- what a name denotes: a module by name, a library
    function by module, name and package version, a user function or class by
    its source, a number or string by value, a small array by its bytes;
  * :func:`of_installation` -- srctrans itself (every source file's size and
    time), Python and NumPy; :func:`of_user_rules` -- the rules, declarations
    and ``differentiate_through`` requests users made.
"""

import inspect
import os
import sys
import types
from typing import Any

import numpy as np

from srctrans.normalize.auxiliary import has_aux
from srctrans.places import code_lines, is_installed_file
from srctrans.sha256 import sha256

_LARGEST_ARRAY = 1 << 20          # bytes; a larger array global is not fingerprinted


def digest(data):
    """A short hex digest of JSON-ready ``data`` (its repr, which is deterministic)."""
    return sha256(repr(data).encode("utf-8")).hexdigest()


_functions: dict[types.CodeType, Any] = {}   # code object -> of_function's answer (forget() empties it)


def of_function(fn):
    """``[qualname, line, source digest, code digest]`` of a user function, or None
    without source.

    The code object is part of it: a file edited after Python compiled the
    function gives new text but runs the old code, and must not match an entry
    built from the new text. The file's name is not: a notebook's cells are
    compiled under a name that changes with each kernel, and the same text and
    code give the same derivative wherever they are (the line is kept: the
    generated code's comments name the user's lines).
    """
    code = fn.__code__
    found = _functions.get(code)
    if found is None:
        text = _source(fn)
        if text is None:
            return None
        found = _functions[code] = [
            code.co_firstlineno, sha256(text.encode("utf-8")).hexdigest(),
            _code_digest(code)]
    return [fn.__qualname__, *found, *(["has_aux"] if has_aux(fn) else [])]


def _source(fn):
    """The text of ``fn``'s ``def`` (decorators included) to its last line of code, or None."""
    try:
        return "".join(code_lines(fn)[0])
    except (OSError, SyntaxError):
        return None


def forget():
    """Forget the fingerprints computed of functions (``st.clear_cache``)."""
    _functions.clear()


def _code_digest(code):
    """A digest of what a code object does (instructions, names, constants, nested code)."""
    hasher = sha256()
    stack = [code]
    while stack:
        current = stack.pop()
        hasher.update(current.co_code)
        hasher.update(repr((current.co_name, current.co_names, current.co_varnames,
                            current.co_freevars, current.co_cellvars, current.co_argcount,
                            current.co_kwonlyargcount, current.co_posonlyargcount,
                            current.co_flags)).encode("utf-8"))
        for constant in current.co_consts:
            if isinstance(constant, types.CodeType):
                stack.append(constant)
            else:
                hasher.update(repr((type(constant).__name__, constant)).encode("utf-8"))
    return hasher.hexdigest()


def locate(module, qualname):
    """The object named ``qualname`` in the already imported ``module``, or None."""
    value = sys.modules.get(module)
    for part in qualname.split("."):
        if value is None or part == "<locals>":
            return None
        value = getattr(value, part, None)
    return value


def locator(value):
    """``[module, qualname]`` under which :func:`locate` finds ``value``, or None."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    if locate(module, qualname) is not value:
        return None
    return [module, qualname]


def of_object(value):
    """JSON-ready data saying what ``value`` is to srctrans, or None (see the module docstring)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, complex, str):
        return ["value", kind.__name__, repr(value)]
    if isinstance(value, types.ModuleType):
        return ["module", value.__name__] if sys.modules.get(value.__name__) is value else None
    if isinstance(value, np.ufunc):
        return ["ufunc", value.__name__] if getattr(np, value.__name__, None) is value else None
    if isinstance(value, np.generic):
        return ["value", kind.__name__, repr(value.item())]
    if kind is tuple:
        parts = [of_object(item) for item in value]
        return None if any(part is None for part in parts) else ["tuple", parts]
    if kind is np.ndarray:
        if value.dtype.hasobject or value.nbytes > _LARGEST_ARRAY:
            return None
        data = np.ascontiguousarray(value)
        return ["array", value.dtype.str, list(value.shape),
                sha256(data.tobytes()).hexdigest()]
    if isinstance(value, (types.FunctionType, type)) or callable(value):
        return _of_callable(value)
    return None


def _of_callable(value):
    place = locator(value)
    if place is None:
        return None
    if _is_library(value):
        return ["library", *place, _package_version(place[0])]
    if isinstance(value, types.FunctionType):
        described = of_function(value)
        return None if described is None else ["function", *place, described]
    if isinstance(value, type):
        try:
            text = inspect.getsource(value)
        except (OSError, TypeError):
            return None
        return ["class", *place, sha256(text.encode("utf-8")).hexdigest()]
    return None


def _is_library(value):
    """Whether ``value`` belongs to NumPy, srctrans, the standard library or an installed package."""
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    if module is None:
        return False
    if module.__name__ == "builtins" or module.__name__.split(".")[0] in ("numpy", "srctrans"):
        return True
    path = getattr(module, "__file__", None)
    if path is None:                     # compiled into the interpreter (math, sys)
        return module.__name__ in sys.builtin_module_names
    return is_installed_file(path)


_versions: dict[str, str] = {}


def _package_version(module):
    top = module.split(".")[0]
    if top not in _versions:
        version = getattr(sys.modules.get(top), "__version__", None)
        if version is None and (top in sys.builtin_module_names
                                or top in getattr(sys, "stdlib_module_names", ())):
            version = sys.version               # (the standard library: Python's)
        if version is None:
            import importlib.metadata           # only here: it costs 10 ms to import
            try:
                version = importlib.metadata.version(top)
            except Exception:                  # not a distribution (the standard library)
                version = sys.version
        _versions[top] = str(version)
    return _versions[top]


_installation: list[str] = []


def of_installation():
    """srctrans's own source files (name, size, modification time), Python's and NumPy's versions.

    Computed once per process: a file of srctrans edited while a process runs is
    not seen by that process (nor is the edit used by it: modules are imported once).
    """
    if not _installation:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        runtime = os.path.dirname(os.path.abspath(sys.modules["srctrans.runtime"].__file__))
        stamps = [_stamps(top) for top in sorted({root, runtime})]
        _installation.append(digest([sys.version, np.__version__, stamps]))
    return _installation[0]


def _stamps(top):
    """``(relative path, size, modification time)`` of each ``.py`` file under ``top``, in
    a fixed order (one ``scandir`` a folder, no path arithmetic: a new process's first
    gradient computes it)."""
    stamps, pending = [], [("", top)]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda entry: entry.name)
        for entry in entries:
            if entry.name.endswith(".py"):
                info = os.stat(entry.path)
                stamps.append((prefix + entry.name, info.st_size, info.st_mtime_ns))
            elif entry.name != "__pycache__" and entry.is_dir():
                pending.append((prefix + entry.name + "/", entry.path))
    return stamps


def of_user_rules(registry):
    """The rules, declarations and requests users made, or None when one cannot be described."""
    custom, declared, through = registry.user_made()
    described = []
    for primal, (vjp, jvp) in custom.items():
        described.append(["custom", of_object(primal), of_object(vjp), of_object(jvp)])
    for primal in declared:
        described.append(["nondifferentiable", of_object(primal)])
    for fn in through:
        described.append(["through", of_object(fn)])
    if any(part is None for entry in described for part in entry[1:]):
        return None
    return sorted(described, key=repr)

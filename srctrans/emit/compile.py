"""Compile printed functions into live ones.

Requires: gast FunctionDefs whose free names are either the user's globals,
the user function's closure variables, or names supplied in ``closure``.
Guarantees: :func:`compile_functions` returns a :class:`Compiled` whose
``instantiate`` gives live functions that read the user's globals and the
user function's closure cells live (as the user's function does), and read
srctrans's own names (the runtime, NumPy, called derivative passes) through a
factory's closure, never through the user's namespace. The text is registered
with :mod:`linecache`, so tracebacks and ``inspect.getsource`` show it.
"""

import hashlib
import linecache
import os
import re
import tempfile
import types

from srctrans.emit.printer import INDENT, function_lines

FACTORY = "__srctrans_factory__"
_DIRECTORY = os.path.join(tempfile.gettempdir(), "srctrans-generated")


def is_generated(fn):
    """Whether ``fn`` is a derivative srctrans generated (one built from it is a higher one)."""
    return getattr(fn, "__qualname__", "").startswith(FACTORY + ".")


class Compiled:
    """A compiled generated module, ready to be bound to a user function.

    Attributes:
      source: the readable text of the generated functions (what st.source shows).
      filename: the file name the code was compiled with (registered with linecache).
    """

    def __init__(self, factory, closure, source, filename):
        self._factory = factory
        self._closure = closure
        self.source = source
        self.filename = filename

    def instantiate(self, fn):
        """The generated functions, reading ``fn``'s own globals and closure cells.

        The user's closure variables are shared, not copied: the generated
        code sees the enclosing scope rebind them, as ``fn`` itself does.
        """
        factory = self._factory
        if factory.__globals__ is not fn.__globals__:   # the same code in another module
            factory = types.FunctionType(factory.__code__, fn.__globals__, factory.__name__)
        made = factory(*self._closure.values(),
                             *(None for name in fn.__code__.co_freevars if name not in self._closure))
        user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        return tuple(_share_cells(generated, user_cells) for generated in made)


def _share_cells(generated, user_cells):
    """``generated`` rebuilt so that its free variables named like the user's use the user's cells."""
    names = generated.__code__.co_freevars
    if not any(name in user_cells for name in names):
        return generated
    cells = tuple(user_cells.get(name, cell) for name, cell in zip(names, generated.__closure__))
    shared = types.FunctionType(generated.__code__, generated.__globals__, generated.__name__,
                                generated.__defaults__, cells)
    shared.__kwdefaults__ = generated.__kwdefaults__
    return shared


def _write(text, label):
    """Save ``text`` to a real file, so every traceback printer can show its lines.

    Falls back to a pseudo-file name (still registered with linecache) when the
    temporary directory is not writable.
    """
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_")
    # named by content: building the same code again reuses one file instead of adding one
    name = f"{stem}_{hashlib.sha1(text.encode()).hexdigest()[:12]}.py"
    try:
        os.makedirs(_DIRECTORY, exist_ok=True)
        path = os.path.join(_DIRECTORY, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path
    except OSError:
        return f"<srctrans {label} #{name}>"


def compile_functions(functions, closure, user_fn, label):
    """Compile ``functions`` (gast FunctionDefs) for the user function ``user_fn``.

    ``closure`` maps srctrans's own free names to their values. The factory
    returns the functions in the order given.
    """
    # a user closure variable srctrans also supplies (``np`` in generated code) is the same object
    freevars = [name for name in user_fn.__code__.co_freevars if name not in closure]
    params = ", ".join(list(closure) + freevars)
    names = ", ".join(f.name for f in functions)
    printed = [function_lines(f) for f in functions]
    source = "\n\n".join("\n".join(lines) for lines in printed) + "\n"
    lines = [f"def {FACTORY}({params}):"]
    for function_text in printed:
        lines.extend(INDENT + line if line else line for line in function_text)
        lines.append("")
    lines.append(f"{INDENT}return ({names},)")
    text = "\n".join(lines) + "\n"
    filename = _write(text, label)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    code = compile(text, filename, "exec")
    namespace = {}
    exec(code, user_fn.__globals__, namespace)
    return Compiled(namespace[FACTORY], closure, source, filename)

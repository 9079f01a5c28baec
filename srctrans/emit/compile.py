"""Compile printed functions into live ones.

Requires: gast FunctionDefs whose free names are either the user's globals,
the user function's closure variables, or names supplied in ``closure``.
Guarantees: :func:`compile_functions` returns a :class:`Compiled` whose
``instantiate`` gives live functions that read the user's globals and the
user function's closure cells live (as the user's function does), and read
srctrans's own names (the runtime, NumPy, called derivative passes) through a
factory's closure, never through the user's namespace. The text is kept in
memory only, registered with :mod:`linecache` under a pseudo file name
(``<srctrans ...>``), so tracebacks and ``inspect.getsource`` show it; nothing
is written to disk. :func:`forget_sources` takes those entries back.
"""

import linecache
import re
import types
import typing

import gast

from srctrans.emit.printer import INDENT, function_lines
from srctrans.sha256 import sha256

FACTORY = "__srctrans_factory__"
_registered: dict[str, tuple] = {}   # pseudo file name of generated code -> (user's file, function)
_LINE_COMMENT = re.compile(r"\s*# line (\d+): (.*)")


class Origin(typing.NamedTuple):
    """The user's line a line of generated code comes from."""
    filename: str
    lineno: int
    function: str
    text: str


GENERATED_PREFIX = "<srctrans "       # the pseudo file names of generated code


def is_generated(fn):
    """Whether ``fn`` is a derivative srctrans generated (one built from it is a higher one)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith(GENERATED_PREFIX)


class Compiled:
    """A compiled generated module, ready to be bound to a user function.

    Attributes:
      source: the readable text of the generated functions (what st.source shows).
      text: the module compiled: a factory taking the closure's names, then the
        user function's free variables, and returning the generated functions.
      label: what the text is (``"f reverse"``), part of its pseudo file name.
      filename: the file name the code was compiled with (registered with linecache).
    """

    def __init__(self, factory, closure, source, text, label, filename):
        self._factory = factory
        self._closure = closure
        self.source = source
        self.text = text
        self.label = label
        self.filename = filename

    @property
    def closure(self):
        """srctrans's own free names of the generated code, and their values, in factory order."""
        return dict(self._closure)

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


def register_source(text, label, user_fn=None):
    """The pseudo file name ``text`` is compiled with, its lines registered with linecache.

    Named by content: building the same code again reuses one entry. ``user_fn``
    is the function the code was generated from (see :func:`generated_origin`).
    """
    stem = re.sub(r"[^A-Za-z0-9_.]+", " ", label).strip()
    filename = f"{GENERATED_PREFIX}{stem} #{sha256(text.encode()).hexdigest()[:12]}>"
    # no modification time: linecache.checkcache keeps the entry (there is no file to check)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    code = getattr(user_fn, "__code__", None)
    _registered[filename] = (code.co_filename, user_fn.__qualname__) if code else None
    return filename


def generated_origin(filename, lineno):
    """The :class:`Origin` of line ``lineno`` of generated code, or None when unknown.

    Generated statements follow a ``# line N: text`` comment naming the user's line.
    """
    user = _registered.get(filename)
    lines = linecache.cache.get(filename, (None, None, ()))[2]
    if user is None or not 0 < lineno <= len(lines):
        return None
    for line in reversed(lines[:lineno]):
        found = _LINE_COMMENT.match(line)
        if found:
            return Origin(user[0], int(found.group(1)), user[1], found.group(2).strip())
        if line.lstrip().startswith("def "):
            return None
    return None


def forget_sources():
    """Remove the linecache entries of all generated code (``st.clear_cache``)."""
    for filename in _registered:
        linecache.cache.pop(filename, None)
    _registered.clear()


def _without_defaults(function):
    """``function`` with each default value printed as None.

    The factory must not evaluate the user's default expressions (``num=num``
    may name a local of a scope that has returned): :class:`Instance` gives
    the generated functions the user function's own ``__defaults__``.
    """
    if not function.args.defaults and not any(function.args.kw_defaults):
        return function
    copy = gast.FunctionDef(function.name, gast.arguments(
        function.args.args, function.args.posonlyargs, function.args.vararg,
        function.args.kwonlyargs,
        [None if d is None else gast.Constant(None, None) for d in function.args.kw_defaults],
        function.args.kwarg, [gast.Constant(None, None) for _ in function.args.defaults]),
        function.body, function.decorator_list, function.returns, function.type_comment,
        getattr(function, "type_params", []))
    return copy


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
    for function, function_text in zip(functions, printed):
        without = _without_defaults(function)
        if without is not function:          # printed again: only the defaults differ
            function_text = function_lines(without)
        lines.extend(INDENT + line if line else line for line in function_text)
        lines.append("")
    lines.append(f"{INDENT}return ({names},)")
    return compile_text("\n".join(lines) + "\n", closure, source, user_fn, label)


def compile_text(text, closure, source, user_fn, label):
    """The :class:`Compiled` of a factory module's ``text`` (see :attr:`Compiled.text`), whose
    first parameters are the names of ``closure``, in order."""
    filename = register_source(text, label, user_fn)
    code = compile(text, filename, "exec")
    namespace = {}
    exec(code, user_fn.__globals__, namespace)
    return Compiled(namespace[FACTORY], closure, source, text, label, filename)

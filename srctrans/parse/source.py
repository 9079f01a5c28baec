"""Read a live function's source and parse it with gast.

Requires: a Python function defined with ``def`` in a file (or any source
``inspect.getsource`` can find).
Guarantees: a :class:`ParsedFunction` whose tree's line numbers are the user's
file line numbers, and a way to name a place in that file for error messages.
"""

import ast
import linecache
import os
import sys
import textwrap
import types

import gast

from srctrans.errors import Location, NoSourceError, UnsupportedSyntaxError
from srctrans.places import source_lines
from srctrans.treewalk import walk


class ParsedFunction:
    """A user function with its gast ``FunctionDef`` and where it came from.

    Attributes:
      fn: the live function object.
      node: the ``gast.FunctionDef`` (line numbers are file line numbers).
      filename: the file the source was read from.
      lines: the file's source lines, indexed by line number - 1 (for comments).
    """

    def __init__(self, fn, node, filename, lines):
        self.fn = fn
        self.node = node
        self.filename = filename
        self.lines = lines

    @property
    def name(self):
        return self.node.name

    def location(self, node):
        """The :class:`Location` of ``node`` (or of the function when it has no line)."""
        lineno = getattr(node, "lineno", None) or self.node.lineno
        return Location(self.filename, lineno, self.name)

    def location_of_line(self, lineno):
        """The :class:`Location` of line ``lineno`` of the user's file."""
        return Location(self.filename, lineno or self.node.lineno, self.name)

    def line_text(self, lineno):
        """The stripped text of the user's line ``lineno``, for generated comments."""
        index = lineno - 1
        if 0 <= index < len(self.lines):
            return self.lines[index].strip()
        return ""


def _describe(fn):
    return getattr(fn, "__qualname__", None) or repr(fn)


_WHERE_SOURCE_COMES_FROM = (
    "srctrans reads the source of a `def` from a file: define the function in a .py file "
    "and import it, or in a Jupyter or IPython cell (which keep their source); the plain "
    "`python` prompt and exec() keep none")


def parse_function(fn):
    """Parse ``fn``'s source. Raises :class:`NoSourceError` when there is none."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        raise NoSourceError(
            f"{_describe(fn)} is not a Python function with source "
            f"(it is a {type(fn).__name__})",
            hint="differentiate a Python function defined with `def` that calls it "
                 "(def f(x): return np.sin(x)); srctrans differentiates the calls it "
                 "makes by their derivative rules")
    filename = fn.__code__.co_filename
    interactive = filename.startswith("<") and not filename.startswith("<ipython-input") \
        and filename not in linecache.cache
    if fn.__name__ == "<lambda>":
        raise NoSourceError(
            "a lambda cannot be differentiated: srctrans reads a function's `def` source",
            Location(filename, fn.__code__.co_firstlineno, "<lambda>"),
            hint=_WHERE_SOURCE_COMES_FROM if interactive else
            "define the function with `def` instead of `lambda`")
    try:
        # the code object, not the function: inspect follows functools.wraps to the wrapped
        # function, but srctrans must differentiate the wrapper Python actually calls
        lines, first = source_lines(fn)
    except (OSError, TypeError, SyntaxError) as error:
        raise NoSourceError(
            f"cannot read the source of {_describe(fn)} ({filename}): {error}",
            hint=_WHERE_SOURCE_COMES_FROM) from None
    source = textwrap.dedent("".join(lines))
    module = gast.parse(source)
    node = module.body[0]
    if isinstance(node, gast.AsyncFunctionDef):
        raise UnsupportedSyntaxError(
            "`async def` is not supported", Location(filename, first, fn.__name__),
            "differentiate a plain (non-async) function")
    if not isinstance(node, gast.FunctionDef):
        raise NoSourceError(f"the source of {_describe(fn)} is not a `def`",
                            hint="define the function with `def`")
    if not _compiles_to(source, fn.__code__, sys.modules.get(fn.__module__), first):
        raise NoSourceError(
            f"the source of {_describe(fn)} in {filename} has changed since Python compiled "
            f"it: srctrans would differentiate the new text while the function runs the old code",
            Location(filename, first, fn.__name__),
            hint="reload the module (importlib.reload) or restart, so that the function and its "
                 "file agree")
    _shift_lines(node, first - 1)
    node.decorator_list = []
    file_lines = linecache.getlines(filename, fn.__globals__) or [""] * (first - 1) + lines
    return ParsedFunction(fn, node, filename, file_lines)


def _compiles_to(source, code, module, first=1):
    """Whether ``source`` (a ``def``, decorators included, from line ``first`` of its file)
    is the text ``code`` came from.

    The source is compiled again and compared with ``code``: names, constants
    and variables must agree. Instructions may differ without an edit (a tool
    such as pytest compiles a rewritten tree), so when only they differ the
    verdict comes from ``module``'s cached bytecode, which records the size
    and time of the file it was compiled from.
    """
    if code.co_freevars:             # compiled inside a function that gives the same cells
        own = "" if code.co_name in code.co_freevars else f"    global {code.co_name}\n"
        cells = "".join(f"    {name} = None\n" for name in code.co_freevars)
        text = "def __srctrans_outer__():\n" + own + cells + textwrap.indent(source, "    ")
    else:
        text = source
    # at the source's own lines: line numbers are constants too (a class body's
    # __firstlineno__ in Python 3.13)
    text = "\n" * max(0, first - 1 - (text.count("\n") - source.count("\n"))) + text
    try:
        outer = compile(text, code.co_filename, "exec", dont_inherit=True,
                        flags=code.co_flags & _FUTURE_FLAGS)
    except (SyntaxError, ValueError):
        return True                      # no verdict (a source Python itself reads differently)
    found = [c for c in _code_objects(outer) if c.co_name == code.co_name]
    if any(_same_code(candidate, code, True) for candidate in found):
        return True
    if not any(_same_code(candidate, code, False) for candidate in found):
        return False
    if not _file_changed_since_compiled(code.co_filename, module):
        return True
    # The cached bytecode is older than the file, which Python may have compiled again
    # without writing it (PYTHONDONTWRITEBYTECODE, a reload): the file compiled whole, as
    # the import compiled it (Python 3.11 calls an imported module's functions with other
    # instructions than a def compiled alone), says whether this code came from it.
    return _compiled_from_file(code)


def _compiled_from_file(code):
    """Whether the file ``code`` names, compiled whole, has ``code`` (same line, same code)."""
    text = "".join(linecache.getlines(code.co_filename))
    try:
        whole = compile(text, code.co_filename, "exec", dont_inherit=True,
                        flags=code.co_flags & _FUTURE_FLAGS)
    except (SyntaxError, ValueError):
        return False
    return any(c.co_name == code.co_name and c.co_firstlineno == code.co_firstlineno
               and _same_code(c, code, True) for c in _code_objects(whole))


def _file_changed_since_compiled(filename, module):
    """True when ``module``'s cached bytecode says ``filename`` changed after it was compiled."""
    if getattr(module, "__file__", None) != filename:
        return False                     # not a module's own function: no verdict
    try:
        with open(module.__cached__, "rb") as handle:
            header = handle.read(16)
        stat = os.stat(filename)
    except (AttributeError, OSError, TypeError):
        return False
    if len(header) < 16 or int.from_bytes(header[4:8], "little") != 0:
        return False                     # a hash-based or unreadable cache: no verdict
    recorded_time = int.from_bytes(header[8:12], "little")
    recorded_size = int.from_bytes(header[12:16], "little")
    return (recorded_time != int(stat.st_mtime) & 0xFFFFFFFF
            or recorded_size != stat.st_size & 0xFFFFFFFF)


_FUTURE_FLAGS = 0
for _feature in ("annotations", "division", "generator_stop"):
    _FUTURE_FLAGS |= getattr(__import__("__future__"), _feature).compiler_flag


def _code_objects(code):
    stack = [code]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))


def _same_code(a, b, instructions):
    """Whether code objects ``a`` and ``b`` have the same names, constants and variables (and
    instructions, when ``instructions``), nested functions included."""
    if instructions and a.co_code != b.co_code:
        return False
    if len(a.co_consts) != len(b.co_consts) or a.co_varnames != b.co_varnames \
            or a.co_argcount != b.co_argcount or len(a.co_names) != len(b.co_names):
        return False
    if a.co_names != b.co_names and not all(
            x == y or y.endswith(x) and y.startswith("_") for x, y in zip(a.co_names, b.co_names)):
        return False                     # a class's private names are mangled in the original
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y, instructions):
                return False
        elif type(x) is not type(y) or x != y and not (x != x and y != y) \
                and not _same_qualname(x, y):                  # NaN == NaN here
            return False
    return True


def _same_qualname(x, y):
    """Python 3.10 keeps a nested function's qualified name among the constants: the names
    of the enclosing functions differ when the text is compiled inside another one."""
    return (isinstance(x, str) and isinstance(y, str) and ".<locals>." in x and ".<locals>." in y
            and x.rsplit(".<locals>.", 1)[1] == y.rsplit(".<locals>.", 1)[1])


def _shift_lines(tree, offset):
    for node in walk(tree):
        if hasattr(node, "lineno") and node.lineno is not None:
            node.lineno += offset
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += offset


def nesting_depth(fn):
    """How deeply the syntax tree of ``fn``'s source nests (0 when it has no source).

    The passes walk trees recursively, so a long expression such as
    ``x + x + ... + x`` needs a few Python frames per level; the cache uses
    this to give a build enough recursion headroom. The walk is iterative.
    """
    try:
        source = textwrap.dedent("".join(source_lines(fn)[0]))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, AttributeError, RecursionError, MemoryError):
        return 0
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest

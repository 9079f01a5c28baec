"""Read a live function's source and parse it with gast.

Requires: a Python function defined with ``def`` in a file (or any source
``inspect.getsource`` can find).
Guarantees: a :class:`ParsedFunction` whose tree's line numbers are the user's
file line numbers, and a way to name a place in that file for error messages.
"""

import ast
import linecache
import textwrap
import types
import weakref

import gast

from srctrans.errors import Location, NoSourceError, UnsupportedSyntaxError
from srctrans.nodes import clone
from srctrans.places import source_lines
from srctrans.treewalk import walk


class ParsedFunction:
    """A user function with its gast ``FunctionDef`` and where it came from.

    Attributes:
      fn: the live function object.
      node: the ``gast.FunctionDef`` (line numbers are file line numbers).
      filename: the file the source was read from.
      lines: the file's source lines, indexed by line number - 1 (for comments).
      inlined: called function -> the name of the local ``def`` its body was copied
        into (:mod:`srctrans.normalize.callees`), inlined where it is called.
    """

    def __init__(self, fn, node, filename, lines):
        self.fn = fn
        self.node = node
        self.filename = filename
        self.lines = lines
        self.inlined = {}

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


# code object -> (linecache's list of its file's lines, what was made of that text): a build
# parses the same function several times (its own check, the cache's, each build of it)
_PARSES: "weakref.WeakKeyDictionary[types.CodeType, tuple]" = weakref.WeakKeyDictionary()
_DEPTHS: "weakref.WeakKeyDictionary[types.CodeType, tuple]" = weakref.WeakKeyDictionary()


def _kept(table, code, filename, globals_):
    """What ``table`` keeps for ``code``, when it was made from the text of its file that
    linecache holds now (a file changed since is read again, into a new list); else None."""
    found = table.get(code) if code is not None else None
    if found is None:
        return None
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, globals_)
    return found[1:] if lines and lines is found[0] else None


def parse_function(fn, shared=False):
    """Parse ``fn``'s source. Raises :class:`NoSourceError` when there is none.

    Each call gets a tree of its own to change, but with ``shared``: then the tree is the one
    kept for later calls (parsed once per code object and text of its file), to be read only.
    """
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
    # a pseudo-file ("<string>") may hold the text of another exec() (Python 3.13 keeps the
    # text of `python -c` under that name): what it holds is the function's only if it
    # compiles to the function's code
    pseudo = filename.startswith("<") and not filename.startswith("<ipython-input")
    if fn.__code__.co_name == "<lambda>":       # (functools.wraps may have renamed it)
        kept = linecache.getlines(filename) if pseudo else []
        first = fn.__code__.co_firstlineno
        interactive = pseudo and "lambda" not in (kept[first - 1] if first <= len(kept) else "")
        raise NoSourceError(
            "a lambda cannot be differentiated: srctrans reads a function's `def` source",
            Location(filename, fn.__code__.co_firstlineno, "<lambda>"),
            hint=_WHERE_SOURCE_COMES_FROM if interactive else
            "define the function with `def` instead of `lambda`")
    found = _kept(_PARSES, fn.__code__, filename, fn.__globals__)
    if found is not None:
        node, file_lines = found
        return ParsedFunction(fn, node if shared else clone(node), filename, file_lines)
    try:
        # the code object, not the function: inspect follows functools.wraps to the wrapped
        # function, but srctrans must differentiate the wrapper Python actually calls
        lines, first = source_lines(fn)
    except (OSError, TypeError, SyntaxError) as error:
        raise NoSourceError(
            f"cannot read the source of {_describe(fn)} ({filename}): {error}",
            hint=_WHERE_SOURCE_COMES_FROM) from None
    try:
        body = gast.parse(textwrap.dedent("".join(lines))).body
    except SyntaxError:
        body = []
    node = body[0] if body else None
    if isinstance(node, gast.AsyncFunctionDef):
        raise UnsupportedSyntaxError(
            "`async def` is not supported", Location(filename, first, fn.__name__),
            "differentiate a plain (non-async) function")
    if not isinstance(node, gast.FunctionDef):
        raise NoSourceError(f"the source of {_describe(fn)} is not a `def`",
                            hint=_WHERE_SOURCE_COMES_FROM if pseudo else
                            "define the function with `def`")
    if not _compiles_to(lines, fn.__code__, first):
        if pseudo:
            raise NoSourceError(
                f"cannot read the source of {_describe(fn)} ({filename}): the text Python "
                f"keeps under that name is not the function's", hint=_WHERE_SOURCE_COMES_FROM)
        raise NoSourceError(
            f"the source of {_describe(fn)} in {filename} has changed since Python compiled "
            f"it: srctrans would differentiate the new text while the function runs the old code",
            Location(filename, first, fn.__name__),
            hint="reload the module (importlib.reload) or restart, so that the function and its "
                 "file agree")
    _shift_lines(node, first - 1)
    node.decorator_list = []
    cached = linecache.getlines(filename, fn.__globals__)
    file_lines = cached or [""] * (first - 1) + lines
    _PARSES[fn.__code__] = (cached, node, file_lines)
    return ParsedFunction(fn, node if shared else clone(node), filename, file_lines)


def _compiles_to(lines, code, first=1):
    """Whether ``lines`` (a ``def``, decorators included, at its file's indentation, from line
    ``first`` of the file) is the text ``code`` came from: exact in both directions.

    The text is compiled again, at its own indentation (so that a docstring's lines keep
    theirs) and at its own lines, and must give ``code``'s instructions, names, constants
    and variables. When it does not, the whole file is compiled as an import compiles it
    (Python 3.11 gives a module's functions other instructions than a ``def`` compiled
    alone) and must hold ``code`` at its line. Only a function of a module pytest rewrote
    (its ``assert`` statements become other instructions) is judged without instructions.
    """
    found = list(_compiled_alone(lines, code, first))
    if any(_same_code(candidate, code, True) for candidate in found):
        return True
    if _compiled_from_file(code):
        return True
    return _rewritten_by_pytest(code) and any(_same_code(c, code, False) for c in found)


def _compiled_alone(lines, code, first):
    """The code objects named like ``code`` that ``lines`` compile to."""
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())] if lines else ""
    source = "".join(lines)
    header = []
    if code.co_freevars:             # compiled inside a function that gives the same cells
        inner = indent if indent else "    "
        header.append("def __srctrans_outer__():")
        if code.co_name not in code.co_freevars:
            header.append(f"{inner}global {code.co_name}")
        header.extend(f"{inner}{name} = None" for name in code.co_freevars)
        if not indent:
            source = textwrap.indent(source, inner)
    elif indent:
        header.append("if 1:")         # a method or a nested def, at its own indentation
    # at the source's own lines: line numbers are constants too (a class body's
    # __firstlineno__ in Python 3.13)
    text = "\n" * max(0, first - 1 - len(header)) + "".join(h + "\n" for h in header) + source
    try:
        outer = compile(text, code.co_filename, "exec", dont_inherit=True,
                        flags=code.co_flags & _FUTURE_FLAGS)
    except (SyntaxError, ValueError):
        return
    yield from (c for c in _code_objects(outer) if c.co_name == code.co_name)


def _rewritten_by_pytest(code):
    """Whether ``code`` was compiled from a tree pytest's assertion rewriting changed."""
    return any(name.startswith("@py") for name in code.co_names)


def _compiled_from_file(code):
    """Whether the file ``code`` names, compiled whole, has ``code`` (same line, same code)."""
    linecache.checkcache(code.co_filename)
    text = "".join(linecache.getlines(code.co_filename))
    found = _file_code_objects(code.co_filename, text, code.co_flags & _FUTURE_FLAGS)
    return any(_same_code(c, code, True) for c in found.get((code.co_name, code.co_firstlineno), ()))


_FILES: dict[tuple, dict] = {}      # (file, text, flags) -> {(name, first line): code objects}
_MAX_FILES = 32


def forget_compiled_files():
    """Drop the files compiled whole for the staleness check, and the functions parsed
    (``st.clear_cache``)."""
    _FILES.clear()
    _PARSES.clear()
    _DEPTHS.clear()


def _file_code_objects(filename, text, flags):
    """The code objects of ``text`` compiled whole, by name and first line: compiled once per
    text of a file (Python 3.11 gives most functions of a module other instructions than
    their ``def`` compiled alone, so every function of a file is looked up here)."""
    key = (filename, text, flags)
    found = _FILES.get(key)
    if found is None:
        found = {}
        try:
            whole = compile(text, filename, "exec", dont_inherit=True, flags=flags)
        except (SyntaxError, ValueError):
            whole = None
        for c in _code_objects(whole) if whole is not None else ():
            found.setdefault((c.co_name, c.co_firstlineno), []).append(c)
        if len(_FILES) >= _MAX_FILES:
            _FILES.pop(next(iter(_FILES)))            # the oldest file
        _FILES[key] = found
    return found


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
    this to give a build enough recursion headroom. The walk is iterative. Kept per code
    object and text of its file.
    """
    code = getattr(fn, "__code__", None)
    filename = getattr(code, "co_filename", "")
    globals_ = getattr(fn, "__globals__", None)
    known = _kept(_DEPTHS, code, filename, globals_)
    if known is not None:
        return known[0]
    deepest = _depth(fn)
    if code is not None:
        _DEPTHS[code] = (linecache.getlines(filename, globals_), deepest)
    return deepest


def _depth(fn):
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

"""Read a live function's source and parse it with gast.

Requires: a Python function defined with ``def`` in a file (or any source
``inspect.getsource`` can find).
Guarantees: a :class:`ParsedFunction` whose tree's line numbers are the user's
file line numbers, and a way to name a place in that file for error messages.
"""

import ast
import inspect
import textwrap
import types

import gast

from srctrans.errors import Location, NoSourceError, UnsupportedSyntaxError


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


def parse_function(fn):
    """Parse ``fn``'s source. Raises :class:`NoSourceError` when there is none."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        raise NoSourceError(
            f"{_describe(fn)} is not a Python function with source "
            f"(it is a {type(fn).__name__})",
            hint="differentiate a function defined with `def`, or give this "
                 "call it from a NumPy function that has a derivative rule")
    if fn.__name__ == "<lambda>":
        raise NoSourceError(
            "a lambda cannot be differentiated: srctrans reads a function's `def` source",
            Location(fn.__code__.co_filename, fn.__code__.co_firstlineno, "<lambda>"),
            hint="define the function with `def` instead of `lambda`")
    filename = fn.__code__.co_filename
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as error:
        raise NoSourceError(
            f"cannot read the source of {_describe(fn)} ({filename}): {error}",
            hint="define the function in a file (not in an interactive "
                 "session or with exec)") from None
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
    _shift_lines(node, first - 1)
    node.decorator_list = []
    try:
        file_lines = inspect.findsource(fn)[0]
    except (OSError, TypeError):
        file_lines = [""] * (first - 1) + lines
    return ParsedFunction(fn, node, filename, file_lines)


def _shift_lines(tree, offset):
    for node in gast.walk(tree):
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
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, RecursionError, MemoryError):
        return 0
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest

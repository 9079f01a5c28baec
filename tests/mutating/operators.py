"""Mutants of a Python module: each one small change to one line of its source.

Guarantees: :func:`mutants` returns, for a module's text, every mutant the
operators below make, as :class:`Mutant` records holding the changed text;
each mutant parses, changes exactly one statement or expression, and keeps
the module's line numbering (so a line's covering tests still apply).

Operators (the classic set of Offutt et al.'s selective mutation, on Python):
  * comparisons flipped (``==``/``!=``, ``<``/``>=``, ``is``/``is not``,
    ``in``/``not in``) and boundaries moved (``<``/``<=``);
  * ``and``/``or`` swapped; ``not`` removed; an ``if``/``while`` test negated;
  * ``True``/``False`` swapped, an int constant ``n`` made ``n + 1``;
  * ``+``/``-`` and ``*``/``/`` swapped in arithmetic;
  * ``return value`` made ``return None``;
  * a statement (an assignment, a call for its effect, a ``raise``, a
    ``continue``/``break``) replaced by ``pass``.
Docstrings, strings and type annotations are left alone.
"""

import ast
import dataclasses

_COMPARE_FLIP = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt,
                 ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
                 ast.In: ast.NotIn, ast.NotIn: ast.In}
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
_DELETABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Continue,
              ast.Break)


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One changed line: ``text`` is the whole module with the change; ``context`` the
    function the change is in and the changed line as it was, stripped (what tells equal
    changes on two lines apart, and stays when other lines move)."""
    path: str
    line: int
    operator: str
    before: str
    after: str
    text: str
    context: str = ""

    @property
    def key(self):
        return f"{self.path}:{self.line}:{self.operator}:{self.after}"


def mutants(path, text):
    """Every mutant of the module ``text`` (read from ``path``), in source order."""
    tree = ast.parse(text)
    lines = text.encode("utf-8").splitlines(keepends=True)
    skipped = _docstrings_and_annotations(tree)
    skipped.update(id(stmt) for stmt in tree.body)     # removing a module's own line: an import error
    scopes = _scopes(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped or not hasattr(node, "lineno"):
            continue
        for operator, replacement in _replacements(node):
            mutant = _spliced(path, lines, node, operator, replacement, scopes.get(id(node), ""))
            if mutant is not None:
                found.append(mutant)
    found.sort(key=lambda m: (m.line, m.operator, m.after))
    return found


def _replacements(node):
    """``(operator, new source)`` for each mutant of ``node``."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = type(node.ops[0])
        for name, table in (("flip", _COMPARE_FLIP), ("boundary", _BOUNDARY)):
            if op in table:
                yield f"compare-{name}", _unparse_with(node, ops=[table[op]()])
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "and-or", _unparse_with(node, op=other)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not-removed", f"({ast.unparse(node.operand)})"
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "bool", repr(not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield "int", repr(node.value + 1)
    elif isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        yield "arithmetic", _unparse_with(node, op=_ARITHMETIC[type(node.op)]())
    elif isinstance(node, (ast.If, ast.While)):
        yield "test-negated", ("test", f"not ({ast.unparse(node.test)})")
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield "return-none", "return None"
    elif isinstance(node, _DELETABLE) and not _is_docstring_like(node):
        yield "statement-removed", "pass"


def _unparse_with(node, **fields):
    copy = ast.copy_location(type(node)(**{**{f: getattr(node, f) for f in node._fields},
                                           **fields}), node)
    return f"({ast.unparse(copy)})"


def _scopes(tree):
    """id(node) -> the qualified name of the function or class holding it ("" at top level)."""
    scopes, todo = {}, [(tree, "")]
    while todo:
        node, scope = todo.pop()
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
            scopes[id(child)] = inner if not isinstance(child, ast.ClassDef) else scope
            todo.append((child, inner))
    return scopes


def _spliced(path, lines, node, operator, replacement, scope=""):
    """The mutant replacing ``node``'s source (or its test's, for ``("test", text)``); its
    other lines become blank, so the module keeps its line numbers."""
    target = node.test if isinstance(replacement, tuple) else node
    if isinstance(replacement, tuple):
        replacement = f"({replacement[1]})"
    first, last = target.lineno - 1, target.end_lineno - 1
    head, tail = lines[first][:target.col_offset], lines[last][target.end_col_offset:]
    before = b"".join(lines[first:last + 1])[target.col_offset:]
    before = before[:len(before) - len(tail)].decode("utf-8")
    if not tail.endswith(b"\n"):
        tail += b"\n"
    changed = head + replacement.encode("utf-8") + tail + b"\n" * (last - first)
    text = (b"".join(lines[:first]) + changed + b"".join(lines[last + 1:])).decode("utf-8")
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return Mutant(path, node.lineno, operator, " ".join(before.split()), replacement, text,
                  f"{scope}: {lines[first].decode('utf-8').strip()}")


def _docstrings_and_annotations(tree):
    """ids of the nodes not to mutate: docstrings, annotations and everything inside them."""
    skipped = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring_like(body[0]):
            skipped.update(id(n) for n in ast.walk(body[0]))
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if isinstance(annotation, ast.AST):
                skipped.update(id(n) for n in ast.walk(annotation))
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(n) for n in ast.walk(node))
    return skipped


def _is_docstring_like(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)

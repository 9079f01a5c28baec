"""Print gast functions as Python source, with a comment naming the user's line
above each group of statements that came from it.

Requires: statements annotated with ``Anno.ORIGIN`` (others print uncommented).
Guarantees: the printed text parses back to the same functions; comments are
the only addition.
"""

import ast
import os

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno

INDENT = "    "
_CHECK = os.environ.get("SRCTRANS_CHECK_PRINTER") == "1"


def unparse(node):
    """Python source of one gast node.

    An assignment to a tuple prints without parentheses (``a, b = f(x)``) on
    every Python version (3.10's ``ast.unparse`` adds them).
    """
    if (isinstance(node, gast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Tuple) and node.targets[0].elts):
        target = node.targets[0]
        names = ", ".join(unparse(e) for e in target.elts) + ("," if len(target.elts) == 1 else "")
        return f"{names} = {unparse(node.value)}"
    return ast.unparse(to_ast(node))


def function_lines(function, depth=0):
    """The lines of ``function`` (a gast FunctionDef), indented ``depth`` levels."""
    pad = INDENT * depth
    header = f"{pad}def {function.name}({unparse(function.args)}):"
    lines = [header]
    if isinstance(function.body[0], gast.Expr) and isinstance(function.body[0].value, gast.Constant):
        lines.append(f'{pad}{INDENT}"""{function.body[0].value.value}"""')
        body = function.body[1:]
    else:
        body = function.body
    lines.extend(block_lines(body, depth + 1))
    return lines


def block_lines(statements, depth):
    """The lines of a statement list, with an origin comment at each change of origin."""
    pad = INDENT * depth
    lines = []
    previous = None
    for stmt in statements:
        origin = anno.get(stmt, Anno.ORIGIN)
        if origin is not None and (previous is None or origin.lineno != previous.lineno):
            lines.append(pad + origin.comment())
        previous = origin
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            lines.extend(_compound_lines(stmt, depth))
            continue
        for line in unparse(stmt).splitlines():
            lines.append(pad + line)
    return lines


def _compound_lines(stmt, depth):
    """A block statement, with its nested statements commented like the others."""
    pad = INDENT * depth
    if isinstance(stmt, gast.If):
        lines = [f"{pad}if {unparse(stmt.test)}:"] + _body_lines(stmt.body, depth + 1)
        if stmt.orelse:
            lines += [f"{pad}else:"] + block_lines(stmt.orelse, depth + 1)
        return lines
    if isinstance(stmt, gast.For):
        header = f"{pad}for {unparse(stmt.target)} in {unparse(stmt.iter)}:"
    else:
        header = f"{pad}while {unparse(stmt.test)}:"
    return [header] + _body_lines(stmt.body, depth + 1)


def _body_lines(statements, depth):
    """A block's lines; ``pass`` for a block that optimisation emptied."""
    return block_lines(statements, depth) or [INDENT * depth + "pass"]


# Node kinds whose gast and ast forms have the same fields on Python 3.10 to 3.13 (gast only
# adds some, which ast has not): converted by to_ast directly; any other goes through gast.
_SAME_FIELDS = frozenset("""
    Expr Assign AugAssign Return Pass Break Continue Name Constant Attribute Subscript Slice
    Call keyword Starred BinOp UnaryOp BoolOp Compare IfExp Tuple List Dict Set
    Load Store Del Add Sub Mult Div FloorDiv Mod Pow MatMult LShift RShift BitOr BitXor BitAnd
    USub UAdd Not Invert And Or Eq NotEq Lt LtE Gt GtE Is IsNot In NotIn""".split())
_AST_CLASSES = {name: getattr(ast, name) for name in _SAME_FIELDS}
_CONTEXTS = (gast.Load, gast.Store, gast.Del)


def to_ast(node):
    """The ast tree of a gast tree, with line numbers, ready for ``ast.unparse``.

    The same tree ``gast.gast_to_ast`` then ``ast.fix_missing_locations`` give
    (``SRCTRANS_CHECK_PRINTER=1`` checks it on every call), in about a third of
    their time: nodes whose fields agree are copied by a loop; others (function
    definitions, arguments, comprehensions) are converted by gast.
    """
    converted = _converted(node)
    if _CHECK:
        expected = ast.dump(ast.fix_missing_locations(gast.gast_to_ast(node)))
        if ast.dump(converted) != expected:
            raise AssertionError(f"to_ast differs from gast_to_ast: {ast.dump(converted)} "
                                 f"!= {expected}")
    return converted


def _converted(root):
    top, fill = _shallow(root)
    stack = [(root, top)] if fill else []
    while stack:
        source, target = stack.pop()
        held = source.__dict__                      # (dict.get: cheaper than getattr)
        for field in target._fields:
            value = held.get(field)
            if isinstance(value, gast.AST):
                copy, fill = _shallow(value)
                if fill:
                    stack.append((value, copy))
                value = copy
            elif value.__class__ is list:
                items = []
                for item in value:
                    if isinstance(item, gast.AST):
                        copy, fill = _shallow(item)
                        if fill:
                            stack.append((item, copy))
                        item = copy
                    items.append(item)
                value = items
            setattr(target, field, value)
    return top


def _shallow(node):
    """``(ast node, True)``: a node of ``node``'s kind whose fields :func:`_converted` fills;
    or ``(converted subtree, False)`` when gast converts it (a kind not in ``_SAME_FIELDS``),
    or when it has no fields (a context or an operator: one shared node of its kind)."""
    cls = node.__class__
    known = _KINDS.get(cls)
    if known is None:
        known = _KINDS[cls] = _kind_of(cls)
    kind, statement, marker = known
    if kind is None or cls is gast.Name and not isinstance(node.ctx, _CONTEXTS):
        return ast.fix_missing_locations(gast.gast_to_ast(node)), False
    if marker is not None:
        return marker, False
    copy = kind.__new__(kind)
    if statement:                # unparse reads a statement's line (for its type comment)
        copy.lineno = getattr(node, "lineno", None) or 1
    return copy, True


_KINDS: dict[type, tuple] = {}     # gast class -> (ast class or None, a statement, shared node)


def _kind_of(cls):
    kind = _AST_CLASSES.get(cls.__name__)
    if kind is None:
        return None, False, None
    return kind, issubclass(kind, ast.stmt), kind() if not kind._fields else None

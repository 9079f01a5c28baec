"""Print gast functions as Python source, with a comment naming the user's line
above each group of statements that came from it.

Requires: statements annotated with ``Anno.ORIGIN`` (others print uncommented).
Guarantees: the printed text parses back to the same functions; comments are
the only addition.
"""

import ast

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno

INDENT = "    "


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
    return ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(node)))


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

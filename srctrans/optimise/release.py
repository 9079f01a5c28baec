"""Release arrays once the fused gradient has read them for the last time.

Requires: the statements of a function body, and the names of its arrays.
Guarantees: the values computed are unchanged; after the top-level statement
that last reads or assigns one of ``arrays`` (a name the body assigns at top
level before that statement, so that it is bound there whatever path ran), a
``del`` drops the function's reference to it. NumPy then frees the array (if
nothing else holds it) instead of keeping it until the function returns: the
gradient's peak memory holds the arrays it still needs, as an expert's
gradient does when it reuses a name for the next step. Names in ``keep``
(parameters, what is returned) stay.

>>> import ast, gast
>>> body = gast.parse("z = x @ W\\nz2 = z - 1\\ne = np.exp(z2)\\ng = e * 2").body
>>> kept = release_dead_arrays(body, {"z", "z2", "e"}, {"g", "x", "W"})
>>> print(ast.unparse(gast.gast_to_ast(gast.Module(kept, []))))
z = x @ W
z2 = z - 1
del z
e = np.exp(z2)
del z2
g = e * 2
del e
"""

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.treewalk import walk


def release_dead_arrays(statements, arrays, keep):
    """``statements`` with ``del`` statements after the last use of each of ``arrays``."""
    last, bound = {}, {}
    for index, stmt in enumerate(statements):
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                if isinstance(target, gast.Name) and target.id not in bound:
                    bound[target.id] = index
        for node in walk(stmt):
            if isinstance(node, gast.Name) and node.id in arrays:
                last[node.id] = index
    released = {}
    for name, index in last.items():
        if name not in keep and bound.get(name, index + 1) <= index:
            released.setdefault(index, []).append(name)
    if not released:
        return statements
    result = []
    for index, stmt in enumerate(statements):
        result.append(stmt)
        if index in released:
            names = sorted(released[index])
            release = gast.Delete([gast.Name(n, gast.Del(), None, None) for n in names])
            anno.set_(release, Anno.ORIGIN, anno.get(stmt, Anno.ORIGIN))   # under its line
            result.append(release)
    return result

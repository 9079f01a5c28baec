"""A cotangent's solve with a symmetric matrix's transpose solves with the matrix, and a
solve the forward pass made already is read instead of made again.

Requires: the top-level statements of a fused gradient (temporaries inlined), the names of
its derivatives, and the name generated code calls the runtime by.
Guarantees: each derivative is the same up to rounding; the program's own values are
untouched. A name assigned once a symmetric matrix (``A @ A.T``, ``A.T @ A``, ``A + A.T``,
``np.eye(n)``, and sums and number multiples of such, names of them included) is its own
transpose: in a derivative's statement, ``solve(S.T, y)`` (``np.linalg.solve`` or
``rt.solve``) is ``solve(S, y)`` (the cotangent of ``np.linalg.solve(S, b)``'s ``b`` is
``solve(S.T, g)``). A solve is linear in its right-hand side, so ``solve(S, y)`` with ``y``
assigned once ``c * b`` (``c`` a number literal) where ``x = solve(S, b)`` was assigned
before (``S``, ``b``, ``x`` each assigned once or parameters, none written into) is ``c *
x``: a Gaussian's negative
log-likelihood ``0.5 * sum((X - mu).T * solve(S, (X - mu).T))`` then solves once, as an
expert writes it, where its derivative solved again with ``S.T``::

    sol = rt.solve(S, _T_2)                        sol = rt.solve(S, _T_2)
    dsol = 0.5 * _T_2                      ->      dsol = 0.5 * _T_2
    d_T_2 = rt.solve(S.T, dsol)                    d_T_2 = 0.5 * sol
"""

import gast
import numpy as np

from srctrans.nodes import changed_in_place, number_literal
from srctrans.optimise.dce import name_counts
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.optimise.expression_shapes import called
from srctrans.treewalk import replace_children, walk


def solve_symmetric_cotangents(body, derivatives, runtime_alias):
    """``(body, shared)``: ``body`` (changed in place) with each such solve rewritten (see
    the module); ``shared``: whether a solve made before was read (what its right-hand side
    was computed for may then be dead)."""
    stores, _ = name_counts(body)
    changed = {changed_in_place(node) for stmt in body for node in walk(stmt)}   # x[i] = ...
    once = {name for name, count in stores.items() if count == 1 and name not in changed}

    def fixed(node):                # one value all along: assigned once, or a parameter
        return isinstance(node, gast.Name) and node.id not in changed \
            and stores.get(node.id, 0) <= 1
    symmetric, solves, scaled, shared = set(), {}, {}, []

    def written(node):
        if not _is_solve(node, runtime_alias):
            return node
        matrix, rhs = node.args
        if isinstance(matrix, gast.Attribute) and matrix.attr == "T" \
                and isinstance(matrix.value, gast.Name) and matrix.value.id in symmetric:
            node.args[0] = matrix = matrix.value                  # S.T is S
        if isinstance(matrix, gast.Name) and isinstance(rhs, gast.Name) and rhs.id in scaled:
            factor, b = scaled[rhs.id]
            made = solves.get((matrix.id, b))
            if made is not None:                                  # solve(S, c * b): c * x
                shared.append(made)
                return gast.BinOp(gast.Constant(factor, None), gast.Mult(),
                                  gast.Name(made, gast.Load(), None, None))
        return node

    for stmt in body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)):
            continue
        target, value = stmt.targets[0].id, stmt.value
        if target in derivatives:
            replace_children(stmt, written)
            value = stmt.value
        if target not in once:
            continue
        if _symmetric(value, symmetric):
            symmetric.add(target)
        if _is_solve(value, runtime_alias) and all(fixed(a) for a in value.args):
            solves.setdefault((value.args[0].id, value.args[1].id), target)
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult) \
                and number_literal(value.left) and fixed(value.right):
            scaled[target] = (value.left.value, value.right.id)
    return body, bool(shared)


def _is_solve(node, runtime_alias):
    return isinstance(node, gast.Call) and len(node.args) == 2 and not node.keywords and (
        called(node) is np.linalg.solve or is_runtime_call(node, runtime_alias, "solve", 2))


def _symmetric(node, symmetric):
    """Whether ``node`` is a symmetric matrix whatever its names hold (see the module)."""
    if isinstance(node, gast.Name):
        return node.id in symmetric
    if isinstance(node, gast.Call):
        return called(node) is np.eye and len(node.args) == 1 and not node.keywords
    if not isinstance(node, gast.BinOp):
        return False
    left, right = node.left, node.right
    if isinstance(node.op, gast.MatMult):                          # A @ A.T, A.T @ A
        return _transposed_name(right) == _name(left) is not None \
            or _transposed_name(left) == _name(right) is not None
    if isinstance(node.op, (gast.Add, gast.Sub)):
        return _symmetric(left, symmetric) and _symmetric(right, symmetric) \
            or isinstance(node.op, gast.Add) and (                # A + A.T
                _transposed_name(right) == _name(left) is not None
                or _transposed_name(left) == _name(right) is not None)
    if isinstance(node.op, gast.Mult):
        return number_literal(left) and _symmetric(right, symmetric) \
            or number_literal(right) and _symmetric(left, symmetric)
    return False


def _name(node):
    return node.id if isinstance(node, gast.Name) else None


def _transposed_name(node):
    if isinstance(node, gast.Attribute) and node.attr == "T":
        return _name(node.value)
    return None

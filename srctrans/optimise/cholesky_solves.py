"""The solves against a Cholesky factor in a fused gradient read the factor's inverse,
computed once, with the factor's own cotangent.

Requires: the body of a fused gradient (forward statements, then backward ones, not
differentiated again), the names the runtime and NumPy are called by, and a namer.
Guarantees: the derivatives are those of the body, up to rounding of the order of the
inverse's. Take a name ``L`` assigned once, whose cotangent a statement of the body takes
(``rt.cholesky_grad(g, L)``, which computes ``L``'s inverse), and which the cotangents of
solves read as their matrix, as ``L`` or as a name ``T = L.T`` (``rt.solve_grads(g, x, L, b)``,
what the backward pass of ``np.linalg.solve(L, b)`` is): ``L_inverse = np.linalg.inv(L)``
is computed once before the first of them, and each reads it
(``runtime.shared_inverses``), so the solves become products::

    _grads = rt.solve_grads(g, alpha, _T, s)        L_inverse = np.linalg.inv(L)
    ...                                      ->     _grads = rt.solve_grads_by_inverse(
    dK = rt.cholesky_grad(dL, L)                        g, alpha, _T, s, L_inverse)
                                                    ...
                                                    dK = rt.cholesky_grad(dL, L, L_inverse)

This is a Gaussian process's likelihood, ``np.linalg.solve(L.T, np.linalg.solve(L, y))``
with ``L = np.linalg.cholesky(K)``: two solves of the backward pass fewer. When the body
returns no value (a gradient alone) and the call's shapes are known, the forward pass's own
solves of a vector or a matrix against such a single square factor, after it, become
products with the inverse too, which is then computed right after the factor
(``_solve = L_inverse @ y``, ``alpha = L_inverse.T @ _solve``): their values feed the
derivatives alone, to which the inverse's rounding already belongs. Only statements of the
body's top level are looked at (a loop's solves keep theirs).
"""

import gast

from srctrans.nodes import assign, load
from srctrans.optimise.dce import name_counts
from srctrans.optimise.entry_cotangents import is_runtime_call
from srctrans.treewalk import walk


def share_cholesky_inverses(body, runtime_alias, numpy_alias, fresh, shapes=None):
    """``body`` with the solves against each Cholesky factor reading its inverse (see the
    module); ``fresh(base)`` names the inverse. With the ``shapes`` of a call (a body that
    returns no value), the forward solves of a vector or a matrix against a single factor
    whose inverse is computed anyway are products with it too."""
    stores, _ = name_counts(body)
    factors = {}                              # L -> the index of its cotangent's statement
    for index, stmt in enumerate(body):
        for call in _calls(stmt, runtime_alias, "cholesky_grad", 2):
            factor = call.args[1]
            if isinstance(factor, gast.Name) and stores.get(factor.id) == 1:
                factors.setdefault(factor.id, index)
    if not factors:
        return body
    transposes = {}                           # T -> L, for T = L.T
    for stmt in body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and stores.get(stmt.targets[0].id) == 1 \
                and isinstance(stmt.value, gast.Attribute) and stmt.value.attr == "T" \
                and isinstance(stmt.value.value, gast.Name) and stmt.value.value.id in factors:
            transposes[stmt.targets[0].id] = stmt.value.value.id
    solves = {}                               # L -> [(index, call, transposed)]
    for index, stmt in enumerate(body):
        for call in _calls(stmt, runtime_alias, "solve_grads", 4):
            matrix = call.args[2]
            if isinstance(matrix, gast.Name) and matrix.id in factors:
                solves.setdefault(matrix.id, []).append((index, call, False))
            elif isinstance(matrix, gast.Name) and matrix.id in transposes:
                solves.setdefault(transposes[matrix.id], []).append((index, call, True))
    inserts = []
    for factor, found in solves.items():
        if _written_into(body, factor):
            continue
        inverse = fresh(f"{factor}_inverse")
        made = _forward_solves(body, factor, transposes, numpy_alias, shapes or {})
        for _, call, transposed in found:
            call.func.attr = "solve_grads_by_inverse"
            a_inverse = gast.Attribute(load(inverse), "T", gast.Load()) if transposed \
                else load(inverse)
            call.args.append(a_inverse)
        for call in _calls(body[factors[factor]], runtime_alias, "cholesky_grad", 2):
            if isinstance(call.args[1], gast.Name) and call.args[1].id == factor:
                call.args.append(load(inverse))
        for stmt, transposed in made[1:]:
            product = gast.Attribute(load(inverse), "T", gast.Load()) if transposed \
                else load(inverse)
            stmt.value = gast.copy_location(
                gast.BinOp(product, gast.MatMult(), stmt.value.args[1]), stmt.value)
        first = made[0] if made else min([factors[factor]] + [index for index, _, _ in found])
        inverting = gast.Call(gast.Attribute(gast.Attribute(load(numpy_alias), "linalg",
                                                            gast.Load()), "inv", gast.Load()),
                              [load(factor)], [])
        inserts.append((first, assign(inverse, inverting)))
    for first, stmt in sorted(inserts, key=lambda pair: -pair[0]):
        gast.copy_location(stmt, body[first])
        body.insert(first, stmt)
    return body


def _forward_solves(body, factor, transposes, numpy_alias, shapes):
    """``[where the inverse goes, (stmt, transposed), ...]`` for the statements ``X =
    np.linalg.solve(M, b)`` of ``body`` with ``M`` the factor or its transpose, a square
    matrix, and ``b`` a name of a vector or a matrix of ``shapes``, after the factor's own
    statement (the inverse goes right after it); ``[]`` when there is none."""
    shape = shapes.get(factor)
    if shape is None or len(shape) != 2 or shape[0] != shape[1]:
        return []
    defined = next((index for index, stmt in enumerate(body)
                    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)
                    and stmt.targets[0].id == factor), None)
    if defined is None:
        return []
    found = []
    for stmt in body[defined + 1:]:
        value = getattr(stmt, "value", None)
        if not (isinstance(stmt, gast.Assign) and _is_solve(value, numpy_alias)):
            continue
        matrix, b = value.args
        if not (isinstance(matrix, gast.Name) and isinstance(b, gast.Name)
                and len(shapes.get(b.id) or ()) in (1, 2)):
            continue
        if matrix.id == factor or transposes.get(matrix.id) == factor:
            found.append((stmt, matrix.id != factor))
    return [defined + 1] + found if found else []


def _is_solve(value, numpy_alias):
    """Whether ``value`` is ``np.linalg.solve(a, b)``, two positional arguments."""
    return (isinstance(value, gast.Call) and len(value.args) == 2 and not value.keywords
            and isinstance(value.func, gast.Attribute) and value.func.attr == "solve"
            and isinstance(value.func.value, gast.Attribute)
            and value.func.value.attr == "linalg"
            and isinstance(value.func.value.value, gast.Name)
            and value.func.value.value.id == numpy_alias)


def _calls(stmt, runtime_alias, name, count):
    """The calls ``rt.name(...)`` of ``count`` positional arguments in the simple statement
    ``stmt`` (none in a compound one)."""
    if isinstance(stmt, (gast.For, gast.While, gast.If, gast.With, gast.Try)):
        return []
    return [node for node in walk(stmt) if is_runtime_call(node, runtime_alias, name, count)]


def _written_into(body, name):
    """Whether a statement of ``body`` writes into ``name``'s array (an item, in place)."""
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Subscript) and not isinstance(node.ctx, gast.Load) \
                    and isinstance(node.value, gast.Name) and node.value.id == name:
                return True
            if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) \
                    and node.target.id == name:
                return True
    return False

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

The cotangents of a factor's solves and log-diagonal taken together
(``normalize/cholesky_terms.py``: ``rt.cholesky_solve_grad(g, x, L, b)``,
``rt.cholesky_log_diagonal_grad(c, L)``) read the inverse too, and so do the solves
``rt.cholesky_solve(L, b, a)`` of a body that returns no value, which become ``L_inverse.T
@ (L_inverse @ b)``. Where a statement adds the two cotangents of one factor (a Gaussian
likelihood's two terms), the sum is one ``rt.cholesky_terms_grad(c, g, x, L, b,
L_inverse)``: one product for ``a``'s inverse and one triangle, where the two took two
products, two triangles and an addition.
"""

import gast

from srctrans.nodes import assign, clone, dotted, load
from srctrans.optimise.dce import name_counts, reads_of, stores_of
from srctrans.optimise.entry_cotangents import is_runtime_call, runtime_call
from srctrans.treewalk import walk


def share_cholesky_inverses(body, runtime_alias, numpy_alias, fresh, shapes=None):
    """``body`` with the solves against each Cholesky factor reading its inverse (see the
    module); ``fresh(base)`` names the inverse. With the ``shapes`` of a call (a body that
    returns no value), the forward solves of a vector or a matrix against a single factor
    whose inverse is computed anyway are products with it too."""
    stores, _ = name_counts(body)
    factors = {}                              # L -> the index of its first cotangent's statement
    derived = set()                           # L of rt.cholesky_solve_grad, ..._diagonal_grad
    for index, stmt in enumerate(body):
        for name, (count, position) in _FACTOR_COTANGENTS.items():
            for call in _calls(stmt, runtime_alias, name, count):
                factor = call.args[position]
                if isinstance(factor, gast.Name) and stores.get(factor.id) == 1:
                    factors.setdefault(factor.id, index)
                    if name != "cholesky_grad":
                        derived.add(factor.id)
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
    for factor, first_cotangent in factors.items():
        found = solves.get(factor, [])
        if not (found or factor in derived) or _written_into(body, factor):
            continue                # (rt.cholesky_grad alone computes the inverse once anyway)
        inverse = fresh(f"{factor}_inverse")
        made = _forward_solves(body, factor, transposes, numpy_alias, runtime_alias,
                               shapes or {})
        for _, call, transposed in found:
            call.func.attr = "solve_grads_by_inverse"
            a_inverse = gast.Attribute(load(inverse), "T", gast.Load()) if transposed \
                else load(inverse)
            call.args.append(a_inverse)
        for stmt in body[first_cotangent:]:
            for name, (count, position) in _FACTOR_COTANGENTS.items():
                for call in _calls(stmt, runtime_alias, name, count):
                    if isinstance(call.args[position], gast.Name) \
                            and call.args[position].id == factor:
                        call.args.append(load(inverse))
        for stmt, product in made[1:]:
            stmt.value = gast.copy_location(product(load(inverse)), stmt.value)
        first = made[0] if made else min([first_cotangent] + [index for index, _, _ in found])
        inverting = gast.Call(dotted(numpy_alias, "linalg", "inv"), [load(factor)], [])
        inserts.append((first, assign(inverse, inverting)))
    for first, stmt in sorted(inserts, key=lambda pair: -pair[0]):
        gast.copy_location(stmt, body[first])
        body.insert(first, stmt)
    return _added_terms_merged(body, runtime_alias)


# the two cotangents _added_terms_merged adds as one, with the inverse: (helper, arguments)
_TERMS = (("cholesky_log_diagonal_grad", 3), ("cholesky_solve_grad", 5))


def _added_terms_merged(body, runtime_alias):
    """``body`` where a statement adds ``rt.cholesky_log_diagonal_grad(c, L, L_inverse)`` and
    ``rt.cholesky_solve_grad(g, x, L, b, L_inverse)`` (one of them assigned to a name by the
    last statement that assigns it, read nowhere else) computing the sum as one
    ``rt.cholesky_terms_grad(c, g, x, L, b, L_inverse)``, the other's statement dropped."""
    dropped = set()
    for index, stmt in enumerate(body):
        value = stmt.value if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) else None
        if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
            continue
        for name, call in ((value.left, value.right), (value.right, value.left)):
            if not any(is_runtime_call(call, runtime_alias, helper, count)
                       for helper, count in _TERMS):
                continue                  # (only then is the earlier statement looked for)
            earlier = _last_assignment(body, index, name)
            if earlier is None or name.id in reads_of(call) or (
                    name.id != stmt.targets[0].id and _read_later(body, index, name.id)):
                continue
            terms = _terms(body[earlier].value, call, runtime_alias)
            if terms is not None:
                stmt.value = gast.copy_location(runtime_call(runtime_alias, "cholesky_terms_grad",
                                                             terms), value)
                dropped.add(earlier)
                break
    return [stmt for index, stmt in enumerate(body) if index not in dropped]


def _last_assignment(body, index, name):
    """The index of the last statement before ``index`` that assigns the name ``name``
    (``name = value``, at the top level), if no statement between reads or assigns it."""
    if not isinstance(name, gast.Name):
        return None
    for earlier in range(index - 1, -1, -1):
        stmt = body[earlier]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name.id:
            return earlier
        if name.id in reads_of(stmt) or name.id in stores_of(stmt):
            return None
    return None


def _read_later(body, index, name):
    """Whether a statement after ``index`` reads ``name`` before one assigns it again."""
    for stmt in body[index + 1:]:
        if name in reads_of(stmt):
            return True
        if name in stores_of(stmt):
            return False
    return False


def _terms(first, second, runtime_alias):
    """The arguments ``[c, g, x, L, b, L_inverse]`` of the two cotangents ``first`` and
    ``second`` (in either order) of one factor and inverse, else None."""
    (log_helper, log_count), (solve_helper, solve_count) = _TERMS
    for log, solve in ((first, second), (second, first)):
        if is_runtime_call(log, runtime_alias, log_helper, log_count) \
                and is_runtime_call(solve, runtime_alias, solve_helper, solve_count) \
                and all(isinstance(arg, gast.Name) for arg in log.args[1:] + solve.args[2:]) \
                and (log.args[1].id, log.args[2].id) == (solve.args[2].id, solve.args[4].id):
            return [log.args[0]] + solve.args
    return None


def _forward_solves(body, factor, transposes, numpy_alias, runtime_alias, shapes):
    """``[where the inverse goes, (stmt, product), ...]`` for the statements ``X =
    np.linalg.solve(M, b)`` of ``body`` with ``M`` the factor or its transpose, and ``X =
    rt.cholesky_solve(L, b, a)`` with ``L`` the factor, a square matrix, and ``b`` a name of a
    vector or a matrix of ``shapes``, after the factor's own statement (the inverse goes
    right after it); ``product(inverse)`` is the product with the inverse that replaces the
    solve. ``[]`` when there is none."""
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
        if isinstance(stmt, gast.Assign) and _is_solve(value, numpy_alias):
            matrix, b = value.args
        elif isinstance(stmt, gast.Assign) and is_runtime_call(value, runtime_alias,
                                                               "cholesky_solve", 3):
            matrix, b = value.args[:2]
        else:
            continue
        if not (isinstance(matrix, gast.Name) and isinstance(b, gast.Name)
                and len(shapes.get(b.id) or ()) in (1, 2)):
            continue
        if matrix.id == factor and len(value.args) == 3:        # L^-T (L^-1 b)
            found.append((stmt, lambda inverse, b=b: _matmul(
                gast.Attribute(inverse, "T", gast.Load()), _matmul(clone(inverse), b))))
        elif matrix.id == factor or transposes.get(matrix.id) == factor:
            transposed = matrix.id != factor
            found.append((stmt, lambda inverse, b=b, transposed=transposed: _matmul(
                gast.Attribute(inverse, "T", gast.Load()) if transposed else inverse, b)))
    return [defined + 1] + found if found else []


def _matmul(a, b):
    return gast.BinOp(a, gast.MatMult(), b)


def _is_solve(value, numpy_alias):
    """Whether ``value`` is ``np.linalg.solve(a, b)``, two positional arguments."""
    return (isinstance(value, gast.Call) and len(value.args) == 2 and not value.keywords
            and isinstance(value.func, gast.Attribute) and value.func.attr == "solve"
            and isinstance(value.func.value, gast.Attribute)
            and value.func.value.attr == "linalg"
            and isinstance(value.func.value.value, gast.Name)
            and value.func.value.value.id == numpy_alias)


# the runtime's cotangents of a factor L: name -> (their positional arguments, L's position)
_FACTOR_COTANGENTS = {"cholesky_grad": (2, 1), "cholesky_solve_grad": (4, 2),
                      "cholesky_log_diagonal_grad": (2, 1)}


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

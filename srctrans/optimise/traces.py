"""The sum of a matrix times an identity is the matrix's trace.

Requires: the body of a fused gradient specialised on shapes, the shapes known of its names
(``expression_shapes.infer_shapes``), the names that may hold ints or booleans
(``analyse.values.maybe_not_float``), the names of its derivatives (the cotangents its
backward statements assign), and the name NumPy is called by.
Guarantees: a derivative's value is the same up to rounding (the trace adds the diagonal
alone; the product's sum adds its zeros too, in another order); the statements that assign
anything else (the program's values) are left as they are. In a statement assigning a
derivative, ``(d * E).sum()``,
``(E * d).sum()`` and ``np.sum(d * E)``, where ``E`` is a name the body assigns once,
to ``np.eye(n)`` (one argument), and ``d`` is a name of floats of ``E``'s shape ``(n, n)``
(an int matrix's trace is an int, the product's sum a float), become
``d.trace()``: the cotangent of ``lam`` in ``A + lam * np.eye(n)`` (a ridge penalty, a
kernel's noise) without a product of two matrices::

    dlam = (dA * _eye).sum()      ->      dlam = dA.trace()

The cotangent of the matrix of ``x = np.linalg.solve(A, b)`` is ``-B @ x.T`` with ``B =
solve(A.T, g)`` (``rt.solve_grads(g, x, A, b)[0]``, an outer product for a vector ``x``);
where a derivative reads it only for its trace (the name assigned once, read once, as
``dA.trace()``), the trace is ``-vdot(B, x)``: ``-np.linalg.solve(A.T, g).dot(x)``, with
no matrix made (one matrix ``A``, ``x`` and ``g`` of one shape, as ``solve_grads`` has
them)::

    dA = rt.solve_grads(dw, w, A, b)[0]      ->      dlam = -np.linalg.solve(A.T, dw).dot(w)
    dlam = dA.trace()
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import dotted, load
from srctrans.optimise.dce import name_positions
from srctrans.optimise.inner_products import derivative_statements, summed_product
from srctrans.treewalk import replace_children, walk


def sum_traces(body, derivatives, known, not_float, numpy_alias):
    """``body`` (changed in place, and returned) with each sum of a matrix times an identity
    in a statement assigning one of ``derivatives`` its trace (see the module); ``known``:
    name -> shape; ``not_float``: the names that may hold ints or booleans."""
    identities = _identities(body, numpy_alias)
    if identities:
        def traced(node):
            return _traced(node, identities, known, not_float, numpy_alias) or node
        for stmt in derivative_statements(body, derivatives):
            replace_children(stmt.value, traced)
            stmt.value = traced(stmt.value)
    return _solved_traces(body, derivatives, known, numpy_alias)


def _solved_traces(body, derivatives, known, numpy_alias):
    """``body`` with each trace of a solve's matrix cotangent read once as ``-vdot(B, x)``."""
    stores, reads = name_positions(body)
    dropped = set()
    for index, stmt in enumerate(body):
        pair = _solve_matrix_cotangent(stmt, known)
        if pair is None:
            continue
        name, (g, x, a) = pair
        readers = reads.get(name, [])
        if (name not in derivatives or len(stores.get(name, ())) != 1 or len(readers) != 1
                or any(len(stores.get(n, ())) > 1 or any(k > index for k in stores.get(n, ()))
                       for n in (g, x, a))):
            continue
        reader = body[readers[0]]
        traces = [node for node in walk(reader) if _is_trace_of(node, name)]
        if len(traces) != 1:
            continue
        solved = gast.Call(dotted(numpy_alias, "linalg", "solve"),
                           [gast.Attribute(load(a), "T", gast.Load()), load(g)], [])
        product = gast.Call(gast.Attribute(solved, "dot", gast.Load()), [load(x)], []) \
            if len(known[x]) == 1 else gast.Call(dotted(numpy_alias, "vdot"),
                                                  [solved, load(x)], [])
        negated = gast.UnaryOp(gast.USub(), product)
        replace_children(reader, lambda node, old=traces[0], new=negated:
                         new if node is old else node)
        dropped.add(index)
    body[:] = [stmt for index, stmt in enumerate(body) if index not in dropped]
    return body


def _solve_matrix_cotangent(stmt, known):
    """``(n, (g, x, a))`` for ``n = rt.solve_grads(g, x, a, b)[0]`` (names), ``a`` one
    matrix ``(k, k)`` and ``g``, ``x`` of one shape ``(k,)`` or ``(k, m)``; else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Subscript)
            and isinstance(stmt.value.slice, gast.Constant) and stmt.value.slice.value == 0
            and type(stmt.value.slice.value) is int):
        return None
    call = stmt.value.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "solve_grads" and len(call.args) == 4 and not call.keywords
            and all(isinstance(arg, gast.Name) for arg in call.args[:3])):
        return None
    g, x, a = (arg.id for arg in call.args[:3])
    matrix, solution, cotangent = known.get(a), known.get(x), known.get(g)
    if not (matrix is not None and len(matrix) == 2 and matrix[0] == matrix[1]
            and solution is not None and tuple(solution) == tuple(cotangent or ())
            and 1 <= len(solution) <= 2 and solution[0] == matrix[0]):
        return None
    return stmt.targets[0].id, (g, x, a)


def _is_trace_of(node, name):
    return (isinstance(node, gast.Call) and not node.args and not node.keywords
            and isinstance(node.func, gast.Attribute) and node.func.attr == "trace"
            and isinstance(node.func.value, gast.Name) and node.func.value.id == name)



def _identities(body, numpy_alias):
    """The names ``body`` assigns once, each to ``np.eye(n)``."""
    stores = {}
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
    return {stmt.targets[0].id for stmt in body
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stores[stmt.targets[0].id] == 1
            and _is_eye(stmt.value, numpy_alias)}


def _is_eye(value, numpy_alias):
    if not (isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords):
        return False
    called = anno.get(value, Anno.CALLEE)
    if called is not None:
        return called is np.eye
    return (isinstance(value.func, gast.Attribute) and value.func.attr == "eye"
            and isinstance(value.func.value, gast.Name) and value.func.value.id == numpy_alias)


def _traced(node, identities, known, not_float, numpy_alias):
    """``d.trace()`` for a sum of ``d`` times an identity of ``d``'s shape, else None."""
    product = summed_product(node, numpy_alias)
    if product is None:
        return None
    for eye, other in ((product.right, product.left), (product.left, product.right)):
        if isinstance(eye, gast.Name) and eye.id in identities:
            shape = known.get(eye.id)
            if shape is not None and len(shape) == 2 and shape[0] == shape[1] \
                    and isinstance(other, gast.Name) and other.id not in not_float \
                    and known.get(other.id) == tuple(shape):
                return gast.Call(gast.Attribute(other, "trace", gast.Load()), [], [])
    return None

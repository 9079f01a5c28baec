"""A Cholesky factor's two solves and log-diagonal are differentiated for the matrix factored.

Requires: a function in A-normal form after SSA (each name of the function's own block
assigned once there), its calls resolved; reverse mode.
Guarantees: the function computes what it did. For ``L = np.linalg.cholesky(a)``, the
solves against ``L`` and then ``L.T`` (``a``'s inverse times ``b``) and the log of ``L``'s
diagonal (half of ``log det a``, summed) become calls of the runtime that compute the same
values and whose rules send their derivatives to ``a`` directly (``runtime/cholesky_terms.py``)::

    L = np.linalg.cholesky(a)                   L = np.linalg.cholesky(a)
    T = L.T                                     T = L.T
    z = np.linalg.solve(L, b)           ->
    x = np.linalg.solve(T, z)                   x = rt.cholesky_solve(L, b, a)
    d = np.diag(L)                              d = np.diag(L)
    v = np.log(d)                               v = rt.cholesky_log_diagonal(d, L, a)

This is a Gaussian process's likelihood, or a multivariate normal's density: the backward
pass then computes ``a``'s cotangent from ``a``'s inverse, where the chain took two solves,
a diagonal matrix and the factor's own derivative. ``L``'s cotangent from these terms is
then none, which is right only while ``L`` is the factor of ``a`` as the derivatives see it:
``L``, ``a``, ``b``, ``T``, ``z`` and ``d`` are each assigned once, in the function's own
block, none of these statements under ``st.stop_recording()`` or named by a
``st.grad_of(...)`` hook; ``z`` is read by the second solve alone; no statement from the
first factor on writes into an array (an entry, or in place) but one made after it (a
matrix filled before it is factored may be); and NumPy's ``cholesky``, ``solve``, ``diag`` and
``log`` have srctrans's own rules.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.analyse.values import makes_new_value
from srctrans.nodes import load, resolved_runtime_call
from srctrans.normalize.definitions import argument_of, calls_at_top, has_own_rule, own_assignments
from srctrans.optimise.dce import name_counts
from srctrans.treewalk import walk

_PRIMALS = (np.linalg.cholesky, np.linalg.solve, np.diag, np.log)


def cholesky_terms(function, aliases):
    """Rewrite, in place, the solves and log-diagonals of each Cholesky factor of
    ``function``'s own block the module describes (``aliases``: the names generated code
    gives NumPy and the runtime)."""
    factoring = next(calls_at_top(function, np.linalg.cholesky), None)
    if factoring is None or not all(has_own_rule(primal) for primal in _PRIMALS) \
            or _writes_into_older_arrays(function, function.body.index(factoring)):
        return
    stores, reads = name_counts([function])      # (a parameter counts as assigned)
    assignments = {name: stmt for name, stmt in own_assignments(function).items()
                   if stores.get(name) == 1}
    definitions = {name: stmt.value for name, stmt in assignments.items()}
    factored = {}                                # L -> a, for L = np.linalg.cholesky(a)
    for name, value in definitions.items():
        a = argument_of(value, np.linalg.cholesky)
        if a is not None and stores.get(a) == 1:
            factored[name] = a
    if not factored:
        return
    transposes = {name: value.value.id for name, value in definitions.items()
                  if isinstance(value, gast.Attribute) and value.attr == "T"
                  and isinstance(value.value, gast.Name) and value.value.id in factored}
    dropped, logs = [], {}                       # logs: v -> (d, L, a), v = log diag L
    for name, value in definitions.items():
        solved = _solve_of(value, definitions, transposes, reads, stores)
        if solved is not None:
            factor, b, inner = solved
            assignments[name].value = gast.copy_location(resolved_runtime_call(
                aliases, "cholesky_solve", [load(factor), load(b), load(factored[factor])]), value)
            dropped.append(assignments[inner])
            continue
        d = argument_of(value, np.log)
        factor = argument_of(definitions.get(d), np.diag)
        if factor in factored:
            logs[name] = (d, factor, factored[factor])
            assignments[name].value = gast.copy_location(resolved_runtime_call(
                aliases, "cholesky_log_diagonal", [load(n) for n in logs[name]]), value)
    for name, value in definitions.items():       # np.sum(v) of such a v read there alone
        v = _summed(value)
        if v in logs and reads.get(v) == 1:
            assignments[name].value = gast.copy_location(resolved_runtime_call(
                aliases, "cholesky_log_diagonal_sum", [load(n) for n in logs[v]]), value)
            dropped.append(assignments[v])
    if dropped:
        function.body = [stmt for stmt in function.body if not any(stmt is d for d in dropped)]


def _summed(value):
    """The name ``value`` sums whole, ``np.sum(v)`` or ``v.sum()``, else None."""
    if isinstance(value, gast.Call) and not value.args and not value.keywords \
            and isinstance(value.func, gast.Attribute) and value.func.attr == "sum" \
            and isinstance(value.func.value, gast.Name):
        return value.func.value.id
    return argument_of(value, np.sum)


def _solve_of(value, definitions, transposes, reads, stores):
    """``(L, b, z)`` when ``value`` is ``np.linalg.solve(T, z)`` with ``T = L.T`` and
    ``z = np.linalg.solve(L, b)`` read here alone, ``b`` assigned once; else None."""
    pair = _solve_arguments(value)
    if pair is None or pair[0] not in transposes or reads.get(pair[1]) != 1:
        return None
    factor, inner = transposes[pair[0]], pair[1]
    first = _solve_arguments(definitions.get(inner))
    if first is None or first[0] != factor or stores.get(first[1]) != 1:
        return None
    return factor, first[1], inner


def _solve_arguments(value):
    """The two names ``value`` calls ``np.linalg.solve`` of, else None."""
    if isinstance(value, gast.Call) and len(value.args) == 2 and not value.keywords \
            and all(isinstance(arg, gast.Name) for arg in value.args):
        if anno.get(value, Anno.CALLEE) is np.linalg.solve:
            return value.args[0].id, value.args[1].id
    return None


def _writes_into_older_arrays(function, first):
    """Whether a statement from ``body[first]`` (the first factor) on writes into an array
    (an entry, ``x[i] = ...``, or in place, ``x += ...``) other than those made after it: a
    factored matrix changed after its factor would not be the factor's (a matrix filled
    before it is, and an array made after it is none of the terms')."""
    written = set()
    body = function.body
    for stmt in body[first:]:
        for node in walk(stmt):
            target = node.target if isinstance(node, gast.AugAssign) else \
                node if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                else None
            if isinstance(target, gast.Subscript):
                target = target.value
            if target is not None:
                if not isinstance(target, gast.Name):
                    return True
                written.add(target.id)
    if not written:
        return False
    new = set()                       # the stores of those names that make a new array
    for stmt in body[first + 1:]:
        for node in walk(stmt):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], gast.Name) and makes_new_value(node.value):
                new.add(id(node.targets[0]))
    in_place = {id(node.target) for node in walk(function) if isinstance(node, gast.AugAssign)}
    return any(isinstance(node, gast.Name) and node.id in written
               and isinstance(node.ctx, (gast.Store, gast.Param))
               and id(node) not in new and id(node) not in in_place
               for node in walk(function)) or any(
        not any(isinstance(node, gast.Name) and node.id == name and id(node) in new
                for node in walk(function)) for name in written)


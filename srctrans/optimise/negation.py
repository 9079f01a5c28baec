"""Move a negation down the statements that use its value, to where a subtraction absorbs it.

Requires: straight-line backward statements (the top level of a backward
pass), after simplification.
Guarantees: the values computed are unchanged (a sign moves through a
product, a quotient or a sum exactly, in floating point too), and a chain
is rewritten only when its last statement takes the sign into a difference
(``a + -b`` is ``a - b``), so no statement gains a negation. The adjoint of
a subtracted value is a negated cotangent, and the rules that read it carry
the sign along, so the backward pass of ``z - np.log(s)`` reads

    d_log = -dlogp.sum(axis=1, keepdims=True)
    d_sum = d_log / s
    dz = dlogp + d_sum * e

When each name of the chain is read once, by the next statement of the
chain, the sign moves along it and the negated array is never made:

    d_log = dlogp.sum(axis=1, keepdims=True)
    d_sum = d_log / s
    dz = dlogp - d_sum * e

>>> import ast, gast
>>> body = gast.parse("d = -g.sum(axis=1)\\ne = d / s\\nf = h + e * x").body
>>> [ast.unparse(gast.gast_to_ast(s)) for s in sink_negations(body, set())]
['d = g.sum(axis=1)', 'e = d / s', 'f = h - e * x']
"""

import gast

from srctrans.nodes import clone, load
from srctrans.optimise.dce import reads_of, targets_of


def sink_negations(statements, live_out):
    """``statements`` (a flat list) with negations moved to where a difference absorbs them.

    ``live_out`` holds the names read after ``statements``; their values stay as they are.
    """
    statements = list(statements)
    reads, writes = {}, {}
    for stmt in statements:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name):
                counts = reads if isinstance(node.ctx, gast.Load) else writes
                counts[node.id] = counts.get(node.id, 0) + 1

    def single_use(name):
        return reads.get(name) == 1 and writes.get(name) == 1 and name not in live_out

    for i, stmt in enumerate(statements):
        if _negated_assignment(stmt) is None:
            continue
        chain = _chain(statements, i, single_use)
        if chain is not None:
            stmt.value = stmt.value.operand                   # n = -e  ->  n = e
            for index, value in chain:
                statements[index].value = value
    return statements


def _chain(statements, i, single_use):
    """``[(index, new value)]`` for the statements the sign of ``statements[i]`` moves through.

    None when the sign would not end absorbed by a difference.
    """
    chain = []
    name = _negated_assignment(statements[i])
    while single_use(name):
        j = next((k for k in range(i + 1, len(statements)) if name in reads_of(statements[k])),
                 None)
        if j is None or _negated_assignment(statements[j], any_value=True) is None:
            return None
        value = statements[j].value
        trial = _PullOut().visit(_replace_read(clone(value), name))
        if not _is_negation(trial):
            absorbed = _negations(trial) <= _negations(value)
            return chain + [(j, trial)] if absorbed else None
        chain.append((j, trial.operand))                      # the sign moves on
        i, name = j, statements[j].targets[0].id
    return None


def _negated_assignment(stmt, any_value=False):
    """``n`` when ``stmt`` is ``n = -e`` (``n = e`` for any ``e`` with ``any_value``)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    if not any_value and not _is_negation(stmt.value):
        return None
    return targets_of(stmt)[0]


def _is_negation(node):
    return isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)


def _negations(node):
    return sum(1 for n in gast.walk(node) if _is_negation(n))


def _replace_read(expression, name):
    """``expression`` with its read of ``name`` replaced by ``-name``."""
    class Replace(gast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id == name:
                return gast.UnaryOp(gast.USub(), load(name))
            return node
    return Replace().visit(expression)


def _negate(node):
    return node.operand if _is_negation(node) else gast.UnaryOp(gast.USub(), node)


class _PullOut(gast.NodeTransformer):
    """Move signs outwards: ``-a * b`` -> ``-(a * b)``, ``a + -b`` -> ``a - b``, ``--a`` -> ``a``."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right, op = node.left, node.right, node.op
        if isinstance(op, (gast.Mult, gast.Div)) and (_is_negation(left) or _is_negation(right)):
            if _is_negation(left) and _is_negation(right):
                return gast.BinOp(left.operand, op, right.operand)
            inner = gast.BinOp(_negate(left) if _is_negation(left) else left, op,
                               _negate(right) if _is_negation(right) else right)
            return gast.UnaryOp(gast.USub(), inner)
        if isinstance(op, gast.Add):
            if _is_negation(right):                               # a + -b -> a - b
                return gast.BinOp(left, gast.Sub(), right.operand)
            if _is_negation(left):                                # -a + b -> b - a
                return gast.BinOp(right, gast.Sub(), left.operand)
        if isinstance(op, gast.Sub):
            if _is_negation(right):                               # a - -b -> a + b
                return gast.BinOp(left, gast.Add(), right.operand)
            if _is_negation(left):                                # -a - b -> -(a + b)
                return gast.UnaryOp(gast.USub(), gast.BinOp(left.operand, gast.Add(), right))
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if _is_negation(node) and _is_negation(node.operand):
            return node.operand.operand
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        # summing is linear: (-a).sum(...) -> -(a.sum(...)), rt.unbroadcast(-a, x) likewise
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "sum" and _is_negation(func.value) \
                and not node.args:
            func.value = func.value.operand
            return gast.UnaryOp(gast.USub(), node)
        if (isinstance(func, gast.Attribute) and func.attr == "unbroadcast" and node.args
                and _is_negation(node.args[0])):
            node.args[0] = node.args[0].operand
            return gast.UnaryOp(gast.USub(), node)
        return node

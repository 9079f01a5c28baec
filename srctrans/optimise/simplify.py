"""Algebraic simplification of generated expressions.

Requires: flat lists of gast statements (a backward pass).
Guarantees: the values computed are unchanged (at finite inputs, for the guards
dropped by :func:`_needs_no_guard`); products with 1, sums with 0,
powers of 1 and arithmetic on two numeric constants are folded, so that a
rule such as ``g * y * x ** (y - 1)`` instantiated at ``y = 2`` reads
``g * 2 * x``; the same holds for ``rt.power_base_factor(x, 2)``. Negation moves
outside ``rt.unbroadcast`` (summing is linear), so it runs on the reduced array,
and an added negation becomes a subtraction (``a + -b`` is ``a - b``, exactly,
in floating point too) unless that would keep NumPy from reusing a temporary array (see :func:`keeps_reuse`).

>>> import gast, ast
>>> e = gast.parse("g * 2 * x ** (2 - 1)").body[0].value
>>> ast.unparse(gast.gast_to_ast(simplify_expression(e)))
'g * 2 * x'
>>> e = gast.parse("-d_sub + d_mul * a").body[0].value
>>> ast.unparse(gast.gast_to_ast(simplify_expression(e)))
'd_mul * a - d_sub'
>>> e = gast.parse("d * h + h * d").body[0].value
>>> ast.unparse(gast.gast_to_ast(simplify_expression(e)))
'2 * (d * h)'
>>> e = gast.parse("dz + -(d_sum * e)").body[0].value     # dz - d_sum * e would allocate
>>> ast.unparse(gast.gast_to_ast(simplify_expression(e)))
'dz + -(d_sum * e)'
"""

import math
import operator

import gast

from srctrans.analyse.signs import is_positive
from srctrans.nodes import literal_truth, number_literal, substitute_names
from srctrans.treewalk import walk

_FOLD = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
         gast.Pow: operator.pow}


def simplify(statements, nonsingular=frozenset(), not_float=frozenset(),
             never_negative=frozenset(), bounded=frozenset()):
    """Simplify every expression of ``statements`` in place, the branches of an ``if`` and
    the bodies of loops too.

    ``nonsingular`` names values known to be nonzero and finite wherever the
    function's inputs are finite (``analyse.invariance.softmax_normalisers``,
    ``analyse.signs.positive_names``), ``never_negative`` values never negative
    (``analyse.signs``: a divisor ``1 + e`` of them is positive).
    ``not_float`` names values that may be booleans or integers
    (``analyse.values.maybe_not_float``): ``1.0 * m`` stays, since it makes a
    boolean mask a float array.

    A name that ``statements`` assign once, to a number, is read as that number
    by the statements after the assignment in its block (and the blocks inside
    them), so that ``d = 0.5; e = d * x + d * x`` folds to ``e = 1.0 * x``.
    The assignment stays (dead-code elimination drops it if nothing else reads it).
    """
    counts = {}
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                counts[node.id] = counts.get(node.id, 0) + 1
    simplifier = _Simplifier(nonsingular, not_float, never_negative, bounded)
    blocks = [(statements, {})]               # (block, the numbers its names stand for)
    while blocks:
        block, numbers = blocks.pop()
        for stmt in block:
            if numbers:
                substitute_names(stmt, numbers)
            if isinstance(stmt, gast.If):
                stmt.test = simplifier.visit(stmt.test)
                blocks.extend((branch, dict(numbers)) for branch in (stmt.body, stmt.orelse))
            elif isinstance(stmt, (gast.For, gast.While)):    # a loop's body, step after step
                blocks.extend((branch, dict(numbers)) for branch in (stmt.body, stmt.orelse))
            elif isinstance(stmt, (gast.Assign, gast.Return, gast.Expr)) and stmt.value is not None:
                stmt.value = simplifier.visit(stmt.value)
                if (isinstance(stmt, gast.Assign) and number_literal(stmt.value)
                        and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
                        and counts.get(stmt.targets[0].id) == 1):
                    numbers[stmt.targets[0].id] = stmt.value


def simplify_expression(expression, nonsingular=frozenset(), not_float=frozenset()):
    """``expression`` with its constant sub-expressions folded (bottom-up)."""
    return _Simplifier(nonsingular, not_float).visit(expression)


def _is(node, value):
    return number_literal(node) and node.value == value


def is_temporary(node):
    """Whether ``node`` makes a new value (an operation or a call), not a name or a constant."""
    return isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Call))


def keeps_reuse(left, right):
    """Whether ``left - right`` lets NumPy reuse a temporary as ``left + -right`` does.

    NumPy writes the result of an operation into an operand that is a large
    temporary array (256 KiB or more) instead of allocating; a difference can
    only reuse its left operand, so ``a - (b * c)`` allocates where
    ``a + -(b * c)`` does not, and a fresh large allocation costs more than
    the negation saved.
    """
    return not is_temporary(right) or is_temporary(left)


def _negated(node):
    return isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)


class _Simplifier(gast.NodeTransformer):
    def __init__(self, nonsingular, not_float, never_negative=frozenset(), bounded=frozenset()):
        self.nonsingular = nonsingular
        self.not_float = not_float
        self.never_negative = never_negative
        self.bounded = bounded

    def _keeps_dtype(self, operand, constant):
        """Whether ``operand`` alone adds as ``operand`` combined with ``constant`` does
        (``True * 1 + True`` is 2, ``True + True`` on arrays is True)."""
        return not (isinstance(operand, gast.Name) and operand.id in self.not_float
                    or isinstance(operand, (gast.Compare, gast.Constant)))

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, op, right = node.left, type(node.op), node.right
        if number_literal(left) and number_literal(right) and op in _FOLD:
            if not (op is gast.Pow and (abs(right.value) > 64 or left.value == 0)):
                return gast.Constant(_FOLD[op](left.value, right.value), None)
        if op is gast.Div and number_literal(left) and number_literal(right) and right.value != 0 \
                and isinstance(left.value, float):
            return gast.Constant(left.value / right.value, None)      # 1.0 / 8 -> 0.125
        if (op in (gast.Mult, gast.Pow, gast.Div) and _is(right, 1)
                or op in (gast.Add, gast.Sub) and _is(right, 0)) and self._keeps_dtype(left, right):
            return left
        if op is gast.Mult and _is(left, 1) and self._keeps_dtype(right, left):
            return right
        if op is gast.Mult and _is(left, -1) and self._keeps_dtype(right, left):
            return gast.UnaryOp(gast.USub(), right)                    # -1.0 * x -> -x
        if op is gast.Mult and _is(right, -1) and self._keeps_dtype(left, right):
            return gast.UnaryOp(gast.USub(), left)
        if op is gast.Add and self._doubles(left, right):
            return self.visit_BinOp(gast.BinOp(gast.Constant(2, None), gast.Mult(), left))  # a + a
        if op is gast.Mult:
            scaled = _scaled(left, right) or _scaled(right, left)
            if scaled is not None:
                return self.visit_BinOp(scaled)
        if op is gast.Add and _negated(right) and keeps_reuse(left, right.operand):
            return gast.BinOp(left, gast.Sub(), right.operand)      # a + -b -> a - b
        if op is gast.Add and _negated(left) and keeps_reuse(right, left.operand):
            return gast.BinOp(right, gast.Sub(), left.operand)      # -a + b -> b - a
        if op is gast.Sub and _negated(right):                       # a - -b -> a + b
            return gast.BinOp(left, gast.Add(), right.operand)
        return node

    def _doubles(self, left, right):
        """Whether ``left + right`` is ``2 * left``: the same arithmetic on the same floats,
        or the same product with its factors swapped (``a * b + b * a``: a product of floats
        is the same either way round) (``m * m + m * m`` on booleans is a logical or, not 2)."""
        signature = _arithmetic(right)
        if signature is None or any(isinstance(n, gast.Name) and n.id in self.not_float
                                    for n in walk(right)):
            return False
        if signature == _arithmetic(left, len(signature)):
            return True
        return (isinstance(left, gast.BinOp) and isinstance(right, gast.BinOp)
                and isinstance(left.op, gast.Mult) and isinstance(right.op, gast.Mult)
                and _arithmetic(left.left) == _arithmetic(right.right) is not None
                and _arithmetic(left.right) == _arithmetic(right.left))

    def visit_Call(self, node):
        if _needs_no_guard(node, self.nonsingular, self.never_negative, self.bounded):
            return self.visit(node.args[1])
        self.generic_visit(node)
        # rt.power_base_factor(x, c) with a nonzero constant c is c * x ** (c - 1), folded
        if (isinstance(node.func, gast.Attribute) and node.func.attr == "power_base_factor"
                and len(node.args) == 2 and number_literal(node.args[1]) and node.args[1].value != 0):
            x, c = node.args
            power = self.visit(gast.BinOp(x, gast.Pow(), gast.BinOp(c, gast.Sub(), gast.Constant(1, None))))
            return self.visit(gast.BinOp(gast.Constant(c.value, None), gast.Mult(), power))
        # rt.unbroadcast(-e, x) -> -rt.unbroadcast(e, x): negate after summing, on fewer elements
        if (isinstance(node.func, gast.Attribute) and node.func.attr == "unbroadcast"
                and node.args and isinstance(node.args[0], gast.UnaryOp)
                and isinstance(node.args[0].op, gast.USub)):
            node.args[0] = node.args[0].operand
            return gast.UnaryOp(gast.USub(), node)
        return node

    def visit_IfExp(self, node):
        # a rule's choice on an argument the call left at its default: `... if None is None
        # else ...` (logsumexp without b) is its first branch
        self.generic_visit(node)
        known = literal_truth(node.test)
        if known is not None:
            return node.body if known else node.orelse
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and number_literal(node.operand):
            return gast.Constant(-node.operand.value, None)
        return node


def _arithmetic(node, most=None):
    """A comparable description of ``node`` if it is arithmetic on names and numbers (of at
    most ``most`` nodes, when given: a long sum is not walked to compare it with a term),
    else None."""
    described = []
    for n in walk(node):
        if most is not None and len(described) > most:
            return None
        if isinstance(n, gast.Name):
            described.append(("name", n.id))
        elif number_literal(n):
            described.append((type(n.value), n.value))
        elif isinstance(n, (gast.BinOp, gast.UnaryOp, gast.operator, gast.unaryop, gast.expr_context,
                            gast.Subscript, gast.Slice, gast.Tuple)):
            described.append(type(n))                 # (d[:, None]: an entry read alike)
        elif isinstance(n, gast.Constant) and n.value is None:
            described.append(None)
        else:
            return None
    return tuple(described)


def power_of_two(node):
    """Whether ``node`` is a number (not a bool) that is a power of two: multiplying by it
    is exact."""
    return number_literal(node) and node.value != 0 and math.frexp(abs(node.value))[0] == 0.5


def _scaled(constant, product):
    """``c1 * (c2 * x)`` as ``(c1 * c2) * x`` when that rounds alike: one of the numbers is
    a power of two, so that multiplying by it is exact. None otherwise."""
    if not (number_literal(constant) and isinstance(product, gast.BinOp)
            and isinstance(product.op, gast.Mult)):
        return None
    for inner, x in ((product.left, product.right), (product.right, product.left)):
        if number_literal(inner) and (power_of_two(constant) or power_of_two(inner)):
            return gast.BinOp(gast.Constant(constant.value * inner.value, None), gast.Mult(), x)
    return None


def _scaled_name(node, name, bounded=frozenset()):
    """Whether ``node`` is ``name``, or ``name`` times a finite number (``g * 0.5``) or a
    name of ``bounded`` (finite at finite inputs: ``g * sigmoid``): zero exactly where
    ``name`` is."""
    if isinstance(node, gast.Name):
        return node.id == name
    return (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult) and any(
        isinstance(side, gast.Name) and side.id == name
        and (number_literal(other) and math.isfinite(other.value)
             or isinstance(other, gast.Name) and other.id in bounded)
        for side, other in ((node.left, node.right), (node.right, node.left))))


def _needs_no_guard(node, nonsingular, never_negative=frozenset(), bounded=frozenset()):
    """Whether ``node`` is an ``rt.zero_guard(g, e)`` that may become ``e``.

    The guard only changes entries of ``e`` that are ``0 * inf`` (or NaN)
    where ``g == 0``. None are when ``g`` is a nonzero number (the seed
    ``1.0`` of a scalar output: nothing changes at all), and none at finite
    inputs when ``e`` is ``g / s`` (or ``g * c / s``, ``c`` a finite number or a name of
    ``bounded``: a sigmoid's ``g * sig / (1 + e)``) with
    ``s`` in ``nonsingular`` (the sum under a log-softmax, a softmax's denominator, a
    layer norm's ``np.sqrt(var + 1e-5)``) or ``s`` a positive sum
    (``1 + e``, ``e`` never negative: ``log1p``'s of an ``exp``), or ``g * rt.power_base_factor(x, c)``
    for an integer ``c >= 1``, the derivative of a polynomial (checked before
    the factor is folded into ``c * x ** (c - 1)``).
    """
    if not (isinstance(node.func, gast.Attribute) and node.func.attr == "zero_guard"
            and len(node.args) == 2):
        return False
    g, product = node.args
    if number_literal(g) and g.value != 0:
        return True
    if (isinstance(product, gast.BinOp) and isinstance(product.op, gast.Div)
            and (isinstance(product.right, gast.Name) and product.right.id in nonsingular
                 or is_positive(product.right, never_negative))
            and isinstance(g, gast.Name) and _scaled_name(product.left, g.id, bounded)):
        return True
    factor = product.right if isinstance(product, gast.BinOp) and isinstance(product.op, gast.Mult) \
        else None
    return (isinstance(factor, gast.Call) and isinstance(factor.func, gast.Attribute)
            and factor.func.attr == "power_base_factor" and len(factor.args) == 2
            and number_literal(factor.args[1]) and factor.args[1].value >= 1
            and float(factor.args[1].value).is_integer())

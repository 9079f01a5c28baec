"""Which values of a generated function are read only to compute its derivatives.

Requires: the body of a generated function (a fused gradient, or a JVP returning only its
tangent), the names of its derivatives (assigned by its derivative statements alone), and
the names read after the body (what it returns).
Guarantees: :func:`derivative_only_names` returns names the body assigns, none read after
it, whose every value reaches derivatives through smooth arithmetic alone. Each read of
such a name is

* an operand of arithmetic (``+ - * / ** @``, a negation), an argument of a smooth NumPy
  function (``np.exp``, ``np.sqrt``, ...; the runtime's ``rt.zero_guard``,
  ``rt.zero_guard_sum``, ``rt.unreduce``), an array method's receiver (``.sum()``,
  ``.dot(...)``, ``.T``), an array whose entry is read or an element of a tuple, inside the
  value of an assignment (augmented too) to derivatives, to such names or to entries of
  them, and nowhere inside a comparison, a boolean operation, a conditional's test or an
  index; or
* pushed on a stack (``tape.append(v)``) whose every pop assigns a name pushed on it (the
  backward pass restores each name from its own values); or
* checked as a divisor (``rt.expect_divisor(v)``, which sends a call whose divisor is 0 or
  NaN to the generic code), when every value of ``v`` is a sum of a name's squares
  (``(d * d).sum()``, ``(d ** 2).sum()``, ``np.sum(...)`` of either) or its square root:
  such a sum is 0 exactly when every square rounds to 0, and NaN exactly when a term is,
  in any order of its terms, so the check decides as it did on Python's sum.

No test, index, loop bound, branch, step function or returned value reads them, so
computing them with other rounding (a dot product for a sum of products,
``optimise/inner_products.py``) changes the derivatives by rounding and nothing else: the
program's own values, and what they decide, stay as Python computes them.

    >>> import gast
    >>> body = gast.parse("d = x - y\\nr2 = (d * d).sum()\\nds = g / r2\\nif r2 > 1.0:\\n"
    ...                   "    pass\\nw = (d * d).sum()\\ndw = -w * g").body
    >>> sorted(derivative_only_names(body, {"ds", "dw"}, {"ds", "dw"}, "np"))
    ['w']
"""

import collections

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.nodes import appended_to, popped_from
from srctrans.optimise.expression_shapes import is_runtime_helper_call
from srctrans.optimise.inner_products import summed_product, summed_square
from srctrans.treewalk import walk, walk_names

# functions continuous (and smooth where their derivatives are read) in the arguments read
_SMOOTH = frozenset(map(id, (
    np.exp, np.expm1, np.log, np.log1p, np.sqrt, np.square, np.tanh, np.sinh, np.cosh,
    np.sin, np.cos, np.arctan, np.power, np.multiply, np.add, np.subtract, np.divide,
    np.negative, np.reciprocal, np.dot, np.vdot, np.outer, np.matmul, np.logaddexp,
    np.sum)))
# the runtime's, by name (unreduce reads its second argument's shape alone)
_SMOOTH_NAMES = frozenset({"zero_guard", "zero_guard_sum", "unreduce"})
_METHODS = frozenset({"sum", "dot", "T"})
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.MatMult)


def derivative_only_names(body, derivatives, read_after, numpy_alias):
    """The names of ``body`` read only to compute ``derivatives`` (see the module);
    ``read_after``: the names read after ``body``; ``numpy_alias``: the name it calls NumPy
    by."""
    into = collections.defaultdict(set)   # name -> the names its reads assign
    unsafe = set(read_after)              # names read another way
    pushed, popped = collections.defaultdict(set), collections.defaultdict(set)
    stack_reads = collections.defaultdict(set)   # stack -> names pushed on it
    assigned, values, checked = set(), collections.defaultdict(list), set()
    for top in body:
        for stmt in walk(top):
            if isinstance(stmt, gast.stmt):
                _note(stmt, into, unsafe, pushed, popped, stack_reads, assigned, values,
                      checked)
    unsafe |= {name for name in checked
               if not all(_sum_of_squares(value, numpy_alias) for value in values[name])}
    for stack, names in stack_reads.items():     # a stack read another way, or popped
        if stack in unsafe or into.get(stack) or pushed[stack] != popped[stack]:
            unsafe |= names                      # into other names: opaque
    found = (assigned - set(derivatives)) - unsafe
    allowed = found | set(derivatives)
    readers = collections.defaultdict(set)       # assigned name -> the names read into it
    for name, targets in into.items():
        for target in targets:
            readers[target].add(name)
    pending = [name for name in found if not into[name] <= allowed]
    while pending:                               # a name read into a dropped one: dropped
        name = pending.pop()
        if name in found:
            found.discard(name)
            pending.extend(readers[name] & found)
    return found


def _note(stmt, into, unsafe, pushed, popped, stack_reads, assigned, values, checked):
    """Record how ``stmt``'s own expressions (not its nested statements') read names; the
    values assigned to single names (``values``) and the names checked as divisors."""
    if isinstance(stmt, gast.Expr) and is_runtime_helper_call(stmt.value, "expect_divisor") \
            and len(stmt.value.args) == 1 and isinstance(stmt.value.args[0], gast.Name):
        checked.add(stmt.value.args[0].id)
        return
    push = appended_to(stmt)
    if push is not None and isinstance(push[1], gast.Name):
        stack, name = push[0], push[1].id
        pushed[stack].add(name)
        stack_reads[stack].add(name)
        return
    pop = popped_from(stmt.value) if isinstance(stmt, gast.Assign) else None
    if pop is not None and pop[1] is None and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name):
        popped[pop[0].id].add(stmt.targets[0].id)
        assigned.add(stmt.targets[0].id)
        return
    if isinstance(stmt, (gast.Assign, gast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
        if isinstance(stmt, gast.Assign) and len(targets) == 1 \
                and isinstance(targets[0], gast.Name):
            values[targets[0].id].append(stmt.value)
        else:
            for node in (n for target in targets for n in walk(target)):
                if isinstance(node, gast.Name):
                    values[node.id].append(None)          # (not a value of its own)
        roots = set()
        for target in targets:
            for node in walk(target):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    roots.add(node.id)
                    assigned.add(node.id)
            while isinstance(target, gast.Subscript):
                unsafe.update(_names(target.slice))          # an index
                target = target.value
            if isinstance(target, gast.Name):
                roots.add(target.id)
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            into[stmt.target.id] |= roots                      # (x += e reads x)
        _classify(stmt.value, roots, into, unsafe)
        return
    if isinstance(stmt, gast.Delete):
        return                                        # (a name deleted is not read)
    # any other statement's own expressions: a test, a loop's iterable and its target (whose
    # values are never rewritten), a returned value, an expression run for its effect
    for _, value in gast.iter_fields(stmt):
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, gast.AST) and not isinstance(part, gast.stmt):
                unsafe.update(_names(part))
    if isinstance(stmt, gast.For):
        assigned.update(n.id for n in walk_names(stmt.target))


def _classify(value, roots, into, unsafe):
    """Each name ``value`` reads: read into ``roots`` through smooth arithmetic, or not."""
    todo = [(value, True)]
    for node, smooth in todo:
        if isinstance(node, gast.Name):
            if smooth:
                into[node.id] |= roots
            else:
                unsafe.add(node.id)
        elif isinstance(node, gast.BinOp):
            ok = smooth and isinstance(node.op, _ARITHMETIC)
            todo += [(node.left, ok), (node.right, ok)]
        elif isinstance(node, gast.UnaryOp):
            todo.append((node.operand, smooth and isinstance(node.op, (gast.USub, gast.UAdd))))
        elif isinstance(node, gast.Call):
            ok = smooth and _smooth_call(node)
            if isinstance(node.func, gast.Attribute):     # (np of np.exp: no value of ours)
                todo.append((node.func.value, ok and node.func.attr in _METHODS))
            todo += [(a, ok) for a in node.args]
            todo += [(k.value, False) for k in node.keywords]
        elif isinstance(node, gast.Attribute):
            todo.append((node.value, smooth and node.attr in _METHODS))
        elif isinstance(node, gast.Subscript):      # an entry's value; its index decides
            todo += [(node.value, smooth), (node.slice, False)]
        elif isinstance(node, (gast.Tuple, gast.List)):
            todo += [(e, smooth) for e in node.elts]
        elif isinstance(node, gast.Constant):
            pass
        else:                                 # a comparison, an index, a test, ...
            todo += [(n, False) for n in gast.iter_child_nodes(node)]


def _smooth_call(call):
    """Whether ``call`` is of a smooth function of its positional arguments: one of
    :data:`_SMOOTH` (its annotated callee), the runtime's ``zero_guard``, or a method of
    :data:`_METHODS`."""
    callee = anno.get(call, Anno.CALLEE)
    if callee is not None and id(callee) in _SMOOTH:
        return True
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr in _SMOOTH_NAMES:
        return callee is None or callee is getattr(runtime, func.attr)
    return isinstance(func, gast.Attribute) and func.attr in _METHODS and callee is None


def _sum_of_squares(value, numpy_alias):
    """Whether ``value`` is a name's squares summed whole (``(d * d).sum()``,
    ``np.sum(d ** 2)``), or the square root of that."""
    if isinstance(value, gast.Call) and anno.get(value, Anno.CALLEE) is np.sqrt \
            and len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    if summed_square(value, numpy_alias) is not None:
        return True
    product = summed_product(value, numpy_alias)
    return (product is not None and isinstance(product.left, gast.Name)
            and isinstance(product.right, gast.Name) and product.left.id == product.right.id)


def _names(node):
    return set() if node is None else {n.id for n in walk_names(node)}

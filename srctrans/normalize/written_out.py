"""Comprehensions over a display of names, and sums of NumPy values, written out.

Requires: expressions of the function being normalised (:mod:`srctrans.normalize.anf`) and a
resolver of their names.
Guarantees: each rewritten expression gives Python's value. A comprehension with one ``for``
over a tuple or list display of names (or constants), no condition, is the display of its
element for each of them; a sum of a display of NumPy values adds them one by one::

    [f(W) for W in (W1, W2)]                 ->  [f(W1), f(W2)]
    sum(np.sum(W * W) for W in (W1, W2))     ->  0 + np.sum(W1 * W1) + np.sum(W2 * W2)

A generator is written out only where it is consumed at once, as the argument of ``sum``,
``max``, ``min``, ``list`` or ``tuple`` (another function may take its items one at a time,
``any`` and ``all`` stop at the first that decides), and only when its element holds no
nested scope and binds no name itself (``:=``), and so reads each name as the loop would.
A sum is written out when each item is a call of a NumPy function srctrans has a
derivative rule for (not ``np.random``'s), which gives a NumPy value (an array or a NumPy
number, never a Python ``float``), and its start is a name or a constant: Python's ``sum``
then adds ``start + item`` one item at a time (its compensated sum is for Python floats
alone). Otherwise a loop and a list are
differentiated as before, which costs a list, its cotangents and a step per item.
"""

import gast

from srctrans.nodes import clone, substitute_names
from srctrans.rules.registry import REGISTRY
from srctrans.treewalk import walk

_CONSUMERS = (sum, max, min, list, tuple)    # builtins that take every item (any, all stop early)
_MOST_ITEMS = 16
_SCOPES = (gast.Lambda, gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp,
           gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await)


def written_out(comprehension):
    """The list display ``comprehension`` (a list comprehension or generator expression)
    gives, written out (see the module), or None."""
    if not isinstance(comprehension, (gast.ListComp, gast.GeneratorExp)) \
            or len(comprehension.generators) != 1:
        return None
    loop = comprehension.generators[0]
    items = loop.iter.elts if isinstance(loop.iter, (gast.Tuple, gast.List)) else None
    if (loop.ifs or loop.is_async or not isinstance(loop.target, gast.Name) or items is None
            or not 0 < len(items) <= _MOST_ITEMS
            or not all(isinstance(item, (gast.Name, gast.Constant)) for item in items)
            or any(isinstance(node, _SCOPES) for node in walk(comprehension.elt))):
        return None
    return gast.List([substitute_names(clone(comprehension.elt), {loop.target.id: item})
                      for item in items], gast.Load())


def consumed_generators(call, resolve):
    """``call`` with each generator argument of a consuming builtin (see the module) written
    out as a list display, in place; ``resolve(name)``: what a name denotes."""
    if isinstance(call.func, gast.Name) and _is_consumer(resolve(call.func)):
        for position, argument in enumerate(call.args):
            if isinstance(argument, gast.GeneratorExp):
                display = written_out(argument)
                if display is not None:
                    call.args[position] = gast.copy_location(display, argument)
    return call


def summed(call, resolve):
    """``start + item + ...`` for ``sum(display)`` or ``sum(display, start)`` of NumPy values
    (see the module), else None."""
    if not (isinstance(call.func, gast.Name) and resolve(call.func) is sum and call.args
            and isinstance(call.args[0], (gast.List, gast.Tuple)) and call.args[0].elts):
        return None
    starts = call.args[1:] + [k.value for k in call.keywords if k.arg == "start"]
    if len(starts) > 1 or any(k.arg != "start" for k in call.keywords) \
            or not all(isinstance(start, (gast.Name, gast.Constant)) for start in starts):
        return None                          # (a start computed after the items: kept)
    items = call.args[0].elts
    if not all(isinstance(item, gast.Call) and _is_numpy(resolve(item.func)) for item in items):
        return None
    total = starts[0] if starts else gast.Constant(0, None)
    for item in items:
        total = gast.copy_location(gast.BinOp(total, gast.Add(), item), item)
    return total


def _is_consumer(callee):
    return any(callee is builtin for builtin in _CONSUMERS)


def _is_numpy(callee):
    """Whether ``callee`` is a function of NumPy's own with a derivative rule (``np.sum``,
    ``np.linalg.norm``; not ``np.random``'s, some of which give Python floats)."""
    module = getattr(callee, "__module__", None)
    if not (callable(callee) and isinstance(module, str) and module.split(".")[0] == "numpy"
            and not module.startswith("numpy.random")):
        return False
    rule = REGISTRY.lookup(callee)
    return rule is not None and rule.vjp is not None

"""The per-example rank of each array name of a function batched by ``st.vmap``.

Requires: a function in A-normal form and the per-example ranks of its array
parameters (None where unknown).
Guarantees: :func:`ranks_of` gives the rank each name holds on every path (a name
assigned values of two ranks, or of one unknown, has none): optimistic over loops
(a loop-carried name keeps its rank unless a pass finds another), checked by
passes up to a bound. :func:`rank_of` gives an expression's rank from them.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate import batching_rules as rules
from srctrans.nodes import in_runtime, int_literal
from srctrans.optimise.expression_shapes import REDUCTION_METHODS, RESULT_SHAPE_OF_ARGUMENT

FILLED = (np.zeros, np.ones, np.empty, np.full)

_RANK_KEEPING = frozenset({np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy,
                           np.transpose, np.sort, np.cumsum, np.cumprod, np.flip, np.clip,
                           np.real, np.imag, np.conj})


class Ranks(dict):
    """name -> rank, with ``calls``: ``(call node, ranks) -> rank`` of the calls whose output
    rank the called function's own analysis gives (None for the others)."""

    calls = None


def ranks_of(function, ranks, calls=None):
    """name -> per-example rank of the array names whose rank follows from the parameters'
    ``ranks`` (a name assigned values of two ranks, or of one unknown, has none; a name
    holding a tuple has the tuple of its entries' ranks).

    Optimistic, then checked: a name assigned at several places (a loop's carried value)
    takes the rank its known assignments agree on, passes repeat while they learn ranks,
    then one pass checks that every assignment of every name found has its rank; names that
    fail are left out for good and the search runs again (so at most once per name).
    ``calls``, when given, gives the output rank of a call of a function batched in turn
    (:class:`Ranks`)."""
    def with_calls(found):
        out = Ranks(found)
        out.calls = calls
        return out

    params = {name: rank for name, rank in ranks.items() if rank is not None}
    counts = {}
    _rank_sites(function.body, with_calls({}), counts, ())
    once = {name for name, seen in counts.items() if len(seen) == 1 and name not in params}
    banned = set()
    while True:
        current = dict(params)
        for _ in range(_RANK_PASSES):
            sites = {}
            _rank_sites(function.body, with_calls(current), sites, once)
            found = dict(params)
            for name, seen in sites.items():
                known = {r for r in seen if r is not None}
                if name not in params and name not in banned and len(known) == 1:
                    found[name] = known.pop()
            if found == current:
                break
            current = found
        sites = {}
        _rank_sites(function.body, with_calls(current), sites, ())
        wrong = {name for name, rank in current.items()
                 if any(r != rank for r in sites.get(name, ()))}
        if not wrong:
            return current
        banned |= wrong
        params = {name: rank for name, rank in params.items() if name not in wrong}


_RANK_PASSES = 6


def _rank_sites(block, ranks, sites, once):
    """The rank of each value assigned to a name in ``block`` (None: unknown), by name; the
    names of ``once`` (assigned at one place) enter ``ranks`` as they are assigned."""
    def seen(name, rank):
        sites.setdefault(name, []).append(rank)
        if name in once and rank is not None:
            ranks[name] = rank

    for stmt in block:
        if isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name):
            counter = isinstance(stmt.iter, gast.Call) and anno.get(stmt.iter, Anno.CALLEE) is range
            seen(stmt.target.id, 0 if counter else None)
        if isinstance(stmt, (gast.If, gast.While, gast.For)):
            _rank_sites(stmt.body, ranks, sites, once)
            _rank_sites(stmt.orelse, ranks, sites, once)
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            seen(stmt.targets[0].id, _value_rank(stmt.value, ranks))
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], (gast.Tuple, gast.List)):
            whole = ranks.get(stmt.value.id) if isinstance(stmt.value, gast.Name) else None
            for position, node in enumerate(stmt.targets[0].elts):
                if isinstance(node, gast.Name):          # a, b = residuals: each entry's rank
                    part = whole[position] if isinstance(whole, tuple) and \
                        position < len(whole) else None
                    seen(node.id, part)


def _value_rank(node, ranks):
    """:func:`rank_of`, and a tuple's entries' ranks for a name holding one, a tuple display,
    or a call whose function gives its output's ranks (``Ranks.calls``)."""
    if isinstance(node, gast.Name):
        return ranks.get(node.id)
    if isinstance(node, gast.Tuple):
        return tuple(_value_rank(e, ranks) for e in node.elts)
    if isinstance(node, gast.Call) and getattr(ranks, "calls", None) is not None:
        found = ranks.calls(node, ranks)
        if found is not None:
            return found
    return rank_of(node, ranks)


def value_rank(node, ranks):
    """The rank (or a tuple's entries' ranks) of the value of ``node``: what a function
    returns, for :class:`Ranks` ``calls``."""
    return _value_rank(node, ranks)


def bound_ranks(bound, ranks):
    """parameter -> the rank of what it receives, for parameters bound to argument nodes
    (``batched_names.bound_parameters``): a ``*args`` tuple's entries', None for ``**kwargs``."""
    return {name: tuple(_value_rank(n, ranks) for n in node) if isinstance(node, tuple)
            else None if isinstance(node, dict) else _value_rank(node, ranks)
            for name, node in bound.items()}


def rank_of(node, ranks):
    """The per-example rank of an expression's value, or None when unknown or not an array."""
    if isinstance(node, gast.Name):
        rank = ranks.get(node.id)
        return rank if isinstance(rank, int) else None        # (a tuple's entries' ranks)
    if isinstance(node, gast.Constant):
        return 0 if isinstance(node.value, (int, float, complex, bool)) else None
    if isinstance(node, gast.UnaryOp):
        return rank_of(node.operand, ranks)
    if isinstance(node, (gast.BinOp, gast.Compare)):
        left = rank_of(node.left, ranks)
        right = rank_of(node.right if isinstance(node, gast.BinOp) else node.comparators[0], ranks)
        if left is None or right is None:
            return None
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
            return _matmul_rank(left, right)
        return max(left, right)
    if isinstance(node, gast.Attribute) and node.attr in ("T", "real", "imag"):
        return rank_of(node.value, ranks)
    if isinstance(node, gast.Subscript):
        return indexed_rank(rank_of(node.value, ranks), node.slice, ranks)
    if isinstance(node, gast.Call):
        return _call_rank(node, ranks)
    return None


def _matmul_rank(left, right):
    if left == 0 or right == 0:
        return None
    if left == 1 and right == 1:
        return 0
    if left == 1 or right == 1:
        return max(left, right) - 1
    return max(left, right)


def indexed_rank(rank, key, ranks):
    if rank is None:
        return None
    parts = key.elts if isinstance(key, gast.Tuple) else [key]
    out = rank
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and part.value is None:
            out += 1
        elif isinstance(part, gast.Constant) and part.value is Ellipsis:
            continue
        elif rank_of(part, ranks) == 0:
            out -= 1
        else:
            return None
    return out


def _call_rank(call, ranks):
    callee = anno.get(call, Anno.CALLEE)
    args = call.args
    if callee is None or not args:
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    first = rank_of(args[0], ranks)
    if rules.is_elementwise(callee):
        found = [rank_of(a, ranks) for a in list(args) + list(keywords.values())]
        return None if None in found else max(found)
    if callee in rules.FLAT_WHEN_NONE and callee in _RANK_KEEPING:
        axis = args[1] if len(args) > 1 else keywords.get("axis")
        if axis is None and callee in (np.cumsum, np.cumprod) or \
                isinstance(axis, gast.Constant) and axis.value is None:
            return 1                                      # the flattened array's
        return first
    if callee in _RANK_KEEPING:
        return first
    if callee in REDUCTION_METHODS:                       # np.sum, np.mean, np.max...
        axis = args[1] if len(args) > 1 else keywords.get("axis")
        keep = keywords.get("keepdims")
        if isinstance(keep, gast.Constant) and keep.value:
            return first
        if axis is None or isinstance(axis, gast.Constant) and axis.value is None:
            return 0
        count = len(axis.elts) if isinstance(axis, gast.Tuple) else 1
        return None if first is None else first - count
    if callee in (np.matmul, np.dot) and len(args) == 2:
        second = rank_of(args[1], ranks)
        if first is None or second is None:
            return None
        if callee is np.dot and (first == 0 or second == 0):
            return max(first, second)
        return _matmul_rank(first, second)
    if callee is np.reshape and len(args) == 2:
        shape = args[1]
        return len(shape.elts) if isinstance(shape, gast.Tuple) else \
            1 if int_literal(shape) is not None else None
    if callee in FILLED and isinstance(args[0], gast.Tuple):
        return len(args[0].elts)
    if callee in FILLED:
        return 1 if int_literal(args[0]) is not None or rank_of(args[0], ranks) == 0 else None
    if in_runtime(callee):                  # a derivative helper shaped like an argument
        index = RESULT_SHAPE_OF_ARGUMENT.get(getattr(callee, "__name__", None))
        return rank_of(args[index], ranks) if index is not None and index < len(args) else None
    if callee is np.ravel:
        return 1
    if callee is np.outer:
        return 2
    return None



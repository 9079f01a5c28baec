"""What batching rules share: the call being batched, and the lifting of operands.

A batched value has its batch axis first; an unbatched one is as the unbatched
function has it. :class:`Call` carries a call's arguments, which of them are
batched (``flag``) and their per-example ranks (``rank_of``, None where unknown);
:func:`aligned` gives elementwise operands the axes that make them broadcast
member by member (``x[:, None] * y``).
"""

import inspect

import gast
import numpy as np

from srctrans.nodes import clone, int_literal
from srctrans.rules.registry import REGISTRY


ELEMENTWISE_EXTRA = (np.where, np.clip)

class Call:
    """One call to batch: the expressions a rule combines.

    Attributes:
      callee: the function called; func: the expression the batched call calls it by.
      args, keywords: its argument atoms (gast), positional and by name.
      flag: ``node -> flag``, whether an argument is batched (``differentiate.batching``).
      rank_of: ``node -> rank``, an argument's per-example rank, or None.
      template: ``(text, **nodes) -> gast expression`` with ``np``/``rt`` mapped to the
        generated module's aliases (the transform's ``expression``).
      size: ``() -> gast expression`` of the batch size.
    """

    def __init__(self, callee, func, args, keywords, flag, rank_of, template, size):
        self.callee = callee
        self.size = size
        self.func = func
        self.args = list(args)
        self.keywords = dict(keywords)
        self.flag = flag
        self.rank_of = rank_of
        self.template = template

    def operands(self):
        return self.args + list(self.keywords.values())

    def call(self, func, args, keywords=None):
        keywords = self.keywords if keywords is None else keywords
        return gast.Call(func, list(args), [gast.keyword(k, v) for k, v in keywords.items()])

def is_elementwise(callee):
    if isinstance(callee, np.ufunc):
        return callee.signature is None          # not a generalised ufunc (np.matmul)
    if callee in ELEMENTWISE_EXTRA:
        return True
    rule = REGISTRY.lookup(callee)
    return rule is not None and rule.elementwise and callee is not np.matmul

def aligned(call, operands):
    """``operands`` for an elementwise operation of the batched ones among them: each batched
    operand of a lower per-example rank than another lifted to the highest
    (``x[:, None]``), statically where the ranks are known."""
    template = call.template
    ranks = [call.rank_of(o) for o in operands]
    flags = [call.flag(o) for o in operands]
    if sum(flags) == 0:
        return list(operands)
    if None not in ranks:
        top = max(ranks)
        return [lift(o, top - r) if f and r < top else o
                for o, r, f in zip(operands, ranks, flags)]
    out = []
    for o, f in zip(operands, flags):
        if not f or len(operands) == 1:
            out.append(o)
            continue
        targets = [template("np.ndim(X) - 1" if call.flag(p) else "np.ndim(X)", X=p)
                   for p in operands if p is not o]
        target = targets[0] if len(targets) == 1 else template("max(T)", T=gast.Tuple(targets, gast.Load()))
        out.append(template("rt.batch.lifted(X, R)", X=o, R=target))
    return out

def lift(node, missing):
    """``node[:, None, ...]``: ``missing`` axes of length 1 after the batch axis."""
    if missing <= 0:
        return node
    parts = [gast.Slice(None, None, None)] + [gast.Constant(None, None)] * missing
    return gast.Subscript(clone(node), gast.Tuple(parts, gast.Load()), gast.Load())

def shifted_axis(node, rank, template, array):
    """The batched call's axis argument for the per-example axis expression ``node`` (a
    literal int, tuple of them, None, or any expression) of an argument of per-example
    ``rank`` (None: unknown), the batched ``array``."""
    if node is None or isinstance(node, gast.Constant) and node.value is None:
        if rank is not None:
            return gast.Tuple([gast.Constant(i + 1, None) for i in range(rank)], gast.Load())
        return template("rt.batch.axis(None, X)", X=array)
    parts = node.elts if isinstance(node, gast.Tuple) else [node]
    literals = [int_literal(p) for p in parts]
    if None in literals:
        return template("rt.batch.axis(A, X)", A=node, X=array)
    moved = [gast.Constant(a + 1 if a >= 0 else a, None) for a in literals]
    return gast.Tuple(moved, gast.Load()) if isinstance(node, gast.Tuple) else moved[0]

def bound_arguments(callee, args, keywords):
    """``{parameter: node}`` for a call of ``callee``, or None when it has no signature
    Python can read or the call does not match it."""
    try:
        signature = inspect.signature(callee)
        return dict(signature.bind(*args, **keywords).arguments)
    except (TypeError, ValueError):
        return None

def same_func(call):
    """The expression the batched call calls the primal by: the call's own."""
    return clone(call.func)

def flag_constant(call, node):
    """Whether ``node`` is batched, as a literal the batched call passes on."""
    return gast.Constant(bool(call.flag(node)), None)

def flag_node(flag):
    if isinstance(flag, tuple):
        return gast.Tuple([flag_node(f) for f in flag], gast.Load())
    return gast.Constant(flag, None)

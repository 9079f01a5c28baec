"""VJP rules of Python's builtins that compute with numbers: sum, min, max, float, list, tuple.

(``abs`` shares the rule of ``np.absolute``, in rules/elementwise.py.)
"""

import builtins

import runtime as rt
from srctrans.rules import REGISTRY

vjp = REGISTRY.vjp


@vjp(builtins.sum)
def sum(g, ans, iterable, start=0):
    return rt.spread_grads(g, iterable), rt.unbroadcast(g, start)

@vjp(builtins.max, builtins.min)
def extremum(g, ans, *args):
    return (*rt.choice_grads(g, ans, args),)

@vjp(builtins.float)
def to_float(g, ans, x):
    return g

@vjp(builtins.list, builtins.tuple)
def to_sequence(g, ans, iterable):
    return g

"""Derivative rules of Python's builtins that compute with numbers: sum, min, max, float, list, tuple.

(``abs`` shares the rules of ``np.absolute``, in rules/elementwise.py.)
"""

import builtins

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


@vjp(builtins.sum)
def sum(g, ans, iterable, start=0):
    return rt.spread_grads(g, iterable), rt.unbroadcast(g, start)

@jvp(builtins.sum)
def sum_jvp(diterable, dstart, ans, iterable, start=0):
    return rt.sum_tangents(diterable, ans), rt.sum_tangents((dstart,), ans)

@vjp(builtins.max, builtins.min)
def extremum(g, ans, *args):
    return (*rt.choice_grads(g, ans, args),)

@jvp(builtins.max, builtins.min)
def extremum_jvp(dargs, ans, *args):
    return rt.choice_tangent(dargs, ans, args)

@vjp(builtins.float)
def to_float(g, ans, x):
    return g

linear(builtins.float)

@vjp(builtins.list, builtins.tuple)
def to_sequence(g, ans, iterable):
    return rt.sequence_grad(g, iterable)          # a dict's list is its keys: no derivative

linear(builtins.list, builtins.tuple)

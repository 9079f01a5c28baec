"""Derivative rules of the runtime's helpers of gradient control in generated code.

``rt.valued(value, differentiated)`` returns ``value`` and takes its derivative from
``differentiated``, a value equal to it up to rounding that srctrans computes otherwise (a
loop's sum, and the batched step of that loop: ``optimise/row_loops.py``). Its rules are
straight-through: ``value`` gets no cotangent and ``differentiated`` all of it. Finite
differences of the helper alone see ``value`` only, so tests check these rules through the
functions whose loops are rewritten (``tests/test_row_loops.py``).
"""

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY


@REGISTRY.vjp(rt.valued)
def valued(g, ans, value, differentiated):
    return None, g

@REGISTRY.jvp(rt.valued)
def valued_jvp(ddifferentiated, ans, value, differentiated):
    return ddifferentiated

"""One cotangent of a helper that computes every operand's, where only that one is read.

Requires: specialised backward statements (``optimise.specialise`` calls this on each pick
it rewrites) and the shapes of the values they read; real values (specialised code has no
complex value).
Guarantees: a pick of a convolution's or a polynomial's cotangents is the NumPy expression
that gives that entry alone, for the shapes at hand, where the helper computes both:

- ``rt.convolve_grads(g, a, v, mode)[0]`` (1-D ``a`` of ``n`` points, ``v`` of ``m``) is
  ``np.correlate(g, v, 'valid')`` for ``mode='full'``, ``np.correlate(g, v, 'full')`` for
  ``'valid'`` with ``n >= m``, ``np.correlate(g, v, 'same')`` for ``'same'`` with
  ``n >= m`` and ``m`` odd; ``[1]`` is ``np.correlate(g, a, 'valid')`` for ``'full'``,
  and for ``'valid'`` with ``n >= m``. ``rt.correlate_grads(g, a, v, mode)`` likewise:
  ``[0]`` is ``np.convolve(g, v, ...)`` in the modes ``'valid'``, ``'full'``, ``'same'``
  (for ``'full'``, ``'valid'``, ``'same'``), ``[1]`` is ``np.correlate(a, g, 'valid')``.
  (The helpers pad ``g`` to the full length and convolve it with each operand reversed:
  two convolutions and a concatenation, about 3.4 us against 0.8.)
- ``rt.polyval_grads(g, p, x)[0]`` (``x`` and ``g`` vectors of one shape, ``p`` of ``n``
  coefficients) is ``g @ x[:, None] ** np.arange(n - 1, -1, -1)``: the powers the helper
  stacks, highest first, in one product (the helper also computes ``x``'s cotangent; the
  powers are NumPy's, which functions with rules write, so that the pick folds).

- ``rt.interp_grads(g, x, xp, fp, None, None, None)[2]`` (vectors; no ``left``, ``right``,
  ``period``) is ``rt.interp_values_grad(g, x, xp, fp)``, the values' cotangent alone
  (``runtime/picked_kernels.py``: each point's share to its segment's ends by ``np.bincount``,
  where the helper also makes the points' cotangents and adds by ``np.add.at``).

The values are the helper's up to rounding (a correlation sums in its own order).
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.annotations import Anno
from srctrans.nodes import clone, dotted, int_literal
from srctrans.optimise.expression_shapes import is_runtime_helper_call, shape_of

# (helper, operand, mode) -> (NumPy's function, its operands' order: "g" the cotangent, "o"
# the other operand, its mode, needs n >= m, needs m odd)
_PICKS = {
    ("convolve_grads", 0, "full"): (np.correlate, "go", "valid", False, False),
    ("convolve_grads", 0, "valid"): (np.correlate, "go", "full", True, False),
    ("convolve_grads", 0, "same"): (np.correlate, "go", "same", True, True),
    ("convolve_grads", 1, "full"): (np.correlate, "go", "valid", False, False),
    ("convolve_grads", 1, "valid"): (np.correlate, "go", "valid", True, False),
    ("correlate_grads", 0, "full"): (np.convolve, "go", "valid", False, False),
    ("correlate_grads", 0, "valid"): (np.convolve, "go", "full", True, False),
    ("correlate_grads", 0, "same"): (np.convolve, "go", "same", True, True),
    ("correlate_grads", 1, "full"): (np.correlate, "og", "valid", False, False),
    ("correlate_grads", 1, "valid"): (np.correlate, "og", "valid", True, False),
}
_DEFAULT_MODES = {"convolve_grads": "full", "correlate_grads": "valid"}
_ENTRIES = {"interp_grads": 5}                  # a helper's entries (two: the others')


def picked_cotangent(node, known, numpy_alias):
    """``node``, a pick ``rt.convolve_grads(...)[k]`` (``rt.correlate_grads``),
    ``rt.polyval_grads(...)[0]`` or ``rt.interp_grads(...)[2]`` this
    module rewrites for the shapes ``known``, as its expression; else None."""
    if not isinstance(node, gast.Subscript) or not isinstance(node.value, gast.Call) \
            or node.value.keywords:
        return None
    k, call = int_literal(node.slice), node.value
    for helper in _DEFAULT_MODES:
        if is_runtime_helper_call(call, helper) and len(call.args) in (3, 4):
            return _convolution_cotangent(call, helper, k, known, numpy_alias)
    if is_runtime_helper_call(call, "polyval_grads") and len(call.args) == 3 and k == 0:
        return _coefficients_cotangent(call, known, numpy_alias)
    if is_runtime_helper_call(call, "interp_grads") and k == 2 and 4 <= len(call.args) <= 7:
        return _values_cotangent(call, known)
    return None


def picked_entry(value, k, known, numpy_alias):
    """For ``value`` a tuple of cotangents (``rt.convolve_grads(...)``, ``rt.polyval_grads``,
    ``rt.interp_grads``...) of which only entry ``k`` is read (a name holding it, read only at
    ``[k]``), the tuple of that entry's expression (:func:`picked_cotangent`) and Nones;
    else None."""
    if not isinstance(value, gast.Call) or not isinstance(value.func, gast.Attribute):
        return None
    entry = picked_cotangent(gast.Subscript(value, gast.Constant(k, None), gast.Load()),
                             known, numpy_alias)
    if entry is None:
        return None
    entries = [gast.Constant(None, None) for _ in range(_ENTRIES.get(value.func.attr, 2))]
    entries[k] = entry
    return gast.Tuple(entries, gast.Load())


def _convolution_cotangent(call, helper, k, known, numpy_alias):
    g, a, v = call.args[:3]
    mode = call.args[3] if len(call.args) == 4 else gast.Constant(_DEFAULT_MODES[helper], None)
    shapes = [shape_of(e, known) for e in (g, a, v)]
    if not (isinstance(mode, gast.Constant) and (helper, k, mode.value) in _PICKS
            and all(s is not None and len(s) == 1 for s in shapes)):
        return None
    function, order, correlated, longer, odd = _PICKS[helper, k, mode.value]
    n, m = shapes[1][0], shapes[2][0]
    if longer and n < m or odd and m % 2 == 0:
        return None
    other = v if k == 0 else a
    operands = [clone(g), clone(other)] if order == "go" else [clone(other), clone(g)]
    return _call(numpy_alias, function.__name__, function,
                 [*operands, gast.Constant(correlated, None)])


def _coefficients_cotangent(call, known, numpy_alias):
    g, p, x = call.args
    shapes = [shape_of(e, known) for e in (g, p, x)]
    if None in shapes or len(shapes[1]) != 1 or len(shapes[2]) != 1 or shapes[0] != shapes[2] \
            or shapes[1][0] == 0:
        return None
    exponents = _call(numpy_alias, "arange", np.arange,
                      [gast.Constant(shapes[1][0] - 1, None), gast.Constant(-1, None),
                       gast.Constant(-1, None)])
    column = gast.Subscript(clone(x), gast.Tuple([gast.Slice(None, None, None),
                                                  gast.Constant(None, None)], gast.Load()),
                            gast.Load())
    return gast.BinOp(clone(g), gast.MatMult(), gast.BinOp(column, gast.Pow(), exponents))


def _values_cotangent(call, known):
    g, x, xp, fp = call.args[:4]
    shapes = [shape_of(e, known) for e in (g, x, xp, fp)]
    if any(not (isinstance(a, gast.Constant) and a.value is None) for a in call.args[4:]) \
            or None in shapes or any(len(s) != 1 for s in shapes) or shapes[0] != shapes[1] \
            or shapes[2] != shapes[3] or shapes[2][0] < 2:
        return None
    kernel = gast.Call(gast.Attribute(clone(call.func.value), "interp_values_grad",
                                      gast.Load()), [clone(e) for e in (g, x, xp, fp)], [])
    anno.set_(kernel, Anno.CALLEE, runtime.interp_values_grad)
    return kernel


def _call(numpy_alias, name, function, args):
    call = gast.Call(dotted(numpy_alias, name), args, [])
    anno.set_(call, Anno.CALLEE, function)
    return call

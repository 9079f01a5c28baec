"""Specialised code factors, inverts and solves small matrices without ``np.linalg``'s wrapper.

Requires: the statements of specialised code (not differentiated again, nor batched) and the
names that code calls NumPy and the runtime by.
Guarantees: each call returns or raises what it did. ``np.linalg.cholesky(a)``,
``np.linalg.inv(a)`` and ``np.linalg.solve(a, b)``, with their operands alone, become
``rt.cholesky(a)``, ``rt.inv(a)`` and ``rt.solve(a, b)`` (``runtime/linalg_kernels.py``):
NumPy's own kernel for a float64 matrix, and ``np.linalg``'s function for anything else or
when the kernel fails. The wrapper costs about 4 us a call, as much as the factorisation of a
10 x 10 matrix: a Gaussian process's likelihood or a ridge regression's solve on small data
spends more there than in LAPACK::

    L = np.linalg.cholesky(K)          ->      L = rt.cholesky(K)
    L_inverse = np.linalg.inv(L)               L_inverse = rt.inv(L)
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.nodes import load
from srctrans.treewalk import walk

_KERNELS = {np.linalg.cholesky: ("cholesky", 1), np.linalg.inv: ("inv", 1),
            np.linalg.solve: ("solve", 2)}
_SPELLED = {name: function for function, (name, _) in _KERNELS.items()}


def call_linalg_kernels(statements, numpy_alias, runtime_alias):
    """``statements`` with each call of ``np.linalg``'s ``cholesky``, ``inv`` or ``solve`` on
    its operands alone calling the runtime's (see the module), in place."""
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.Call):
                name = _kernel_of(node, numpy_alias)
                if name is not None:
                    node.func = gast.Attribute(load(runtime_alias), name, gast.Load())
                    anno.set_(node, Anno.CALLEE, None)
    return statements


def _kernel_of(call, numpy_alias):
    """The runtime's name for ``call``'s function when it is one of the kernels' ``np.linalg``
    functions, called with its operands alone, else None. The function is the call's resolved
    callee or, in a call srctrans wrote, ``np.linalg.NAME`` spelled out."""
    callee = anno.get(call, Anno.CALLEE)
    if callee is None and _spelled(call.func, numpy_alias):
        callee = _SPELLED[call.func.attr]
    try:
        name, count = _KERNELS.get(callee, (None, 0))
    except TypeError:                                       # unhashable
        return None
    if name is None or call.keywords or len(call.args) != count \
            or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    return name


def _spelled(func, numpy_alias):
    """Whether ``func`` is ``np.linalg.NAME`` for a kernel's NAME."""
    return (isinstance(func, gast.Attribute) and func.attr in _SPELLED
            and isinstance(func.value, gast.Attribute) and func.value.attr == "linalg"
            and isinstance(func.value.value, gast.Name) and func.value.value.id == numpy_alias)

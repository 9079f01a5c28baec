"""Derivative rules of the runtime's transposes of linear maps along axes: cumulative
sums, differences, diagonals, traces, takes, tiles, repeats, pads (each transposes back to
the NumPy function), and ``np.gradient`` along one axis of a uniform grid
(``rt.uniform_gradient``, which ``runtime/stencils.py`` calls, and its transpose).
"""

import numpy as np

from srctrans import runtime as rt
from srctrans.rules.registry import REGISTRY

vjp = REGISTRY.vjp
jvp = REGISTRY.jvp
linear = REGISTRY.linear


# -- scans and diagonals: each transposes back to the NumPy function --------------
@vjp(rt.cumsum_grad)
def cumsum_grad(g, ans, v, a, axis=None):
    return np.cumsum(g, axis)

@vjp(rt.diff_grad)
def diff_grad(g, ans, v, a, n=1, axis=-1):
    return np.diff(g, n, axis)

@vjp(rt.diagonal_grad)
def diagonal_grad(g, ans, v, a, offset=0, axis1=0, axis2=1):
    return np.diagonal(g, offset, axis1, axis2)

@vjp(rt.trace_grad)
def trace_grad(g, ans, v, a, offset=0, axis1=0, axis2=1):
    return np.trace(g, offset, axis1, axis2)

@vjp(rt.take_grad)
def take_grad(g, ans, v, a, indices, axis=None):
    return np.take(g, indices, axis)

@vjp(rt.take_along_axis_grad)
def take_along_axis_grad(g, ans, v, a, indices, axis):
    return np.take_along_axis(g, indices, axis)

@vjp(rt.pad_grad)
def pad_grad(g, ans, v, array, pad_width, mode="constant"):
    return rt.pad_tangent(g, pad_width, mode)

@vjp(rt.pad_tangent)
def pad_tangent(g, ans, t, pad_width, mode="constant"):
    return rt.pad_grad(g, t, pad_width, mode)

@vjp(rt.tile_grad)
def tile_grad(g, ans, v, a, reps):
    return np.reshape(np.tile(g, reps), np.shape(v))

@vjp(rt.repeat_grad)
def repeat_grad(g, ans, v, a, repeats, axis=None):
    return np.repeat(g, repeats, axis)

linear(rt.cumsum_grad, rt.diff_grad, rt.diagonal_grad, rt.trace_grad, rt.take_grad,
       rt.take_along_axis_grad, rt.tile_grad, rt.repeat_grad, rt.pad_grad, rt.pad_tangent)


# -- np.gradient along one axis of a uniform grid: D(f) / h for a stencil D of numbers ----
REGISTRY.nondifferentiable(rt.axis_length)         # (the composite's test of its length)

# (runtime/stencils.py calls it there), whose transpose rt.uniform_gradient_grad is (D^T g) / h
@vjp(rt.uniform_gradient)
def uniform_gradient(g, ans, f, h, axis, edge_order):
    return rt.uniform_gradient_grad(g, h, axis, edge_order), -np.sum(g * ans) / h, None, None

@jvp(rt.uniform_gradient)
def uniform_gradient_jvp(df, dh, ans, f, h, axis, edge_order):
    return rt.uniform_gradient(df, h, axis, edge_order), ans * (-dh / h)

@vjp(rt.uniform_gradient_grad)
def uniform_gradient_grad(g, ans, v, h, axis, edge_order):
    return rt.uniform_gradient(g, h, axis, edge_order), -np.sum(g * ans) / h, None, None

@jvp(rt.uniform_gradient_grad)
def uniform_gradient_grad_jvp(dv, dh, ans, v, h, axis, edge_order):
    return rt.uniform_gradient_grad(dv, h, axis, edge_order), ans * (-dh / h)

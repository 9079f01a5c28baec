"""VJP rules of functions that move, join or re-view elements without
changing their values: the cotangent is moved back the inverse way."""

import numpy as np

import runtime as rt
from srctrans.rules import REGISTRY

vjp = REGISTRY.vjp


@vjp(np.reshape)
def reshape(g, ans, a, shape=None, order="C"):
    return np.reshape(g, np.shape(a), order=order)

@vjp(np.ravel)
def ravel(g, ans, a, order="C"):
    return np.reshape(g, np.shape(a), order=order)

@vjp(np.squeeze, np.expand_dims)
def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))

@vjp(np.transpose)
def transpose(g, ans, a, axes=None):
    return rt.transpose_grad(g, axes)

@vjp(np.swapaxes)
def swapaxes(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)

@vjp(np.moveaxis)
def moveaxis(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)

@vjp(np.broadcast_to)
def broadcast_to(g, ans, array, shape):
    return rt.unbroadcast(g, array)

@vjp(np.concatenate)
def concatenate(g, ans, arrays, axis=0):
    return rt.concatenate_grads(g, arrays, axis)

@vjp(np.stack)
def stack(g, ans, arrays, axis=0):
    return rt.stack_grads(g, arrays, axis)

@vjp(np.hstack)
def hstack(g, ans, tup):
    return rt.hstack_grads(g, tup)

@vjp(np.vstack)
def vstack(g, ans, tup):
    return rt.vstack_grads(g, tup)

@vjp(np.array, np.asarray, np.asanyarray, np.ascontiguousarray)
def array(g, ans, object, dtype=None):
    return rt.asarray_grad(g, object)

@vjp(rt.identity)
def identity(g, ans, x, *args, **kwargs):
    return g

"""Batching rules of functions that name axes per example (reductions, scans, FFTs...).

When their first argument alone is batched, the batched call's axis is one further
right (negative axes count from the right and stay); ``axis=None`` (all axes)
becomes every axis after the batch axis, or, for the functions that flatten their
argument then (``FLAT_WHEN_NONE``), rank-known members are reshaped to rows first.
"""

import inspect

import gast
import numpy as np

from srctrans.differentiate.batching_rules.calls import bound_arguments, same_func, shifted_axis


_AXIS = "axis"

AXIS_ARGUMENTS = {
    **dict.fromkeys((
        np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var, np.any,
        np.all, np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin, np.nanstd, np.nanvar,
        np.median, np.ptp, np.argmax, np.argmin, np.cumsum, np.cumprod, np.sort, np.argsort,
        np.flip, np.expand_dims, np.squeeze, np.diff, np.count_nonzero, np.average,
        np.linalg.norm, np.gradient, np.take, np.take_along_axis),
        (_AXIS,)),
    **dict.fromkeys((
        np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft,
        np.roll, np.repeat, np.partition, np.split, np.array_split), (_AXIS,)),
    **dict.fromkeys((
        np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2, np.fft.fftn, np.fft.ifftn,
        np.fft.rfftn, np.fft.irfftn, np.fft.fftshift, np.fft.ifftshift, np.rot90), ("axes",)),
    np.swapaxes: ("axis1", "axis2"), np.moveaxis: ("source", "destination"),
    np.trace: ("axis1", "axis2"), np.diagonal: ("axis1", "axis2"),
}

# SciPy's functions along an axis (SciPy is optional: recognised by module and name)
_SCIPY_AXIS_FUNCTIONS = {("scipy.special", "logsumexp"), ("scipy.special", "softmax"),
                         ("scipy.special", "log_softmax")}

# where ``axis=None`` means "the flattened array", not "every axis"
FLAT_WHEN_NONE = frozenset({np.argmax, np.argmin, np.cumsum, np.cumprod, np.sort, np.argsort,
                            np.take, np.take_along_axis, np.repeat, np.partition})

# where ``axis=None`` is not a default that applies (np.roll's flattens and reshapes back)
_NO_NONE = frozenset({np.expand_dims, np.swapaxes, np.moveaxis, np.trace, np.diagonal,
                      np.diff, np.roll, np.rot90, np.split, np.array_split, np.fft.fft,
                      np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft,
                      np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2})

# NumPy's defaults for the axes these take when the call does not name them
_DEFAULT_AXES = {np.trace: (0, 1), np.diagonal: (0, 1), np.diff: (-1,), np.sort: (-1,),
                 np.argsort: (-1,), np.partition: (-1,), np.rot90: ((0, 1),),
                 np.split: (0,), np.array_split: (0,),
                 **dict.fromkeys((np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft,
                                  np.fft.hfft, np.fft.ihfft), (-1,)),
                 **dict.fromkeys((np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2),
                                 ((-2, -1),))}

def axis_rule(call):
    """A call naming axes per example, with its first argument alone batched."""
    callee = call.callee
    first = call.args[0] if call.args else None
    if first is None or not call.flag(first) or \
            any(call.flag(o) for o in call.operands() if o is not first):
        return None
    bound = bound_arguments(callee, call.args, call.keywords)
    if bound is None:
        return None
    rank = call.rank_of(first)
    keywords = dict(call.keywords)
    args = list(call.args)
    positional = list(inspect.signature(callee).parameters)
    defaults = _DEFAULT_AXES.get(callee, ())
    for k, name in enumerate(AXIS_ARGUMENTS.get(callee, (_AXIS,))):
        node = bound.get(name)
        if node is None and k < len(defaults):
            node = gast.Constant(defaults[k], None)
        elif node is None and callee in _NO_NONE:
            return None
        every_axis = node is None or isinstance(node, gast.Constant) and node.value is None
        if every_axis and (callee in _NO_NONE or bound.get("s") is not None):
            return None     # (np.fft.fftn's s= without axes= takes the last axes, not all)
        flattens = callee in FLAT_WHEN_NONE
        if every_axis and callee is np.linalg.norm and rank is not None and rank > 1:
            if not _ord_is_none(bound):
                if rank != 2:
                    return None
                node = gast.Tuple([gast.Constant(0, None), gast.Constant(1, None)], gast.Load())
                every_axis = False        # a matrix norm: of the member's two axes
            else:
                flattens = True           # the flattened array's 2-norm
        if every_axis and flattens:
            if rank is None:
                return None
            args[0] = call.template("X.reshape(X.shape[0], -1)", X=first)
            node = gast.Constant(0, None)
        moved = shifted_axis(node, rank, call.template, args[0])
        index = positional.index(name)
        if index < len(args):
            args[index] = moved
        else:
            keywords[name] = moved
    if callee is np.take_along_axis:            # its indices need the array's rank: a batch axis
        if len(args) < 2:
            return None
        args[1] = call.template("I[None]", I=args[1])
    return call.call(same_func(call), args, keywords)

def scipy_axis_function(callee):
    module = getattr(callee, "__module__", None) or ""
    return module.startswith("scipy.special") and \
        ("scipy.special", getattr(callee, "__name__", None)) in _SCIPY_AXIS_FUNCTIONS

def _ord_is_none(bound):
    order = bound.get("ord")
    return order is None or isinstance(order, gast.Constant) and order.value is None

"""Batching rules of shape functions: joins, reshapes, transposes, padding, spacing.

Each keeps the batch axis first: joins and splits work along the axis after it,
reshapes keep its length, transposes leave it in place, padding leaves it unpadded.
"""


import gast
import numpy as np

from srctrans.nodes import clone, int_literal, int_tuple
from srctrans.differentiate.batching_rules.calls import aligned, bound_arguments, flag_constant, same_func


def join(call):
    """``np.concatenate([a, b], axis)`` / ``np.stack``: a list display of members."""
    values = call.args[0] if call.args else None
    if not isinstance(values, (gast.List, gast.Tuple)):
        return None
    flags = gast.Tuple([flag_constant(call, v) for v in values.elts], gast.Load())
    axis = call.args[1] if len(call.args) > 1 else call.keywords.get("axis", gast.Constant(0, None))
    if isinstance(axis, gast.Constant) and axis.value is None:
        return None
    name = "concatenate" if call.callee is np.concatenate else "stack"
    return call.template(f"rt.batch.{name}(V, F, A)", V=values, F=flags, A=axis)

def reshape(call):
    x = call.args[0]
    shape = call.args[1] if len(call.args) > 1 else call.keywords.get("newshape",
                                                                      call.keywords.get("shape"))
    if shape is None or any(call.flag(o) for o in call.operands() if o is not x) \
            or set(call.keywords) - {"newshape", "shape"}:
        return None
    if isinstance(shape, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in shape.elts):
        return call.template("X.reshape((X.shape[0],) + S)", X=x, S=shape)
    return call.template("rt.batch.reshape(X, S)", X=x, S=shape)

def transpose(call):
    x = call.args[0]
    axes = call.args[1] if len(call.args) > 1 else call.keywords.get("axes")
    if axes is not None and call.flag(axes):
        return None
    rank = call.rank_of(x)
    if axes is None and rank is not None and rank <= 1:
        return clone(x)                                  # a vector's transpose is itself
    literal = None if axes is None else [int_literal(e) for e in getattr(axes, "elts", [])]
    if axes is None and rank is not None:
        order = (0,) + tuple(range(rank, 0, -1))
        return call.template("X.transpose(O)", X=x, O=int_tuple(order))
    if literal and None not in literal and rank is not None:
        order = (0,) + tuple(a % rank + 1 for a in literal)
        return call.template("X.transpose(O)", X=x, O=int_tuple(order))
    return call.template("rt.batch.transpose(X, A)", X=x, A=axes or gast.Constant(None, None))

def ravel(call):
    if len(call.args) != 1 or call.keywords:
        return None
    return call.template("X.reshape(X.shape[0], -1)", X=call.args[0])

def at_least(call):
    """``np.atleast_1d/2d/3d(x)`` of one argument of known per-example rank: the axes NumPy
    adds, added after the batch axis."""
    if len(call.args) != 1 or call.keywords or call.rank_of(call.args[0]) is None:
        return None
    x, rank = call.args[0], call.rank_of(call.args[0])
    wanted = {np.atleast_1d: 1, np.atleast_2d: 2, np.atleast_3d: 3}[call.callee]
    if rank >= wanted:
        return x
    shapes = {(1, 0): "X[:, None]", (2, 0): "X[:, None, None]", (2, 1): "X[:, None, :]",
              (3, 0): "X[:, None, None, None]", (3, 1): "X[:, None, :, None]",
              (3, 2): "X[..., None]"}
    return call.template(shapes[wanted, rank], X=x)

def spaced(call):
    """``np.linspace(start, stop, num, ..., axis)`` (and ``logspace``, ``geomspace``) of
    batched end points: aligned, and the new axis placed after the batch axis."""
    bound = bound_arguments(call.callee, call.args, call.keywords)
    if bound is None or any(call.flag(v) for k, v in bound.items() if k not in ("start", "stop")):
        return None
    start, stop = aligned(call, [bound["start"], bound["stop"]])
    keywords = {k: v for k, v in bound.items() if k not in ("start", "stop")}
    axis = keywords.get("axis", gast.Constant(0, None))
    literal = int_literal(axis)
    if literal is None:
        return None
    keywords["axis"] = gast.Constant(literal + 1 if literal >= 0 else literal, None)
    return call.call(same_func(call), [start, stop], keywords)

def pad(call):
    """``np.pad(x, pad_width, ...)`` of a batched ``x`` alone: no padding of the batch axis."""
    bound = bound_arguments(call.callee, call.args, call.keywords)
    if bound is None or "pad_width" not in bound or \
            any(call.flag(v) for k, v in bound.items() if k != "array"):
        return None
    keywords = {k: v for k, v in bound.items() if k not in ("array", "pad_width")}
    keywords.update(bound.get("kwargs", {}))
    keywords.pop("kwargs", None)
    return call.template("rt.batch.pad(X, W, K)", X=bound["array"], W=bound["pad_width"],
                         K=gast.Dict([gast.Constant(k, None) for k in keywords],
                                     list(keywords.values())))

def broadcast_to(call):
    if len(call.args) != 2 or call.keywords or call.flag(call.args[1]):
        return None
    x, shape = call.args
    return call.template("rt.batch.broadcast_to(X, S)", X=x, S=shape)

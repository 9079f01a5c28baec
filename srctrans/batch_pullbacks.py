"""``st.vmap`` of a pullback of ``st.vjp``: one batched backward pass for a batch of cotangents.

Requires: the parts of a pullback (:class:`PullbackParts`, which ``st.vjp`` attaches to the
pullback it returns): the generated backward pass, the forward pass's residuals and
output, and how the pullback finishes its gradients.
Guarantees: :func:`pullback_plan` returns a plan whose ``run`` gives, for cotangents
batched along axis 0, what the pullback gives for each of them, stacked: each gradient
of the argument's shape and dtype, in memory of its own (None, or zeros, where the
pullback gives them). It applies to an output that is a float array or number (no aux)
and float arguments; otherwise, and when the backward pass has no batched form, it
returns None and ``st.vmap`` calls the pullback once per member.
"""

import numpy as np


class PullbackParts:
    """What a pullback of ``st.vjp`` runs, for its batched form."""

    def __init__(self, bwd, residuals, out, values, unconnected, positions):
        self.bwd, self.residuals, self.out = bwd, residuals, out    # (bwd None: not batched)
        self.values = values              # the selected arguments, one per gradient
        self.unconnected = unconnected    # "none" or "zero"
        self.positions = positions        # the pullback's entry of each gradient, or None


def pullback_plan(parts, moved, moved_kw, looped, batched_call):
    """A plan for ``st.vmap`` of the pullback with these parts and moved arguments, or None.
    ``looped``: the plan that calls the pullback once per member, for cotangents it refuses
    (whose error it then raises as the pullback does); ``batched_call``: ``st.vmap``'s, which
    runs the backward pass batched."""
    if parts.bwd is None or moved_kw or len(moved) != 1 or not moved[0][1] or \
            not _plain(parts.out) or \
            not all(_plain(v) for v in parts.values):
        return None
    return _PullbackPlan(parts, looped, batched_call)


def _plain(value):
    return type(value) is float or type(value) is np.ndarray and value.dtype.kind == "f"


class _PullbackPlan:
    output_flag = True

    def __init__(self, parts, looped, batched_call):
        self.parts, self.looped, self.batched_call = parts, looped, batched_call

    def run(self, moved, moved_kw, size):
        parts = self.parts
        seeds = np.asarray(moved[0][0])
        if seeds.shape[1:] != np.shape(parts.out) or seeds.dtype.kind not in "fiu":
            return self.looped.run(moved, moved_kw, size)   # the pullback's own error
        seeds = seeds.astype(np.result_type(parts.out), copy=False)
        raw = self.batched_call(parts.bwd, (parts.residuals, seeds), (False, True))
        gradients = [_finished(g, value, size, parts.unconnected, seeds)
                     for g, value in zip(raw, parts.values)]
        if parts.positions is None:
            return tuple(gradients)
        by_position = dict(zip(parts.positions[0], gradients))
        return tuple(by_position.get(i) for i in parts.positions[1])


def _finished(g, value, size, unconnected, seeds):
    """A batch of gradients of ``value`` from the batched backward pass's ``g`` (batched, or
    one for every member), as the pullback finishes each: an array of its own (a copy where
    it is a view, or the caller's cotangents themselves, as an identity's pullback gives)."""
    shape = (size,) + np.shape(value)
    if g is None:
        if unconnected != "zero":
            return None
        return np.zeros(shape, dtype=np.result_type(value))
    g = np.asarray(g)
    if np.iscomplexobj(g):
        g = np.real(g)                  # a real argument's gradient is real, as the pullback's
    if g.shape != shape:
        g = np.broadcast_to(g, shape)
    return np.array(g, dtype=np.result_type(value), copy=True) if (
        g.base is not None or not g.flags.writeable or g.dtype != np.result_type(value)
        or np.may_share_memory(g, seeds)) else g


"""Check derivatives against central finite differences along random directions.

One inner product per check: for a random input direction ``u`` and a random
output cotangent ``v``, reverse mode must satisfy
``<v, (f(x + eps u) - f(x - eps u)) / (2 eps)> ~= <vjp(v), u>``. The check
runs every backward pass srctrans may use for ``f``: the generic one, the one
specialised on the arguments' shapes, and the fused gradient of a scalar output.
Randomness is seeded, so a failing check fails the same way every time.
"""

import numbers

import numpy as np

from runtime.containers import is_container, leaves, map_leaves

from srctrans.errors import UsageError

_MODES = ("reverse",)


def check_grads(f, args, modes=("reverse",), order=1, *, wrt=None, eps=1e-6,
                rtol=1e-5, atol=1e-6, seed=0):
    """Raise ``AssertionError`` when ``f``'s derivatives disagree with finite differences.

    Args:
      f: the function to check.
      args: a tuple of its positional arguments (ints and bools are constants).
      modes: which modes to check; ``("reverse",)`` for now.
      order: 1 (derivatives of ``f``).
      wrt: the argument indices to check; default every float argument.
      eps: the finite-difference step (inputs are promoted to float64).
      rtol, atol: tolerances on the two inner products.
      seed: seed of the random directions.

    Returns None when every check passes.
    """
    from srctrans.api import grad, vjp

    for mode in modes:
        if mode not in _MODES:
            raise UsageError(f"check_grads mode {mode!r} is not available; use one of {_MODES}")
    if order != 1:
        raise UsageError(f"check_grads order={order} is not available; use order=1")
    args = tuple(args)
    indices = tuple(i for i, a in enumerate(args) if _is_float(a)) if wrt is None else tuple(wrt)
    if not indices:
        raise UsageError("check_grads found no float argument to check")
    rng = np.random.default_rng(seed)
    wide = tuple(_widen(a) if i in indices else a for i, a in enumerate(args))
    out = f(*wide)
    directions = [_random_like(rng, wide[i]) for i in indices]
    cotangent = map_leaves(lambda o: _random_like(rng, o), out)

    def shifted(step):
        moved = list(wide)
        for i, u in zip(indices, directions):
            moved[i] = _step(wide[i], u, step)
        return f(*moved)

    numeric = _inner(cotangent, map_leaves(lambda a, b: (a - b) / (2 * eps), shifted(eps), shifted(-eps)))
    # every way srctrans may run the backward pass: generic, shape-specialised,
    # and, for a scalar output, the fused gradient (which takes the cotangent 1)
    for path in ("generic", "specialised", "fused"):
        if path == "fused":
            if is_container(out) or np.ndim(out) != 0:
                continue
            gradients = grad(f, wrt=indices)(*wide)
            scale = float(cotangent)
        else:
            _, pullback = vjp(f, *wide, wrt=indices, specialize=path == "specialised")
            gradients, scale = pullback(cotangent), 1.0
        analytic = scale * sum(_inner(g, u) for g, u in zip(gradients, directions) if g is not None)
        if not abs(analytic - numeric) <= atol + rtol * max(abs(analytic), abs(numeric)):
            raise AssertionError(
                f"reverse-mode derivative of {getattr(f, '__qualname__', f)} ({path} code) "
                f"disagrees with finite differences: <vjp(v), u> = {analytic!r} but "
                f"<v, J u> ~= {numeric!r} (difference {abs(analytic - numeric):.3g}, "
                f"arguments {indices})")


def _is_float(value):
    if is_container(value):
        return any(_is_float(leaf) for leaf in leaves(value))
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    return isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, numbers.Integral)


def _widen(value):
    def widen(leaf):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in "fc":
            return leaf.astype(np.float64)
        return float(leaf) if _is_float(leaf) else leaf
    return map_leaves(widen, value)


def _random_like(rng, value):
    def draw(leaf):
        if not _is_float(leaf):
            return 0.0                       # ints and bools are not perturbed
        if isinstance(leaf, np.ndarray) or np.ndim(leaf):
            return rng.standard_normal(np.shape(leaf))
        return float(rng.standard_normal())
    return map_leaves(draw, value)


def _step(value, direction, step):
    return map_leaves(lambda v, d: v + step * d if _is_float(v) else v, value, direction)


def _inner(a, b):
    if a is None or b is None:
        return 0.0
    if is_container(a):
        return sum(_inner(x, y) for x, y in zip(leaves(a), leaves(b)))
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))

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
    cotangent = _map(out, lambda o: _random_like(rng, o))

    def shifted(step):
        moved = list(wide)
        for i, u in zip(indices, directions):
            moved[i] = wide[i] + step * u
        return f(*moved)

    numeric = _inner(cotangent, _map2(shifted(eps), shifted(-eps), lambda a, b: (a - b) / (2 * eps)))
    # every way srctrans may run the backward pass: generic, shape-specialised,
    # and, for a scalar output, the fused gradient (which takes the cotangent 1)
    for path in ("generic", "specialised", "fused"):
        if path == "fused":
            if isinstance(out, tuple) or np.ndim(out) != 0:
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
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    return isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, numbers.Integral)


def _widen(value):
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    return float(value)


def _random_like(rng, value):
    if isinstance(value, np.ndarray) or np.ndim(value):
        return rng.standard_normal(np.shape(value))
    return float(rng.standard_normal())


def _map(value, fn):
    if isinstance(value, tuple):
        return tuple(_map(v, fn) for v in value)
    return fn(value)


def _map2(a, b, fn):
    if isinstance(a, tuple):
        return tuple(_map2(x, y, fn) for x, y in zip(a, b))
    return fn(a, b)


def _inner(a, b):
    if isinstance(a, tuple):
        return sum(_inner(x, y) for x, y in zip(a, b))
    return float(np.sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)))

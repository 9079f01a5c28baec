"""Check derivatives against central finite differences along random directions.

One inner product per check: for a random input direction ``u`` and a random
output cotangent ``v``, both modes must satisfy
``<v, (f(x + eps u) - f(x - eps u)) / (2 eps)> ~= <v, jvp(u)> ~= <vjp(v), u>``,
where ``<a, b>`` is ``Re(sum(a * b))`` (complex values get complex directions and
cotangents: docs/complex.md).
The reverse check runs every backward pass srctrans may use for ``f``: the
generic one, the one specialised on the arguments' shapes, and the fused
gradient of a scalar output; the value ``vjp`` returns must be the function's.
Order 2 checks the generated derivatives the same way.
Randomness is seeded, so a failing check fails the same way every time.
"""

import numpy as np

from srctrans.runtime.containers import is_container, leaves, map_leaves
from srctrans.pytrees import is_tree, tree_leaves, tree_map
from srctrans.runtime.foreign import is_foreign
from srctrans.runtime.seeding import is_float

from srctrans.errors import UsageError
from srctrans.reporting import calls_with_primals, user_facing
from srctrans.signatures import positional_names
from srctrans.hints import Function, Mode

_MODES = ("forward", "reverse")


@user_facing(keeps=(AssertionError,), calls=calls_with_primals)
def check_grads(f: Function, args: tuple, modes: tuple[Mode, ...] = ("forward", "reverse"),
                order: int = 1, *, wrt: int | tuple[int, ...] | None = None, eps: float = 1e-6,
                rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0) -> None:
    """Raise ``AssertionError`` when ``f``'s derivatives disagree with finite differences.

    Args:
      f: the function to check (a plain function defined with ``def``).
      args: a tuple of its positional arguments (ints and bools are constants).
      modes: which modes to check: ``"forward"`` (``<v, jvp(u)>``, through
        the generic JVP and the one specialised on the arguments' shapes) and
        ``"reverse"`` (``<vjp(v), u>``, through every backward pass srctrans
        may run, and what a gradient's third call runs: forward mode for one
        number of a function with a loop); default both.
      order: 1 checks the derivatives of ``f``; 2 also checks, in every mode,
        the derivatives of its generated derivatives: the gradient function
        (reverse over reverse, forward over reverse) and, when ``"forward"``
        is among the modes, the JVP function (forward over forward, reverse
        over forward).
      wrt: the argument index or indices to check; default every float argument.
      eps: the finite-difference step (inputs are promoted to float64, complex
        ones to complex128).
      rtol: relative tolerance on the two inner products.
      atol: absolute tolerance on the two inner products.
      seed: seed of the random directions.

    Returns None when every check passes.
    """
    from srctrans import cache
    from srctrans.api import _Differentiated
    from srctrans.selection import unwrap

    modes = tuple(modes)
    for mode in modes:
        if mode not in _MODES:
            raise UsageError(f"check_grads mode {mode!r} is not available; use one of {_MODES}")
    if order not in (1, 2):
        raise UsageError(f"check_grads order={order} is not available; use 1 or 2")
    args = tuple(args)
    indices = tuple(i for i, a in enumerate(args) if is_float(a)) if wrt is None \
        else (wrt,) if isinstance(wrt, int) else tuple(wrt)
    if not indices:
        raise UsageError("check_grads found no float argument to check")
    fn, bound_self = unwrap(f)
    if bound_self is not None:       # a bound method: its function, the object a constant
        f, args, indices = fn, (bound_self,) + args, tuple(i + 1 for i in indices)
    rng = np.random.default_rng(seed)
    wide = tuple(_widen(a) if i in indices else a for i, a in enumerate(args))
    tolerances = {"eps": eps, "rtol": rtol, "atol": atol}
    name = str(getattr(f, "__qualname__", f))
    _check_first_order(f, wide, {}, modes, indices, rng, name, **tolerances)
    if order == 2:
        gradient = _Differentiated(f, indices, "zero", True, False).plain_function()
        _check_first_order(gradient, wide, {}, modes, indices, rng, "the gradient of " + name,
                           **tolerances)
        if "forward" in modes:
            fn, _ = unwrap(f)
            positional = positional_names(fn)
            names = tuple(positional[i] for i in indices)
            found = cache.forward_instance(fn, names)
            directions = {found.build.tangents[n]: _random_like(rng, wide[i])
                          for n, i in zip(names, indices)}
            _check_first_order(found.jvp, wide, directions, modes, indices, rng, "the JVP of " + name,
                               **tolerances)


def _check_first_order(f, wide, kwargs, modes, indices, rng, name, eps, rtol, atol):
    """Check ``f(*wide, **kwargs)``'s first derivatives in ``modes`` along one random direction
    (``name`` says what ``f`` is in the error)."""
    from srctrans.api import grad, vjp
    from srctrans.selection import unwrap
    from srctrans.forward_api import run_jvp

    out = f(*_fresh(wide), **kwargs)
    directions = [_random_like(rng, wide[i]) for i in indices]
    cotangent = map_leaves(lambda o: _random_like(rng, o), out)

    def shifted(step):
        moved = list(wide)
        for i, u in zip(indices, directions):
            moved[i] = _step(wide[i], u, step)
        return f(*_fresh(moved), **kwargs)

    def difference(a, b):                   # ints and bools do not move
        return (a - b) / (2 * eps) if is_float(a) else np.zeros(np.shape(a))

    numeric = _inner(cotangent, map_leaves(difference, shifted(eps), shifted(-eps)))

    def compare(analytic, path, formula):
        if not abs(analytic - numeric) <= atol + rtol * max(abs(analytic), abs(numeric)):
            raise AssertionError(
                f"{path} derivative of {name} disagrees with finite differences: "
                f"{formula} = {analytic!r} but <v, J u> ~= {numeric!r} "
                f"(difference {abs(analytic - numeric):.3g}, arguments {indices})")

    if "forward" in modes:
        fn, bound_self = unwrap(f)
        tangents = [None] * len(wide)
        for i, u in zip(indices, directions):
            tangents[i] = u
        # the first call with these shapes runs the generic JVP, the second the one
        # specialised on them
        for path in ("generic", "specialised"):
            _, out_tangent = run_jvp(fn, bound_self, tuple(wide), tuple(tangents), kwargs)
            compare(_inner(cotangent, out_tangent), f"forward-mode ({path} code)", "<v, jvp(u)>")
    if "reverse" not in modes:
        return
    # every way srctrans may run the backward pass: generic, shape-specialised,
    # and, for a scalar output, the fused gradient (which takes the cotangent 1) and the
    # short path's, from a gradient's third call (forward mode, for one number of a loop)
    for path in ("generic", "specialised", "fused", "short path"):
        if path in ("fused", "short path"):
            if is_container(out) or np.ndim(out) != 0 or np.iscomplexobj(out):
                continue
            gradient = grad(f, wrt=indices)
            for _ in range(3 if path == "short path" else 1):
                gradients = gradient(*_fresh(wide), **kwargs)
            scale = float(cotangent)
        else:
            # specialised code is built by the second call with the same shapes
            for _ in range(2 if path == "specialised" else 1):
                value, pullback = vjp(f, *wide, wrt=indices, specialize=path == "specialised",
                                      **kwargs)
            _compare_values(value, out, f"the value of {name} from vjp ({path} code)")
            gradients, scale = pullback(cotangent), 1.0
        analytic = scale * sum(_inner(g, u) for g, u in zip(gradients, directions) if g is not None)
        compare(analytic, f"reverse-mode ({path} code)", "<vjp(v), u>")


def _fresh(values):
    """Copies of ``values`` (arrays and containers), for a plain run of a function that may
    write into its arguments: every run must see the same arguments."""
    return tuple(tree_map(lambda v: v.copy() if isinstance(v, np.ndarray) else v, value)
                 for value in values)


def _compare_values(got, expected, what):
    """Raise ``AssertionError`` unless ``got`` equals ``expected`` leaf by leaf (to rounding)."""
    for a, b in zip(leaves(got) if is_container(got) else [got],
                    leaves(expected) if is_container(expected) else [expected]):
        if a is None or b is None or isinstance(b, str):     # (a gradient's entry without one)
            if a != b:
                raise AssertionError(f"{what} is {a!r}, but the function returns {b!r}")
            continue
        if not np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True):
            raise AssertionError(f"{what} is {a!r}, but the function returns {b!r}")


def _widen(value):
    def widen(leaf):
        if (isinstance(leaf, np.ndarray) or is_foreign(leaf)) and leaf.dtype.kind in "fc":
            return leaf.astype(np.complex128 if leaf.dtype.kind == "c" else np.float64)
        if is_float(leaf):
            return complex(leaf) if np.iscomplexobj(leaf) else float(leaf)
        return leaf
    return tree_map(widen, value)


def _random_like(rng, value):
    def draw(leaf):
        if not is_float(leaf):              # ints and bools are not perturbed
            return np.zeros(np.shape(leaf)) if np.ndim(leaf) else 0.0
        if np.iscomplexobj(leaf):           # a complex direction (docs/complex.md)
            draw = rng.standard_normal(np.shape(leaf)) + 1j * rng.standard_normal(np.shape(leaf))
            return draw if np.ndim(leaf) else complex(draw)
        if isinstance(leaf, np.ndarray) or np.ndim(leaf):
            return rng.standard_normal(np.shape(leaf))
        return np.float64(rng.standard_normal())     # a tangent as st.jvp passes it on
    return tree_map(draw, value, as_dicts=True)      # an object's: a dict of its attributes'


def _step(value, direction, step):
    return tree_map(lambda v, d: v + step * d if is_float(v) and d is not None else v,
                    value, direction)


def _inner(a, b):
    """The inner product of two derivatives of one value, entry by entry (an entry one of
    them lacks, as an object's gradient lacks the attributes not read, counts as zero)."""
    if a is None or b is None:
        return 0.0
    if is_tree(a) or is_tree(b):
        like, other = (a, b) if is_tree(a) and not isinstance(a, dict) else (b, a)
        return sum(tree_leaves(tree_map(lambda x, y: _inner(x, y), like, other, as_dicts=True)))
    return float(np.real(np.sum(_wide(a) * _wide(b))))   # Re(sum(a * b)): docs/complex.md


def _wide(value):
    """``value`` as a float64 or complex128 array."""
    value = np.asarray(value)
    return value.astype(np.complex128 if value.dtype.kind == "c" else np.float64)

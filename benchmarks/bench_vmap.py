"""Benchmark batched derivatives (``st.vmap``, and the Jacobians and Hessians built on it).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_vmap.py [--quick]

Times, in one process, interleaved, best of the repeats:

* per-example gradients of ``(tanh(x_i @ w) - y_i) ** 2`` (B = 256, d = 50):
  ``st.vmap(st.grad(loss), in_axes=(None, 0, 0))`` against the gradient written by
  hand for the whole batch (target: at most 2x);
* the Jacobian of ``tanh(W @ tanh(W @ x))`` (n = 100), ``st.jacobian`` in reverse
  mode, against JAX ``jit(jacrev)`` (target: at most 1.5x) and the Jacobian by hand;
* the Hessian of the Rosenbrock function (n = 100), ``st.hessian``, against JAX
  ``jit(hessian)`` (target: at most 2x) and the Hessian by hand.

JAX is optional: without it the JAX columns are left out (and so are their ratios).
Every srctrans result is checked against the hand-written one before it is timed.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import srctrans as st                                   # noqa: E402
from bench_reverse import per_call                     # noqa: E402

TARGETS = {"per-example gradients": ("hand", 2.0), "jacobian": ("jax jit", 1.5),
           "hessian": ("jax jit", 2.0)}


# -- the functions, as a user writes them -------------------------------------------

def loss(w, x, y):
    return (np.tanh(x @ w) - y) ** 2


def net(x, W):
    return np.tanh(W @ np.tanh(W @ x))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


# -- and their derivatives by hand -------------------------------------------------------

def per_example_by_hand(w, X, y):
    t = np.tanh(X @ w)
    return (2.0 * (t - y) * (1.0 - t ** 2))[:, None] * X


def jacobian_by_hand(x, W):
    h = np.tanh(W @ x)
    out = np.tanh(W @ h)
    return ((1.0 - out ** 2)[:, None] * W) @ ((1.0 - h ** 2)[:, None] * W)


def hessian_by_hand(x):
    n = x.shape[0]
    H = np.zeros((n, n))
    diagonal = np.zeros(n)
    diagonal[:-1] = 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    diagonal[1:] += 200.0
    off = -400.0 * x[:-1]
    H[np.arange(n), np.arange(n)] = diagonal
    H[np.arange(n - 1), np.arange(1, n)] = off
    H[np.arange(1, n), np.arange(n - 1)] = off
    return H


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def cases(quick):
    rng = np.random.default_rng(0)
    B, d, n = 256, 50, 100
    w, X, y = rng.normal(size=d) / 7.0, rng.normal(size=(B, d)), rng.normal(size=B)
    x, W = rng.normal(size=n), rng.normal(size=(n, n)) / 10.0
    z = rng.normal(size=n)
    per_example = st.vmap(st.grad(loss), in_axes=(None, 0, 0))
    jacobian = st.jacobian(net, mode="reverse")
    hessian = st.hessian(rosenbrock)
    np.testing.assert_allclose(per_example(w, X, y), per_example_by_hand(w, X, y), rtol=1e-10)
    np.testing.assert_allclose(jacobian(x, W), jacobian_by_hand(x, W), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian(z), hessian_by_hand(z), rtol=1e-10)
    out = {
        "per-example gradients": {"srctrans": lambda: per_example(w, X, y),
                                  "hand": lambda: per_example_by_hand(w, X, y)},
        "jacobian": {"srctrans": lambda: jacobian(x, W), "hand": lambda: jacobian_by_hand(x, W)},
        "hessian": {"srctrans": lambda: hessian(z), "hand": lambda: hessian_by_hand(z)},
    }
    found = _jax()
    if found is not None:
        jax, jnp = found
        jac = jax.jit(jax.jacrev(lambda x, W: jnp.tanh(W @ jnp.tanh(W @ x))))
        hes = jax.jit(jax.hessian(lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2
                                                     + (1.0 - x[:-1]) ** 2)))
        pex = jax.jit(jax.vmap(jax.grad(lambda w, x, y: (jnp.tanh(x @ w) - y) ** 2),
                               in_axes=(None, 0, 0)))
        xj, Wj, zj, wj, Xj, yj = map(jnp.asarray, (x, W, z, w, X, y))
        np.testing.assert_allclose(np.asarray(jac(xj, Wj)), jacobian_by_hand(x, W), rtol=1e-8)
        out["jacobian"]["jax jit"] = lambda: jac(xj, Wj).block_until_ready()
        out["hessian"]["jax jit"] = lambda: hes(zj).block_until_ready()
        out["per-example gradients"]["jax jit"] = lambda: pex(wj, Xj, yj).block_until_ready()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    options = parser.parse_args()
    repeats, min_time = (3, 0.02) if options.quick else (15, 0.1)
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(default)')}; "
          f"best of {repeats} interleaved rounds, microseconds per call")
    for name, columns in cases(options.quick).items():
        notes = {}
        times = per_call(columns, repeats, min_time, notes)
        reference, target = TARGETS[name]
        cells = "  ".join(f"{column} {t['best']:9.1f}" for column, t in times.items())
        ratio = ""
        if reference in times:
            r = times["srctrans"]["best"] / times[reference]["best"]
            ratio = f"  srctrans/{reference} {r:5.2f}x (target <= {target}x: " \
                    f"{'met' if r <= target else 'NOT met'})"
        print(f"{name:22s} {cells}{ratio}")
        for column, note in notes.items():
            print(f"    {column}: {note}")


if __name__ == "__main__":
    main()

"""Newton's method on a small logistic regression, with srctrans's Hessian.

Each step solves H d = g with the Hessian from st.hessian (forward mode over
the generated gradient) and checks one Hessian-vector product from st.hvp
against it. Run: python samples/newton.py
"""

import numpy as np

import srctrans as st


def loss(w, x, y):
    """Mean logistic loss with a little L2 regularisation."""
    z = x @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.01 * np.sum(w * w)


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5))
    w_true = rng.normal(size=5)
    y = (x @ w_true + 0.3 * rng.normal(size=200) > 0).astype(float)
    w = np.zeros(5)
    gradient, hessian = st.grad(loss), st.hessian(loss)
    for step in range(6):
        g, h = gradient(w, x, y), hessian(w, x, y)
        print(f"step {step}  loss {loss(w, x, y):.6f}  |gradient| {np.linalg.norm(g):.2e}")
        w = w - np.linalg.solve(h, g)
    v = rng.normal(size=5)
    (hv, _, _) = st.hvp(loss, (w, x, y), (v, None, None))
    print("HVP equals the Hessian times v:", bool(np.allclose(hv, hessian(w, x, y) @ v)))
    _, directional = st.jvp(loss, (w, x, y), (v, None, None))
    print("JVP equals the gradient dotted with v:", bool(np.isclose(directional, gradient(w, x, y) @ v)))
    print()
    print(st.source(loss, mode="forward"))


if __name__ == "__main__":
    main()

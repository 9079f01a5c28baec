"""Vector-Jacobian products: what ``output_gradients`` means, and the chain rule in parts.

Run it with ``python samples/vjp_output_gradients.py``.

For ``f(x) = x * x`` the Jacobian at ``x = [1, 2]`` is ``diag(2x) = diag([2, 4])``.
Reverse mode computes ``J^T v`` for a cotangent ``v`` shaped like the output:
  * ``output_gradients=v`` chooses ``v``: ``v = [2, 3]`` gives ``[4, 12]``;
  * without it ``v`` is all ones, so the result is the gradient of ``sum(f(x))``: ``[2, 4]``.

Because a VJP maps an output cotangent to an input cotangent, a composition
``h(x) = outer(inner(x))`` can be differentiated in two parts: pull the seed back
through ``outer`` to get the cotangent of ``inner``'s output, then pass it as
``output_gradients`` to pull it back through ``inner``. The result equals the gradient of ``h`` in one piece.
"""

import numpy as np

import srctrans as st


def square(x):
    return x * x


def inner(x):
    return np.sin(x) * x


def outer(u):
    return np.sum(np.exp(u))


def composed(x):
    return outer(inner(x))


def main():
    x = np.array([1.0, 2.0])
    v = np.array([2.0, 3.0])

    print("f(x) = x * x at x =", x)
    with_v = st.grad(square)(x, output_gradients=v)
    default = st.grad(square)(x)
    print("VJP with v = [2, 3]:", with_v)            # J^T v = 2x * v = [4, 12]
    print("default (v = ones): ", default)           # gradient of sum(x * x) = [2, 4]
    assert np.allclose(with_v, [4.0, 12.0]) and np.allclose(default, [2.0, 4.0])

    out, pullback = st.vjp(square, x)
    (same,) = pullback(v)                            # st.vjp: one forward pass, many pullbacks
    print("st.vjp pullback(v):  ", same)
    assert np.allclose(same, with_v)

    print("\nChain rule in two parts, h(x) = outer(inner(x)):")
    u = inner(x)
    du = st.grad(outer)(u)                                   # cotangent of inner's output
    dx_in_parts = st.grad(inner)(x, output_gradients=du)     # pulled back through inner
    dx_whole = st.grad(composed)(x)
    print("d outer / d u:       ", du)
    print("in two parts:        ", dx_in_parts)
    print("in one piece:        ", dx_whole)
    assert np.allclose(dx_in_parts, dx_whole)
    print("the two agree")


if __name__ == "__main__":
    main()

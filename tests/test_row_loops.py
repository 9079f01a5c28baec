"""Sums over the rows of arrays are differentiated as one batched step (optimise/row_loops.py).

Each rewritten loop is checked three ways: the fused gradient has no loop left, it equals
the gradient of the loop srctrans differentiates without the rewrite (the generic build,
the first call) and finite differences to second order, and the value srctrans returns
beside a gradient is the loop's, to the last bit. The loops left alone are checked to stay
loops and to stay right.
"""

import numpy as np
import pytest

import srctrans as st

R = np.random.default_rng(20261129)


class Linear:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return self.W @ x + self.b


def layer_loss(layer, X, Y):
    total = 0.0
    for x, y in zip(X, Y):
        err = layer(x) - y
        total = total + err @ err
    return total / len(X)


def plain_loop(W, X):
    total = 0.0
    for x in X:
        total += np.sum(np.tanh(W @ x))
    return total


def counted_rows(w, X, y):
    loss = 0.5 * np.sum(w * w)                    # a start that is differentiated too
    for i in range(len(X)):
        z = X[i] @ w
        loss = loss + np.logaddexp(0.0, -y[i] * z)
    return loss


def two_sums(w, X):
    a = 0.0
    b = np.zeros(3)
    for x in X:
        h = np.exp(x * w)
        a = a + np.sum(h)
        b = h * x + b                              # a vector sum, the accumulator on the right
    return a * np.sum(b)


def discounted(w, X):
    total = 0.0
    for i, x in enumerate(X):                     # the count in arithmetic with literals
        total = total + np.exp(-0.1 * i) * np.sum(np.tanh(x * w))
    return total


def mixture(means, X, sigma):
    comps = []
    for k in range(means.shape[0]):               # a list of per-component values, stacked
        d = X - means[k]
        comps.append(-0.5 * np.sum(d ** 2, axis=1) / sigma ** 2)
    C = np.stack(comps, axis=1)
    m = C.max(axis=1, keepdims=True)
    return -np.sum(m[:, 0] + np.log(np.exp(C - m).sum(axis=1)))


def stacked_rows(W, X):
    outs = []
    for x in X:
        outs.append(np.tanh(W @ x))
    H = np.array(outs)                            # axis 0
    return np.sum(H ** 2) + np.sum(np.stack(outs, -1) * np.arange(len(X)))


def stacked_and_summed(w, X, y):
    margins, total = [], 0.0
    for i, x in enumerate(X):
        z = x @ w
        margins.append(z * y[i])
        total = total + z ** 2
    return np.sum(np.logaddexp(0.0, -np.stack(margins))) + 0.1 * total


def _grad_source(fn, args, wrt):
    """The fused gradient's code (or the generic code, where a call has none), without its
    comments (which quote the user's lines)."""
    source = st.source(fn, wrt=wrt, args=args).split(f"def {fn.__name__}_grad")[-1]
    return "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))


def _generic_gradient(fn, args, wrt):
    """The gradient of the first call: the generic build, which differentiates the loop."""
    st.clear_cache()
    try:
        return st.grad(fn, wrt=wrt)(*args)
    finally:
        st.clear_cache()


def _leaves(gradient):
    """The arrays of a gradient: a layer's (a dict of its attributes), or the array."""
    if isinstance(gradient, tuple):
        return [leaf for g in gradient for leaf in _leaves(g)]
    if isinstance(gradient, dict):
        return [gradient["W"], gradient["b"]]
    return [gradient.W, gradient.b] if isinstance(gradient, Linear) else [gradient]


def _layer_args(dtype=np.float64):
    layer = Linear(R.standard_normal((2, 3)).astype(dtype), R.standard_normal(2).astype(dtype))
    return layer, R.standard_normal((5, 3)).astype(dtype), R.standard_normal((5, 2)).astype(dtype)


REWRITTEN = [
    (layer_loss, _layer_args, 0),
    (plain_loop, lambda: (R.standard_normal((2, 3)), R.standard_normal((4, 3))), 0),
    (counted_rows, lambda: (R.standard_normal(3), R.standard_normal((6, 3)),
                            np.sign(R.standard_normal(6))), 0),
    (two_sums, lambda: (R.standard_normal(3) * 0.3, R.standard_normal((4, 3))), 0),
    (discounted, lambda: (R.standard_normal(3), R.standard_normal((5, 3))), 0),
    (counted_rows, lambda: (R.standard_normal(3), R.standard_normal((6, 3)),   # the rows too
                            np.sign(R.standard_normal(6))), (0, 1)),
    (mixture, lambda: (R.standard_normal((3, 2)), R.standard_normal((7, 2)), 1.3), 0),
    (mixture, lambda: (R.standard_normal((3, 2)), R.standard_normal((7, 2)), 1.3), (0, 1, 2)),
    (stacked_rows, lambda: (R.standard_normal((2, 3)), R.standard_normal((4, 3))), 0),
    (stacked_and_summed, lambda: (R.standard_normal(3), R.standard_normal((5, 3)),
                                  np.sign(R.standard_normal(5))), (0, 1)),
]


@pytest.mark.parametrize("fn, make, wrt", REWRITTEN,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in REWRITTEN])
def test_a_sum_over_rows_is_one_batched_step(fn, make, wrt):
    args = make()
    source = _grad_source(fn, args, wrt)
    assert "for " not in source and "rt.valued" not in source
    expected = _generic_gradient(fn, args, wrt)
    gradient = st.grad(fn, wrt=wrt)
    for _ in range(4):                            # generic, specialised, then the fused path
        got = gradient(*args)
        for a, b in zip(_leaves(got), _leaves(expected)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    if fn is not layer_loss:                      # (check_grads takes arrays)
        st.check_grads(fn, args, order=2, wrt=wrt)


def test_a_layers_gradient_through_the_batched_step_takes_the_short_path():
    """The batched step of ``layer.W @ x`` is ``(layer.W @ X.T).T``: W's gradient is then a
    product of its own (through ``X @ layer.W.T`` it would be a transposed view of one,
    which the short path's guard cannot return as the caller's own array)."""
    args = _layer_args()
    gradient = st.grad(layer_loss)
    for _ in range(3):
        got = gradient(*args)
    assert gradient._repeat is not None
    assert all(leaf.base is None for leaf in _leaves(got))


def test_a_loss_over_examples_reads_as_an_expert_writes_it():
    """One product for all rows, the loss's seed read as its number where each row's error
    is scaled (a number spread over the rows, then over each row's entries: d[:, None])."""
    source = _grad_source(layer_loss, _layer_args(), 0)
    assert "np.full" not in source and "unreduce" not in source and "np.einsum" not in source
    assert [line for line in source.splitlines() if "rt." in line] == [
        "    dlayer = rt.attributes_cotangent({'b': d_b_rows, 'W': d_W_rows}, layer)"]


def test_the_value_beside_the_gradient_is_the_loops_to_the_last_bit():
    args = (R.standard_normal(3), R.standard_normal((50, 3)) * 1e3, np.sign(R.standard_normal(50)))
    for _ in range(3):
        value, _ = st.value_and_grad(counted_rows)(*args)
        assert value == counted_rows(*args)
        out, _ = st.vjp(counted_rows, *args, wrt=0)
        assert out == counted_rows(*args)
    source = st.source(counted_rows, args=args)
    forward = source.split("def counted_rows_fwd")[1].split("def counted_rows_bwd")[0]
    assert "for " in forward and "rt.valued(" in forward      # the loop computes the value


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_stacked_list_s_value_is_the_loop_s_to_the_last_bit(dtype):
    """The list is still built by the loop and stacked for the value; the derivative reads
    the batched values, their axis moved where the stack puts it."""
    args = (R.standard_normal((4, 3)).astype(dtype), (R.standard_normal((30, 3)) * 1e2).astype(dtype),
            dtype(1.7))
    for _ in range(3):
        value, gradient = st.value_and_grad(mixture)(*args)
        assert value == mixture(*args) and gradient.dtype == dtype
    forward = st.source(mixture, args=args).split("def mixture_fwd")[1].split("def mixture_bwd")[0]
    assert "for " in forward and "rt.valued(np.stack(comps, axis=1), comps_rows)" in forward


def test_a_count_in_arithmetic_with_literals_keeps_float32_values():
    """``np.exp(-0.1 * i)`` is a float64 NumPy number in the loop, and its batched form a
    float64 array: the products with float32 rows have the same dtype either way."""
    args = tuple(a.astype(np.float32) for a in (R.standard_normal(3), R.standard_normal((5, 3))))
    expected = _generic_gradient(discounted, args, 0)
    gradient = st.grad(discounted)
    for _ in range(3):
        got = gradient(*args)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert "np.arange(5)" in _grad_source(discounted, args, 0)
    assert st.value_and_grad(discounted)(*args)[0] == discounted(*args)


def test_float32_rows_keep_their_dtype():
    args = _layer_args(np.float32)
    gradient = st.grad(layer_loss)
    for _ in range(3):
        got = gradient(*args)
    assert all(leaf.dtype == np.float32 for leaf in _leaves(got))
    assert "for " not in _grad_source(layer_loss, args, 0)
    expected = _generic_gradient(layer_loss, args, 0)
    for a, b in zip(_leaves(got), _leaves(expected)):
        np.testing.assert_allclose(a, b, rtol=1e-5)


# -- loops left as they are ---------------------------------------------------------------

def carried_state(W, X):
    h = np.zeros(2)
    total = 0.0
    for x in X:
        h = np.tanh(W @ x + h)                    # the next step reads it: not a sum
        total = total + np.sum(h)
    return total


def read_after(W, X):
    total = 0.0
    for x in X:
        e = np.tanh(W @ x)
        total = total + np.sum(e)
    return total + np.sum(e)                      # the last step's value


def shorter_labels(w, X, y):
    total = 0.0
    for x, t in zip(X, y):                        # zip stops at y's end
        total = total + (x @ w - t) ** 2
    return total


def counter_read(w, X):
    total = 0.0
    for i in range(len(X)):
        total = total + i * np.sum(X[i] * w)      # the count times a value: batched, an int64
    return total                                  # array's dtype would decide the product's


def discounted_by_an_argument(w, X, gamma):
    total = 0.0
    for i, x in enumerate(X):
        total = total + gamma ** i * np.sum(x * w)   # an argument's power: kept (gamma may be
    return total                                     # a float32)


def branch_in_step(w, X):
    total = 0.0
    for x in X:
        z = x @ w
        if z > 0:
            total = total + z
    return total


def random_step(w, X):
    total = 0.0
    for x in X:
        noise = np.random.default_rng(0).normal()
        total = total + np.sum(x * w) * noise
    return total


def start_reassigned_later(w, X):
    total = 0.0
    for x in X:
        total = total + np.sum(x * w)
    for x in X:
        total = total + np.sum(x * x * w)         # the second loop adds to the first's sum
    return total


def appended_read_twice(W, X):
    outs = []
    for x in X:
        outs.append(np.tanh(W @ x))
    return np.sum(np.stack(outs) ** 2) + np.sum(outs[0])    # the list read as itself


def appended_to_a_start(W, X):
    outs = [np.zeros(2)]                          # not empty to start with
    for x in X:
        outs.append(np.tanh(W @ x))
    return np.sum(np.stack(outs) ** 2)


def appended_by_axis_of_an_argument(W, X, axis):
    outs = []
    for x in X:
        outs.append(np.tanh(W @ x))
    return np.sum(np.stack(outs, axis=axis) * np.arange(2)[:, None])


def a_list_grown(w, X):
    acc = []
    for x in X:
        acc = list(acc) + [np.sum(x * w)]        # a list's sum is its concatenation
    return np.sum(np.stack(acc) ** 2)


LEFT = [
    (carried_state, lambda: (R.standard_normal((2, 3)) * 0.5, R.standard_normal((4, 3)))),
    (read_after, lambda: (R.standard_normal((2, 3)), R.standard_normal((4, 3)))),
    (shorter_labels, lambda: (R.standard_normal(3), R.standard_normal((5, 3)),
                              R.standard_normal(4))),
    (counter_read, lambda: (R.standard_normal(3), R.standard_normal((4, 3)))),
    (branch_in_step, lambda: (R.standard_normal(3), R.standard_normal((6, 3)))),
    (random_step, lambda: (R.standard_normal(3), R.standard_normal((4, 3)))),
    (discounted_by_an_argument, lambda: (R.standard_normal(3), R.standard_normal((4, 3)), 0.9)),
    (a_list_grown, lambda: (R.standard_normal(3), R.standard_normal((4, 3)))),
    (appended_read_twice, lambda: (R.standard_normal((2, 3)), R.standard_normal((4, 3)))),
    (appended_to_a_start, lambda: (R.standard_normal((2, 3)), R.standard_normal((4, 3)))),
    (appended_by_axis_of_an_argument, lambda: (R.standard_normal((2, 3)),
                                                R.standard_normal((4, 3)), 1)),
]


@pytest.mark.parametrize("fn, make", LEFT, ids=[c[0].__name__ for c in LEFT])
def test_a_loop_that_is_not_a_plain_sum_over_rows_stays_a_loop(fn, make):
    args = make()
    assert "for " in _grad_source(fn, args, 0)
    expected = _generic_gradient(fn, args, 0)
    gradient = st.grad(fn)
    for _ in range(3):
        np.testing.assert_allclose(gradient(*args), expected, rtol=1e-12, atol=1e-12)
    st.check_grads(fn, args, order=2, wrt=0)


def test_a_later_loop_adding_to_the_sum_keeps_both_right():
    args = (R.standard_normal(3), R.standard_normal((4, 3)))
    expected = _generic_gradient(start_reassigned_later, args, 0)
    gradient = st.grad(start_reassigned_later)
    for _ in range(3):
        np.testing.assert_allclose(gradient(*args), expected, rtol=1e-12, atol=1e-12)
    st.check_grads(start_reassigned_later, args, order=2, wrt=0)


def sum_of_rows_themselves(x):
    s = 0.0
    for v in x:
        s = s + v                                 # the term is the row, no step computes it
    return np.sum(s * s)


def test_a_sum_of_the_rows_themselves_is_the_arrays_sum():
    args = (R.standard_normal((4, 3)),)
    assert "for " not in _grad_source(sum_of_rows_themselves, args, 0)
    expected = _generic_gradient(sum_of_rows_themselves, args, 0)
    gradient = st.grad(sum_of_rows_themselves)
    for _ in range(3):
        np.testing.assert_allclose(gradient(*args), expected, rtol=1e-12, atol=1e-12)
    st.check_grads(sum_of_rows_themselves, args, order=2)


def row_reassigned(w, X):
    total = 0.0
    for x in X:
        x = np.tanh(x)                            # the row's name holds another value after
        total = total + np.sum(x * w)
    return total


def test_a_rows_name_given_another_value_is_right_either_way():
    args = (R.standard_normal(3), R.standard_normal((5, 3)))
    expected = _generic_gradient(row_reassigned, args, 0)
    gradient = st.grad(row_reassigned)
    for _ in range(3):
        np.testing.assert_allclose(gradient(*args), expected, rtol=1e-12, atol=1e-12)
    st.check_grads(row_reassigned, args, order=2)

"""``st.vmap``: the batched function equals a loop over the batch, and is batched code.

Each function below is run by ``st.vmap`` with its arguments batched along axis 0,
along their last axis, and with some of them unbatched (``in_axes`` None), and
compared with a loop of the unbatched function; the generated source is checked
to be the batched NumPy code (no loop over members) where a rule covers every
operation. Jacobians and Hessians, which now run one batched pullback (or JVP of
the gradient) over a basis, are compared with hand-written ones.
"""

import warnings

import numpy as np
import pytest

import srctrans as st
from srctrans import batch_api


def elementwise_ranks(x, v, c):
    return np.tanh(x) * v[0] + c * np.exp(-x)           # a number per member against vectors


def reductions(x, W):
    h = W @ x
    return np.sum(h ** 2, axis=0) + np.max(h) - np.mean(x[1:] * x[:-1])


def products(x, y, W):
    return x @ y + (W @ x) @ (y @ W) + np.dot(x, W @ y)


def loop_and_write(x, y):
    out = np.zeros(3)
    s = 0.0
    for i in range(3):
        s = s + np.sum(x[i:] ** 2) * y
        out[i] = s
    return out.T @ out + np.sum(np.outer(x, x))


def shapes(M):
    flat = np.reshape(M, (-1,))
    t = np.transpose(M)
    return np.concatenate([flat, np.ravel(t[:, ::-1])]) * np.sum(M, axis=-1, keepdims=True)[0]


def helper(a, b):
    return np.sin(a) * b


def calls_a_helper(x, y):
    return np.sum(helper(x, y) + helper(y, x))


def branch_on_value(x):
    if np.sum(x) > 0:
        return x * 2.0
    return -x


def branches_and_a_while(x, c):
    y = x * 2.0
    if np.sum(x) > c and x[0] < 1.5:
        y = np.exp(x)
        z = y + 1.0
    elif np.max(x) > 0.5:
        z = -x
    else:
        z = x * c
    n = 0
    while np.sum(y ** 2) < 50.0 or n < 2:
        y = y * 1.5 + 0.1
        n = n + 1
    return z * y + n


def else_reads_what_then_assigns(x, c):
    y = x * c
    if np.sum(x) > 0:
        y = x * 10.0                  # the else branch must still read the y from before
        w = y + 1.0
    else:
        w = y * 2.0
    return w


def write_under_a_branch(x):
    out = np.zeros(2)
    if np.sum(x) > 0:
        out[0] = x[0]
    return out


def log_where_positive(x):
    if x > 0:
        y = np.log(x)
    else:
        y = x
    return y * 2.0


def draws(x):
    return x + np.random.normal(size=x.shape)


def loss(w, x, y):
    return (np.tanh(x @ w) - y) ** 2


CASES = [
    (elementwise_ranks, lambda r: (r.normal(size=4), r.normal(size=2), r.normal())),
    (reductions, lambda r: (r.normal(size=3), r.normal(size=(4, 3)))),
    (products, lambda r: (r.normal(size=3), r.normal(size=3), r.normal(size=(3, 3)))),
    (loop_and_write, lambda r: (r.normal(size=4), r.normal())),
    (shapes, lambda r: (r.normal(size=(2, 3)),)),
    (calls_a_helper, lambda r: (r.normal(size=3), r.normal(size=3))),
    (branch_on_value, lambda r: (r.normal(size=3),)),
    (branches_and_a_while, lambda r: (r.normal(size=3), r.normal())),
    (else_reads_what_then_assigns, lambda r: (r.normal(size=3), r.normal())),
]
BATCH = 5


def _members(make, seed=0):
    rng = np.random.default_rng(seed)
    return [make(rng) for _ in range(BATCH)]


def _stack(members, position, axis):
    return np.stack([np.asarray(m[position], dtype=float) for m in members], axis=axis)


def _loop(f, members):
    return np.stack([f(*m) for m in members])


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("layout", ["first", "last", "some"])
def test_vmap_equals_a_loop(f, make, layout):
    members = _members(make)
    count = len(members[0])
    if layout == "first":
        axes = (0,) * count
    elif layout == "last":
        axes = tuple(-1 if np.ndim(a) else 0 for a in members[0])
    else:                                  # the last argument the same for every member
        axes = (0,) * (count - 1) + (None,) if count > 1 else (0,)
    if layout == "some" and count > 1:
        members = [m[:-1] + (members[0][-1],) for m in members]
    args = [members[0][i] if ax is None else _stack(members, i, ax) for i, ax in enumerate(axes)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", st.BatchingWarning)      # every operation has a rule
        got = st.vmap(f, in_axes=axes)(*args)
    np.testing.assert_allclose(got, _loop(f, members), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_vmap_of_the_gradient_equals_a_loop_of_gradients(f, make):
    members = _members(make, seed=1)
    args = [_stack(members, i, 0) for i in range(len(members[0]))]
    gradient = st.grad(f, wrt=0)
    got = st.vmap(gradient)(*args)
    np.testing.assert_allclose(got, _loop(gradient, members), rtol=1e-10, atol=1e-12)


def test_float32_stays_float32():
    x = np.ones((4, 3), dtype=np.float32)
    out = st.vmap(lambda_free_square)(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.sum(x * x, axis=1))


def lambda_free_square(x):
    return np.sum(x * x)


def test_per_example_gradients_are_one_vectorised_call():
    rng = np.random.default_rng(0)
    w, X, Y = rng.normal(size=5), rng.normal(size=(7, 5)), rng.normal(size=7)
    per_example = st.vmap(st.grad(loss), in_axes=(None, 0, 0))
    G = per_example(w, X, Y)
    t = np.tanh(X @ w)
    np.testing.assert_allclose(G, (2 * (t - Y) * (1 - t * t))[:, None] * X, rtol=1e-12)
    source = st.source(per_example, args=(w, X, Y))
    assert "for " not in source and "rt.batch.loop" not in source     # batched, not looped
    assert "[:, None] * x" in source


def sized_along(x):
    return x * np.size(x, 1) + np.size(x, -1) * np.size(x, 0) + np.size(x)


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_a_size_along_an_axis_is_each_members(in_axes):
    """np.size(x, axis) of a batched x is a member's (it read the whole batch's once)."""
    x = np.arange(60.0).reshape(3, 4, 5)
    members = [np.take(x, k, axis=in_axes) for k in range(x.shape[in_axes])]
    out = st.vmap(sized_along, in_axes=in_axes)(x)
    np.testing.assert_allclose(out, np.stack([sized_along(m) for m in members]))
    # a tuple of axes (NumPy 2.4's np.size): the product of a member's lengths along them
    from srctrans.runtime import batching
    assert batching.member_size(x, (0, 1)) == np.prod(x.shape[1:3])


def test_out_axes_moves_the_batch_axis():
    X = np.arange(12.0).reshape(4, 3)
    out = st.vmap(doubled, out_axes=1)(X)
    np.testing.assert_allclose(out, 2 * X.T)


def doubled(x):
    return 2.0 * x


def test_an_output_that_does_not_depend_on_the_batch_is_spread():
    out = st.vmap(constant, in_axes=(0, None))(np.ones((3, 2)), np.arange(2.0))
    np.testing.assert_allclose(out, np.tile(np.arange(2.0) * 2, (3, 1)))


def constant(x, c):
    return c * 2.0


def test_a_write_under_an_if_on_a_batched_value_runs_per_member_with_a_warning():
    X = np.array([[1.0, 2.0], [-3.0, 1.0]])
    with pytest.warns(st.BatchingWarning, match="a write into an array under an `if`"):
        out = st.vmap(write_under_a_branch)(X)
    np.testing.assert_allclose(out, _loop(write_under_a_branch, [(x,) for x in X]))


def test_an_if_on_a_batched_value_selects_and_the_branch_not_taken_leaks_no_nan():
    x = np.array([-1.0, 0.0, 2.0, np.e])
    with warnings.catch_warnings():
        warnings.simplefilter("error", st.BatchingWarning)
        warnings.simplefilter("ignore", RuntimeWarning)      # log of the members not taken
        out = st.vmap(log_where_positive)(x)
        gradients = st.vmap(st.grad(log_where_positive))(x)   # 1/x of the members at x <= 0
    np.testing.assert_allclose(out, [-2.0, 0.0, 2 * np.log(2.0), 2.0])
    np.testing.assert_allclose(gradients, [2.0, 2.0, 1.0, 2.0 / np.e])
    source = st.source(st.vmap(log_where_positive), args=(x,))
    assert "rt.batch.select(" in source and "loop" not in source


def test_a_while_on_a_batched_value_runs_until_every_member_is_done():
    def steps(x):
        n = 0
        while x < 100.0:
            x = x * 2.0
            n = n + 1
        return n
    x = np.array([1.0, 60.0, 200.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", st.BatchingWarning)
        out = st.vmap(steps)(x)
    np.testing.assert_array_equal(out, [7, 1, 0, 6])


def test_a_random_draw_is_refused():
    with pytest.raises(st.UnsupportedSyntaxError, match="random draw"):
        st.vmap(draws)(np.ones((3, 2)))


def test_batch_sizes_must_agree():
    with pytest.raises(st.UsageError, match="different batch sizes"):
        st.vmap(products)(np.ones((3, 3)), np.ones((4, 3)), np.ones((3, 3, 3)))


def test_in_axes_entries_are_checked():
    with pytest.raises(st.UsageError, match="in_axes"):
        st.vmap(products, in_axes=(0, "x", None))


def test_the_jacobian_is_one_batched_pullback():
    rng = np.random.default_rng(2)
    x, W = rng.normal(size=6), rng.normal(size=(6, 6)) / 3
    J = st.jacobian(net)(x, W)
    h1 = np.tanh(W @ x)
    h2 = np.tanh(W @ h1)
    np.testing.assert_allclose(J, (1 - h2 ** 2)[:, None] * W @ ((1 - h1 ** 2)[:, None] * W),
                               rtol=1e-12, atol=1e-14)
    assert any(getattr(fn, "__name__", "").startswith("net_bwd") for fn in batch_api._built)


def net(x, W):
    return np.tanh(W @ np.tanh(W @ x))


def counting_batched_calls(monkeypatch):
    """The functions ``batched_matrices`` runs batched, one entry per batched call."""
    from srctrans import batched_matrices
    called = []

    def spy(fn, *rest, **keywords):
        called.append(fn)
        return batch_api.batched_call(fn, *rest, **keywords)
    monkeypatch.setattr(batched_matrices, "batched_call", spy)
    return called


def test_the_forward_jacobian_is_one_batched_jvp_per_argument(monkeypatch):
    called = counting_batched_calls(monkeypatch)
    rng = np.random.default_rng(6)
    x, W = rng.normal(size=6), rng.normal(size=(6, 6)) / 3
    Jx, JW = st.jacobian(net, wrt=(0, 1), mode="forward")(x, W)
    Rx, RW = st.jacobian(net, wrt=(0, 1), mode="reverse")(x, W)
    np.testing.assert_allclose(Jx, Rx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(JW, RW, rtol=1e-12, atol=1e-14)
    assert JW.shape == (6, 6, 6)
    forward = [fn for fn in called if fn.__name__.startswith("net_jvp")]
    assert len(forward) == 2                     # one per argument, not one per column


def batch_of_layers(x, W):
    return np.tanh(x @ W) ** 2 + np.sin(x[:, :1])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_the_batch_jacobian_is_one_batched_pass(mode, monkeypatch):
    called = counting_batched_calls(monkeypatch)
    rng = np.random.default_rng(7)
    x, W = rng.normal(size=(5, 3)), rng.normal(size=(3, 4))
    got = st.batch_jacobian(batch_of_layers, mode=mode)(x, W)
    full = st.jacobian(batch_of_layers, mode="reverse")(x, W)
    assert got.shape == (5, 4, 3)
    np.testing.assert_allclose(got, np.einsum("bxby->bxy", full), rtol=1e-12, atol=1e-14)
    ours = sorted(fn.__name__ for fn in called if fn.__name__.startswith("batch_of_layers"))
    # one batched pass for the batch Jacobian (not one per element of a row), and the full
    # Jacobian's backward pass
    assert ours == (["batch_of_layers_bwd"] * 2 if mode == "reverse" else
                    ["batch_of_layers_bwd", "batch_of_layers_jvp"]), ours


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_the_hessian_is_one_batched_jvp_of_the_gradient():
    x = np.random.default_rng(3).normal(size=7)
    H = st.hessian(rosen)(x)
    expected = np.zeros((7, 7))
    for i in range(6):                                  # the Rosenbrock Hessian by hand
        expected[i, i] += 2 - 400 * (x[i + 1] - 3 * x[i] ** 2)
        expected[i + 1, i + 1] += 200
        expected[i, i + 1] -= 400 * x[i]
        expected[i + 1, i] -= 400 * x[i]
    np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-10)
    assert any(getattr(fn, "__name__", "").startswith("rosen_grad_jvp") for fn in batch_api._built)


def filled(x, v):
    return np.full_like(x, v)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, 0)])
def test_a_batched_fill_value_fills_each_member(in_axes):
    X, V = np.ones((3, 3)), np.array([1.0, 2.0, 3.0])
    x = X[0] if in_axes[0] is None else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", st.BatchingWarning)
        out = st.vmap(filled, in_axes=in_axes)(x, V)
    np.testing.assert_allclose(out, V[:, None] * np.ones((3, 3)))


# -- composition with the other transforms ---------------------------------------------

def member_loss(w, x):
    return np.tanh(x @ w) ** 2


member_losses = st.vmap(member_loss, in_axes=(None, 0))


def weighted_total(w, X):
    return np.sum(member_losses(w, X) * np.arange(1.0, X.shape[0] + 1.0))


def weighted_total_by_loop(w, X):
    total = 0.0
    for i in range(X.shape[0]):
        total = total + member_loss(w, X[i]) * (i + 1.0)
    return total


def pair(a, b):
    return a * b, np.sin(a) + b


pairs = st.vmap(pair, in_axes=(0, None))


def of_pairs(a, b):
    u, v = pairs(a, b)
    return np.sum(u ** 2) + np.sum(v * u)


def of_pairs_by_loop(a, b):
    total = 0.0
    for i in range(a.shape[0]):
        u, v = pair(a[i], b)
        total = total + np.sum(u ** 2) + np.sum(v * u)
    return total


def test_grad_of_vmap_equals_the_gradient_of_the_loop():
    rng = np.random.default_rng(3)
    w, X = rng.normal(size=3), rng.normal(size=(4, 3))
    got = st.grad(weighted_total, wrt=(0, 1))(w, X)
    want = st.grad(weighted_total_by_loop, wrt=(0, 1))(w, X)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14)
    a, b = rng.normal(size=(5, 2)), rng.normal(size=2)      # a tuple output, b unbatched
    for g, h in zip(st.grad(of_pairs, wrt=(0, 1))(a, b),
                    st.grad(of_pairs_by_loop, wrt=(0, 1))(a, b)):
        np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14)


def test_jvp_of_vmap_equals_the_jvp_of_the_loop():
    rng = np.random.default_rng(4)
    w, X = rng.normal(size=3), rng.normal(size=(4, 3))
    t, T = rng.normal(size=3), rng.normal(size=(4, 3))
    for tangents in ((t, None), (t, T), (None, T)):
        _, got = st.jvp(weighted_total, (w, X), tangents)
        _, want = st.jvp(weighted_total_by_loop, (w, X), tangents)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def sine_times(x):
    return np.sin(x) * x


def scalar_sine(x):
    return np.sum(np.sin(x) * x ** 2)


scalar_sine_gradient = st.grad(scalar_sine)


def tangent_of(x, t):
    return st.jvp(sine_times, (x,), (t,))[1]


def hessian_times(x, v):
    return st.jvp(scalar_sine_gradient, (x,), (v,))[1]


def hvp_call(x, v):
    return st.hvp(scalar_sine, (x,), (v,))[0]


def pulled_back(x, v):
    _, back = st.vjp(sine_times, x)
    return back(v)[0]


@pytest.mark.parametrize("f, batched", [(tangent_of, True), (hessian_times, True),
                                        (hvp_call, True), (pulled_back, False)])
def test_vmap_of_jvp_hvp_and_vjp_equals_a_loop(f, batched):
    rng = np.random.default_rng(5)
    X, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", st.BatchingWarning)
        got = st.vmap(f)(X, V)
    np.testing.assert_allclose(got, _loop(f, list(zip(X, V))), rtol=1e-12, atol=1e-14)
    looped = [w for w in caught if issubclass(w.category, st.BatchingWarning)]
    assert not looped if batched else looped         # pullbacks called inside: per member


def mixed(a, b, c):
    return np.tanh(a @ b) * c + np.sum(b)


@pytest.mark.parametrize("outer, inner, out_axes", [
    ((0, None, 0), (0, 0, None), (0, 0)),
    ((1, 0, None), (None, 0, 0), (-1, 0)),
    ((0, 0, 0), (0, 0, 0), (1, 0)),
])
def test_nested_vmap_is_one_merged_batch(outer, inner, out_axes):
    rng = np.random.default_rng(6)
    n, m, d = 4, 3, 5

    def make(k):
        shape = [d] if k < 2 else []
        if inner[k] is not None:
            shape.insert(inner[k], m)
        if outer[k] is not None:
            shape.insert(outer[k], n)
        return rng.normal(size=shape)
    args = [make(k) for k in range(3)]

    def member(x, i, j, k):
        x = x if outer[k] is None else np.take(x, i, axis=outer[k])
        return x if inner[k] is None else np.take(x, j, axis=inner[k])
    want = np.stack([np.stack([mixed(*[member(x, i, j, k) for k, x in enumerate(args)])
                               for j in range(m)], axis=out_axes[1]) for i in range(n)],
                    axis=out_axes[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", st.BatchingWarning)
        got = st.vmap(st.vmap(mixed, in_axes=inner, out_axes=out_axes[1]), in_axes=outer,
                      out_axes=out_axes[0])(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def with_defaults(x, scale=3.0, *, shift=0.5):
    return np.sin(x) * scale + shift


def test_the_batched_function_keeps_the_defaults():
    X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    np.testing.assert_allclose(st.vmap(with_defaults)(X), np.sin(X) * 3.0 + 0.5)
    np.testing.assert_allclose(st.vmap(with_defaults, in_axes=(0, None))(X, 2.0),
                               np.sin(X) * 2.0 + 0.5)


def affine_of_a_dict(p, x):
    return p["W"] @ x + p["b"]


def test_a_container_batched_in_some_arrays_only_takes_members_of_those_alone():
    """``W`` is shared (in_axes None) and has as many rows as the batch has members: a loop
    that took ``W[i]`` for member ``i`` would run, and be wrong."""
    rng = np.random.default_rng(8)
    p = {"W": rng.normal(size=(4, 4)), "b": rng.normal(size=(4, 4))}
    X = rng.normal(size=(4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", st.BatchingWarning)
        out = st.vmap(affine_of_a_dict, in_axes=({"W": None, "b": 0}, 0))(p, X)
        gradients = st.vmap(st.grad(lambda_free_sum_of_affine), in_axes=({"W": None, "b": 0}, 0))(
            p, X)
    np.testing.assert_allclose(out, [p["W"] @ x + b for b, x in zip(p["b"], X)], rtol=1e-12)
    for i in range(4):
        member = st.grad(lambda_free_sum_of_affine)({"W": p["W"], "b": p["b"][i]}, X[i])
        np.testing.assert_allclose(gradients["W"][i], member["W"], rtol=1e-12)
        np.testing.assert_allclose(gradients["b"][i], member["b"], rtol=1e-12)


def lambda_free_sum_of_affine(p, x):
    return np.sum(np.tanh(affine_of_a_dict(p, x)))

"""A loop folding np.logaddexp over the slices of an array is one call of the runtime, whose
derivatives are in closed form (normalize/folds.py, runtime/folds.py): a log-sum-exp
accumulated column by column has no loop in its backward pass. The values are the loop's;
the derivatives match finite differences in both modes, to second order."""

import numpy as np
import pytest

import srctrans as st

R = np.random.default_rng(41)


def by_columns(z, T):
    lse = z[:, 0]
    for j in range(1, z.shape[1]):
        lse = np.logaddexp(lse, z[:, j])
    return -np.sum(T * (z - lse[:, None]))


def by_rows_from_minus_infinity(x, w):
    total = np.full(x.shape[1], -np.inf)
    for i in range(x.shape[0]):
        total = np.logaddexp(x[i, :], total)
    return np.sum(total * w)


def from_a_number(x):
    total = -np.inf
    for i in range(len(x)):
        total = np.logaddexp(total, x[i])
    return total * 2.0


def wrapping_round(x, n):
    acc = x[:, 1] * 0.5
    for j in range(-1, n):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(np.sin(acc))


def no_step(x):
    acc = np.tanh(x[:, 0])
    for j in range(2, 2):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(acc ** 2)


def after_an_early_return(x, s):
    """The fold in a block of its own (the early return's): the accumulator is assigned again
    there, where SSA does not rename it."""
    if s > 4.0:
        return s * s
    acc = -np.inf
    for j in range(x.shape[0]):
        acc = np.logaddexp(acc, x[j])
    return np.sum(np.tanh(acc) * acc)


CASES = [
    (by_columns, lambda: (R.standard_normal((5, 4)), np.eye(4)[R.integers(0, 4, 5)])),
    (by_rows_from_minus_infinity, lambda: (R.standard_normal((3, 4)), R.standard_normal(4))),
    (from_a_number, lambda: (R.standard_normal(6),)),
    (wrapping_round, lambda: (R.standard_normal((3, 4)), 3)),
    (no_step, lambda: (R.standard_normal((3, 4)),)),
    (after_an_early_return, lambda: (R.standard_normal((3, 2)), 1.0)),
]
IDS = [f.__name__ for f, _ in CASES]


def _fused(f, args):
    return st.source(f, args=args).split(f"def {f.__name__}_grad(")[1].split("\ndef ")[0]


@pytest.mark.parametrize("f, build", CASES, ids=IDS)
def test_the_fold_is_one_call_and_its_derivatives_match_finite_differences(f, build):
    args = build()
    fused = _fused(f, args)
    assert "rt.logaddexp_fold(" in fused
    assert not any(line.strip().startswith("for ") for line in fused.splitlines())
    st.check_grads(f, args, order=2)
    value, gradient = st.value_and_grad(f)(*args)
    assert value == f(*args)                         # the loop's own value, exactly
    want = st.grad(f, optimize=False)(*args)
    for _ in range(3):                               # generic, specialised, short path
        np.testing.assert_allclose(st.grad(f)(*args), want, rtol=1e-12, atol=1e-14)


def test_a_folds_gradient_keeps_a_duck_array_one():
    """The fold's derivatives make their arrays with the array's own functions (NEP 18):
    a duck array (Dask's, CuPy's) is never converted."""
    from duck_arrays import Duck, wrap
    z, T = CASES[0][1]()
    got = st.grad(by_columns)(wrap(z), wrap(T))
    assert isinstance(got, Duck)
    np.testing.assert_allclose(got.data, st.grad(by_columns)(z, T), rtol=1e-12)


def test_float32_stays_float32():
    z, T = R.standard_normal((5, 4)).astype(np.float32), np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0]]
    want = st.grad(by_columns, optimize=False)(z, T)
    for _ in range(3):
        got = st.grad(by_columns)(z, T)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def read_after(x):
    acc = x[:, 0]
    for j in range(1, x.shape[1]):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(acc) * j


def stepped(x):
    acc = x[:, 0]
    for j in range(1, x.shape[1], 2):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(acc)


def more_in_the_body(x):
    acc = x[:, 0]
    for j in range(1, x.shape[1]):
        acc = np.logaddexp(acc, x[:, j])
        acc = acc * 0.5
    return np.sum(acc)


def indexed_by_an_expression(x):
    acc = x[:, 0]
    for j in range(1, x.shape[1]):
        acc = np.logaddexp(acc, x[:, j - 1])
    return np.sum(acc)


@pytest.mark.parametrize("f", [read_after, stepped, more_in_the_body, indexed_by_an_expression])
def test_other_loops_stay_loops(f):
    x = R.standard_normal((3, 5))
    assert "logaddexp_fold" not in st.source(f, args=(x,))
    st.check_grads(f, (x,), order=1)


def from_a_start(a, x):
    total = a
    for i in range(x.shape[1]):
        total = np.logaddexp(total, x[:, i])
    return total


@pytest.mark.parametrize("in_axes, build", [
    ((0, None), lambda: (R.standard_normal(4), R.standard_normal((3, 5)))),     # numbers
    ((None, 0), lambda: (R.standard_normal(3), R.standard_normal((4, 3, 5)))),
    ((0, 1), lambda: (R.standard_normal((4, 3)), R.standard_normal((3, 4, 5)))),
    ((0, 0), lambda: (R.standard_normal(4), R.standard_normal((4, 3, 5)))),
], ids=["start", "array", "array_along_its_second_axis", "both"])
def test_a_fold_is_batched_without_a_loop_over_the_members(in_axes, build):
    """st.vmap runs the fold once for the batch (a batched start of lower rank than a
    member's slices broadcasts against them as each member's does)."""
    import warnings
    a, x = build()
    members = [tuple(np.take(v, k, axis=ax) if ax is not None else v
                     for v, ax in zip((a, x), in_axes)) for k in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no BatchingWarning: no member loop
        got = st.vmap(from_a_start, in_axes=in_axes)(a, x)
    np.testing.assert_allclose(got, [from_a_start(*m) for m in members], rtol=1e-14)

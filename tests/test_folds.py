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


def by_rows_from_the_first(x, w):
    acc = x[0]
    for i in range(1, x.shape[0]):
        acc = np.logaddexp(acc, x[i])
    return np.sum(acc * w)


def from_the_second_column(x):
    n = x.shape[1]
    acc = x[:, 1, ...]
    count = len(x)
    for j in range(2, n):
        acc = np.logaddexp(x[:, j], acc)
    return np.sum(np.sin(acc)) * count


def from_the_first_with_no_step(x):
    acc = x[:, 0]
    for j in range(1, 1):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(acc ** 2)


FROM_A_SLICE = [
    (by_columns, lambda: (R.standard_normal((5, 4)), np.eye(4)[R.integers(0, 4, 5)])),
    (by_rows_from_the_first, lambda: (R.standard_normal((4, 3)), R.standard_normal(3))),
    (from_the_second_column, lambda: (R.standard_normal((3, 5)),)),
    (from_the_first_with_no_step, lambda: (R.standard_normal((3, 4)),)),
]

CASES = FROM_A_SLICE[1:] + [
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
    assert any(f"rt.{helper}(" in fused     # (a fold read only by its derivative: that alone)
               for helper in ("logaddexp_fold", "logaddexp_fold_from", "logaddexp_fold_from_grad"))
    assert not any(line.strip().startswith("for ") for line in fused.splitlines())
    st.check_grads(f, args, order=2)
    value, gradient = st.value_and_grad(f)(*args)
    assert value == f(*args)                         # the loop's own value, exactly
    want = st.grad(f, optimize=False)(*args)
    for _ in range(3):                               # generic, specialised, short path
        np.testing.assert_allclose(st.grad(f)(*args), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f, build", FROM_A_SLICE, ids=[f.__name__ for f, _ in FROM_A_SLICE])
def test_a_fold_from_a_slice_of_the_array_is_one_call_of_the_array(f, build):
    """``acc = x[:, k]`` before a loop from ``k + 1`` is part of the fold: its derivative is
    one expression over the slices from ``k``, with no share of the first slice apart."""
    fused = _fused(f, build())
    assert "rt.logaddexp_fold_from(" in fused or "rt.logaddexp_fold_from_grad(" in fused
    assert "rt.logaddexp_fold(" not in fused
    assert "logaddexp_fold_share" not in fused and "getitem_grad" not in fused


def fold_read_again(z, T):
    lse = z[:, 0]
    for j in range(1, z.shape[1]):
        lse = np.logaddexp(lse, z[:, j])
    return -np.sum(T * (z - lse[:, None])) + np.sum(lse ** 2)


@pytest.mark.parametrize("columns", [4, 10])
def test_a_fold_read_only_by_its_derivative_is_not_run(columns):
    """The fused gradient of a loss that reads a fold's value only through its derivative
    computes the slices' softmax at once (optimise/fold_derivatives.py), without the loop for
    more than four slices: the generic code's derivatives to rounding, to second order; a
    fold whose value the gradient reads again keeps it."""
    z = R.standard_normal((5, columns))
    T = np.eye(columns)[R.integers(0, columns, 5)]
    fused = _fused(by_columns, (z, T))
    assert "rt.logaddexp_fold_from_grad(dlse, z, 1, 1, " in fused
    assert "rt.logaddexp_fold_from(" not in fused
    want = st.grad(by_columns, optimize=False)(z, T)
    for _ in range(3):
        np.testing.assert_allclose(st.grad(by_columns)(z, T), want, rtol=1e-13, atol=1e-15)
    st.check_grads(by_columns, (z, T), order=2)
    again = _fused(fold_read_again, (z, T))
    assert "rt.logaddexp_fold_from(" in again and "logaddexp_fold_from_grad" not in again
    st.check_grads(fold_read_again, (z, T), order=2)


def test_the_derivative_alone_is_the_folds_derivative_to_rounding():
    from srctrans import runtime as rt
    # slices of at most SMALL_FOLD entries (by logaddexp.reduce), more (a softmax; a fold of
    # fewer than four steps)
    for shape, axis, start, stop in [((3, 10), 1, 1, 10), ((9, 2), 0, 1, 9), ((3, 12), 1, 3, 11),
                                     ((3, 4), 1, 1, 4), ((2, 6), 1, 1, 6), ((20, 10), 1, 1, 10),
                                     ((200, 3), 1, 1, 3), ((12, 40), 0, 2, 12)]:
        x, g = R.standard_normal(shape), R.standard_normal(shape[:axis] + shape[axis + 1:])
        ans = rt.logaddexp_fold_from(x, axis, start, stop)
        np.testing.assert_allclose(rt.logaddexp_fold_from_grad(g, x, axis, start, stop),
                                   rt.logaddexp_fold_grad(g, ans, x, axis, start - 1, stop),
                                   rtol=1e-14, atol=1e-16)
    x32 = R.standard_normal((2, 8)).astype(np.float32)
    assert rt.logaddexp_fold_from_grad(np.ones(2, np.float32), x32, 1, 1, 8).dtype == np.float32


def first_read_before_the_loop(x):
    acc = x[:, 0]
    first = acc * 2.0
    for j in range(1, x.shape[1]):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(acc) + np.sum(first)


def first_of_another_slice(x):
    acc = x[:, 1]
    for j in range(1, x.shape[1]):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(acc)


def array_rebound_before_the_loop(x):
    acc = x[:, 0]
    x = np.tanh(x)
    for j in range(1, x.shape[1]):
        acc = np.logaddexp(acc, x[:, j])
    return np.sum(acc)


@pytest.mark.parametrize("f", [first_read_before_the_loop, first_of_another_slice,
                               array_rebound_before_the_loop])
def test_a_start_that_is_not_the_slice_before_stays_the_accumulators(f):
    x = R.standard_normal((3, 4))
    source = st.source(f, args=(x,))
    assert "logaddexp_fold_from" not in source
    st.check_grads(f, (x,), order=2)
    want = st.grad(f, optimize=False)(x)
    for _ in range(3):
        np.testing.assert_allclose(st.grad(f)(x), want, rtol=1e-12)


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


def from_its_first_column(x):
    lse = x[:, 0]
    for j in range(1, x.shape[1]):
        lse = np.logaddexp(lse, x[:, j])
    return lse


@pytest.mark.parametrize("axis", [0, 1])
def test_a_fold_from_a_slice_is_batched_and_so_is_its_gradient(axis):
    """st.vmap runs a fold from the array's own slice once for the batch, and the batched
    gradient is the members' gradients."""
    import warnings
    x = R.standard_normal((4, 3, 5) if axis == 0 else (3, 4, 5))
    members = [np.take(x, k, axis=axis) for k in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no BatchingWarning: no member loop
        got = st.vmap(from_its_first_column, in_axes=axis)(x)
        gradients = st.vmap(st.grad(sum_of_sines), in_axes=axis)(x)
    np.testing.assert_allclose(got, [from_its_first_column(m) for m in members], rtol=1e-14)
    want = [st.grad(sum_of_sines)(m) for m in members]
    np.testing.assert_allclose(np.moveaxis(gradients, 0, axis) if axis else gradients,
                               np.stack(want, axis=axis) if axis else want, rtol=1e-12)


def sum_of_sines(x):
    return np.sum(np.sin(from_its_first_column(x)))


def _reduced(x, axis):
    from srctrans.runtime import folds
    return folds.logaddexp_reduced(x, axis)


def _weighted_reduced(x, w, axis):
    from srctrans.runtime import folds
    return np.sum(w * folds.logaddexp_reduced(x, axis))


def test_the_small_folds_log_sum_exp_has_rules_to_second_order():
    """logaddexp_fold_from_grad reads small folds' log-sum-exp by np.logaddexp.reduce
    (runtime.folds.logaddexp_reduced), whose rules make the Hessian of a function whose fused
    gradient calls it; its rules against central differences, in both modes."""
    for axis in (0, 1):
        x, v = R.standard_normal((4, 3)), R.standard_normal((4, 3))
        eps = 1e-6
        along = (_reduced(x + eps * v, axis) - _reduced(x - eps * v, axis)) / (2 * eps)
        _, tangent = st.jvp(_reduced, (x, axis), (v, None))
        np.testing.assert_allclose(tangent, along, rtol=1e-7, atol=1e-9)
        w = R.standard_normal(along.shape)
        cotangent = st.grad(_weighted_reduced)(x, w, axis)
        np.testing.assert_allclose(np.sum(cotangent * v), np.sum(w * along), rtol=1e-7)

    def xent(z, T):
        lse = z[:, 0]
        for j in range(1, z.shape[1]):
            lse = np.logaddexp(lse, z[:, j])
        return -np.sum(T * (z - lse[:, None]))

    z, T, v = R.standard_normal((5, 4)), R.random((5, 4)), R.standard_normal((5, 4))
    gradient = st.grad(xent)
    for _ in range(3):
        hessian = st.hessian(xent)(z, T)
    assert "rt.logaddexp_fold_from_grad(" in st.source(xent, args=(z, T))
    eps = 1e-6
    along = (gradient(z + eps * v, T) - gradient(z - eps * v, T)) / (2 * eps)
    np.testing.assert_allclose(hessian.reshape(20, 20) @ v.ravel(), along.ravel(), rtol=1e-6,
                               atol=1e-8)

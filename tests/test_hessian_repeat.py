"""st.hessian takes a short path for calls shaped like the last one: a guard generated for their
shapes calls the batched JVP of the fused gradient over a basis built once
(repeat.make_hessian_repeat). Each call must give what the full path gives, in an array of
its own; anything the guard does not check must send the call down the full path."""

import numpy as np
import pytest

import srctrans as st
from srctrans import second_order
from programs import specialised_jvps as p

R = np.random.default_rng(31)


def half_square(x):
    return 0.5 * np.sum(x * x)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def scaled(x, k):
    return np.sum(np.cos(x) ** k)


def full_path_hessian(fn, *args, wrt=0):
    """The Hessian of the full path: srctrans's with the cache (and every guard) forgotten."""
    st.clear_cache()
    return st.hessian(fn, wrt)(*args)


def numeric_hessian(fn, x, *rest, eps=1e-6):
    """Central differences of srctrans's gradient, column by column."""
    gradient = st.grad(fn)
    columns = []
    for k in range(x.size):
        step = np.zeros_like(x)
        step.flat[k] = eps
        columns.append(((gradient(x + step, *rest) - gradient(x - step, *rest)) / (2 * eps)).ravel())
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("fn, shape, rest", [(rosenbrock, (12,), ()), (half_square, (3, 4), ()),
                                             (scaled, (5,), (3,)),
                                             (p.calls_a_helper, (2, 3), (np.eye(3),))])
def test_every_call_gives_the_full_paths_hessian(fn, shape, rest):
    x = R.standard_normal(shape)
    expected = full_path_hessian(fn, x, *rest)
    np.testing.assert_allclose(expected, numeric_hessian(fn, x, *rest), rtol=1e-5,
                               atol=1e-6)
    hessian = st.hessian(fn)
    for _ in range(4):                       # generic, specialising, then the guard
        np.testing.assert_allclose(hessian(x, *rest), expected, rtol=1e-13, atol=1e-14)
    assert second_order.hessian_guard(fn, 0) is not None


def test_the_guard_reads_its_checks():
    x = R.standard_normal(6)
    hessian = st.hessian(rosenbrock)
    for _ in range(3):
        hessian(x)
    guard = second_order.hessian_guard(rosenbrock, 0)
    np.testing.assert_allclose(guard(rosenbrock, (x,)), hessian(x))
    assert guard(rosenbrock, (x[:5],)) is None                 # another shape
    assert guard(rosenbrock, (x.astype(np.float32),)) is None  # another dtype
    assert guard(rosenbrock, (x, 2)) is None                   # another count
    assert guard(rosenbrock, (list(x),)) is None               # another type


def test_each_call_returns_an_array_of_its_own():
    """The Hessian of half_square is the basis itself (its JVP returns the tangent): the guard,
    which passes the same basis to every call, must still return a new array each time."""
    x = R.standard_normal(4)
    hessian = st.hessian(half_square)
    for _ in range(3):
        hessian(x)
    assert second_order.hessian_guard(half_square, 0) is not None
    first = hessian(x)
    np.testing.assert_array_equal(first, np.eye(4))
    first[:] = 7.0
    np.testing.assert_array_equal(hessian(x), np.eye(4))
    assert hessian(x).flags.writeable


def test_other_shapes_dtypes_and_ints_after_the_guard_take_the_full_path():
    hessian = st.hessian(scaled)
    for shape, dtype, k in [((5,), np.float64, 2), ((3,), np.float64, 2), ((5,), np.float32, 2),
                            ((5,), np.float64, 3), ((2, 2), np.float64, 2),
                            ((5,), np.float64, 2)]:
        x = R.standard_normal(shape).astype(dtype)
        expected = full_path_hessian(scaled, x, k)
        for _ in range(3):
            got = hessian(x, k)
            assert got.dtype == dtype and got.shape == shape + shape
            np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-13)


def test_a_rebound_global_is_read_again():
    x = R.standard_normal(3)
    hessian = st.hessian(p.reads_a_global)
    for _ in range(3):                                       # SCALE * sum(x**2): H = 2 SCALE I
        np.testing.assert_allclose(hessian(x), 4.0 * np.eye(3))
    p.SCALE = 3.0
    try:
        np.testing.assert_allclose(hessian(x), 6.0 * np.eye(3))
    finally:
        p.SCALE = 2.0


def test_a_rebound_helper_after_the_guard_is_built_again():
    x, w = R.standard_normal((2, 3)), R.standard_normal((3, 3))
    hessian = st.hessian(p.calls_a_helper)
    for _ in range(3):
        hessian(x, w)
    assert second_order.hessian_guard(p.calls_a_helper, 0) is not None
    original = p.helper
    p.helper = p.other_helper
    try:
        got = hessian(x, w)                                  # sin where tanh was
        v = R.standard_normal((2, 3))
        expected = (st.grad(p.calls_a_helper)(x + 1e-6 * v, w)
                    - st.grad(p.calls_a_helper)(x - 1e-6 * v, w)) / 2e-6
        np.testing.assert_allclose(np.tensordot(got, v, axes=2), expected, rtol=1e-5, atol=1e-6)
    finally:
        p.helper = original


def rosenbrock_and_aux(x):
    return rosenbrock(x), x[0]


@pytest.mark.parametrize("fn, options, wrt", [(rosenbrock, {"optimize": False}, 0),
                                              (rosenbrock, {}, (0,)),
                                              (rosenbrock_and_aux, {"has_aux": True}, 0)])
def test_no_guard_where_the_short_path_does_not_apply(fn, options, wrt):
    """Not optimised, several selected arguments (a tuple of blocks), an aux output."""
    st.clear_cache()
    hessian = st.hessian(fn, wrt, **options)
    x = R.standard_normal(5)
    for _ in range(3):
        got = hessian(x)
        if "has_aux" in options:                             # (hessian, aux)
            got = got[0]
        if isinstance(wrt, tuple):                           # rows of blocks
            got = got[0][0]
        np.testing.assert_allclose(got, numeric_hessian(rosenbrock, x), rtol=1e-5, atol=1e-6)
    assert second_order.hessian_guard(fn, wrt) is None


def test_errors_on_the_short_path_read_as_on_the_full_path():
    hessian = st.hessian(rosenbrock)
    x = R.standard_normal(5)
    for _ in range(3):
        hessian(x)
    with pytest.raises(st.UsageError):
        hessian(x, 1)
    with pytest.raises(TypeError, match="keyword"):
        hessian(x, y=2)

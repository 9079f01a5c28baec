"""Tests for runtime.scans.diff_grad: the transpose of np.diff, written into one array."""

import numpy as np
import pytest

from srctrans.runtime.scans import diff_grad

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _padded(g, axis, n):
    """The transpose as first written: ``-np.diff`` of ``g`` padded with a zero at each end."""
    for _ in range(n):
        padding = [(0, 0)] * g.ndim
        padding[axis] = (1, 1)
        g = -np.diff(np.pad(g, padding), axis=axis)
    return g


@pytest.mark.parametrize("shape, n, axis", [((9, 3), 1, 0), ((9, 3), 2, 0), ((4, 5), 1, -1),
                                            ((4, 5), 3, 1), ((7,), 1, 0), ((3, 1, 4), 1, 1),
                                            ((2, 6, 3), 2, 1), ((1, 3), 1, 0), ((2, 3), 2, 0)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("strided", [False, True])
def test_diff_grad_is_the_padded_differences_transpose(shape, n, axis, dtype, strided, check_vjp):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape)
    out_shape = np.diff(a, n, axis).shape
    # strided: every 8th column of a wider array (a layout np.negative(out=) gets wrong in 2.4)
    g = rng.standard_normal(out_shape[:-1] + (8 * out_shape[-1],))[..., ::8] if strided else \
        rng.standard_normal(out_shape)
    g = g.astype(dtype)
    got = diff_grad(g, a, n, axis)
    assert got.dtype == dtype and got.shape == a.shape
    np.testing.assert_array_equal(got, _padded(g, axis % a.ndim, n))
    if dtype == np.float64 and a.size:
        check_vjp(lambda x: np.diff(x, n, axis), lambda gg, x: diff_grad(gg, x, n, axis),
                  [a], 0, rng)

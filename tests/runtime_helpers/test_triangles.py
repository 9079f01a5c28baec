"""Tests for the cotangents of a diagonal and of a lower triangle (runtime.scans,
runtime.linalg): the values NumPy's own operations give, on their short paths too."""

import numpy as np
import pytest

from srctrans import runtime


@pytest.mark.parametrize("shape", [(6, 6), (3, 5), (5, 3), (1, 4), (4, 1)])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (-2, -1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_matrix_diagonals_cotangent_is_written_where_np_fill_diagonal_writes(shape, axes,
                                                                             dtype):
    """runtime.diagonal_grad's short path for a float matrix's own diagonal (np.diag(L) of a
    Cholesky factor) puts g where np.fill_diagonal does, tall and wide, in their dtype."""
    rng = np.random.default_rng(3)
    a, g = rng.random(shape).astype(dtype), rng.random(min(shape)).astype(dtype)
    want = np.zeros(shape, dtype)
    np.fill_diagonal(want, g)
    got = runtime.diagonal_grad(g, a, 0, *axes)
    assert got.dtype == dtype and np.array_equal(got, want)
    assert np.array_equal(runtime.diag_grad(g, a), want)


@pytest.mark.parametrize("x", [
    np.array([[1.0, -2.0], [3.0, 4.0]]),
    np.array([[1.0, np.inf], [2.0, 3.0]]),            # inf above the diagonal: no NaN
    np.array([[np.nan, 1.0], [2.0, 3.0]]),
    np.array([[1e200, 0.0], [2.0, 3.0]]),             # squares overflow: the exact path
    np.arange(18.0).reshape(2, 3, 3),
])
def test_the_halved_lower_triangle_is_the_masks_in_every_case(x):
    """rt.tril_halved multiplies by a mask when every entry is finite, and takes np.where
    otherwise: the same values (an infinite entry above the diagonal gives 0, not NaN)."""
    want = np.tril(np.where(np.isnan(x), np.nan, x))
    want = want - 0.5 * want * np.eye(x.shape[-1])
    np.testing.assert_array_equal(runtime.tril_halved(x), want)

"""Guards that no test noticed (issue 36): each test fails when the check it names is
removed (each was verified by removing it)."""

import os
import stat

import numpy as np
import pytest

import srctrans as st
from programs import guarded

X = np.array([0.5, -1.0, 2.0])


def test_the_fused_gradient_keeps_what_a_later_call_needs():
    """Without the del pass sparing the names it must keep, the second call of the fused
    gradient raised UnboundLocalError ('_exp')."""
    gradient = st.grad(guarded.exp_sum)
    for _ in range(4):
        np.testing.assert_allclose(gradient(X), np.exp(X))


def test_sorting_a_2d_array_in_place_sorts_each_row():
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    order = np.argsort(x, axis=-1)
    want = np.zeros_like(x)
    np.put_along_axis(want, order, w, axis=-1)       # each entry gets the weight of its rank
    np.testing.assert_allclose(st.grad(guarded.sorted_rows)(x, w), want)
    st.check_grads(guarded.sorted_rows, (x, w), order=2)


def test_booleans_read_from_a_mask_are_not_folded_as_floats():
    """x * a + x * b with a and b booleans: 2x where both are True, never a logical or."""
    mask = np.array([[True, False, True], [True, True, False]])
    gradient = st.grad(guarded.mask_entries)
    for _ in range(3):                                 # generic, fused, short path
        np.testing.assert_allclose(gradient(X, mask), [2.0, 1.0, 1.0])


def test_a_rebound_callee_after_warm_up_gives_the_new_derivative(monkeypatch):
    gradient = st.grad(guarded.calls_a_helper)
    for _ in range(3):                                 # generic, specialised, short path
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
    monkeypatch.setattr(guarded, "_helper", _tanh)
    np.testing.assert_allclose(gradient(X), (1 - np.tanh(X) ** 2) * X + np.tanh(X))
    monkeypatch.undo()
    for _ in range(3):
        np.testing.assert_allclose(gradient(X), np.cos(X) * X + np.sin(X))
    monkeypatch.setattr(guarded, "_activation", _tanh)      # the helper's callee, rebound
    np.testing.assert_allclose(gradient(X), (1 - np.tanh(X) ** 2) * X + np.tanh(X))


def _tanh(x):
    return np.tanh(x)


@pytest.mark.skipif(os.name != "posix", reason="modes are POSIX's")
def test_a_cache_directory_its_group_may_write_is_not_used(tmp_path, monkeypatch):
    from srctrans.persist import directory
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o770)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o770
    monkeypatch.setattr(directory, "_checked", {})
    monkeypatch.setenv("SRCTRANS_CACHE_DIR", str(folder))
    with pytest.warns(RuntimeWarning, match="others may read or write it"):
        assert directory.location() is None


def test_zeros_and_ones_follow_the_dask_operand_beside_a_numpy_one():
    da = pytest.importorskip("dask.array")
    from srctrans.runtime import foreign
    x = np.ones((2, 3))
    y = da.from_array(np.arange(3.0), chunks=3)
    for make in (foreign.zeros_for, foreign.ones_for):
        made = make((3,), np.float64, x[0], y)
        assert isinstance(made, da.Array), make.__name__
    g = st.grad(lambda_free, wrt=1)(x, y)
    assert isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(), x[0])


def lambda_free(x, y):
    return np.sum(x[0] * y)

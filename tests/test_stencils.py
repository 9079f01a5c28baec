"""np.gradient, differentiated as runtime/stencils.py computes it: the same values as NumPy's,
and derivatives in the array and the spacings, in both modes and at second order."""

import numpy as np
import pytest

import srctrans as st
from srctrans.runtime import stencils
from programs import stencils as programs

RNG = np.random.default_rng(11)


def _coordinates(n):
    return np.cumsum(RNG.uniform(0.3, 1.0, n))


@pytest.mark.parametrize("args, kwargs", [
    ((RNG.standard_normal(6),), {}),
    ((RNG.standard_normal(6), 0.3), {"edge_order": 2}),
    ((RNG.standard_normal((4, 5)),), {"axis": 1}),
    ((RNG.standard_normal((4, 5)), 0.2, 0.7), {}),
    ((RNG.standard_normal((4, 5)), _coordinates(4), _coordinates(5)), {"edge_order": 2}),
    ((RNG.standard_normal((4, 5, 3)), _coordinates(5)), {"axis": -2}),
    ((RNG.standard_normal((4, 5, 3)),), {"axis": (0, 2), "edge_order": 2}),
    ((np.arange(6),), {}),
    ((RNG.standard_normal(5).astype(np.float32), np.float32(0.5)), {}),
])
def test_the_equivalent_computes_numpys_values(args, kwargs):
    expected, got = np.gradient(*args, **kwargs), stencils.gradient(*args, **kwargs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("shape, axis", [((3,), 0), ((9,), -1), ((4, 5), 1), ((4, 5), -2),
                                         ((3, 4, 5), 1), ((2, 3, 4), 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_a_uniform_grid_gives_numpys_values_bit_for_bit_and_the_transpose(shape, axis, dtype,
                                                                         edge_order):
    """rt.uniform_gradient computes a NumPy float array with np.gradient's operations in
    their order (not np.gradient itself): the same bits; rt.uniform_gradient_grad is its
    transpose, <D f, g> = <f, D^T g>."""
    from srctrans import runtime as rt
    f = RNG.standard_normal(shape).astype(dtype)
    if dtype is np.complex128:
        f = f + 1j * RNG.standard_normal(shape)
    if shape[axis] < edge_order + 1:
        pytest.skip("too short for this edge order")
    for h in (1.0, 0.3, 2, np.float32(0.7), np.float64(1.7)):
        got = rt.uniform_gradient(f, h, axis, edge_order)
        want = np.gradient(f, h, axis=axis, edge_order=edge_order)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        g = RNG.standard_normal(shape).astype(got.dtype)
        back = rt.uniform_gradient_grad(g, h, axis, edge_order)
        assert back.shape == f.shape
        # (NumPy's coefficients of a float32 h are float32s; the sums may cancel)
        tolerance = 1e-5 if dtype is np.float32 or type(h) is np.float32 else 1e-12
        np.testing.assert_allclose(np.sum(got * g), np.sum(f * back), rtol=0,
                                   atol=tolerance * np.sum(np.abs(got * g)))


@pytest.mark.parametrize("fn, args", [
    (programs.sum_of_squares, (RNG.standard_normal(7),)),
    (programs.along_axis, (RNG.standard_normal((3, 6)),)),
    (programs.second_order_edges, (RNG.standard_normal(6), 0.4)),
    (programs.every_axis, (RNG.standard_normal((4, 5)),)),
    (programs.coordinates, (RNG.standard_normal((4, 5)), _coordinates(4), _coordinates(5))),
    (programs.negative_axes, (RNG.standard_normal((5, 4, 2)), _coordinates(4))),
    (programs.positional_spacing_per_axis, (RNG.standard_normal((4, 3)), _coordinates(4))),
    (programs.velocity_of_a_trajectory, (RNG.standard_normal((8, 3)), _coordinates(8))),
], ids=lambda value: getattr(value, "__name__", ""))
def test_derivatives_in_the_array_and_the_spacings_to_second_order(fn, args):
    st.check_grads(fn, args, order=2, rtol=1e-4, atol=1e-6)


def test_the_gradient_of_a_uniform_stencil_is_its_transpose():
    """The cotangent of f is the transposed stencil applied to the output's cotangent,
    written out by hand for edge_order 1."""
    f = RNG.standard_normal(9)
    w = 2 * np.gradient(f)                       # d sum(g ** 2) / d g
    expected = np.zeros_like(f)
    expected[:-2] -= w[1:-1] / 2
    expected[2:] += w[1:-1] / 2
    expected[[0, 1]] += [-w[0], w[0]]
    expected[[-2, -1]] += [-w[-1], w[-1]]
    for _ in range(3):                           # generic, specialised, fused
        np.testing.assert_allclose(st.grad(programs.sum_of_squares)(f), expected, rtol=1e-12)


@pytest.mark.parametrize("fn, args", [
    (programs.sum_of_squares, (RNG.standard_normal(7),)),
    (programs.along_axis, (RNG.standard_normal((3, 6)),)),
    (programs.second_order_edges, (RNG.standard_normal(6), 0.4)),
], ids=lambda value: getattr(value, "__name__", ""))
def test_one_axis_of_a_uniform_grid_is_differentiated_by_its_rule(fn, args):
    """Along one axis, with a number or no spacing, np.gradient is NumPy's own call, and the
    derivative transposes its stencil (rt.uniform_gradient_grad): no slices of a stencil
    written out, differentiated one by one."""
    source = st.source(fn, args=args)
    assert "rt.uniform_gradient_grad(" in source


def test_float32_stays_float32():
    f = RNG.standard_normal(6).astype(np.float32)
    g = st.grad(programs.second_order_edges)(f, np.float32(0.5))
    assert g.dtype == np.float32
    out, tangent = st.jvp(programs.second_order_edges, (f, np.float32(0.5)), (np.ones_like(f), None))
    assert np.asarray(tangent).dtype == np.float32


def test_numpys_errors_are_raised_as_numpy_raises_them():
    with pytest.raises(ValueError, match="at least \\(edge_order \\+ 1\\) elements"):
        st.grad(programs.second_order_edges)(np.ones(2), 1.0)
    with pytest.raises(ValueError, match="distances must match"):
        st.grad(programs.negative_axes)(np.ones((3, 4, 2)), np.arange(3.0))


def test_the_rule_table_lists_it():
    assert "`np.gradient`: `runtime.stencils.gradient`" in (
        __import__("pathlib").Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()


def test_an_array_of_another_library_stays_one():
    """The gradient and the JVP of np.gradient of a duck array are duck arrays (nothing is
    converted to NumPy on the way: found by the fuzzer, seed 20261127201)."""
    from duck_arrays import Duck, unwrap
    f = RNG.standard_normal(6)
    g = st.grad(programs.second_order_edges)(Duck(f), 0.4)
    assert isinstance(g, Duck)
    np.testing.assert_allclose(unwrap(g), st.grad(programs.second_order_edges)(f, 0.4))
    _, tangent = st.jvp(programs.sum_of_squares, (Duck(f),), (Duck(np.ones(6)),))
    assert isinstance(tangent, Duck) or np.ndim(tangent) == 0

"""In a fused gradient specialised on shapes, ``np.size(x)`` and ``np.ndim(x)`` of a name of
known shape are the ints they give (optimise/specialise.fold_shape_counts): the derivatives are
the same, and a call of other shapes gets its own build, with its own ints."""

import numpy as np
import pytest

import srctrans as st

R = np.random.default_rng(45)


def mean_by_size(x, w):
    scale = np.size(x) * (1.0 + np.ndim(x)) + np.size(w)
    return np.sum(np.tanh(x) * w) / scale


def _fused(f, args):
    """The fused gradient's code, without its comments (which quote the user's lines)."""
    source = st.source(f, args=args)
    return "\n".join(line for line in source[source.index(f"def {f.__name__}_grad("):].splitlines()
                     if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("w", [0.7, np.linspace(0.5, 1.5, 3)], ids=["number", "array"])
def test_sizes_and_ranks_are_the_ints_of_the_call(w):
    gradient = st.grad(mean_by_size)
    for shape in [(3,), (2, 3), (4, 3)]:
        x = R.standard_normal(shape)
        fused = _fused(mean_by_size, (x, w))
        assert "np.size(" not in fused and "np.ndim(" not in fused
        want = st.grad(mean_by_size, optimize=False)(x, w)
        for _ in range(3):                              # generic, specialised, short path
            np.testing.assert_allclose(gradient(x, w), want, rtol=1e-12)
        st.check_grads(mean_by_size, (x, w), order=2)

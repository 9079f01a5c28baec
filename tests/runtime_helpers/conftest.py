"""The finite-difference check every runtime gradient test uses.

A VJP ``vjp(g)`` of ``f`` at ``x`` is right when, for random ``g`` and
``dx``, the inner product ``<vjp(g), dx>`` equals ``<g, J dx>``, and ``J dx``
is approximated by central differences ``(f(x + e dx) - f(x - e dx)) / 2e``.
One inner product checks the whole Jacobian along one random direction.

Tests get the check as the ``check_vjp`` fixture (a fixture rather than an
import so the tests run under any pytest import mode); every test passes its
own seeded ``np.random.default_rng``.
"""

import numpy as np
import pytest

STEP = 1e-6


def assert_vjp_matches_finite_differences(forward, vjp, inputs, wrt, rng,
                                          rtol=1e-6, atol=1e-8):
    """Check ``vjp`` against central differences of ``forward`` in float64.

    Args:
      forward: ``forward(*inputs)`` is the function being differentiated.
      vjp: ``vjp(g, *inputs)`` is the claimed gradient with respect to
        ``inputs[wrt]``.
      inputs: float64 arrays (or floats) at which to differentiate.
      wrt: the index of the input to differentiate with respect to.
      rng: a seeded ``np.random.Generator`` for ``g`` and ``dx``.
    """
    g = rng.standard_normal(np.shape(forward(*inputs)))
    dx = rng.standard_normal(np.shape(inputs[wrt]))

    def moved(sign):
        shifted = list(inputs)
        shifted[wrt] = inputs[wrt] + sign * STEP * dx
        return np.asarray(forward(*shifted), dtype=np.float64)

    directional = (moved(+1) - moved(-1)) / (2 * STEP)
    grad = vjp(g, *inputs)
    assert np.shape(grad) == np.shape(inputs[wrt]), (
        f"gradient has shape {np.shape(grad)}, input has {np.shape(inputs[wrt])}")
    expected = np.sum(g * directional)
    actual = np.sum(np.asarray(grad, dtype=np.float64) * dx)
    assert np.isclose(actual, expected, rtol=rtol, atol=atol), (
        f"<vjp(g), dx> = {actual} but <g, J dx> = {expected}")


@pytest.fixture
def check_vjp():
    return assert_vjp_matches_finite_differences

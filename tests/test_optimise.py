"""The optimisation passes: their examples, and gradients of programs that exercise them."""

import numpy as np
import pytest

import srctrans as st
from programs import scalar_loops as loops


def test_the_adjoint_of_an_overwritten_value_restarts_each_reversed_iteration():
    # t is overwritten before it is read in each step; only the last step's t reaches t * t
    a, x = 0.7, 0.9
    da, dx = st.grad(loops.temporary_read_after_the_loop, wrt=(0, 1), specialize=False)(a, x)
    eps = 1e-6
    f = loops.temporary_read_after_the_loop
    assert da == pytest.approx((f(a + eps, x) - f(a - eps, x)) / (2 * eps), rel=1e-6)
    assert dx == pytest.approx((f(a, x + eps) - f(a, x - eps)) / (2 * eps), rel=1e-6)

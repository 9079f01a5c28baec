"""The derivative of a clip between ``-c`` and ``c`` passes the cotangent where ``|x| <= c``
(optimise/symmetric_clips.py): the same booleans as the two comparisons, so the same gradient,
in the fused gradient; other bounds keep their comparisons."""

import numpy as np
import pytest

import srctrans as st

R = np.random.default_rng(46)


def clipped_residuals(w, X, y, c):
    return np.sum(np.clip(X @ w - y, -c, c) ** 2)


def clipped_by_literals(w, X, y, c):
    return np.sum(np.clip(X @ w - y, -0.5, 0.5) ** 2) * c


def clipped_unevenly(w, X, y, c):
    return np.sum(np.clip(X @ w - y, -c, 2.0 * c) ** 2)


def bound_halved_in_a_loop(w, X, y, c):
    r = X @ w - y
    lo = -c
    total = 0.0
    for _ in range(3):
        c = c * 0.5
        total = total + np.sum(np.clip(r, lo, c) ** 2)
    return total


def _fused(f, args):
    source = st.source(f, args=args)
    return "\n".join(line for line in source[source.index(f"def {f.__name__}_grad("):].splitlines()
                     if not line.lstrip().startswith("#"))


def _args(c=0.6):
    X = R.standard_normal((12, 3))
    y = R.standard_normal(12)
    y[3] = np.nan                                        # a NaN residual: False in both masks
    return R.standard_normal(3) * 0.5, X, y, c


@pytest.mark.parametrize("f, symmetric", [(clipped_residuals, True), (clipped_by_literals, True),
                                          (clipped_unevenly, False),
                                          (bound_halved_in_a_loop, False)],
                         ids=["names", "literals", "uneven", "bound_changing"])
def test_a_symmetric_clips_mask_is_one_comparison_of_the_magnitude(f, symmetric):
    args = _args()
    with np.errstate(invalid="ignore"):
        fused = _fused(f, args)
        assert ("np.abs(" in fused and ">=" not in fused) is symmetric
        want = st.grad(f, optimize=False)(*args)
        for _ in range(3):                                # generic, specialised, short path
            np.testing.assert_array_equal(st.grad(f)(*args), want)
    finite = (args[0], args[1], np.nan_to_num(args[2]), args[3])
    st.check_grads(f, finite, order=2, wrt=(0,))


@pytest.mark.parametrize("c", [0.0, -0.3, -0.0])
def test_bounds_that_pass_nothing_or_a_zero_still_agree(c):
    args = _args(c)
    with np.errstate(invalid="ignore"):
        want = st.grad(clipped_residuals, optimize=False)(*args)
        for _ in range(3):
            np.testing.assert_array_equal(st.grad(clipped_residuals)(*args), want)

"""scipy.linalg, scipy.signal and scipy.stats in user programs: each checked against finite
differences to second order in both modes, and in float32 (the rules one by one are in
test_jvp_rules.py). The factorizations are checked through their solves, as they are used."""

import numpy as np
import pytest

import srctrans as st

pytest.importorskip("scipy")            # the test extra installs SciPy
from programs import scipy_programs as sp   # noqa: E402
from test_jvp_rules import SCIPY_STACKS      # noqa: E402  (SciPy 1.16 takes stacked matrices)

R = np.random.default_rng(17)


def square(*shape):
    return R.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


def positive_definite(*shape):
    m = R.standard_normal(shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


CASES = [
    (sp.gp_negative_log_likelihood, lambda: (R.uniform(-2, 2, 5), R.standard_normal(5),
                                             np.asarray(0.8))),
    (sp.cholesky_upper_unpacked, lambda: (positive_definite(3, 3), R.standard_normal((3, 2)))),
    *([(sp.cholesky_upper_unpacked, lambda: (positive_definite(2, 3, 3), R.standard_normal(3)))]
      if SCIPY_STACKS else []),
    (sp.lu_solve_both_ways, lambda: (R.standard_normal((4, 4)), R.standard_normal((4, 2)))),
    *([(sp.lu_solve_both_ways, lambda: (R.standard_normal((2, 3, 3)),
                                        R.standard_normal((2, 3, 2))))] if SCIPY_STACKS else []),
    (sp.whitened, lambda: (positive_definite(3, 3), R.standard_normal((3, 2)))),
    (sp.structured_solves, lambda: (positive_definite(3, 3), R.standard_normal(3))),
    (sp.inverse_and_determinant, lambda: (square(2, 3, 3) if SCIPY_STACKS else square(3, 3),)),
    (sp.matrix_exponential, lambda: (R.uniform(-0.5, 0.5, (3, 3)), np.asarray(0.7))),
    (sp.matrix_square_root, lambda: (positive_definite(3, 3),)),
    (sp.sylvester, lambda: (square(3, 3), square(2, 2), R.standard_normal((3, 2)))),
    (sp.blurred_image_loss, lambda: (R.standard_normal((5, 6)), R.standard_normal((3, 2)),
                                     R.standard_normal((5, 6)))),
    (sp.regression_negative_log_likelihood, lambda: (
        R.standard_normal(3), np.asarray(0.2), R.standard_normal((6, 3)), R.standard_normal(6))),
    (sp.probit_likelihood, lambda: (R.standard_normal(3), R.standard_normal((6, 3)),
                                    R.integers(0, 2, 6).astype(float))),
    (sp.gaussian_fit, lambda: (R.standard_normal((5, 3)), R.standard_normal(3),
                               positive_definite(3, 3))),
    (sp.count_model, lambda: (R.uniform(-1, 1, 4), np.array([0, 1, 3, 7]))),
    (sp.mixture_weights, lambda: (R.dirichlet([3.0, 3.0, 3.0], 5).T[:2].copy(),
                                  R.uniform(1.5, 3.0, 3))),
    (sp.signed_log_sum, lambda: (R.standard_normal((3, 4)),
                                 R.uniform(0.5, 2.0, (3, 4)) * np.array([1.0, -1.0, 1.0, -1.0]))),
    (sp.beta_gamma, lambda: (R.uniform(0.2, 0.8, 4), R.uniform(1.5, 3.0, 4),
                             R.uniform(1.5, 3.0, 4), np.asarray(1.3))),
]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_second_order_in_both_modes(index):
    fn, build = CASES[index]
    st.check_grads(fn, build(), order=2)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_float32(index):
    fn, build = CASES[index]
    args = tuple(a.astype(np.float32) if a.dtype.kind == "f" else a for a in build())
    wrt = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    grads = st.grad(fn, wrt=wrt)(*args)
    wide = st.grad(fn, wrt=wrt)(*(a.astype(np.float64) if a.dtype.kind == "f" else a
                                  for a in args))
    for g, w in zip(grads, wide):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-2, atol=2e-3)


def test_a_symmetric_solve_reads_one_triangle():
    """assume_a="sym" reads the upper triangle: the lower one gets no gradient, and an entry
    above the diagonal counts for its mirror image too."""
    a, b = square(3, 3), R.standard_normal(3)
    ga = st.grad(sp.symmetric_solve)(a, b)
    assert np.all(np.tril(ga, -1) == 0.0)
    full = st.grad(sp.general_solve)(np.triu(a) + np.triu(a, 1).T, b)
    np.testing.assert_allclose(np.triu(ga, 1), np.triu(full + full.T, 1), rtol=1e-10)
    np.testing.assert_allclose(np.diag(ga), np.diag(full), rtol=1e-10)


def test_overwriting_an_argument_is_refused_at_the_user_s_line():
    with pytest.raises(st.SrcTransError, match="overwrite_a") as raised:
        st.grad(sp.overwritten)(square(3, 3), R.standard_normal(3))
    assert "scipy_programs.py" in str(raised.value)


def test_a_derivative_without_a_closed_form_is_refused_only_when_asked_for():
    x = R.standard_normal(3)
    np.testing.assert_allclose(st.grad(sp.t_cdf_in_df)(x, 3.0),
                               __import__("scipy.stats").stats.t.pdf(x, 3.0), rtol=1e-12)
    for attempt in (lambda: st.grad(sp.t_cdf_in_df, wrt=1)(x, 3.0),
                    lambda: st.jvp(sp.t_cdf_in_df, (x, 3.0), (None, 1.0))):
        with pytest.raises(st.SrcTransError, match="scipy.stats.t.cdf with respect to df"):
            attempt()


def test_a_frozen_distribution_gets_a_clear_error():
    with pytest.raises(st.SrcTransError) as raised:
        st.grad(sp.frozen, wrt=1)(R.standard_normal(3), 1.5)
    assert "scipy_programs.py" in str(raised.value)
    assert "stats.norm.logpdf(x, loc, scale)" in str(raised.value)


def test_distances_in_a_loss_and_another_metric_refused():
    """scipy.spatial.distance in code as people write it (issue 30): cdist and pdist with
    squareform differentiate to second order; a metric without a rule says which exist."""
    from programs import distances
    rng = np.random.default_rng(5)
    A, B, X = rng.standard_normal((3, 2)), rng.standard_normal((4, 2)), rng.standard_normal((4, 3))
    st.check_grads(distances.rbf_weighted, (A, B), order=2, wrt=(0, 1))
    st.check_grads(distances.pair_penalty, (X,), order=2)
    with pytest.raises(st.UnsupportedSyntaxError, match="euclidean"):
        st.grad(distances.city_blocks)(X)


def test_private_methods_of_distributions_are_read_as_the_public_ones():
    x = np.array([-0.7, 0.2, 1.1])
    args = (x, 3.5, 2.5, 1.7)
    st.check_grads(sp.private_methods, args, order=2, rtol=1e-4, atol=1e-6)
    expected = st.grad(lambda_free_normal_logpdf)(x)
    np.testing.assert_allclose(expected, -x)
    model = sp.StudentT(4.0)
    params, xs, y = R.standard_normal(3), R.standard_normal((6, 2)), R.standard_normal(6)
    value, g = st.value_and_grad(model.loglike)(params, xs, y)
    assert value == pytest.approx(model.loglike(params, xs, y), rel=1e-12)
    st.check_grads(model.loglike, (params, xs, y), order=2, wrt=0, rtol=1e-4, atol=1e-6)
    with pytest.raises(st.UnsupportedSyntaxError, match="with respect to df") as raised:
        st.grad(sp.t_cdf_in_df, wrt=1)(x, 3.0)       # no closed form: refused at the user's line
    assert raised.value.location.filename == sp.__file__
    assert raised.value.location.lineno == sp.t_cdf_in_df.__code__.co_firstlineno + 1


def lambda_free_normal_logpdf(x):
    import scipy.stats as stats
    return np.sum(stats.norm._logpdf(x))


def test_the_t_densitys_private_method_is_scipys_formula_and_normal_at_infinite_df():
    """``stats.t._logpdf`` is read as SciPy's own formula (no public method's argument
    checks on every call) and, at ``df = inf``, as the normal density SciPy gives there."""
    import scipy.stats as stats
    x = np.array([-2.5, -0.3, 0.4, 1.7])
    for df in (0.8, 4.0, 40.0, np.inf, np.array([4.0, np.inf, 0.8, 40.0]), np.full(4, np.inf)):
        for _ in range(3):                  # the generic code, then the specialised code
            value, g = st.value_and_grad(sp.t_private_logpdf)(x, df)
            assert value == pytest.approx(np.sum(stats.t._logpdf(x, df)), rel=1e-13)
            expected = np.where(np.isinf(df), -x, -(df + 1) * x / (df + x * x))
            np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_a_number_of_degrees_of_freedom_is_tested_once_a_call():
    """Specialised on a number ``df``, the t density's gradient checks ``math.isinf(df)``
    alone: no count of infinite entries, and no check of a test the shapes settled."""
    x = np.array([-2.5, -0.3, 0.4, 1.7])
    st.clear_cache()            # (calls with an infinite df, which the check sends away)
    g = st.grad(sp.t_private_logpdf)
    for _ in range(3):
        g(x, 4.0)
    spread = st.source(sp.t_private_logpdf, args=(x, 4.0)).split("_spread_grad(")[-1]
    assert "count_nonzero" not in spread and "0 == 0" not in spread
    assert "rt.expect_branch(math.isinf(df), False)" in spread


def t_logpdf_sum(x, df):
    import scipy.stats as stats
    return np.sum(stats.t.logpdf(x, df))


def t_cdf_sum(x, df):
    import scipy.stats as stats
    return np.sum(stats.t.cdf(x, df))


def test_the_t_distribution_at_an_infinite_df_differentiates_as_the_normal():
    """At ``df = inf`` SciPy's t is the normal distribution; its derivatives are the
    normal's there (t's own formulas give ``inf / inf``: NaN), 0 in ``df`` itself."""
    import scipy.stats as stats
    x = np.array([-2.5, -0.3, 0.4, 1.7])
    df = np.array([4.0, np.inf, 0.8, np.inf])
    dx, ddf = st.grad(t_logpdf_sum, wrt=(0, 1))(x, df)
    finite = np.isfinite(df)
    np.testing.assert_allclose(dx, np.where(finite, -(df + 1) * x / (df + x * x), -x), rtol=1e-12)
    assert np.all(np.isfinite(ddf)) and np.all(ddf[~finite] == 0.0)
    h = 1e-6
    numeric = (t_logpdf_sum(x, df + h * finite) - t_logpdf_sum(x, df - h * finite)) / (2 * h)
    assert np.sum(ddf[finite]) == pytest.approx(numeric, rel=1e-6)
    dx = st.grad(t_cdf_sum)(x, df)
    np.testing.assert_allclose(dx, stats.t.pdf(x, df), rtol=1e-12)

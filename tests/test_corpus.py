"""The corpus of code written as published NumPy code is (tests/corpus): srctrans
differentiates each function as written, matches the gradient written by hand beside it to
1e-6, and agrees with finite differences in both modes and at second order."""

import numpy as np
import pytest

import srctrans as st
from corpus import applied, estimators, models
from held_out_cases import HELD_OUT

R = np.random.default_rng(30)


def _close(got, want):
    if isinstance(want, dict):
        assert set(want) <= set(got)
        for key in want:
            _close(got[key], want[key])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def logistic():
    X, y = R.standard_normal((20, 3)), (R.random(20) > 0.5).astype(float)
    model = models.LogisticRegression(l2=0.3)
    w = R.standard_normal(4)
    return model.loss, (w, X, y), 0, model.loss_hand(w, X, y)


def two_layer():
    X, y = R.standard_normal((6, 4)), R.integers(0, 3, 6)
    params = {"W1": R.standard_normal((4, 5)), "b1": R.standard_normal(5) * 0.1,
              "W2": R.standard_normal((5, 3)), "b2": R.standard_normal(3) * 0.1}
    net = models.TwoLayerNet(params, reg=0.05)
    return net.loss, (params, X, y), 0, net.loss_hand(params, X, y)


def textbook_network():
    net = models.Network([3, 4, 2])
    weights = [R.standard_normal((4, 3)), R.standard_normal((2, 4))]
    biases = [R.standard_normal((4, 1)), R.standard_normal((2, 1))]
    data = [(R.standard_normal((3, 1)), R.random((2, 1))) for _ in range(4)]
    return net.cost, (weights, biases, data), (0, 1), net.cost_hand(weights, biases, data)


def rnn_layer():
    N, T, D, H = 2, 4, 3, 5
    args = (R.standard_normal((N, T, D)), R.standard_normal((N, H)), R.standard_normal((D, H)) * 0.5,
            R.standard_normal((H, H)) * 0.5, R.standard_normal(H) * 0.1, R.standard_normal((N, T, H)))
    return models.rnn_loss, args, (0, 1, 2, 3, 4), models.rnn_loss_hand(*args)


def char_rnn():
    V, H = 5, 4
    args = (R.standard_normal((H, V)) * 0.3, R.standard_normal((H, H)) * 0.3,
            R.standard_normal((V, H)) * 0.3, np.zeros((H, 1)), np.zeros((V, 1)),
            [0, 3, 1, 4], [3, 1, 4, 2], R.standard_normal((H, 1)) * 0.1)
    return models.char_rnn_loss, args, (0, 1, 2, 3, 4), models.char_rnn_loss_hand(*args)


def batchnorm():
    x, gamma, beta = R.standard_normal((6, 3)), R.standard_normal(3), R.standard_normal(3)
    dout = R.standard_normal((6, 3))
    hand = models.batchnorm_loss_hand(x, gamma, beta, {"momentum": 0.9}, dout)
    return (models.batchnorm_loss, (x, gamma, beta, {"momentum": 0.9}, dout), (0, 1, 2), hand)


def poisson():
    exog = R.standard_normal((15, 3)) * 0.5
    endog = R.poisson(2.0, 15).astype(float)
    model = models.PoissonModel(endog, exog)
    params = R.standard_normal(3) * 0.3
    return model.loglike, (params,), 0, model.score(params)


def tsne():
    n = 5
    P = R.random((n, n))
    P = P + P.T
    np.fill_diagonal(P, 0.0)
    P /= P.sum()
    Y = R.standard_normal((n, 2))
    return models.tsne_kl, (Y, P), 0, models.tsne_kl_hand(Y, P)


def _labels(n, k, hard):
    if hard:
        return np.eye(k)[R.integers(0, k, n)]
    T = R.random((n, k))
    return T / T.sum(axis=1, keepdims=True) * R.uniform(0.5, 1.5, (n, 1))


def softmax_shifted():
    z, T = R.standard_normal((5, 4)), _labels(5, 4, False)
    return models.softmax_xent_shifted, (z, T), 0, models.softmax_xent_hand(z, T)


def softmax_probs():
    z, T = R.standard_normal((5, 4)), _labels(5, 4, True)
    return models.softmax_xent_probs, (z, T), 0, models.softmax_xent_hand(z, T)


def softmax_logaddexp():
    z, T = R.standard_normal((5, 4)), _labels(5, 4, False)
    return models.softmax_xent_logaddexp, (z, T), 0, models.softmax_xent_hand(z, T)


def rosenbrock():
    x = R.uniform(-1.0, 1.5, 6)
    return models.rosen, (x,), 0, models.rosen_der(x)


def normal_likelihood():
    model = models.NormalModel(R.normal(1.0, 2.0, 30))
    params = np.array([0.8, 0.5])
    return model.loglike, (params,), 0, model.score(params)


def vae():
    x = (R.random((4, 6)) > 0.5).astype(float)
    args = (x, R.standard_normal((4, 6)), R.standard_normal((4, 2)), R.standard_normal((4, 2)) * 0.3)
    return models.vae_loss, args, (1, 2, 3), models.vae_loss_hand(*args)


def damped_clipped():
    X, y, w = R.standard_normal((8, 3)), R.standard_normal(8), R.standard_normal(3)
    clip = 0.7 if R.random() < 2 else -1.0
    r = X @ w - y
    while np.any(np.abs(np.abs(r) - clip) < 1e-3):           # away from the clip's kinks
        y = R.standard_normal(8)
        r = X @ w - y
    return (models.damped_clipped_loss, (w, X, y, clip, 3), 0,
            models.damped_clipped_loss_hand(w, X, y, clip, 3))


def per_example():
    layer = models.Linear(R.standard_normal((2, 3)), R.standard_normal(2))
    X, Y = R.standard_normal((5, 3)), R.standard_normal((5, 2))
    return models.per_example_loss, (layer, X, Y), 0, models.per_example_loss_hand(layer, X, Y)


def lstm_layer():
    N, T, D, H = 2, 3, 3, 2
    args = (R.standard_normal((N, T, D)), R.standard_normal((N, H)),
            R.standard_normal((D, 4 * H)) * 0.5, R.standard_normal((H, 4 * H)) * 0.5,
            R.standard_normal(4 * H) * 0.1, R.standard_normal((N, T, H)))
    return models.lstm_loss, args, (0, 1, 2, 3, 4), models.lstm_loss_hand(*args)


def gmm():
    X, means = R.standard_normal((10, 2)), R.standard_normal((3, 2))
    log_weights = np.log(np.array([0.2, 0.3, 0.5]))
    return (models.gmm_loglik, (means, X, log_weights, 0.8), 0,
            models.gmm_loglik_hand(means, X, log_weights, 0.8))


def kernel_ridge():
    X, Z, y = R.standard_normal((8, 2)), R.standard_normal((4, 2)), R.standard_normal(8)
    alpha = R.standard_normal(4)
    return (models.kernel_ridge_loss, (alpha, X, Z, y, 0.7, 0.1), 0,
            models.kernel_ridge_loss_hand(alpha, X, Z, y, 0.7, 0.1))


def huber():
    X, w = R.standard_normal((12, 3)), R.standard_normal(3)
    y = X @ w + R.standard_normal(12) * 2.0
    r = X @ w - y
    while np.any(np.abs(np.abs(r) - 1.2) < 1e-3):              # away from the kinks
        y = y + 0.01
        r = X @ w - y
    return estimators.huber_loss, (w, X, y, 1.2), 0, estimators.huber_loss_hand(w, X, y, 1.2)


def gaussian_process():
    gp = estimators.GaussianProcess(R.standard_normal((6, 2)), R.standard_normal(6))
    theta = np.array([0.1, -0.2, -1.0])
    return gp.nll, (theta,), 0, gp.nll_hand(theta)


def conv1d():
    args = (R.standard_normal((2, 3, 7)), R.standard_normal((2, 3, 3)), R.standard_normal(2),
            R.standard_normal((2, 2, 3)))
    return estimators.conv1d_loss, args, (0, 1, 2), estimators.conv1d_loss_hand(*args)


def layernorm():
    args = (R.standard_normal((4, 5)), R.standard_normal(5), R.standard_normal(5), {"eps": 1e-5},
            R.standard_normal((4, 5)))
    return estimators.layernorm_loss, args, (0, 1, 2), estimators.layernorm_loss_hand(*args)


def attention():
    layer = estimators.Attention()
    args = (R.standard_normal((3, 2)), R.standard_normal((3, 2)), R.standard_normal((3, 2)),
            R.standard_normal((4, 3)), R.standard_normal((4, 2)))
    return layer.loss, args, (0, 1, 2), layer.loss_hand(*args)


def gru():
    args = (R.standard_normal((4, 3)), R.standard_normal(2) * 0.5, R.standard_normal((3, 2)),
            R.standard_normal((2, 2)), R.standard_normal((3, 2)), R.standard_normal((2, 2)))
    return estimators.gru_loss, args, (0, 1, 2, 3, 4, 5), estimators.gru_loss_hand(*args)


def total_variation():
    f = np.sin(np.linspace(0, 3, 9)) + R.standard_normal(9) * 0.1
    u = f + R.standard_normal(9) * 0.05
    return estimators.tv_energy, (u, f, 0.3), 0, estimators.tv_energy_hand(u, f, 0.3)


def skipgram():
    emb = {"in": R.standard_normal((6, 3)) * 0.5, "out": R.standard_normal((6, 3)) * 0.5}
    return (estimators.skipgram_loss, (emb, 2, 4, [0, 5, 1]), 0,
            estimators.skipgram_loss_hand(emb, 2, 4, [0, 5, 1]))


def factorisation():
    U, V = R.standard_normal((4, 2)), R.standard_normal((5, 2))
    ratings = [(0, 1, 4.0), (2, 3, 1.0), (0, 4, 3.5), (3, 1, 2.0), (1, 0, 5.0)]
    return (estimators.mf_loss, (U, V, ratings, 0.05), (0, 1),
            estimators.mf_loss_hand(U, V, ratings, 0.05))


def t_regression():
    exog = R.standard_normal((10, 2))
    model = estimators.TRegression(exog @ np.array([0.5, -1.0]) + R.standard_t(5, 10), exog)
    params = np.array([0.4, -0.8, 0.1])
    return model.loglike, (params,), 0, model.score(params)


def gaussian_kl():
    q = {"mu": R.standard_normal(3), "log_sigma": R.standard_normal(3) * 0.3}
    p = {"mu": R.standard_normal(3), "log_sigma": R.standard_normal(3) * 0.3}
    return estimators.gaussian_kl, (q, p), 0, estimators.gaussian_kl_hand(q, p)


def glm():
    X, exposure = R.standard_normal((10, 3)) * 0.5, R.uniform(0.5, 2.0, 10)
    y, params = R.poisson(2.0, 10).astype(float), R.standard_normal(3) * 0.3
    return (applied.glm_loglike, (params, X, y, exposure), 0,
            applied.glm_loglike_hand(params, X, y, exposure))


def ridge_copied_params():
    p = {"w": R.standard_normal(3), "scale": 1.3, "b": 0.2, "name": "ridge"}
    X, y = R.standard_normal((7, 3)), R.standard_normal(7)
    return applied.ridge_loss, (p, X, y), 0, applied.ridge_loss_hand(p, X, y)


def multinomial():
    W, X, labels = R.standard_normal((3, 4)), R.standard_normal((8, 3)), R.integers(0, 4, 8)
    return (applied.multinomial_nll, (W, X, labels), 0,
            applied.multinomial_nll_hand(W, X, labels))


def cosine():
    A, B = R.standard_normal((5, 3)), R.standard_normal((5, 3))
    return applied.cosine_loss, (A, B), 0, applied.cosine_loss_hand(A, B)


def smoothing():
    y = np.cumsum(R.standard_normal(12))
    return applied.smoothing_sse, (0.4, y), 0, applied.smoothing_sse_hand(0.4, y)


def black_scholes():
    S, sigma = R.uniform(80, 120, 4), R.uniform(0.1, 0.4, 4)
    return (applied.call_prices, (S, sigma, 100.0, 0.5, 0.02), (0, 1),
            applied.call_prices_hand(S, sigma, 100.0, 0.5, 0.02))


def logistic_growth():
    data = 1.0 / (1.0 + 9.0 * np.exp(-0.8 * np.arange(10) * 0.1 * 5)) + R.normal(0, 0.01, 10)
    params = np.array([0.9, 1.1])
    return (applied.growth_misfit, (params, data, 0.5), 0,
            applied.growth_misfit_hand(params, data, 0.5))


def lennard_jones():
    positions = np.array([[0.0, 0.0, 0.0], [1.1, 0.1, 0.0], [0.2, 1.2, 0.1], [1.0, 1.0, 0.9]])
    positions = positions + R.normal(0, 0.02, positions.shape)
    return applied.lj_energy, (positions,), 0, applied.lj_energy_hand(positions)


def hyperparameter():
    X, y = R.standard_normal((12, 3)), R.standard_normal(12)
    Xv, yv = R.standard_normal((6, 3)), R.standard_normal(6)
    return (applied.validation_loss, (-0.5, X, y, Xv, yv), 0,
            applied.validation_loss_hand(-0.5, X, y, Xv, yv))


def temperature():
    logits, labels = R.standard_normal((9, 4)) * 2.0, R.integers(0, 4, 9)
    return (applied.temperature_nll, (0.3, logits, labels), 0,
            applied.temperature_nll_hand(0.3, logits, labels))


CASES = [logistic, two_layer, textbook_network, rnn_layer, char_rnn, batchnorm, poisson, tsne,
         softmax_shifted, softmax_probs, softmax_logaddexp, rosenbrock, normal_likelihood, vae,
         damped_clipped, per_example, lstm_layer, gmm, kernel_ridge, huber, gaussian_process,
         conv1d, layernorm, attention, gru, total_variation, skipgram, factorisation,
         t_regression, gaussian_kl, glm, ridge_copied_params, multinomial, cosine, smoothing,
         black_scholes, logistic_growth, lennard_jones, hyperparameter, temperature]


@pytest.mark.parametrize("case", CASES + HELD_OUT, ids=[c.__name__ for c in CASES + HELD_OUT])
def test_matches_the_hand_gradient(case):
    fn, args, wrt, hand = case()
    for _ in range(3):                     # generic, specialised, short path
        _close(st.grad(fn, wrt=wrt)(*args), hand)


def test_a_layer_s_running_statistics_stay_in_the_caller_s_dict_as_they_were():
    """Computing a derivative leaves the caller's arguments as they were (docs/syntax.md):
    the batch-norm layer writes its running statistics into its own copy of the dict."""
    fn, args, wrt, _ = batchnorm()
    before = dict(args[3])
    st.grad(fn, wrt=wrt)(*args)
    assert args[3] == before
    with pytest.raises(st.UnsupportedSyntaxError, match="used as a dict"):
        st.grad(fn, wrt=wrt)(*args[:3], _NotADict(), args[4])


class _NotADict:
    def get(self, key, default=None):
        return default


def test_the_fused_gradient_copies_nothing_it_does_not_read():
    """The batch-norm layer's copy of its dict and of its momentum (which only the running
    statistics read) are left out of the fused gradient: the forward pass's copy of an
    entry is annotated with the helper it calls, which dead-code elimination needs."""
    fn, args, wrt, hand = batchnorm()
    gradient = st.grad(fn, wrt=wrt)
    for _ in range(3):
        _close(gradient(*args), hand)
    fused = st.source(fn, args=args, wrt=wrt).split("def batchnorm_loss_grad(")[1]
    assert "rt.copied(" not in fused and "rt.dict_copy(" not in fused


@pytest.mark.parametrize("case", CASES + HELD_OUT, ids=[c.__name__ for c in CASES + HELD_OUT])
def test_agrees_with_finite_differences_in_both_modes_to_second_order(case):
    fn, args, wrt, _ = case()
    st.check_grads(fn, args, order=2, wrt=wrt if isinstance(wrt, tuple) else (wrt,),
                   rtol=1e-4, atol=1e-6)




def test_a_layer_made_inside_from_its_weights_is_a_record_of_them():
    """``Linear(W, b)`` made inside: its ``__init__`` only stores its parameters, so the object
    is a record of them, and the gradients in W and b are the layer's attributes'."""
    W, b = R.standard_normal((2, 3)), R.standard_normal(2)
    X, Y = R.standard_normal((5, 3)), R.standard_normal((5, 2))
    hand = models.per_example_loss_hand(models.Linear(W, b), X, Y)
    for _ in range(3):
        dW, db = st.grad(models.per_example_loss_building_its_layer, wrt=(0, 1))(W, b, X, Y)
        _close((dW, db), (hand["W"], hand["b"]))
    st.check_grads(models.per_example_loss_building_its_layer, (W, b, X, Y), order=2, wrt=(0, 1))

"""Programs written the way published NumPy code is written (written here, copied from
nowhere): model classes with docstrings and input validation, parameters in dicts and
attributes, per-example loops over lists of pairs, layers filling preallocated arrays,
recurrent loops with dicts of states, statistical models' likelihood methods. Each has a
gradient written by hand beside it (``*_hand``), right for every input it accepts."""

import numpy as np
from scipy.spatial.distance import cdist
from scipy.special import logsumexp


# -- a logistic regression model class ------------------------------------------------------

class LogisticRegression:
    """Binary logistic regression with an L2 penalty.

    Parameters
    ----------
    l2 : float
        Strength of the penalty on the weights (not the intercept).
    """

    def __init__(self, l2=0.1):
        if l2 < 0:
            raise ValueError("l2 must be non-negative")
        self.l2 = l2

    def _check(self, X, y):
        """Validate the design matrix and the labels.

        Raises ValueError when the shapes do not match.
        """
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim}-D")
        if X.shape[0] != y.shape[0]:
            raise ValueError("X and y disagree on the number of samples")

    def loss(self, w, X, y):
        """Mean negative log-likelihood plus the penalty.

        The last entry of ``w`` is the intercept.
        """
        self._check(X, y)
        z = X @ w[:-1] + w[-1]
        # log(1 + exp(-z)) for y = 1 and log(1 + exp(z)) for y = 0, computed stably
        nll = np.mean(np.logaddexp(0.0, z) - y * z)
        return nll + 0.5 * self.l2 * np.sum(w[:-1] ** 2)

    def loss_hand(self, w, X, y):
        z = X @ w[:-1] + w[-1]
        p = 1.0 / (1.0 + np.exp(-z))
        r = (p - y) / X.shape[0]
        g = np.empty_like(w)
        g[:-1] = X.T @ r + self.l2 * w[:-1]
        g[-1] = np.sum(r)
        return g


# -- a two-layer network with parameters in a dict -------------------------------------------

class TwoLayerNet:
    """A fully connected network: affine, ReLU, affine, softmax cross-entropy."""

    def __init__(self, params, reg=0.0):
        self.params = params
        self.reg = reg

    def loss(self, params, X, y):
        """Softmax cross-entropy of the scores, averaged over the batch, plus L2 on W1, W2."""
        W1, b1 = params["W1"], params["b1"]
        W2, b2 = params["W2"], params["b2"]
        N = X.shape[0]
        hidden = np.maximum(0, X @ W1 + b1)
        scores = hidden @ W2 + b2
        scores = scores - np.max(scores, axis=1, keepdims=True)
        log_probs = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
        data_loss = -np.sum(log_probs[np.arange(N), y]) / N
        reg_loss = 0.5 * self.reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        return data_loss + reg_loss

    def loss_hand(self, params, X, y):
        W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
        N = X.shape[0]
        pre = X @ W1 + b1
        hidden = np.maximum(0, pre)
        scores = hidden @ W2 + b2
        probs = np.exp(scores - np.max(scores, axis=1, keepdims=True))
        probs /= np.sum(probs, axis=1, keepdims=True)
        dscores = probs.copy()
        dscores[np.arange(N), y] -= 1
        dscores /= N
        grads = {"W2": hidden.T @ dscores + self.reg * W2, "b2": np.sum(dscores, axis=0)}
        dhidden = dscores @ W2.T
        dhidden[pre <= 0] = 0
        grads["W1"] = X.T @ dhidden + self.reg * W1
        grads["b1"] = np.sum(dhidden, axis=0)
        return grads


# -- a cost over a list of (x, y) examples, methods of self ------------------------------------

class Network:
    """A sigmoid network evaluated example by example, as textbooks write it."""

    def __init__(self, sizes):
        self.sizes = sizes

    def feedforward(self, weights, biases, a):
        """The output of the network for the input column ``a``."""
        for W, b in zip(weights, biases):
            a = self.sigmoid(W @ a + b)
        return a

    def sigmoid(self, z):
        return 1.0 / (1.0 + np.exp(-z))

    def cost(self, weights, biases, data):
        """Half the summed squared error over the examples ``data``, a list of ``(x, y)``."""
        total = 0.0
        for x, y in data:
            out = self.feedforward(weights, biases, x)
            total += 0.5 * np.sum((out - y) ** 2)
        return total

    def cost_hand(self, weights, biases, data):
        gW = [np.zeros_like(W) for W in weights]
        gb = [np.zeros_like(b) for b in biases]
        for x, y in data:
            activations, a = [x], x
            for W, b in zip(weights, biases):
                a = self.sigmoid(W @ a + b)
                activations.append(a)
            delta = (activations[-1] - y) * activations[-1] * (1 - activations[-1])
            for layer in range(len(weights) - 1, -1, -1):
                gW[layer] += delta @ activations[layer].T
                gb[layer] += delta
                if layer:
                    a = activations[layer]
                    delta = (weights[layer].T @ delta) * a * (1 - a)
        return gW, gb


# -- a recurrent layer filling an (N, T, H) array --------------------------------------------

def rnn_forward(x, h0, Wx, Wh, b):
    """Run a vanilla RNN over a whole sequence.

    Inputs: x of shape (N, T, D), h0 (N, H), Wx (D, H), Wh (H, H), b (H,).
    Returns the hidden states, shape (N, T, H).
    """
    N, T, _ = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    prev = h0
    for t in range(T):
        prev = np.tanh(prev @ Wh + x[:, t, :] @ Wx + b)
        h[:, t, :] = prev
    return h


def rnn_loss(x, h0, Wx, Wh, b, dout):
    return np.sum(rnn_forward(x, h0, Wx, Wh, b) * dout)


def rnn_loss_hand(x, h0, Wx, Wh, b, dout):
    N, T, _ = x.shape
    hs, prev = [], h0
    for t in range(T):
        prev = np.tanh(prev @ Wh + x[:, t, :] @ Wx + b)
        hs.append(prev)
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dprev = np.zeros_like(h0)
    for t in reversed(range(T)):
        dpre = (dout[:, t, :] + dprev) * (1 - hs[t] ** 2)
        before = hs[t - 1] if t else h0
        dx[:, t, :] = dpre @ Wx.T
        dWx += x[:, t, :].T @ dpre
        dWh += before.T @ dpre
        db += dpre.sum(axis=0)
        dprev = dpre @ Wh.T
    return dx, dprev, dWx, dWh, db


# -- a character-level RNN with dicts of per-step states -------------------------------------

def char_rnn_loss(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """Cross-entropy of the next character at every step; states kept in dicts by step."""
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0.0
    vocab = Wxh.shape[1]
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(Wxh @ xs[t] + Whh @ hs[t - 1] + bh)
        ys[t] = Why @ hs[t] + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def char_rnn_loss_hand(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    xs, hs, ps = {}, {}, {}
    hs[-1] = np.copy(hprev)
    vocab = Wxh.shape[1]
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(Wxh @ xs[t] + Whh @ hs[t - 1] + bh)
        y = Why @ hs[t] + by
        ps[t] = np.exp(y) / np.sum(np.exp(y))
    dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
    dbh, dby = np.zeros_like(bh), np.zeros_like(by)
    dhnext = np.zeros_like(hs[0])
    for t in reversed(range(len(inputs))):
        dy = np.copy(ps[t])
        dy[targets[t]] -= 1
        dWhy += dy @ hs[t].T
        dby += dy
        dh = Why.T @ dy + dhnext
        dhraw = (1 - hs[t] * hs[t]) * dh
        dbh += dhraw
        dWxh += dhraw @ xs[t].T
        dWhh += dhraw @ hs[t - 1].T
        dhnext = Whh.T @ dhraw
    return dWxh, dWhh, dWhy, dbh, dby


# -- a batch-norm layer with running statistics in a dict -------------------------------------

def batchnorm_loss(x, gamma, beta, bn_param, dout):
    """Training-mode batch normalisation; updates the running mean and variance in
    ``bn_param`` as layers do, and returns <out, dout>."""
    momentum = bn_param.get("momentum", 0.9)
    eps = bn_param.get("eps", 1e-5)
    D = x.shape[1]
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    xhat = (x - mu) / np.sqrt(var + eps)
    out = gamma * xhat + beta
    running_mean = momentum * running_mean + (1 - momentum) * mu
    running_var = momentum * running_var + (1 - momentum) * var
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return np.sum(out * dout)


def batchnorm_loss_hand(x, gamma, beta, bn_param, dout):
    eps = bn_param.get("eps", 1e-5)
    N = x.shape[0]
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    inv = 1.0 / np.sqrt(var + eps)
    xhat = (x - mu) * inv
    dxhat = dout * gamma
    dx = inv / N * (N * dxhat - dxhat.sum(axis=0) - xhat * np.sum(dxhat * xhat, axis=0))
    return dx, np.sum(dout * xhat, axis=0), dout.sum(axis=0)


# -- a Poisson regression's log-likelihood method ---------------------------------------------

class PoissonModel:
    """A Poisson GLM with the log link."""

    def __init__(self, endog, exog, offset=None):
        self.endog = np.asarray(endog, dtype=float)
        self.exog = np.asarray(exog, dtype=float)
        self.offset = np.zeros(len(self.endog)) if offset is None else offset

    def loglike(self, params):
        """The log-likelihood at ``params`` (the constant in y! left out)."""
        eta = self.exog @ params + self.offset
        return np.sum(self.endog * eta - np.exp(eta))

    def score(self, params):
        """The gradient of :meth:`loglike`, by hand."""
        eta = self.exog @ params + self.offset
        return self.exog.T @ (self.endog - np.exp(eta))


# -- a t-SNE-style KL divergence --------------------------------------------------------------

def tsne_kl(Y, P):
    """KL(P || Q) of the Student-t similarities Q of the embedding ``Y`` (n, 2)."""
    n = Y.shape[0]
    sum_Y = np.sum(np.square(Y), 1)
    num = 1.0 / (1.0 + np.add(np.add(-2.0 * (Y @ Y.T), sum_Y).T, sum_Y))
    num[range(n), range(n)] = 0.0
    Q = num / np.sum(num)
    Q = np.maximum(Q, 1e-12)
    return np.sum(P * np.log(np.maximum(P, 1e-12) / Q))


def tsne_kl_hand(Y, P):
    n = Y.shape[0]
    sum_Y = np.sum(np.square(Y), 1)
    num = 1.0 / (1.0 + np.add(np.add(-2.0 * (Y @ Y.T), sum_Y).T, sum_Y))
    num[range(n), range(n)] = 0.0
    Q = num / np.sum(num)
    PQ = P - Q * np.sum(P)
    dY = np.zeros_like(Y)
    for i in range(n):
        dY[i, :] = 4.0 * np.sum((PQ[:, i] * num[:, i])[:, None] * (Y[i, :] - Y), 0)
    return dY


# -- softmax cross-entropy, written three common ways -----------------------------------------

def softmax_xent_shifted(z, T):
    """Shift by the row max, then log-sum-exp."""
    m = np.max(z, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m
    return -np.sum(T * (z - lse))


def softmax_xent_probs(z, T):
    """Normalise the exponentials into probabilities, then take their log."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return -np.sum(T * np.log(p))


def softmax_xent_logaddexp(z, T):
    """Log-sum-exp over a row by folding np.logaddexp along it."""
    lse = z[:, 0]
    for j in range(1, z.shape[1]):
        lse = np.logaddexp(lse, z[:, j])
    return -np.sum(T * (z - lse[:, None]))


def softmax_xent_hand(z, T):
    """Right for any T: each row's labels sum to what they sum to."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return p * T.sum(axis=1, keepdims=True) - T


# -- an optimisation test function taking the array namespace of its argument ---------------

def rosen(x):
    """The Rosenbrock function of N variables."""
    xp = np
    x = xp.asarray(x)
    r = xp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)
    return r


def rosen_der(x):
    xm = x[1:-1]
    xm_m1 = x[:-2]
    xm_p1 = x[2:]
    der = np.zeros_like(x)
    der[1:-1] = (200 * (xm - xm_m1 ** 2) - 400 * (xm_p1 - xm ** 2) * xm - 2 * (1 - xm))
    der[0] = -400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0])
    der[-1] = 200 * (x[-1] - x[-2] ** 2)
    return der


# -- a normal model's log-likelihood, with validation --------------------------------------

class NormalModel:
    """Independent normal observations with a common location and log-scale."""

    def __init__(self, data):
        data = np.asarray(data, dtype=float)
        if data.ndim != 1:
            raise ValueError("data must be 1-D")
        self.data = data

    def loglike(self, params):
        """Log-likelihood of ``params = (loc, log_scale)``."""
        loc, log_scale = params[0], params[1]
        if not np.isfinite(log_scale):
            raise ValueError("log_scale must be finite")
        z = (self.data - loc) / np.exp(log_scale)
        n = self.data.shape[0]
        return -0.5 * np.sum(z ** 2) - n * log_scale - 0.5 * n * np.log(2 * np.pi)

    def score(self, params):
        loc, log_scale = params
        s = np.exp(log_scale)
        z = (self.data - loc) / s
        return np.array([np.sum(z) / s, np.sum(z ** 2) - self.data.shape[0]])


# -- a VAE's loss --------------------------------------------------------------------------

def vae_loss(x, x_recon_logits, mu, logvar):
    """Bernoulli reconstruction cross-entropy plus the KL to a standard normal prior."""
    recon = np.sum(np.maximum(x_recon_logits, 0) - x_recon_logits * x
                   + np.log1p(np.exp(-np.abs(x_recon_logits))))
    kl = -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar))
    return (recon + kl) / x.shape[0]


def vae_loss_hand(x, x_recon_logits, mu, logvar):
    n = x.shape[0]
    d_logits = (1.0 / (1.0 + np.exp(-x_recon_logits)) - x) / n
    return d_logits, mu / n, 0.5 * (np.exp(logvar) - 1) / n


# -- a robust loss with a branch on an argument and a counted damping loop -------------------

def damped_clipped_loss(w, X, y, clip, steps):
    """Residuals clipped when ``clip`` is positive, then damped ``steps`` times."""
    r = X @ w - y
    if clip > 0:
        r = np.clip(r, -clip, clip)
    else:
        r = r * 1.0
    n = 0
    while n < steps:
        r = 0.5 * r
        n += 1
    return np.sum(r ** 2)


def damped_clipped_loss_hand(w, X, y, clip, steps):
    r = X @ w - y
    inside = np.ones_like(r)
    if clip > 0:
        inside = (np.abs(r) <= clip).astype(float)
        r = np.clip(r, -clip, clip)
    scale = 0.5 ** steps
    return X.T @ (2 * r * scale * scale * inside)


# -- a per-example loop over zipped rows, calling a model object's methods --------------------

class Linear:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return self.W @ x + self.b


def per_example_loss(layer, X, Y):
    """Mean squared error, one example at a time, through a layer object."""
    total = 0.0
    for x, y in zip(X, Y):
        err = layer(x) - y
        total = total + err @ err
    return total / len(X)


def per_example_loss_hand(layer, X, Y):
    E = X @ layer.W.T + layer.b - Y
    return {"W": 2 * E.T @ X / len(X), "b": 2 * E.sum(axis=0) / len(X)}


def per_example_loss_building_its_layer(W, b, X, Y):
    layer = Linear(W, b)
    return per_example_loss(layer, X, Y)


# -- an LSTM layer filling an (N, T, H) array ---------------------------------------------

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_forward(x, h0, Wx, Wh, b):
    """An LSTM over a whole sequence. x: (N, T, D), h0: (N, H), Wx: (D, 4H), Wh: (H, 4H),
    b: (4H,). Returns the hidden states, (N, T, H)."""
    N, T, _ = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    prev_h, prev_c = h0, np.zeros_like(h0)
    for t in range(T):
        a = x[:, t, :] @ Wx + prev_h @ Wh + b
        i = _sigmoid(a[:, :H])
        f = _sigmoid(a[:, H:2 * H])
        o = _sigmoid(a[:, 2 * H:3 * H])
        g = np.tanh(a[:, 3 * H:])
        prev_c = f * prev_c + i * g
        prev_h = o * np.tanh(prev_c)
        h[:, t, :] = prev_h
    return h


def lstm_loss(x, h0, Wx, Wh, b, dout):
    return np.sum(lstm_forward(x, h0, Wx, Wh, b) * dout)


def lstm_loss_hand(x, h0, Wx, Wh, b, dout):
    N, T, _ = x.shape
    H = h0.shape[1]
    cache, prev_h, prev_c = [], h0, np.zeros_like(h0)
    for t in range(T):
        a = x[:, t, :] @ Wx + prev_h @ Wh + b
        i, f, o = _sigmoid(a[:, :H]), _sigmoid(a[:, H:2 * H]), _sigmoid(a[:, 2 * H:3 * H])
        g = np.tanh(a[:, 3 * H:])
        c = f * prev_c + i * g
        cache.append((prev_h, prev_c, i, f, o, g, c))
        prev_h, prev_c = o * np.tanh(c), c
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh_next, dc_next = np.zeros_like(h0), np.zeros_like(h0)
    for t in reversed(range(T)):
        hp, cp, i, f, o, g, c = cache[t]
        dh = dout[:, t, :] + dh_next
        tc = np.tanh(c)
        do = dh * tc
        dc = dc_next + dh * o * (1 - tc ** 2)
        di, df, dg = dc * g, dc * cp, dc * i
        da = np.concatenate([di * i * (1 - i), df * f * (1 - f), do * o * (1 - o),
                             dg * (1 - g ** 2)], axis=1)
        dx[:, t, :] = da @ Wx.T
        dWx += x[:, t, :].T @ da
        dWh += hp.T @ da
        db += da.sum(axis=0)
        dh_next, dc_next = da @ Wh.T, dc * f
    return dx, dh_next, dWx, dWh, db


# -- a Gaussian mixture's log-likelihood, with scipy.special.logsumexp ---------------------

def gmm_loglik(means, X, log_weights, sigma):
    """Log-likelihood of the rows of X under an isotropic Gaussian mixture."""
    sq = np.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=-1)
    d = X.shape[1]
    log_comp = log_weights - 0.5 * sq / sigma ** 2 - d * np.log(sigma) - 0.5 * d * np.log(2 * np.pi)
    return np.sum(logsumexp(log_comp, axis=1))


def gmm_loglik_hand(means, X, log_weights, sigma):
    sq = np.sum((X[:, None, :] - means[None, :, :]) ** 2, axis=-1)
    log_comp = log_weights - 0.5 * sq / sigma ** 2
    resp = np.exp(log_comp - log_comp.max(axis=1, keepdims=True))
    resp /= resp.sum(axis=1, keepdims=True)
    return (resp[:, :, None] * (X[:, None, :] - means[None, :, :])).sum(axis=0) / sigma ** 2


# -- kernel ridge regression's loss on an RBF kernel built with cdist -------------------------

def kernel_ridge_loss(alpha, X, Z, y, gamma, lam):
    """Squared error of the kernel expansion at the centres Z, plus the RKHS penalty."""
    K = np.exp(-gamma * cdist(X, Z, "sqeuclidean"))
    Kzz = np.exp(-gamma * cdist(Z, Z, "sqeuclidean"))
    r = K @ alpha - y
    return r @ r + lam * alpha @ Kzz @ alpha


def kernel_ridge_loss_hand(alpha, X, Z, y, gamma, lam):
    D = np.sum((X[:, None, :] - Z[None, :, :]) ** 2, axis=-1)
    Dzz = np.sum((Z[:, None, :] - Z[None, :, :]) ** 2, axis=-1)
    K, Kzz = np.exp(-gamma * D), np.exp(-gamma * Dzz)
    return 2 * K.T @ (K @ alpha - y) + 2 * lam * Kzz @ alpha

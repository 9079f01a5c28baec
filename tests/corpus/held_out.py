"""Held-out code: twelve functions written in session 48 the way such code is commonly
written, before srctrans was changed for any of them, and timed as they were found (their
first figures are in docs/benchmarks.md), each with its gradient written by hand
(``*_hand``): attention with the softmax written out, layers held in a list of dicts, spring
and chain energies over positions' columns and ``np.diff``, a logistic regression with its
sigmoid and its log (an epsilon added) written out, a softmax cross-entropy with one-hot labels from
``np.eye``, a Gaussian's negative log-likelihood through ``solve`` and ``slogdet``, a network
looping over ``zip`` of its weight and bias lists, a Huber loss with ``np.where``, weighted
least squares with ``np.einsum``, a Poisson regression method reading its data from ``self``
and a mixture's log-likelihood built per component and stacked. They stay out of the
benchmark's targets so that they keep measuring code srctrans was not shaped for."""

import numpy as np


# -- attention, the softmax written out ---------------------------------------------------
def attention(Q, K, V, G):
    d = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    A = e / e.sum(axis=-1, keepdims=True)
    out = A @ V
    return np.sum(out * G)

def attention_hand(Q, K, V, G):
    d = Q.shape[-1]
    s = Q @ K.T / np.sqrt(d)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    A = e / e.sum(axis=-1, keepdims=True)
    dA = G @ V.T
    dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True)) / np.sqrt(d)
    return dS @ K, dS.T @ Q, A.T @ G

# -- layers held in a list of dicts ----------------------------------------------------
def mlp_layers(layers, X, Y):
    h = X
    for layer in layers:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return 0.5 * np.mean((h - Y) ** 2)

def mlp_layers_hand(layers, X, Y):
    hs = [X]
    h = X
    for layer in layers:
        h = np.tanh(h @ layer["W"] + layer["b"])
        hs.append(h)
    d = (h - Y) / h.size
    grads = [None] * len(layers)
    for i in range(len(layers) - 1, -1, -1):
        d = d * (1 - hs[i + 1] ** 2)
        grads[i] = {"W": hs[i].T @ d, "b": d.sum(axis=0)}
        d = d @ layers[i]["W"].T
    return grads

# -- positions read by columns: a 2-D spring energy ------------------------------------
def springs(P, rest):
    x = P[:, 0]
    y = P[:, 1]
    dx = x[1:] - x[:-1]
    dy = y[1:] - y[:-1]
    length = np.sqrt(dx ** 2 + dy ** 2)
    return 0.5 * np.sum((length - rest) ** 2)

def springs_hand(P, rest):
    D = np.diff(P, axis=0)
    L = np.sqrt((D ** 2).sum(axis=1))
    f = ((L - rest) / L)[:, None] * D
    g = np.zeros_like(P)
    g[1:] += f
    g[:-1] -= f
    return g

# -- a logistic regression, its sigmoid and log written out ----------------------------
def bce(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    eps = 1e-12
    loss = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    return loss

def bce_hand(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    eps = 1e-12
    dp = -(y / (p + eps) - (1 - y) / (1 - p + eps)) / len(y)
    dz = dp * p * (1 - p)
    return X.T @ dz, dz.sum()

# -- a softmax cross-entropy, one-hot labels from np.eye -------------------------------
def softmax_ce(params, X, y):
    W, b = params["W"], params["b"]
    logits = X @ W + b
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    Y = np.eye(W.shape[1])[y]
    return -np.sum(Y * np.log(probs)) / X.shape[0]

def softmax_ce_hand(params, X, y):
    W, b = params["W"], params["b"]
    logits = X @ W + b
    logits = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    d = probs.copy()
    d[np.arange(len(y)), y] -= 1
    d /= X.shape[0]
    return {"W": X.T @ d, "b": d.sum(axis=0)}

# -- a Gaussian's negative log-likelihood ----------------------------------------------
def gauss_nll(mu, X, L):
    S = L @ L.T
    diff = X - mu
    sol = np.linalg.solve(S, diff.T)
    sign, logdet = np.linalg.slogdet(S)
    return 0.5 * np.sum(diff.T * sol) + 0.5 * X.shape[0] * logdet

def gauss_nll_hand(mu, X, L):
    S = L @ L.T
    diff = X - mu
    sol = np.linalg.solve(S, diff.T)
    return -sol.sum(axis=1)

# -- a network looping over zip of its weights and biases ------------------------------
class Net:
    def __init__(self, sizes):
        self.sizes = sizes
    def loss(self, weights, biases, X, Y):
        a = X
        for W, b in zip(weights[:-1], biases[:-1]):
            a = np.maximum(a @ W + b, 0.0)
        out = a @ weights[-1] + biases[-1]
        return np.mean(np.sum((out - Y) ** 2, axis=1))
    def loss_hand(self, weights, biases, X, Y):
        acts = [X]
        a = X
        pre = []
        for W, b in zip(weights[:-1], biases[:-1]):
            z = a @ W + b
            pre.append(z)
            a = np.maximum(z, 0.0)
            acts.append(a)
        out = a @ weights[-1] + biases[-1]
        d = 2 * (out - Y) / X.shape[0]
        gW = [None] * len(weights)
        gb = [None] * len(weights)
        gW[-1] = a.T @ d
        gb[-1] = d.sum(axis=0)
        d = d @ weights[-1].T
        for i in range(len(weights) - 2, -1, -1):
            d = d * (pre[i] > 0)
            gW[i] = acts[i].T @ d
            gb[i] = d.sum(axis=0)
            if i:
                d = d @ weights[i].T
        return gW, gb

# -- a Huber loss with np.where --------------------------------------------------------
def huber(w, X, y, delta):
    r = X @ w - y
    a = np.abs(r)
    loss = np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta))
    return loss.mean()

def huber_hand(w, X, y, delta):
    r = X @ w - y
    g = np.where(np.abs(r) <= delta, r, delta * np.sign(r))
    return X.T @ g / len(y)

# -- weighted least squares with np.einsum ---------------------------------------------
def wls(beta, X, y, wts):
    pred = np.einsum("ij,j->i", X, beta)
    return np.einsum("i,i->", wts, (y - pred) ** 2)

def wls_hand(beta, X, y, wts):
    r = y - X @ beta
    return -2 * X.T @ (wts * r)

# -- a chain's energy over np.diff and np.linalg.norm ----------------------------------
def chain(P, k):
    seg = np.diff(P, axis=0)
    L = np.linalg.norm(seg, axis=1)
    return k * np.sum((L - 1.0) ** 2)

def chain_hand(P, k):
    seg = np.diff(P, axis=0)
    L = np.sqrt((seg ** 2).sum(axis=1))
    f = (2 * k * (L - 1.0) / L)[:, None] * seg
    g = np.zeros_like(P)
    g[1:] += f
    g[:-1] -= f
    return g

# -- a Poisson regression, its data held by the model ----------------------------------
class Poisson:
    def __init__(self, X, y):
        self.X, self.y = X, y
    def nll(self, beta):
        eta = self.X @ beta
        mu = np.exp(eta)
        return np.sum(mu - self.y * eta)
    def nll_hand(self, beta):
        mu = np.exp(self.X @ beta)
        return self.X.T @ (mu - self.y)

# -- a mixture's log-likelihood, built one component at a time -------------------------
def mixture(means, X, sigma):
    comps = []
    for k in range(means.shape[0]):
        d = X - means[k]
        comps.append(-0.5 * np.sum(d ** 2, axis=1) / sigma ** 2)
    C = np.stack(comps, axis=1)
    m = C.max(axis=1, keepdims=True)
    return -np.sum(m[:, 0] + np.log(np.exp(C - m).sum(axis=1)))

def mixture_hand(means, X, sigma):
    D = X[:, None, :] - means[None, :, :]
    C = -0.5 * (D ** 2).sum(axis=2) / sigma ** 2
    m = C.max(axis=1, keepdims=True)
    R = np.exp(C - m)
    R /= R.sum(axis=1, keepdims=True)
    return -(R[:, :, None] * D).sum(axis=0) / sigma ** 2

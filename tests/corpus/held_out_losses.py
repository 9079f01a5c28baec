"""Held-out code, third part: losses written in session 48 as they are commonly written,
before srctrans was changed for any of them, each with its gradient written by hand
(``*_hand``): a soft-margin SVM's hinge, a KL divergence of a softmax, a focal loss, a
log-cosh loss, a logistic loss by ``np.logaddexp``, a triplet loss, a smooth L1 loss and a
layer applied to a batch of matrices. Timed apart from the corpus's targets
(``benchmarks/bench_real.py``)."""

import numpy as np


def hinge(w, X, y, C):
    margins = 1 - y * (X @ w)
    return 0.5 * w @ w + C * np.sum(np.maximum(0, margins))


def hinge_hand(w, X, y, C):
    active = (1 - y * (X @ w)) > 0
    return w - C * X.T @ (y * active)


def kl(logits_p, q):
    p = np.exp(logits_p) / np.sum(np.exp(logits_p))
    return np.sum(p * np.log(p / q))


def kl_hand(logits_p, q):
    p = np.exp(logits_p) / np.sum(np.exp(logits_p))
    g = np.log(p / q) + 1
    return p * (g - np.sum(p * g))


def focal(w, X, y, gamma):
    p = 1 / (1 + np.exp(-(X @ w)))
    pt = np.where(y == 1, p, 1 - p)
    return -np.sum((1 - pt) ** gamma * np.log(pt))


def focal_hand(w, X, y, gamma):
    p = 1 / (1 + np.exp(-(X @ w)))
    pt = np.where(y == 1, p, 1 - p)
    dpt = gamma * (1 - pt) ** (gamma - 1) * np.log(pt) - (1 - pt) ** gamma / pt
    dp = np.where(y == 1, dpt, -dpt)
    return X.T @ (dp * p * (1 - p))


def logcosh(w, X, y):
    return np.sum(np.log(np.cosh(X @ w - y)))


def logcosh_hand(w, X, y):
    return X.T @ np.tanh(X @ w - y)


def logistic_lae(w, X, y):
    return np.sum(np.logaddexp(0, -y * (X @ w)))


def logistic_lae_hand(w, X, y):
    z = -y * (X @ w)
    return X.T @ (-y / (1 + np.exp(-z)))


def triplet(A, P, N, margin):
    dp = np.sum((A - P) ** 2, axis=1)
    dn = np.sum((A - N) ** 2, axis=1)
    return np.mean(np.maximum(dp - dn + margin, 0))


def triplet_hand(A, P, N, margin):
    dp = np.sum((A - P) ** 2, axis=1)
    dn = np.sum((A - N) ** 2, axis=1)
    act = ((dp - dn + margin) > 0)[:, None] / len(A)
    return act * (2 * (A - P) - 2 * (A - N))


def smooth_l1(w, X, y):
    r = X @ w - y
    a = np.abs(r)
    return np.sum(np.where(a < 1, 0.5 * r ** 2, a - 0.5))


def smooth_l1_hand(w, X, y):
    r = X @ w - y
    return X.T @ np.clip(r, -1, 1)


def batched(W, X):
    H = np.tanh(X @ W)          # (B, n, k) @ (k, m)
    return np.sum(H ** 2)


def batched_hand(W, X):
    H = np.tanh(X @ W)
    D = 2 * H * (1 - H ** 2)
    return np.einsum('bnk,bnm->km', X, D)

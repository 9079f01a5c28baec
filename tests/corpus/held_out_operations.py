"""Held-out code, second part: functions written in session 48 around one NumPy operation
each, the way such code is commonly written, before srctrans was changed for any of them,
each with its gradient written by hand (``*_hand``): a cross-entropy through
``np.take_along_axis`` and SciPy's ``logsumexp``, an RBF kernel's quadratic form, a
smoothing by ``np.convolve``, distances between all pairs by broadcasting, a ReLU layer by
``np.where`` with a dropout mask, a polynomial fit by ``np.polyval``, a logistic regression
whose probabilities are clipped, the trace of an inverse times a matrix, pooling by a
reshape and a mean, a convolution over a padded signal, a tiled vector, a trimmed mean
over ``np.sort``, an embedding's rows read by token, a masked sum, a circular stencil by
``np.roll``, a log-determinant, angles by ``np.arctan2``, a lower-triangular factor's
product, an axis moved, an interpolation and a max-pooling. Timed apart from the corpus's
targets (``benchmarks/bench_real.py``)."""

import numpy as np
from scipy.special import logsumexp


def take_ce(W, X, y):
    z = X @ W
    logp = z - logsumexp(z, axis=1, keepdims=True)
    return -np.mean(np.take_along_axis(logp, y[:, None], axis=1))


def take_ce_hand(W, X, y):
    z = X @ W
    p = np.exp(z - logsumexp(z, axis=1, keepdims=True))
    p[np.arange(len(y)), y] -= 1
    return X.T @ p / len(y)


def rbf_quad(X, alpha, gamma):
    sq = np.sum(X ** 2, axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    K = np.exp(-gamma * D)
    return alpha @ K @ alpha


def rbf_quad_hand(X, alpha, gamma):
    sq = np.sum(X ** 2, axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    K = np.exp(-gamma * D)
    M = np.outer(alpha, alpha) * K * (-gamma)
    # dD/dX: d(sq_i + sq_j - 2 x_i.x_j)
    return 2 * (M.sum(axis=1)[:, None] * X + M.sum(axis=0)[:, None] * X) - 2 * (M + M.T) @ X


def smooth_conv(x, kernel, target):
    y = np.convolve(x, kernel, mode="same")
    return np.sum((y - target) ** 2)


def smooth_conv_hand(x, kernel, target):
    y = np.convolve(x, kernel, mode="same")
    r = 2 * (y - target)
    full = np.convolve(r, kernel[::-1], mode="full")
    k = len(kernel)
    start = (k - 1) - (k - 1) // 2
    return full[start:start + len(x)]


def pairwise(X, Y):
    d = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=-1)
    return np.sum(np.exp(-d))


def pairwise_hand(X, Y):
    diff = X[:, None, :] - Y[None, :, :]
    d = np.sqrt((diff ** 2).sum(-1))
    w = -np.exp(-d) / d
    return (w[:, :, None] * diff).sum(axis=1)


def relu_mse(W1, W2, X, Y, mask):
    h = np.where(X @ W1 > 0, X @ W1, 0.0) * mask
    return np.mean((h @ W2 - Y) ** 2)


def relu_mse_hand(W1, W2, X, Y, mask):
    z = X @ W1
    h = np.where(z > 0, z, 0.0) * mask
    d = 2 * (h @ W2 - Y) / Y.size
    dh = d @ W2.T * mask * (z > 0)
    return X.T @ dh, h.T @ d


def poly_fit(c, x, y):
    return np.sum((np.polyval(c, x) - y) ** 2)


def poly_fit_hand(c, x, y):
    r = 2 * (np.polyval(c, x) - y)
    V = np.vander(x, len(c))
    return V.T @ r


def clipped_bce(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def clipped_bce_hand(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    inside = (p > 1e-7) & (p < 1 - 1e-7)
    q = np.clip(p, 1e-7, 1 - 1e-7)
    dq = -(y / q - (1 - y) / (1 - q)) / len(y)
    return X.T @ (dq * inside * p * (1 - p))


def trace_inv(A, B):
    return np.trace(np.linalg.inv(A) @ B)


def trace_inv_hand(A, B):
    Ai = np.linalg.inv(A)
    return -(Ai @ B @ Ai).T


def pooled(x, W):
    h = np.tanh(x @ W)
    p = h.reshape(h.shape[0], -1, 2).mean(axis=2)
    return np.sum(p ** 2)


def pooled_hand(x, W):
    h = np.tanh(x @ W)
    p = h.reshape(h.shape[0], -1, 2).mean(axis=2)
    dh = np.repeat(2 * p, 2, axis=1) / 2
    return x.T @ (dh * (1 - h ** 2))


def padded_conv(x, w):
    xp = np.pad(x, (1, 1))
    y = w[0] * xp[:-2] + w[1] * xp[1:-1] + w[2] * xp[2:]
    return np.sum(np.tanh(y))


def padded_conv_hand(x, w):
    xp = np.pad(x, (1, 1))
    y = w[0] * xp[:-2] + w[1] * xp[1:-1] + w[2] * xp[2:]
    d = 1 - np.tanh(y) ** 2
    return np.array([d @ xp[:-2], d @ xp[1:-1], d @ xp[2:]])


def tiled(a, b):
    T = np.tile(a, (3, 1)) * b
    return np.sum(np.sin(T))


def tiled_hand(a, b):
    T = np.tile(a, (3, 1)) * b
    return (np.cos(T) * b).sum(axis=0)


def trimmed(x):
    s = np.sort(x)
    return np.mean(s[2:-2] ** 2)


def trimmed_hand(x):
    order = np.argsort(x)
    g = np.zeros_like(x)
    k = order[2:-2]
    g[k] = 2 * x[k] / (len(x) - 4)
    return g


def embed(E, tokens, w):
    h = E[tokens].sum(axis=0)
    return np.tanh(h @ w)


def embed_hand(E, tokens, w):
    h = E[tokens].sum(axis=0)
    d = (1 - np.tanh(h @ w) ** 2) * w
    g = np.zeros_like(E)
    np.add.at(g, tokens, d)
    return g


def masked(x, w):
    z = x * w
    return np.sum(z[z > 0] ** 2)


def masked_hand(x, w):
    z = x * w
    return 2 * z * (z > 0) * w


def rolled(x, k):
    y = x * k[0] + np.roll(x, 1) * k[1] + np.roll(x, -1) * k[2]
    return np.sum(y ** 2)


def rolled_hand(x, k):
    y = x * k[0] + np.roll(x, 1) * k[1] + np.roll(x, -1) * k[2]
    d = 2 * y
    return d * k[0] + np.roll(d, -1) * k[1] + np.roll(d, 1) * k[2]


def logdet(A):
    sign, ld = np.linalg.slogdet(A @ A.T + np.eye(A.shape[0]))
    return ld


def logdet_hand(A):
    M = A @ A.T + np.eye(A.shape[0])
    Mi = np.linalg.inv(M)
    return 2 * Mi @ A


def angles(P):
    return np.sum(np.arctan2(P[:, 1], P[:, 0]) ** 2)


def angles_hand(P):
    t = np.arctan2(P[:, 1], P[:, 0])
    r2 = P[:, 0] ** 2 + P[:, 1] ** 2
    g = np.zeros_like(P)
    g[:, 0] = 2 * t * (-P[:, 1] / r2)
    g[:, 1] = 2 * t * (P[:, 0] / r2)
    return g


def tri(L):
    Lt = np.tril(L)
    return np.sum((Lt @ Lt.T) ** 2)


def tri_hand(L):
    Lt = np.tril(L)
    M = Lt @ Lt.T
    return np.tril(4 * M @ Lt)


def moved(x):
    y = np.moveaxis(x, 0, -1)
    return np.sum(y * np.arange(y.shape[-1]))


def moved_hand(x):
    return np.broadcast_to(np.arange(x.shape[0])[:, None, None], x.shape).astype(float)


def interp_loss(y, xq):
    xs = np.linspace(0, 1, len(y))
    return np.sum(np.interp(xq, xs, y) ** 2)


def interp_loss_hand(y, xq):
    xs = np.linspace(0, 1, len(y))
    v = 2 * np.interp(xq, xs, y)
    i = np.clip(np.searchsorted(xs, xq) - 1, 0, len(y) - 2)
    t = (xq - xs[i]) / (xs[i + 1] - xs[i])
    g = np.zeros_like(y)
    np.add.at(g, i, v * (1 - t))
    np.add.at(g, i + 1, v * t)
    return g


def maxpool(x):
    return np.sum(x.reshape(-1, 2).max(axis=1) ** 2)


def maxpool_hand(x):
    r = x.reshape(-1, 2)
    m = r.max(axis=1)
    return (2 * m[:, None] * (r == m[:, None])).reshape(x.shape)

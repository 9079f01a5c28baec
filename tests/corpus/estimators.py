"""More programs written the way published scientific and ML code is written (written here,
copied from nowhere), each with its gradient written by hand beside it (``*_hand``): robust
losses with ``*args`` helpers, a Gaussian process marginal likelihood, a convolution layer
filling its output, layer normalisation with a cache dict, attention, a GRU cell carrying a
named tuple, total-variation denoising with ``np.gradient``, skip-gram negative sampling,
matrix factorisation over a list of ratings, a Student-t regression through a distribution's
private method, and a KL divergence of parameters in dicts."""

import collections

import numpy as np
from scipy import stats


# -- a robust regression loss whose helper takes *args --------------------------------------

def _huber_pieces(r, *args):
    """Quadratic inside ``delta``, linear outside (``args``: delta, then an optional scale)."""
    delta = args[0]
    scale = args[1] if len(args) > 1 else 1.0
    small = np.abs(r) <= delta
    return scale * np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta))


def huber_loss(w, X, y, delta=1.0):
    """Mean Huber loss of a linear model."""
    if X.ndim != 2:
        raise ValueError(f"X must be a matrix, not an array of {X.ndim} dimensions")
    r = X @ w - y
    return np.mean(_huber_pieces(r, delta, 2.0))


def huber_loss_hand(w, X, y, delta=1.0):
    r = X @ w - y
    dr = 2.0 * np.where(np.abs(r) <= delta, r, delta * np.sign(r)) / len(r)
    return X.T @ dr


# -- a Gaussian process: the negative log marginal likelihood in its hyperparameters --------

class GaussianProcess:
    """A squared-exponential kernel with noise; hyperparameters on the log scale."""

    def __init__(self, X, y):
        self.X, self.y = X, y
        self.d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)

    def kernel(self, log_ell, log_sf2, log_sn2):
        K = np.exp(log_sf2) * np.exp(-0.5 * self.d2 / np.exp(2 * log_ell))
        return K + np.exp(log_sn2) * np.eye(len(self.y))

    def nll(self, theta):
        """Negative log marginal likelihood.

        ``theta`` = (log lengthscale, log signal variance, log noise variance)."""
        K = self.kernel(theta[0], theta[1], theta[2])
        L = np.linalg.cholesky(K)
        alpha = np.linalg.solve(L.T, np.linalg.solve(L, self.y))
        return 0.5 * self.y @ alpha + np.sum(np.log(np.diag(L))) \
            + 0.5 * len(self.y) * np.log(2 * np.pi)

    def nll_hand(self, theta):
        ell2, sf2, sn2 = np.exp(2 * theta[0]), np.exp(theta[1]), np.exp(theta[2])
        E = np.exp(-0.5 * self.d2 / ell2)
        K = sf2 * E + sn2 * np.eye(len(self.y))
        Kinv = np.linalg.inv(K)
        alpha = Kinv @ self.y
        W = Kinv - np.outer(alpha, alpha)
        dK = [sf2 * E * self.d2 / ell2, sf2 * E, sn2 * np.eye(len(self.y))]
        return np.array([0.5 * np.sum(W * d) for d in dK])


# -- a 1-D convolution layer filling its preallocated output ------------------------------

def conv1d_forward(x, w, b, stride=1):
    """x: (N, C, L); w: (F, C, K); b: (F,); no padding."""
    N, C, L = x.shape
    F, _, K = w.shape
    L_out = 1 + (L - K) // stride
    out = np.zeros((N, F, L_out))
    for n in range(N):
        for f in range(F):
            for i in range(L_out):
                start = i * stride
                out[n, f, i] = np.sum(x[n, :, start:start + K] * w[f]) + b[f]
    return out


def conv1d_loss(x, w, b, dout):
    return np.sum(conv1d_forward(x, w, b, 2) * dout)


def conv1d_loss_hand(x, w, b, dout):
    N, C, L = x.shape
    F, _, K = w.shape
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    for n in range(N):
        for f in range(F):
            for i in range(dout.shape[2]):
                start = 2 * i
                dx[n, :, start:start + K] += dout[n, f, i] * w[f]
                dw[f] += dout[n, f, i] * x[n, :, start:start + K]
    return dx, dw, dout.sum(axis=(0, 2))


# -- layer normalisation, keeping what its backward pass would need in a cache dict --------

def layernorm_forward(x, gamma, beta, ln_param):
    eps = ln_param.get("eps", 1e-5)
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + eps)
    cache = {"xhat": xhat, "gamma": gamma, "std": np.sqrt(var + eps)}
    return gamma * xhat + beta, cache


def layernorm_loss(x, gamma, beta, ln_param, dout):
    out, cache = layernorm_forward(x, gamma, beta, ln_param)
    return np.sum(out * dout) + 0.0 * np.sum(cache["std"])


def layernorm_loss_hand(x, gamma, beta, ln_param, dout):
    eps = ln_param.get("eps", 1e-5)
    D = x.shape[1]
    std = np.sqrt(x.var(axis=1, keepdims=True) + eps)
    xhat = (x - x.mean(axis=1, keepdims=True)) / std
    dxhat = dout * gamma
    dx = (D * dxhat - dxhat.sum(axis=1, keepdims=True)
          - xhat * np.sum(dxhat * xhat, axis=1, keepdims=True)) / (D * std)
    return dx, np.sum(dout * xhat, axis=0), dout.sum(axis=0)


# -- scaled dot-product attention, as a model class's method -------------------------------

class Attention:
    """One head: queries, keys and values from the same inputs."""

    def __init__(self, scale=None):
        self.scale = scale

    def forward(self, Wq, Wk, Wv, X):
        Q, K, V = X @ Wq, X @ Wk, X @ Wv
        scale = self.scale if self.scale is not None else 1.0 / np.sqrt(Q.shape[-1])
        S = Q @ K.T * scale
        S = S - S.max(axis=-1, keepdims=True)
        A = np.exp(S)
        A = A / A.sum(axis=-1, keepdims=True)
        return A @ V

    def loss(self, Wq, Wk, Wv, X, dout):
        return np.sum(self.forward(Wq, Wk, Wv, X) * dout)

    def loss_hand(self, Wq, Wk, Wv, X, dout):
        Q, K, V = X @ Wq, X @ Wk, X @ Wv
        scale = self.scale if self.scale is not None else 1.0 / np.sqrt(Q.shape[-1])
        S = Q @ K.T * scale
        A = np.exp(S - S.max(axis=-1, keepdims=True))
        A = A / A.sum(axis=-1, keepdims=True)
        dV = A.T @ dout
        dA = dout @ V.T
        dS = A * (dA - np.sum(dA * A, axis=-1, keepdims=True)) * scale
        dQ, dK = dS @ K, dS.T @ Q
        return X.T @ dQ, X.T @ dK, X.T @ dV


# -- a GRU cell whose state is a named tuple, over a sequence --------------------------------

GRUState = collections.namedtuple("GRUState", ["h", "steps"])


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def gru_loss(xs, h0, Wz, Uz, Wh, Uh):
    """Sum of the last state's entries; the state is rebuilt as a named tuple each step."""
    state = GRUState(h0, 0)
    for x in xs:
        z = _sig(x @ Wz + state.h @ Uz)
        cand = np.tanh(x @ Wh + state.h @ Uh)
        state = GRUState((1.0 - z) * state.h + z * cand, state.steps + 1)
    return np.sum(state.h)


def gru_loss_hand(xs, h0, Wz, Uz, Wh, Uh):
    hs, zs, cands = [h0], [], []
    for x in xs:
        h = hs[-1]
        z, cand = _sig(x @ Wz + h @ Uz), np.tanh(x @ Wh + h @ Uh)
        zs.append(z)
        cands.append(cand)
        hs.append((1.0 - z) * h + z * cand)
    dh = np.ones_like(h0)
    dWz, dUz, dWh, dUh = (np.zeros_like(a) for a in (Wz, Uz, Wh, Uh))
    dxs = np.zeros_like(xs)
    for t in reversed(range(len(xs))):
        h, z, cand, x = hs[t], zs[t], cands[t], xs[t]
        dz = dh * (cand - h) * z * (1 - z)
        dcand = dh * z * (1 - cand ** 2)
        dWz += np.outer(x, dz)
        dUz += np.outer(h, dz)
        dWh += np.outer(x, dcand)
        dUh += np.outer(h, dcand)
        dxs[t] = Wz @ dz + Wh @ dcand
        dh = dh * (1 - z) + Uz @ dz + Uh @ dcand
    return dxs, dh, dWz, dUz, dWh, dUh


# -- total-variation denoising of a signal, with np.gradient --------------------------------

def tv_energy(u, f, lam, eps=1e-2):
    """Data fidelity plus a smoothed total variation of ``u``'s derivative."""
    du = np.gradient(u)
    return 0.5 * np.sum((u - f) ** 2) + lam * np.sum(np.sqrt(du ** 2 + eps))


def tv_energy_hand(u, f, lam, eps=1e-2):
    du = np.gradient(u)
    w = lam * du / np.sqrt(du ** 2 + eps)          # d energy / d du
    back = np.zeros_like(u)                        # np.gradient's transpose applied to w
    back[:-2] -= 0.5 * w[1:-1]
    back[2:] += 0.5 * w[1:-1]
    back[0] -= w[0]
    back[1] += w[0]
    back[-2] -= w[-1]
    back[-1] += w[-1]
    return (u - f) + back


# -- skip-gram with negative sampling, embeddings in a dict --------------------------------

def skipgram_loss(emb, center, context, negatives):
    """``emb`` holds "in" and "out" embedding matrices; indices are ints."""
    v = emb["in"][center]
    pos = emb["out"][context] @ v
    loss = -np.log(1.0 / (1.0 + np.exp(-pos)))
    for k in negatives:
        neg = emb["out"][k] @ v
        loss = loss - np.log(1.0 / (1.0 + np.exp(neg)))
    return loss


def skipgram_loss_hand(emb, center, context, negatives):
    v = emb["in"][center]
    d_in, d_out = np.zeros_like(emb["in"]), np.zeros_like(emb["out"])
    s = _sig(emb["out"][context] @ v)
    d_in[center] += (s - 1) * emb["out"][context]
    d_out[context] += (s - 1) * v
    for k in negatives:
        sk = _sig(emb["out"][k] @ v)
        d_in[center] += sk * emb["out"][k]
        d_out[k] += sk * v
    return {"in": d_in, "out": d_out}


# -- matrix factorisation over a list of (user, item, rating) triples ----------------------

def mf_loss(U, V, ratings, reg):
    total = 0.0
    for i, j, r in ratings:
        err = r - U[i] @ V[j]
        total += err ** 2
    return total + reg * (np.sum(U ** 2) + np.sum(V ** 2))


def mf_loss_hand(U, V, ratings, reg):
    dU, dV = 2 * reg * U, 2 * reg * V
    for i, j, r in ratings:
        err = r - U[i] @ V[j]
        dU[i] = dU[i] - 2 * err * V[j]
        dV[j] = dV[j] - 2 * err * U[i]
    return dU, dV


# -- Student-t regression through the distribution's private log-density -------------------

class TRegression:
    """A linear model with Student-t errors of fixed degrees of freedom."""

    def __init__(self, endog, exog, df=5.0):
        if exog.shape[0] != endog.shape[0]:
            raise ValueError("endog and exog have different numbers of rows")
        self.endog, self.exog, self.df = endog, exog, df

    def loglike(self, params):
        beta, log_scale = params[:-1], params[-1]
        scale = np.exp(log_scale)
        z = (self.endog - self.exog @ beta) / scale
        return np.sum(stats.t._logpdf(z, self.df)) - len(z) * log_scale

    def score(self, params):
        beta, scale = params[:-1], np.exp(params[-1])
        z = (self.endog - self.exog @ beta) / scale
        dz = -(self.df + 1) * z / (self.df + z ** 2)       # d logpdf / dz
        return np.append(-self.exog.T @ dz / scale, np.sum(-dz * z) - len(z))


# -- a KL divergence between diagonal Gaussians whose parameters sit in dicts -------------

def gaussian_kl(q, p):
    """KL(q || p) for {"mu": ..., "log_sigma": ...} dicts (a variational posterior and prior)."""
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    return np.sum(p["log_sigma"] - q["log_sigma"]
                  + (var_q + (q["mu"] - p["mu"]) ** 2) / (2 * var_p) - 0.5)


def gaussian_kl_hand(q, p):
    var_q, var_p = np.exp(2 * q["log_sigma"]), np.exp(2 * p["log_sigma"])
    diff = q["mu"] - p["mu"]
    return {"mu": diff / var_p, "log_sigma": -1.0 + var_q / var_p}

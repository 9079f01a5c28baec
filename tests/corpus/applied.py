"""Programs of applied fields written as their code usually is (written here, copied from
nowhere), each with its gradient written by hand (``*_hand``): a GLM written against an
array namespace, a ridge model whose parameters are copied with a derived entry, a
multinomial model building one-hot labels in place, a cosine-embedding loss, exponential
smoothing filling its level array, Black-Scholes prices and their Greeks, logistic growth
integrated by explicit Euler steps, a Lennard-Jones energy over pairs of atoms, the gradient
of a validation loss in a ridge penalty, and temperature scaling of classifier logits."""

import numpy as np
from scipy.stats import norm


# -- a Poisson GLM written against an array namespace, importing what it needs inside ------

def glm_loglike(params, X, y, exposure):
    """Poisson log-likelihood (without the log y! term) with an exposure offset."""
    import math
    xp = np
    eta = X @ params + xp.log(exposure)
    mu = xp.exp(eta)
    return xp.sum(y * eta - mu, 0) - 0.0 * math.pi


def glm_loglike_hand(params, X, y, exposure):
    return X.T @ (y - np.exp(X @ params + np.log(exposure)))


# -- ridge regression whose parameters are copied with a derived entry -------------------

def ridge_loss(p, X, y, lam=0.1):
    p = dict(p, w_eff=p["w"] * p["scale"])
    r = X @ p["w_eff"] + p["b"] - y
    return r @ r + lam * p["w"] @ p["w"]


def ridge_loss_hand(p, X, y, lam=0.1):
    r = X @ (p["w"] * p["scale"]) + p["b"] - y
    dw_eff = 2 * X.T @ r
    return {"w": dw_eff * p["scale"] + 2 * lam * p["w"], "scale": dw_eff @ p["w"],
            "b": 2 * np.sum(r)}


# -- multinomial logistic regression, one-hot labels built in a fresh array ---------------

def multinomial_nll(W, X, labels):
    n, k = X.shape[0], W.shape[1]
    Y = np.zeros((n, k))
    Y[np.arange(n), labels] = 1.0
    Z = X @ W
    Z = Z - np.max(Z, 1, keepdims=True)
    logp = Z - np.log(np.sum(np.exp(Z), 1, keepdims=True))
    return -np.sum(Y * logp) / n


def multinomial_nll_hand(W, X, labels):
    n = X.shape[0]
    Z = X @ W
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    P[np.arange(n), labels] -= 1.0
    return X.T @ P / n


# -- a cosine-embedding loss on normalised rows ----------------------------------------

def cosine_loss(A, B):
    """1 - cosine similarity of matching rows, averaged."""
    a = A / np.linalg.norm(A, axis=1, keepdims=True)
    b = B / np.linalg.norm(B, axis=1, keepdims=True)
    return np.mean(1.0 - np.sum(a * b, axis=1))


def cosine_loss_hand(A, B):
    na = np.linalg.norm(A, axis=1, keepdims=True)
    a, b = A / na, B / np.linalg.norm(B, axis=1, keepdims=True)
    cos = np.sum(a * b, axis=1, keepdims=True)
    return -(b - cos * a) / na / len(A)


# -- simple exponential smoothing filling its level array -------------------------------

def smoothing_sse(alpha, y):
    """One-step-ahead squared errors of simple exponential smoothing."""
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def smoothing_sse_hand(alpha, y):
    level, dlevel = y[0], 0.0
    total = 0.0
    for t in range(1, len(y)):
        total += -2.0 * (y[t] - level) * dlevel
        dlevel = y[t] - level + (1.0 - alpha) * dlevel
        level = alpha * y[t] + (1.0 - alpha) * level
    return total


# -- Black-Scholes call prices; their gradient is the Greeks (delta, vega) ----------------

def call_prices(S, sigma, K, T, r):
    """Sum of European call prices for spots ``S`` and volatilities ``sigma``."""
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return np.sum(S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2))


def call_prices_hand(S, sigma, K, T, r):
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    return norm.cdf(d1), S * norm.pdf(d1) * np.sqrt(T)


# -- logistic growth integrated by explicit Euler steps ---------------------------------

def growth_misfit(params, data, dt=0.1):
    """Squared misfit of a logistic growth curve, rate and capacity in ``params``."""
    rate, capacity = params[0], params[1]
    x = data[0]
    total = 0.0
    for t in range(1, len(data)):
        x = x + dt * rate * x * (1.0 - x / capacity)
        total = total + (x - data[t]) ** 2
    return total


def growth_misfit_hand(params, data, dt=0.1):
    rate, capacity = params
    x, dx = data[0], np.zeros(2)                     # dx: d x / d (rate, capacity)
    grad = np.zeros(2)
    for t in range(1, len(data)):
        g = x * (1.0 - x / capacity)
        dg_dx = 1.0 - 2.0 * x / capacity
        dx = dx + dt * (rate * dg_dx * dx + np.array([g, rate * x ** 2 / capacity ** 2]))
        x = x + dt * rate * g
        grad += 2.0 * (x - data[t]) * dx
    return grad


# -- a Lennard-Jones energy over pairs of atoms (its gradient: minus the forces) ---------

def lj_energy(positions, epsilon=1.0, sigma=1.0):
    n = len(positions)
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r2 = np.sum((positions[i] - positions[j]) ** 2)
            s6 = (sigma ** 2 / r2) ** 3
            energy += 4.0 * epsilon * (s6 ** 2 - s6)
    return energy


def lj_energy_hand(positions, epsilon=1.0, sigma=1.0):
    grad = np.zeros_like(positions)
    for i in range(len(positions)):
        for j in range(i + 1, len(positions)):
            d = positions[i] - positions[j]
            r2 = d @ d
            s6 = (sigma ** 2 / r2) ** 3
            dE_dr2 = 4.0 * epsilon * (-6.0 * s6 ** 2 + 3.0 * s6) / r2
            grad[i] += 2.0 * dE_dr2 * d
            grad[j] -= 2.0 * dE_dr2 * d
    return grad


# -- the gradient of a validation loss in the ridge penalty (a hyperparameter) ------------

def validation_loss(log_lam, X, y, Xv, yv):
    """Fit ridge weights in closed form, then score them on held-out data."""
    lam = np.exp(log_lam)
    A = X.T @ X + lam * np.eye(X.shape[1])
    w = np.linalg.solve(A, X.T @ y)
    r = Xv @ w - yv
    return r @ r


def validation_loss_hand(log_lam, X, y, Xv, yv):
    lam = np.exp(log_lam)
    A = X.T @ X + lam * np.eye(X.shape[1])
    w = np.linalg.solve(A, X.T @ y)
    dw = 2.0 * Xv.T @ (Xv @ w - yv)
    return -(np.linalg.solve(A, dw) @ w) * lam         # dw / dlam = -A^{-1} w


# -- temperature scaling of a classifier's logits ---------------------------------------

def temperature_nll(log_t, logits, labels):
    z = logits / np.exp(log_t)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -np.mean(logp[np.arange(len(labels)), labels])


def temperature_nll_hand(log_t, logits, labels):
    t = np.exp(log_t)
    z = logits / t
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    picked = z[np.arange(len(labels)), labels]
    # d(-logp_y)/dz = p - onehot; dz/dlog_t = -z
    return np.mean(picked - np.sum(p * z, axis=-1))

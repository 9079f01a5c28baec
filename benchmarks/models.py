"""Benchmark cases: plain NumPy models, their hand-written gradients, seeded inputs.

A case pairs the function a user would write with the gradient an expert would write
by hand for it. The user functions are written exactly as a user would, with ``np``
as their only global, because the benchmark recompiles them from source (to time a
fresh ``st.grad``) and rebinds ``np`` (to run them under autograd, JAX or PyTorch).

To add a case, write the model and its hand gradient, a builder that returns a
``Case``, and one line in ``CASES``, which also sets the case's speed target. Every
input is drawn from ``np.random.default_rng(0)`` so that runs are comparable.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    """One benchmark case.

    Attributes:
        name: key in ``CASES``.
        size: ``"small"`` or ``"large"``, as reported.
        ratio_target: the generated gradient should take at most this many times
            as long as the hand-written one.
        fn: the user's function, returning a scalar loss.
        hand_grad: ``hand_grad(*args)`` returns the tuple of gradients of ``fn``
            with respect to ``args[i]`` for each ``i`` in ``wrt``, in that order.
        args: the inputs, float64 arrays or Python floats.
        wrt: positions of the arguments to differentiate with respect to.
    """

    name: str
    size: str
    ratio_target: float
    fn: Callable
    hand_grad: Callable
    args: tuple
    wrt: tuple


# --- two-layer tanh MLP, squared loss ------------------------------------------------

def mlp_loss(W1, b1, W2, b2, x, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return np.sum((y - t) ** 2)


def mlp_loss_hand_grad(W1, b1, W2, b2, x, t):
    h = np.tanh(x @ W1 + b1)
    dy = 2.0 * (h @ W2 + b2 - t)
    dh = dy @ W2.T
    da = dh * (1.0 - h * h)
    return x.T @ da, da.sum(axis=0), h.T @ dy, dy.sum(axis=0)


# Hand-written JVPs of mlp_loss, as an expert writes each for the direction at hand:
# (loss, its directional derivative), like st.jvp.

def mlp_loss_hand_jvp_weights(W1, b1, W2, b2, x, t, dW1, db1, dW2, db2):
    h = np.tanh(x @ W1 + b1)
    r = h @ W2 + b2 - t
    dy = ((x @ dW1 + db1) * (1.0 - h * h)) @ W2 + h @ dW2 + db2
    return (r * r).sum(), 2.0 * (dy * r).sum()


def mlp_loss_hand_jvp_input(W1, b1, W2, b2, x, t, dx):
    h = np.tanh(x @ W1 + b1)
    r = h @ W2 + b2 - t
    dy = ((dx @ W1) * (1.0 - h * h)) @ W2
    return (r * r).sum(), 2.0 * (dy * r).sum()


def mlp_loss_hand_jvp_w2(W1, b1, W2, b2, x, t, dW2):
    h = np.tanh(x @ W1 + b1)
    r = h @ W2 + b2 - t
    return (r * r).sum(), 2.0 * ((h @ dW2) * r).sum()


def _mlp_case(name, size, ratio_target, batch, n_in, n_hidden, n_out):
    rng = np.random.default_rng(0)
    # Scaled so that tanh is not saturated: the backward pass then does real work.
    W1 = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
    b1 = 0.1 * rng.standard_normal(n_hidden)
    W2 = rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)
    b2 = 0.1 * rng.standard_normal(n_out)
    x = rng.standard_normal((batch, n_in))
    t = rng.standard_normal((batch, n_out))
    return Case(name, size, ratio_target, mlp_loss, mlp_loss_hand_grad,
                (W1, b1, W2, b2, x, t), wrt=(0, 1, 2, 3))


# --- linear layer, softmax cross-entropy ---------------------------------------------

def xent(W, b, x, labels_onehot):
    z = x @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(labels_onehot * logp) / x.shape[0]


def xent_hand_grad(W, b, x, labels_onehot):
    # The max only shifts each row, and softmax is shift-invariant, so its gradient
    # cancels; dL/dz = (softmax(z) - labels) / batch since one-hot rows sum to one.
    z = x @ W + b
    e = np.exp(z - z.max(axis=1, keepdims=True))
    dz = e / e.sum(axis=1, keepdims=True)
    dz -= labels_onehot
    dz /= x.shape[0]
    return x.T @ dz, dz.sum(axis=0)


def _xent_case(name, size, ratio_target, batch, n_in, n_classes):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((n_in, n_classes)) / np.sqrt(n_in)
    b = 0.1 * rng.standard_normal(n_classes)
    x = rng.standard_normal((batch, n_in))
    labels_onehot = np.eye(n_classes)[rng.integers(0, n_classes, size=batch)]
    return Case(name, size, ratio_target, xent, xent_hand_grad, (W, b, x, labels_onehot),
                wrt=(0, 1))


# --- tanh RNN unrolled by a Python loop, squared loss on the last state ---------------

def rnn_loss(Wx, Wh, b, xs, h0, target):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum((h - target) ** 2)


def rnn_loss_hand_grad(Wx, Wh, b, xs, h0, target):
    # Backpropagation through time: keep every state, then walk the steps backwards.
    steps = xs.shape[0]
    hs = np.empty((steps + 1, *h0.shape))  # hs[t] is the state entering step t
    hs[0] = h0
    for t in range(steps):
        hs[t + 1] = np.tanh(xs[t] @ Wx + hs[t] @ Wh + b)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = 2.0 * (hs[steps] - target)
    for t in reversed(range(steps)):
        da = dh * (1.0 - hs[t + 1] * hs[t + 1])
        dWx += xs[t].T @ da
        dWh += hs[t].T @ da
        db += da.sum(axis=0)
        dh = da @ Wh.T
    return dWx, dWh, db


def _rnn_case(name, size, ratio_target, steps, batch, n_in, n_hidden):
    rng = np.random.default_rng(0)
    # Scaled so that the state neither saturates tanh nor dies out over the steps.
    Wx = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
    Wh = rng.standard_normal((n_hidden, n_hidden)) / np.sqrt(n_hidden)
    b = 0.1 * rng.standard_normal(n_hidden)
    xs = rng.standard_normal((steps, batch, n_in))
    h0 = np.zeros((batch, n_hidden))
    target = rng.uniform(-1.0, 1.0, (batch, n_hidden))
    return Case(name, size, ratio_target, rnn_loss, rnn_loss_hand_grad,
                (Wx, Wh, b, xs, h0, target), wrt=(0, 1, 2))


# --- scalar recurrence: 100 steps of the logistic map on Python floats ----------------

def recurrence(a, x):
    for i in range(100):
        x = a * x * (1.0 - x)
    return x


def recurrence_hand_grad(a, x):
    xs = [0.0] * 100  # the value entering each step
    for i in range(100):
        xs[i] = x
        x = a * x * (1.0 - x)
    da, dx = 0.0, 1.0
    for x in reversed(xs):
        da += dx * x * (1.0 - x)
        dx *= a * (1.0 - 2.0 * x)
    return da, dx


def _recurrence_case(name, size, ratio_target):
    # At a = 2.5 the map contracts towards 1 - 1/a, so both gradients stay finite:
    # d/da tends to 1/a**2 and d/dx to (2 - a)**100.
    return Case(name, size, ratio_target, recurrence, recurrence_hand_grad,
                (2.5, 0.3), wrt=(0, 1))


# --- a piecewise loss: if/elif on a statistic of the residuals ------------------------

def piecewise_loss(w, X, y):
    r = X @ w - y
    scale = np.mean(r * r)
    if scale > 4.0:                   # far off: a penalty that grows linearly
        loss = np.sum(np.sqrt(r * r + 1.0))
    elif scale > 0.25:
        loss = 0.5 * np.sum(r * r)
    else:                             # close: squares, and a little weight decay
        loss = 0.5 * np.sum(r * r) + 0.1 * np.sum(w * w)
    return loss


def piecewise_loss_hand_grad(w, X, y):
    r = X @ w - y
    scale = np.mean(r * r)
    if scale > 4.0:
        return (X.T @ (r / np.sqrt(r * r + 1.0)),)
    if scale > 0.25:
        return (X.T @ r,)
    g = X.T @ r
    g += 0.2 * w
    return (g,)


def _piecewise_case(name, size, ratio_target, rows, columns, noise):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, columns)) / np.sqrt(columns)
    w = rng.standard_normal(columns)
    y = X @ w + noise * rng.standard_normal(rows)
    return Case(name, size, ratio_target, piecewise_loss, piecewise_loss_hand_grad,
                (0.5 * w, X, y), wrt=(0,))


# --- a fixed-point iteration: a while loop until the state stops changing ------------

def fixed_point(W, b, x):
    h = np.tanh(x @ W + b)
    delta = 1.0
    while delta > 1e-8:
        h_next = np.tanh(x + h @ W + b)
        delta = np.max(np.abs(h_next - h))
        h = h_next
    return np.sum(h * h)


def fixed_point_hand_grad(W, b, x):
    hs = [np.tanh(x @ W + b)]        # every iterate, the first one included
    delta = 1.0
    while delta > 1e-8:
        h_next = np.tanh(x + hs[-1] @ W + b)
        delta = np.max(np.abs(h_next - hs[-1]))
        hs.append(h_next)
    g = 2.0 * hs[-1]
    dW, db = np.zeros_like(W), np.zeros_like(b)
    for k in range(len(hs) - 1, 0, -1):
        da = g * (1.0 - hs[k] * hs[k])
        dW += hs[k - 1].T @ da
        db += da.sum(axis=0)
        g = da @ W.T
    da = g * (1.0 - hs[0] * hs[0])
    dW += x.T @ da
    db += da.sum(axis=0)
    return dW, db


def _fixed_point_case(name, size, ratio_target, batch, n):
    rng = np.random.default_rng(0)
    # a contraction (spectral norm 0.5), so the iteration converges in about 25 steps
    W = rng.standard_normal((n, n))
    W *= 0.5 / np.linalg.norm(W, 2)
    b = 0.1 * rng.standard_normal(n)
    x = rng.standard_normal((batch, n))
    return Case(name, size, ratio_target, fixed_point, fixed_point_hand_grad, (W, b, x),
                wrt=(0, 1))


# --- the table -----------------------------------------------------------------------

# name: builder(name, size, ratio target, dimensions...)
CASES = {
    "mlp_small": lambda: _mlp_case("mlp_small", "small", 1.25, 32, 16, 32, 4),
    "mlp_large": lambda: _mlp_case("mlp_large", "large", 1.10, 256, 512, 512, 64),
    "softmax_xent_small": lambda: _xent_case("softmax_xent_small", "small", 1.25, 64, 32, 10),
    "softmax_xent_large": lambda: _xent_case("softmax_xent_large", "large", 1.10, 1024, 512, 100),
    # steps, batch, inputs, hidden units
    "rnn_small": lambda: _rnn_case("rnn_small", "small", 1.30, 20, 8, 16, 32),
    "rnn_large": lambda: _rnn_case("rnn_large", "large", 1.30, 50, 64, 256, 256),
    "scalar_recurrence": lambda: _recurrence_case("scalar_recurrence", "small", 1.30),
    # rows, columns, noise (the middle branch is taken)
    "piecewise_small": lambda: _piecewise_case("piecewise_small", "small", 1.15, 64, 16, 1.0),
    "piecewise_large": lambda: _piecewise_case("piecewise_large", "large", 1.15, 4096, 256, 1.0),
    # batch, state size
    "fixed_point_small": lambda: _fixed_point_case("fixed_point_small", "small", 1.15, 8, 16),
    "fixed_point_large": lambda: _fixed_point_case("fixed_point_large", "large", 1.15, 128, 256),
}

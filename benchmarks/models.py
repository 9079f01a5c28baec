"""Benchmark cases: plain NumPy models, their hand-written gradients, seeded inputs.

A case pairs the function a user would write with the gradient an expert would write
by hand for it. The user functions are written exactly as a user would, with ``np``
as their only global, because the benchmark recompiles them from source (to time a
fresh ``st.grad``) and rebinds ``np`` (to run them under autograd, JAX or PyTorch).

To add a case, write the model and its hand gradient, a builder that returns a
``Case``, and one line in ``CASES``. Every input is drawn from
``np.random.default_rng(0)`` so that runs are comparable.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    """One benchmark case.

    Attributes:
        name: key in ``CASES``.
        size: ``"small"`` or ``"large"``; selects the speed target.
        fn: the user's function, returning a scalar loss.
        hand_grad: ``hand_grad(*args)`` returns the tuple of gradients of ``fn``
            with respect to ``args[i]`` for each ``i`` in ``wrt``, in that order.
        args: the inputs, all float64 arrays.
        wrt: positions of the arguments to differentiate with respect to.
    """

    name: str
    size: str
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


def _mlp_case(name, size, batch, n_in, n_hidden, n_out):
    rng = np.random.default_rng(0)
    # Scaled so that tanh is not saturated: the backward pass then does real work.
    W1 = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
    b1 = 0.1 * rng.standard_normal(n_hidden)
    W2 = rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)
    b2 = 0.1 * rng.standard_normal(n_out)
    x = rng.standard_normal((batch, n_in))
    t = rng.standard_normal((batch, n_out))
    return Case(name, size, mlp_loss, mlp_loss_hand_grad,
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


def _xent_case(name, size, batch, n_in, n_classes):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((n_in, n_classes)) / np.sqrt(n_in)
    b = 0.1 * rng.standard_normal(n_classes)
    x = rng.standard_normal((batch, n_in))
    labels_onehot = np.eye(n_classes)[rng.integers(0, n_classes, size=batch)]
    return Case(name, size, xent, xent_hand_grad, (W, b, x, labels_onehot), wrt=(0, 1))


# --- the table -----------------------------------------------------------------------

CASES = {
    "mlp_small": lambda: _mlp_case("mlp_small", "small", 32, 16, 32, 4),
    "mlp_large": lambda: _mlp_case("mlp_large", "large", 256, 512, 512, 64),
    "softmax_xent_small": lambda: _xent_case("softmax_xent_small", "small", 64, 32, 10),
    "softmax_xent_large": lambda: _xent_case("softmax_xent_large", "large", 1024, 512, 100),
}

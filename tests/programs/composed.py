"""Functions for the forward-mode and composed-derivative tests (srctrans reads their source)."""

import numpy as np

import srctrans as st


# -- the seed scenarios ------------------------------------------------------------
def dense_relu(x, kernel, bias):
    return np.maximum(x @ kernel + bias, 0.0)


def elu(z):
    return np.where(z > 0, z, np.exp(np.minimum(z, 0.0)) - 1.0)


def two_elu_layers(x, W1, b1, W2, b2):
    return elu(elu(x @ W1 + b1) @ W2 + b2)


def two_relu_layers_loss(W1, b1, W2, b2, x):
    h = np.maximum(x @ W1 + b1, 0.0)
    y = np.maximum(h @ W2 + b2, 0.0)
    return np.mean(y ** 2)


def linear_regression_loss(kernel, bias, x, y):
    prediction = x @ kernel + bias
    return np.mean((prediction - y) ** 2)


def power_3_5(p):
    return p ** 3.5


def first_derivative_of_power(p):
    _, dp = st.jvp(power_3_5, (p,), (1.0,))
    return dp


def sum_of_cubes(v):
    return np.sum(v ** 3)


def cube(x):
    return x ** 3


def squared_activations(x, kernel, bias):
    return np.sum(dense_relu(x, kernel, bias) ** 2)


def input_gradient_norm(kernel, bias, x):
    g1 = st.grad(squared_activations)(x, kernel, bias)
    return np.sqrt(np.sum(g1 * g1))


# -- nesting in every order -----------------------------------------------------------
def smooth(x, y):
    return np.sin(x) * y + x * x * np.exp(-y)


def grad_of_smooth_wrt_x(x, y):
    return st.grad(smooth)(x, y)


def jvp_of_smooth_along_x(x, y):
    _, t = st.jvp(smooth, (x, y), (1.0, None))
    return t


gradient_of_smooth = st.grad(smooth)


def via_global_gradient(x, y):
    return gradient_of_smooth(x, y) * y


# -- forward mode over the language -----------------------------------------------------
def mlp_loss(x, W1, b1, W2, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2
    return np.sum((y - t) ** 2)


def loop_with_branch(x, n):
    acc = 0.0
    ys = []
    for i in range(n):
        x = x * np.sin(x) + 1.0
        if np.sum(x) > 0:
            acc = acc + x[0]
        ys.append(x)
    z = np.stack(ys)
    a = np.zeros(3)
    a[1] = acc
    return np.sum(z) + a.sum()


def while_loop(x):
    k = 0
    while k < 4:
        x = np.cos(x) + x
        k = k + 1
    return x


def takes_dict(params, x):
    return np.tanh(x @ params["W"] + params["b"])


def returns_tuple(x, y):
    return x * y, np.sin(x)


def calls_helper(x, W):
    return np.sum(dense_relu(x, W, 0.5) * x[:, :1])


def constant_output(x):
    return np.ones(3)


def unary_only(x, y):
    return x + 2.0 * y


def broadcast_add(x, y):
    return x + y


def rolled(x, w):
    for i in range(3):
        x = np.sin(x * w) * x
    return np.sum(x)


def hundredfold_rule(tangents, ans, p):
    """A JVP rule for power_3_5 (deliberately not its derivative), in a test of st.register_jvp."""
    return 100.0 * tangents[0]


def appends_a_constant_last(x, n):
    ys = []
    for i in range(n):
        ys.append(x * (i + 1.0))
    ys.append(np.zeros(3))
    return np.sum(np.stack(ys) * np.arange(1.0, n + 2.0)[:, None])


def gaussian_nll(params, data):
    """A negative log likelihood of a dict of parameters (with a constant int entry)."""
    z = (data - params["mu"]) / np.exp(params["log_sigma"])
    return np.sum(0.5 * z * z + params["log_sigma"]) * params["count"]


def layered_outputs(layers, x):
    """A vector output of a list of (weights, bias) pairs."""
    for W, b in layers:
        x = np.tanh(x @ W + b)
    return x

"""Fit a Gaussian process's hyperparameters by maximum likelihood, through np.linalg.

Run it with ``python samples/gaussian_process.py``. Noisy samples of a smooth
function are modelled by a Gaussian process with a squared-exponential kernel; its
three hyperparameters (length scale, signal variance, noise variance, on a log scale
so that they stay positive) are fitted by minimising the negative log marginal
likelihood, written in plain NumPy with ``np.linalg.cholesky`` and
``np.linalg.solve``. srctrans differentiates through both: ``st.value_and_grad``
drives gradient descent, and ``st.hessian`` at the optimum shows it is a minimum
(every eigenvalue positive) and gives the hyperparameters' standard errors.
"""

import argparse

import numpy as np

import srctrans as st


def negative_log_likelihood(log_params, x, y):
    """``-log p(y | x)`` of a zero-mean GP with kernel ``s2 exp(-(x - x')^2 / (2 l^2))``."""
    length, signal, noise = np.exp(log_params[0]), np.exp(log_params[1]), np.exp(log_params[2])
    squared_distances = (x[:, None] - x[None, :]) ** 2
    K = signal * np.exp(-0.5 * squared_distances / (length * length)) + noise * np.eye(x.shape[0])
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diagonal(L))) + 0.5 * x.shape[0] * np.log(2 * np.pi)


value_and_gradient = st.value_and_grad(negative_log_likelihood)
hessian = st.hessian(negative_log_likelihood)


def fit(x, y, iterations, learning_rate=0.05):
    """Adam on the log hyperparameters, from length scale, variances 1."""
    log_params = np.zeros(3)
    first, second = np.zeros(3), np.zeros(3)
    for t in range(1, iterations + 1):
        value, gradient = value_and_gradient(log_params, x, y)
        if t == 1 or t % max(1, iterations // 5) == 0:
            print(f"iteration {t:4d}  -log likelihood {value:9.4f}")
        first = 0.9 * first + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient * gradient
        step = first / (1 - 0.9 ** t) / (np.sqrt(second / (1 - 0.999 ** t)) + 1e-8)
        log_params = log_params - learning_rate * step
    return log_params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=40)
    parser.add_argument("--iterations", type=int, default=400)
    options = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3.0, 3.0, options.points))
    y = np.sin(2.0 * x) + rng.normal(0.0, 0.1, options.points)    # noise variance 0.01

    log_params = fit(x, y, options.iterations)
    length, signal, noise = np.exp(log_params)
    print(f"length scale {length:.3f}, signal variance {signal:.3f}, noise variance {noise:.4f}")

    H = hessian(log_params, x, y)
    eigenvalues = np.linalg.eigvalsh(H)
    print("Hessian eigenvalues at the optimum:", np.array2string(eigenvalues, precision=2))
    print("a minimum:", bool(np.all(eigenvalues > 0)))
    errors = np.sqrt(np.diag(np.linalg.inv(H)))
    print("standard errors of the log hyperparameters:", np.array2string(errors, precision=3))
    return log_params


if __name__ == "__main__":
    main()

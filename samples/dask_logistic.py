"""Fit a logistic regression on a chunked Dask dataset with gradients srctrans derives.

Run it with ``python samples/dask_logistic.py`` (needs ``pip install "srctrans[dask]"``).
``--rows``, ``--features`` and ``--chunk-rows`` set the dataset's size (a small
default); ``--workers`` the size of the local cluster; ``--steps`` the number of
gradient steps. The loss is plain NumPy: srctrans differentiates it as it would
for NumPy arrays, and because NumPy dispatches its functions to Dask arrays, the
gradient it returns is a lazy Dask array. Each step computes the loss and the
gradient together, chunk by chunk on the workers; only the weights and the
gradient (one number per feature) ever come back to this process.
"""

import argparse

import numpy as np

import srctrans as st


def nll(w, X, y):
    """The mean negative log-likelihood of labels ``y`` (0 or 1) under logits ``X @ w``."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) / X.shape[0]


def make_data(rows, features, chunk_rows, seed=0):
    """Features and labels drawn on the workers, chunk by chunk (nothing is built here)."""
    import dask.array as da
    state = da.random.RandomState(seed)
    X = state.normal(size=(rows, features), chunks=(chunk_rows, features))
    true_w = np.linspace(-2.0, 2.0, features)
    y = (state.random_sample(rows, chunks=chunk_rows) < 1.0 / (1.0 + da.exp(-(X @ true_w))))
    return X, y.astype(float), true_w


def fit(X, y, steps, rate):
    """Gradient descent from zero: ``steps`` steps of size ``rate``; prints the loss."""
    import dask
    w = np.zeros(X.shape[1])
    value_and_grad = st.value_and_grad(nll)
    for step in range(steps):
        loss, g = value_and_grad(w, X, y)          # lazy Dask arrays: nothing computed yet
        loss, g = dask.compute(loss, g)            # one pass over the chunks, on the cluster
        print(f"step {step:3d}  loss {float(loss):.5f}  |gradient| {np.linalg.norm(g):.2e}")
        w = w - rate * g
    return w


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--chunk-rows", type=int, default=25_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rate", type=float, default=2.0)
    options = parser.parse_args()

    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=options.workers, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster):
        X, y, true_w = make_data(options.rows, options.features, options.chunk_rows)
        print(f"{options.rows} rows x {options.features} features in chunks of "
              f"{options.chunk_rows} rows, on {options.workers} workers")
        w = fit(X, y, options.steps, options.rate)
        print("fitted weights:", np.round(w, 2))
        print("true weights:  ", np.round(true_w, 2))


if __name__ == "__main__":
    main()

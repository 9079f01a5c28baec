"""Gradients, VJPs, JVPs, HVPs, Jacobians and Hessians of NumPy code over Dask arrays, lazily,
on a local cluster.

A ``dask.distributed.LocalCluster`` on the loopback interface (two workers,
one thread each) runs what the tests compute. While srctrans builds and runs a
derivative, Dask's scheduler is one that fails on any computation: every
result must come back as a Dask array that nothing has computed yet. Computed
on the cluster, it must equal the derivative srctrans gives for the same data
as NumPy arrays.
"""

import numpy as np
import pytest

import srctrans as st

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")


class Computed(AssertionError):
    """Dask was asked to compute while srctrans ran."""


def _refuse(dsk, keys, **kwargs):
    raise Computed("srctrans made Dask compute")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None, processes=True) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def linear(w, b, X, y):
    return np.mean((X @ w + b - y) ** 2)


def logistic(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) / X.shape[0]


def mlp(W1, b1, w2, X, y):
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ w2 - y) ** 2)


def loop(w, X):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(X @ w * (i + 1.0)))
    return s


def branch(w, X):
    z = X @ w
    if np.sum(z) > 0.0:              # a branch on a data value: Python computes here too
        return np.sum(z ** 2)
    return np.sum(np.abs(z))


RNG = np.random.default_rng(7)
X_NP = RNG.normal(size=(400, 5))
Y_NP = (RNG.random(400) > 0.5).astype(float)
W1 = RNG.normal(size=(5, 4))
B1 = RNG.normal(size=4)
CASES = {
    "linear": (linear, (RNG.normal(size=5), 0.3)),
    "logistic": (logistic, (RNG.normal(size=5),)),
    "mlp": (mlp, (W1, B1, RNG.normal(size=4))),
    "loop": (loop, (RNG.normal(size=5),)),
}


def _data(f, chunked):
    X = da.from_array(X_NP, chunks=(100, 5)) if chunked else X_NP
    y = da.from_array(Y_NP, chunks=100) if chunked else Y_NP
    return (X,) if f is loop else (X, y)


def _flat(value):
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _flat(v)]
    return [value]


def _lazy_then_equal(client, run, f, params, data_numpy, data_dask):
    with dask.config.set(scheduler=_refuse):
        lazy = run(f, params + data_dask, len(params))
    arrays = [v for v in _flat(lazy) if v is not None]
    assert arrays and all(isinstance(v, da.Array) for v in arrays), \
        [type(v).__name__ for v in _flat(lazy)]
    got = client.compute(lazy, sync=True) if not isinstance(lazy, tuple) else \
        tuple(client.compute([v for v in _flat(lazy) if v is not None], sync=True))
    want = run(f, params + data_numpy, len(params))
    for a, b in zip(_flat(got), [v for v in _flat(want) if v is not None]):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-9, atol=1e-12)


def _tangents(params, data):
    return tuple(np.ones_like(p) for p in params) + tuple(np.zeros(np.shape(d)) for d in data)


TRANSFORMS = {      # (f, args, how many leading args are parameters) -> derivative
    "grad": lambda f, args, n: st.grad(f)(*args),
    "grad-data": lambda f, args, n: st.grad(f, wrt=n)(*args),
    "value_and_grad": lambda f, args, n: st.value_and_grad(f)(*args),
    "jvp": lambda f, args, n: st.jvp(f, args, _tangents(args[:n], args[n:])),
    "hvp": lambda f, args, n: st.hvp(f, args, _tangents(args[:n], args[n:])),
    "vjp": lambda f, args, n: st.vjp(f, *args, wrt=tuple(range(n)))[1](1.0),
    "jacobian": lambda f, args, n: st.jacobian(f)(*args),
    "hessian": lambda f, args, n: st.hessian(f)(*args),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_derivative_is_lazy_and_right(client, name, transform):
    f, params = CASES[name]
    params = tuple(np.asarray(p, dtype=float) if np.ndim(p) else float(p) for p in params)
    _lazy_then_equal(client, TRANSFORMS[transform], f, params,
                     _data(f, chunked=False), _data(f, chunked=True))


def test_a_branch_on_data_computes_as_python_does(client):
    """``if`` on a Dask value computes that value (plain Python does the same); the gradient
    is still a lazy array, equal to NumPy's."""
    w = np.ones(5)
    X = da.from_array(X_NP, chunks=(100, 5))
    got = st.grad(branch)(w, X)
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(client.compute(got, sync=True), st.grad(branch)(w, X_NP))


def test_unknown_chunk_sizes_stay_lazy(client):
    """A Dask array whose chunk sizes are unknown (after a boolean selection) runs the generic
    path, which never asks for its shape's values."""
    X = da.from_array(X_NP, chunks=(100, 5))
    rows = X[X[:, 0] > 0.0]                      # unknown chunk sizes: shape (nan, 5)
    assert np.isnan(rows.shape[0])
    w = np.ones(5)
    with dask.config.set(scheduler=_refuse):
        g = st.grad(lambda_free_loss)(w, rows)
    assert isinstance(g, da.Array)
    kept = X_NP[X_NP[:, 0] > 0.0]
    np.testing.assert_allclose(client.compute(g, sync=True), st.grad(lambda_free_loss)(w, kept))


def lambda_free_loss(w, X):
    return np.sum(np.tanh(X @ w) ** 2)


def mean_loss(w, X):
    return np.mean(X @ w) + np.mean(np.tanh(X), axis=0) @ w


def variance_loss(w, X):
    return np.var(X @ w)


def test_a_mean_over_unknown_chunk_sizes_counts_lazily(client):
    """The issue's reproducer: the mean's gradient divided by a length that was NaN, so both
    gradients computed to NaN (and the one with respect to X failed its shape check)."""
    X = da.from_array(X_NP, chunks=(100, 5))
    rows = X[X[:, 0] > 0.0]
    kept = X_NP[X_NP[:, 0] > 0.0]
    w = np.linspace(-1.0, 1.0, 5)
    for wrt in (0, 1):
        with dask.config.set(scheduler=_refuse):
            g = st.grad(mean_loss, wrt=wrt)(w, rows)
        assert isinstance(g, da.Array)
        np.testing.assert_allclose(client.compute(g, sync=True),
                                   st.grad(mean_loss, wrt=wrt)(w, kept), rtol=1e-12)
    with pytest.raises(st.UnsupportedArrayError, match="compute_chunk_sizes"):
        st.grad(variance_loss)(w, rows)


@pytest.mark.parametrize("function, name", [
    ("taken", "np.take"), ("masked_write", "writing through a boolean mask")])
def test_a_derivative_that_needs_numpy_says_so(client, function, name):
    """np.take's gradient scatters with np.add.at, and a write through a mask must put back
    values of unknown length: on a Dask array each is refused, naming what, instead of
    computing all the data."""
    x = da.from_array(np.linspace(-0.9, 0.9, 8), chunks=4)
    with dask.config.set(scheduler=_refuse), pytest.raises(st.UnsupportedArrayError,
                                                           match=f"{name}.* needs NumPy arrays"):
        st.grad(globals()[function])(x)


def taken(x):
    return np.sum(np.take(x, [0, 2, 2]) ** 2)


def masked_write(x):
    y = x * 2.0
    y[y < 0] = 0.0
    return np.sum(y ** 2)

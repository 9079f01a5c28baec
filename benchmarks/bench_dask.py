"""One gradient step over a dataset larger than one process should hold, on Dask.

Run from the repository root (needs ``pip install -e ".[dask]"``):

    python benchmarks/bench_dask.py                       # 4 GB in chunks of 32 MB
    python benchmarks/bench_dask.py --gigabytes 0.5       # a quick run
    python benchmarks/bench_dask.py --rounds 5            # more rounds, a steadier best
    python benchmarks/bench_dask.py --tasks               # the graphs' sizes only

The dataset is a float64 matrix of ``--features`` columns and as many rows as
``--gigabytes`` take, drawn chunk by chunk on the workers of a local cluster
(``--workers`` processes, one thread each), so no process ever holds all of it.
The loss is the logistic regression's negative log-likelihood, plain NumPy;
``st.value_and_grad`` gives its value and gradient as lazy Dask arrays, and one
``dask.compute`` runs them on the cluster.

The step by srctrans and the value and gradient written by hand for Dask take turns,
``--rounds`` times each (the first to go alternating from round to round), each step on
a cluster of its own, so that its time and the workers' peaks are that step's alone.
Prints, for each step: the time, each worker's peak resident memory (and its resident
memory before the step, what Python, NumPy and Dask take), and the client's; then the
best time of each and their ratio; then the same gradient on an in-memory NumPy array of
``--numpy-gigabytes`` for comparison, as seconds per gigabyte. The machine is shared:
one step's time can be a tenth off, so a ratio is read from the best of the rounds.
"""

import argparse
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import srctrans as st  # noqa: E402  (the checkout, not an installed copy)


def nll(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) / X.shape[0]


def peak_rss_mb():
    """This process's peak resident memory so far, in MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def hand_written(w, X, y):
    """The value and gradient of ``nll`` as an expert writes them for Dask by hand."""
    z = X @ w
    loss = np.sum(np.logaddexp(0.0, z) - y * z) / X.shape[0]
    return loss, X.T @ (1.0 / (1.0 + np.exp(-z)) - y) / X.shape[0]


def dask_step(gigabytes, features, chunk_mb, workers, by_hand=False):
    """One value-and-gradient step on a new local cluster (so that each worker's peak memory
    is this step's); by srctrans, or ``by_hand``."""
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    rows = int(gigabytes * 2 ** 30 / (8 * features))
    chunk_rows = int(chunk_mb * 2 ** 20 / (8 * features))
    with LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None, memory_limit=None) as cluster, \
            Client(cluster) as client:
        state = da.random.RandomState(0)
        X = state.normal(size=(rows, features), chunks=(chunk_rows, features))
        y = (state.random_sample(rows, chunks=chunk_rows) < 0.5).astype(float)
        w = np.linspace(-1.0, 1.0, features)
        client.run(lambda: None)
        before = client.run(current_rss_mb)
        start = time.perf_counter()
        if by_hand:
            loss, g = hand_written(w, X, y)
        else:
            loss, g = st.value_and_grad(nll)(w, X, y)  # lazy: builds the graph
        built = time.perf_counter() - start
        loss, g = dask.compute(loss, g)
        elapsed = time.perf_counter() - start
        peaks = client.run(peak_rss_mb)
    print(f"Dask, {'written by hand' if by_hand else 'srctrans'}: {rows:,} x {features} float64 "
          f"= {rows * features * 8 / 2 ** 30:.2f} GB in {-(-rows // chunk_rows)} chunks of "
          f"{chunk_mb} MB, {workers} workers")
    print(f"  one value-and-gradient step: {elapsed:.2f} s ({elapsed / gigabytes:.2f} s/GB; "
          f"building the lazy graph took {built * 1e3:.1f} ms), loss {float(loss):.5f}")
    for (address, peak), resting in zip(sorted(peaks.items()), [before[a] for a in sorted(peaks)]):
        print(f"  worker {address}: peak {peak:.0f} MB, {resting:.0f} MB before the step "
              f"(peak - before = {(peak - resting) / chunk_mb:.1f} chunks)")
    if not by_hand:
        print(f"  client process: peak {peak_rss_mb():.0f} MB")
    return elapsed / gigabytes


def numpy_step(gigabytes, features):
    rows = int(gigabytes * 2 ** 30 / (8 * features))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, features))
    y = (rng.random(rows) < 0.5).astype(float)
    w = np.linspace(-1.0, 1.0, features)
    value_and_grad = st.value_and_grad(nll)
    value_and_grad(w, X, y)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        value_and_grad(w, X, y)
        best = min(best, time.perf_counter() - start)
    print(f"NumPy in memory: {gigabytes:.2f} GB, one value-and-gradient step {best:.2f} s "
          f"({best / gigabytes:.2f} s/GB; the data already in memory, not drawn)")
    return best / gigabytes


def task_counts(features, chunks=10, chunk_rows=10_000):
    """The tasks of the lazy value and gradient, srctrans's and the hand-written ones, before
    and after Dask's optimisation (which fuses a chunk's elementwise steps), for an array of
    ``chunks`` chunks: ``{"srctrans": (raw, optimised), "hand": (raw, optimised)}``."""
    import dask
    import dask.array as da
    state = da.random.RandomState(0)
    X = state.normal(size=(chunks * chunk_rows, features), chunks=(chunk_rows, features))
    y = (state.random_sample(chunks * chunk_rows, chunks=chunk_rows) < 0.5).astype(float)
    w = np.linspace(-1.0, 1.0, features)

    def count(*values):
        tasks = {}
        for value in values:
            tasks.update(dict(value.__dask_graph__()))
        return len(tasks)
    counts = {}
    for name, step in (("srctrans", st.value_and_grad(nll)), ("hand", hand_written)):
        values = step(w, X, y)
        counts[name] = (count(*values), count(*dask.optimize(*values)))
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=4.0)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--chunk-mb", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--numpy-gigabytes", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=3,
                        help="steps of each, taking turns; the best time of each is compared")
    parser.add_argument("--tasks", action="store_true",
                        help="only count the graphs' tasks (10 chunks, no cluster)")
    options = parser.parse_args()
    if options.tasks:
        counts = task_counts(options.features)
        for name, (raw, optimised) in counts.items():
            print(f"{name:9s} {raw:4d} tasks, {optimised:4d} after Dask's optimisation")
        print(f"srctrans / hand-written: {counts['srctrans'][0] / counts['hand'][0]:.2f}x, "
              f"{counts['srctrans'][1] / counts['hand'][1]:.2f}x optimised")
        return
    best = {False: float("inf"), True: float("inf")}
    for turn in range(options.rounds):
        for by_hand in (False, True) if turn % 2 == 0 else (True, False):
            per_gb = dask_step(options.gigabytes, options.features, options.chunk_mb,
                               options.workers, by_hand=by_hand)
            best[by_hand] = min(best[by_hand], per_gb)
    per_gb_dask, per_gb_hand = best[False], best[True]
    per_gb_numpy = numpy_step(options.numpy_gigabytes, options.features)
    print(f"best of {options.rounds} rounds: srctrans {per_gb_dask:.2f} s/GB, written by hand "
          f"{per_gb_hand:.2f} s/GB")
    print(f"srctrans / hand-written on Dask: {per_gb_dask / per_gb_hand:.2f}x")
    print(f"Dask / NumPy time per GB: {per_gb_dask / per_gb_numpy:.1f}x (Dask also draws "
          f"the data, on {options.workers} processes)")


if __name__ == "__main__":
    main()

"""Memory benchmark: the peak memory of srctrans's gradients against hand-written NumPy.

Run from the repository root:

    python benchmarks/bench_memory.py                  # every case, and the long RNN
    python benchmarks/bench_memory.py --steps 200      # a shorter RNN

For each case in ``models.CASES`` the script measures, with ``tracemalloc`` (which
NumPy reports its array memory to), the peak memory a call allocates beyond what was
allocated before it: the forward pass alone, the hand-written gradient, and the
generated gradient (``st.grad(f, wrt=...)``, called twice first so that building and
specialising are not counted). Then it does the same for a tanh RNN of many steps
(issue 13's: batch 32, 64 -> 128, 1,000 steps) written four ways: plainly, with its
step a function of the user's, with that function marked ``@st.checkpoint``, whose
intermediates the backward pass computes again instead of keeping, and with the loop
marked ``st.checkpointed`` (binomial checkpointing: about sqrt(steps) states kept),
whose gradient is also timed against the plain loop's.

Targets (issue 13): a generated gradient's peak at most 1.1 times the hand-written
one's; the checkpointed loop's peak at most 4 MB, and its time at most 2.5 times the
plain loop's. A target reads PASS or MISS. The checkout this script lives in is
measured, not an installed copy.
"""

import argparse
import os
import sys
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import srctrans as st                 # noqa: E402
from bench_reverse import per_call    # noqa: E402  (interleaved best of repeats)
from models import CASES              # noqa: E402

RATIO_TARGET = 1.10
CHECKPOINTED_TARGET_MB = 4.0
CHECKPOINTED_TIME_TARGET = 2.5


def peak(call):
    """The peak memory ``call()`` allocates beyond what was allocated when it started, in
    bytes (the result is dropped after the measurement)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        top = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return top - before


def rnn_step(x, h, Wx, Wh, b):
    return np.tanh(x @ Wx + h @ Wh + b)


@st.checkpoint
def rnn_step_checkpointed(x, h, Wx, Wh, b):
    return np.tanh(x @ Wx + h @ Wh + b)


def rnn_plain(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def rnn_by_steps(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = rnn_step(xs[t], h, Wx, Wh, b)
    return np.sum(h * h)


def rnn_checkpointed_steps(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = rnn_step_checkpointed(xs[t], h, Wx, Wh, b)
    return np.sum(h * h)


def rnn_checkpointed_loop(Wx, Wh, b, xs, h0):
    h = h0
    for t in st.checkpointed(range(xs.shape[0])):       # about sqrt(steps) states kept
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def measure_case(case):
    """(forward, hand, srctrans) peaks of one case, in bytes."""
    gradient = st.grad(case.fn, wrt=case.wrt)
    for _ in range(2):                            # the build and the specialised build
        gradient(*case.args)
    return (peak(lambda: case.fn(*case.args)), peak(lambda: case.hand_grad(*case.args)),
            peak(lambda: gradient(*case.args)))


def rnn_arguments(steps, batch=32, n_in=64, n_hidden=128):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in),
            rng.standard_normal((n_hidden, n_hidden)) / np.sqrt(n_hidden),
            0.1 * rng.standard_normal(n_hidden), rng.standard_normal((steps, batch, n_in)),
            np.zeros((batch, n_hidden)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps of the long RNN")
    options = parser.parse_args(argv)
    mb = 1 / 2 ** 20
    print("peak memory of one call, MB (tracemalloc)")
    print(f"{'case':<20}{'forward':>10}{'hand':>10}{'srctrans':>10}{'srctrans/hand':>15}  target")
    for name, make in CASES.items():
        forward, hand, generated = measure_case(make())
        ratio = generated / hand if hand else float("inf")
        verdict = "PASS" if ratio <= RATIO_TARGET else "MISS"
        print(f"{name:<20}{forward * mb:>10.3f}{hand * mb:>10.3f}{generated * mb:>10.3f}"
              f"{ratio:>14.2f}x  <= {RATIO_TARGET:.2f}x {verdict}")
    args = rnn_arguments(options.steps)
    print(f"\ntanh RNN, {options.steps} steps, batch 32, 64 -> 128: peak of one gradient, MB")
    forward = peak(lambda: rnn_plain(*args))
    print(f"{'forward pass':<34}{forward * mb:>10.3f}")
    expected = st.grad(rnn_plain, wrt=(0, 1, 2))(*args)
    gradients = {}
    for label, fn in [("plain loop", rnn_plain), ("step as a function", rnn_by_steps),
                      ("step marked @st.checkpoint", rnn_checkpointed_steps),
                      ("loop marked st.checkpointed", rnn_checkpointed_loop)]:
        gradient = gradients[fn] = st.grad(fn, wrt=(0, 1, 2))
        for _ in range(2):
            got = gradient(*args)
        same = all(np.allclose(a, b, rtol=1e-10, atol=1e-12) for a, b in zip(got, expected))
        value = peak(lambda: gradient(*args)) * mb
        line = f"{label:<34}{value:>10.3f}"
        if fn is rnn_checkpointed_loop:
            line += f"  <= {CHECKPOINTED_TARGET_MB:.0f} MB " + \
                ("PASS" if value <= CHECKPOINTED_TARGET_MB else "MISS")
        print(line + ("" if same else "  (gradient differs!)"))
    times = per_call({"plain": lambda: gradients[rnn_plain](*args),
                      "marked": lambda: gradients[rnn_checkpointed_loop](*args)},
                     repeats=7, min_time=0.0, notes={})
    ratio = times["marked"]["best"] / times["plain"]["best"]
    print(f"\ntime of the checkpointed loop's gradient / the plain loop's: {ratio:.2f}x "
          f"(best of 7 interleaved)  <= {CHECKPOINTED_TIME_TARGET:.1f}x "
          + ("PASS" if ratio <= CHECKPOINTED_TIME_TARGET else "MISS"))


if __name__ == "__main__":
    main()

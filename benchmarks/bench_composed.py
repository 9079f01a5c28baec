"""Benchmark forward mode and composed derivatives against the forward pass.

    python benchmarks/bench_composed.py [--quick]

For the two-layer tanh MLP of ``models.py`` (small and large), times in one
interleaved run: the function itself, its JVP (``st.jvp``, along all
weights and along the input), its HVP (``st.hvp``, forward over reverse,
along all weights) and its gradient (``st.grad``), and reports each as a
multiple of the function's time next to the targets of the issue (JVP <=
1.5x, HVP <= 4x, gradient <= 3x), and each JVP against the fewest
multiply-adds any implementation needs (``flop_bounds``): its ratio over that
bound, with issue 13's target (<= 1.1x), and against a JVP written by hand
for that direction (``models.mlp_loss_hand_jvp_*``), timed in the same run. Then, for a 100 -> 100 function, counts the
passes a reverse Jacobian runs (one forward pass, one pullback per output)
and times it against 100 separate vjp calls (a forward pass each).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import srctrans as st                                   # noqa: E402
from bench_reverse import per_call                     # noqa: E402
import models                                          # noqa: E402
from models import CASES                               # noqa: E402

BOUND_TARGET = 1.1        # issue 13: a JVP within 1.1x of its multiply-add lower bound
TARGETS = {"jvp (weights)": 1.5, "jvp (input)": 1.5, "jvp (W2)": 1.5, "hvp (weights)": 4.0,
           "hvp (W2)": 4.0, "grad": 3.0}


def flop_bounds(case):
    """The fewest multiply-adds of the two matrix products, as multiples of the function's.

    The MLP's cost is its two products, x @ W1 (b*i*h) and h @ W2 (b*h*o). A JVP
    must also multiply each tangent that reaches a product, and so on: these
    ratios are what no implementation can go below, at sizes where the
    products dominate.
    """
    W1, _, W2, _, x, _ = case.args
    b, i = x.shape
    h, o = W2.shape
    first, second = b * i * h, b * h * o
    forward = first + second
    return {
        "jvp (weights)": (2 * first + 3 * second) / forward,      # + x@dW1, dh@W2, h@dW2
        "jvp (input)": (2 * first + 2 * second) / forward,        # + dx@W1, dh@W2
        "jvp (W2)": (first + 2 * second) / forward,               # + h@dW2
    }


def mlp_rows(case, settings):
    fn, args = case.fn, case.args
    wrt = case.wrt
    rng = np.random.default_rng(1)
    weights = tuple(rng.standard_normal(np.shape(a)) if i in wrt else None
                    for i, a in enumerate(args))
    x_index = 4                                           # mlp_loss(W1, b1, W2, b2, x, t)
    along_input = tuple(rng.standard_normal(np.shape(a)) if i == x_index else None
                        for i, a in enumerate(args))
    along_w2 = tuple(rng.standard_normal(np.shape(a)) if i == 2 else None
                     for i, a in enumerate(args))              # the output layer's kernel
    gradient = st.grad(fn, wrt=wrt)
    by_hand = {
        "jvp (weights)": lambda: models.mlp_loss_hand_jvp_weights(*args, *weights[:4]),
        "jvp (input)": lambda: models.mlp_loss_hand_jvp_input(*args, along_input[x_index]),
        "jvp (W2)": lambda: models.mlp_loss_hand_jvp_w2(*args, along_w2[2]),
    }
    for column, hand in by_hand.items():          # the hand-written JVPs compute the same
        jvp_tangents = {"jvp (weights)": weights, "jvp (input)": along_input,
                        "jvp (W2)": along_w2}[column]
        expected = st.jvp(fn, args, jvp_tangents)
        if not np.allclose(hand(), expected, rtol=1e-10):
            raise AssertionError(f"the hand-written {column} of {case.name} is wrong")
    columns = {
        "function": lambda: fn(*args),
        "jvp (weights)": lambda: st.jvp(fn, args, weights),
        "hand jvp (weights)": by_hand["jvp (weights)"],
        "jvp (input)": lambda: st.jvp(fn, args, along_input),
        "hand jvp (input)": by_hand["jvp (input)"],
        "jvp (W2)": lambda: st.jvp(fn, args, along_w2),
        "hand jvp (W2)": by_hand["jvp (W2)"],
        "hvp (weights)": lambda: st.hvp(fn, args, weights),
        "hvp (W2)": lambda: st.hvp(fn, args, along_w2),
        "grad": lambda: gradient(*args),
    }
    for run in columns.values():                          # build and specialise first
        run()
    notes = {}
    times = per_call(columns, settings["repeats"], settings["min_time"], notes)
    base = times["function"]["best"]
    rows = []
    bounds = flop_bounds(case)
    for column, result in times.items():
        ratio = result["best"] / base
        target = TARGETS.get(column)
        verdict = "" if target is None else ("PASS" if ratio <= target else "MISS")
        bound = over = versus = ""
        if column in bounds:
            bound, over_bound = f"{bounds[column]:.2f}x", ratio / bounds[column]
            over = f"{over_bound:.2f}x " + ("PASS" if over_bound <= BOUND_TARGET else "MISS")
            versus = f"{result['best'] / times['hand ' + column]['best']:.2f}x"
        rows.append((case.name, column, f"{result['best']:.1f}", f"{ratio:.2f}x",
                     f"<= {target}x" if target else "", verdict, bound, over, versus))
    return rows, notes


def map_100(x, W):
    return np.tanh(x @ W) * x


def jacobian_rows(settings):
    rng = np.random.default_rng(2)
    x, W = rng.standard_normal(100), rng.standard_normal((100, 100)) / 10
    counts = {"forward": 0, "backward": 0}

    def count(frame, event, arg):       # calls of the generated passes of map_100
        if event == "call" and frame.f_code.co_name.startswith("map_100_"):
            kind = frame.f_code.co_name.rsplit("_", 1)[1]
            if kind in ("fwd", "bwd"):
                counts["forward" if kind == "fwd" else "backward"] += 1

    for _ in range(2):        # the first call builds, the second specialises: count the third
        st.jacobian(map_100, mode="reverse")(x, W)
    sys.setprofile(count)
    try:
        st.jacobian(map_100, mode="reverse")(x, W)
    finally:
        sys.setprofile(None)
    jacobian = st.jacobian(map_100, mode="reverse")

    def separate_vjps():
        rows = []
        for k in range(100):
            v = np.zeros(100)
            v[k] = 1.0
            rows.append(st.vjp(map_100, x, W, wrt=0)[1](v)[0])
        return np.stack(rows)

    times = per_call({"reverse jacobian": lambda: jacobian(x, W), "100 vjp calls": separate_vjps},
                     settings["repeats"], settings["min_time"], {})
    return counts, times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter timing loops")
    options = parser.parse_args(argv)
    settings = {"repeats": 3, "min_time": 0.02} if options.quick else {"repeats": 7, "min_time": 0.2}
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{'case':<12} {'what':<18} {'best us':>10} {'ratio':>8} {'target':>9}  {'verdict':<8}"
          f"{'flop bound':<11} {f'over it (<= {BOUND_TARGET}x)':<20} srctrans/hand")
    for name in ("mlp_small", "mlp_large"):
        case = CASES[name]()
        rows, notes = mlp_rows(case, settings)
        for row in rows:
            print(f"{row[0]:<12} {row[1]:<18} {row[2]:>10} {row[3]:>8} {row[4]:>9}  {row[5]:<8}"
                  f"{row[6]:<11} {row[7]:<20} {row[8]}")
        for column, note in notes.items():
            print(f"  {column}: {note}")
    counts, times = jacobian_rows(settings)
    print(f"reverse jacobian of a 100 -> 100 function: {counts['forward']} forward pass(es), "
          f"{counts['backward']} backward passes")
    for column, result in times.items():
        print(f"  {column:<18} {result['best']:.0f} us")


if __name__ == "__main__":
    main()

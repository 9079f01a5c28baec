"""Code written by other people, against its authors' gradients: the real-code corpus timed.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_real.py            # every corpus case
    python benchmarks/bench_real.py --case rnn_layer --case tsne       # some
    python benchmarks/bench_real.py --json real.json

Each case of ``tests/test_corpus.py`` (published NumPy code, written as its authors wrote
it: methods of model classes, parameters in dicts, per-example loops, recurrent layers,
likelihood methods, ...) gives the function, its arguments, the arguments to differentiate
and the authors' hand-written gradient beside it (``loss_hand``, ``rnn_loss_hand``, a
model's ``score``). This times ``st.grad(f, wrt=...)(*args)`` (its short path, after the
calls that specialise it) against that hand gradient, interleaved, best of 45 rounds, at
the sizes the corpus uses, and prints the ratio per case and their geometric mean.

A second table times the held-out cases (``HELD_OUT`` of ``tests/held_out_cases.py``;
``tests/corpus/held_out*.py``): 41 functions written in session 48 as such code is commonly
written, before srctrans was changed for any of them, and kept out of the corpus's targets
so that they keep measuring code srctrans was not shaped for. ``--case`` picks from both
groups.

It also times the function itself as its authors wrote it (``f alone``, over the same hand
gradient). A gradient of the function as written computes what it needs of the function's
own work (the fused gradient skips the rest: the value of a sum it only differentiates), so
where that column is near the ratio's target (``gaussian_process``: a Cholesky factor and two
solves, 0.9 of the authors' whole gradient) the backward pass has little time left.
"""

import argparse
import json
import math
import os
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))                       # this checkout's srctrans
sys.path.insert(0, os.path.join(HERE, "..", "tests"))              # the corpus and its cases

import numpy as np                                                   # noqa: E402

import srctrans as st                                                # noqa: E402
import test_corpus                                                   # noqa: E402
from held_out_cases import HELD_OUT                                  # noqa: E402

# where the authors' gradient is not NAME_hand
_HAND_NAMES = {"loglike": "score", "rosen": "rosen_der", "softmax_xent_shifted": "softmax_xent_hand",
               "softmax_xent_probs": "softmax_xent_hand",
               "softmax_xent_logaddexp": "softmax_xent_hand"}


def hand_gradient(fn):
    """The hand-written gradient beside ``fn`` (``NAME_hand``, a model's ``score``), or None."""
    owner = getattr(fn, "__self__", None)
    name = fn.__name__
    hand_name = _HAND_NAMES.get(name, name + "_hand")
    if hand_name is None:
        return None
    if owner is not None:
        return getattr(owner, hand_name, None)
    return getattr(sys.modules[fn.__module__], hand_name, None)


def cases(names=None, builders=None):
    """``(name, gradient thunk, hand thunk, function thunk)`` per corpus case (``builders``:
    ``test_corpus.CASES`` by default; hand None where it has none taking the function's
    arguments)."""
    found = []
    for build in test_corpus.CASES if builders is None else builders:
        if names and build.__name__ not in names:
            continue
        fn, args, wrt, _ = build()
        hand = hand_gradient(fn)
        gradient = st.grad(fn, wrt=wrt)
        found.append((build.__name__, lambda g=gradient, a=args: g(*a),
                      None if hand is None else (lambda h=hand, a=args: h(*a)),
                      lambda f=fn, a=args: f(*a)))
    return found


def best_us(columns, repeats, min_time=0.01):
    """Microseconds per call of each thunk: the best of ``repeats`` interleaved loops of at
    least ``min_time`` seconds each.

    Many short rounds rather than a few long ones: on a shared machine a slow spell lasts
    long enough to spoil a 50 ms loop of either column, and the best of nine such rounds
    still varied by up to 0.45 in a case's ratio between measurements in one process
    (``vae``, ``damped_clipped``); the best of 45 rounds of 10 ms, the same time in all,
    varied by 0.03-0.19 (session 45).
    """
    numbers = {}
    for column, fn in columns.items():
        number = 1
        while (elapsed := timeit.timeit(fn, number=number)) < min_time:
            number = max(2 * number, int(number * 1.2 * min_time / max(elapsed, 1e-9)))
        numbers[column] = number
    best = {column: math.inf for column in columns}
    for _ in range(repeats):
        for column, fn in columns.items():
            best[column] = min(best[column], timeit.timeit(fn, number=numbers[column])
                               / numbers[column])
    return {column: 1e6 * value for column, value in best.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="a corpus case's name (repeatable)")
    parser.add_argument("--repeats", type=int, default=45)
    parser.add_argument("--json", metavar="PATH")
    options = parser.parse_args(argv)
    st.set_cache_directory(None)
    report = {}
    for group, builders in (("corpus", test_corpus.CASES), ("held out", HELD_OUT)):
        rows = _timed(cases(options.case, builders), options.repeats)
        if rows:
            _print(group, rows)
            report[group] = rows
    if options.json:
        with open(options.json, "w") as handle:
            json.dump({"groups": report, "numpy": np.__version__}, handle, indent=1)


def _timed(found, repeats):
    """One row per case: its times and ratios, or a note of why it has none."""
    rows = []
    for name, gradient, hand, function in found:
        for _ in range(3):
            gradient()                     # generic, specialised, then the short path
        if hand is None:
            rows.append({"case": name, "note": "no hand gradient with the same arguments"})
            continue
        try:
            hand()
        except Exception as error:         # the authors' gradient takes other arguments
            rows.append({"case": name, "note": f"hand gradient: {type(error).__name__}"})
            continue
        us = best_us({"hand": hand, "srctrans": gradient, "function": function}, repeats)
        rows.append({"case": name, "hand_us": us["hand"], "srctrans_us": us["srctrans"],
                     "ratio": us["srctrans"] / us["hand"], "function_us": us["function"],
                     "function_ratio": us["function"] / us["hand"]})
    return rows


def _print(group, rows):
    """A group's table, and its geometric mean and worst case."""
    ratios = [row["ratio"] for row in rows if "ratio" in row]
    print(f"\n{group}\n{'case':24} {'hand us':>10} {'srctrans us':>12} {'ratio':>7} "
          f"{'f alone':>8}")
    for row in rows:
        if "ratio" in row:
            print(f"{row['case']:24} {row['hand_us']:10.1f} {row['srctrans_us']:12.1f} "
                  f"{row['ratio']:6.2f}x {row['function_ratio']:7.2f}x")
        else:
            print(f"{row['case']:24} {row['note']}")
    if ratios:
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        worst = max(rows, key=lambda r: r.get("ratio", 0))
        print(f"\n{group}, {len(ratios)} cases: geometric mean {mean:.2f}x, worst "
              f"{worst['ratio']:.2f}x ({worst['case']})")


if __name__ == "__main__":
    main()

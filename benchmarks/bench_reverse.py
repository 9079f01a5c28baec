"""Reverse-mode benchmark: srctrans's generated gradients against hand-written NumPy.

Run from the repository root:

    python benchmarks/bench_reverse.py                    # every case, full repeats
    python benchmarks/bench_reverse.py --quick            # fewer, shorter repeats
    python benchmarks/bench_reverse.py --case mlp_small --case mlp_large
    python benchmarks/bench_reverse.py --json results.json
    python benchmarks/bench_reverse.py --plot docs/benchmarks.png   # the chart of the docs

For each case in ``models.CASES`` the script first checks that the gradient from
``st.grad(f, wrt=...)`` matches the hand-written one (``np.allclose``), then times, per
call: the forward pass alone, the hand-written gradient, the generated gradient, and
autograd, JAX (plain and jitted) and PyTorch when they are installed. A timing is the
best of several repeats, each long enough to be measured, the columns taking turns
(see ``per_call``). The first call of srctrans (build and run) is timed on a fresh
copy of the function, loaded anew from its source, with the persistent cache switched
off, so that no cache can hold it; its median over the repeats is reported, and the
median of the second call, which builds the code specialised on the shapes.

Targets: generated/hand at most the case's ``ratio_target`` (1.25 on the small
MLP and softmax cases, 1.10 on the large ones, 1.30 on the loops); first call
under 50 ms. A target reads PASS or MISS; ERR when srctrans failed, and WRONG when
its gradient did not match. If srctrans cannot be imported or fails on a case, the
error is printed and the run goes on. The checkout this script lives in is benchmarked,
not an installed copy.
"""

import argparse
import importlib.util
import inspect
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import textwrap
import time
import timeit
from pathlib import Path

import numpy as np

# Benchmark this checkout, even when another srctrans is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frameworks import FRAMEWORKS, NotInstalled  # noqa: E402
from models import CASES  # noqa: E402

try:
    import srctrans as st
    SRCTRANS_IMPORT_ERROR = None
except Exception as error:  # the compiler is under construction: report, do not crash
    st = None
    SRCTRANS_IMPORT_ERROR = f"import srctrans: {type(error).__name__}: {error}"

FIRST_CALL_TARGET_MS = 50.0

FULL = {"repeats": 7, "min_time": 0.2, "first_calls": 7}
QUICK = {"repeats": 3, "min_time": 0.02, "first_calls": 3}


def srctrans_grad(case, fn=None):
    """The one place this benchmark calls the srctrans API."""
    return st.grad(case.fn if fn is None else fn, wrt=case.wrt)


# --- measuring -----------------------------------------------------------------------

WARM_UP_CALLS = 3


def per_call(columns, repeats, min_time, notes):
    """Seconds per call of each ``fn()`` in ``columns``: best and median of ``repeats`` loops.

    Each ``fn`` is called :data:`WARM_UP_CALLS` times first: srctrans builds on its first
    calls, and a build timed in the count-finding loop would leave a count of a few calls,
    whose loops then time the timer as much as the function.

    Each loop runs ``fn`` enough times to last at least ``min_time`` seconds, like
    ``timeit.Timer.autorange`` but with an adjustable floor. The columns take
    turns within each repeat, so a slow spell of the machine (other load, the
    CPU's clock) falls on all of them alike instead of on whichever ran then.
    A column that raises is left out, with its error in ``notes``.
    """
    timers = {}
    for column, fn in columns.items():
        timer = timeit.Timer(fn)
        try:
            for _ in range(WARM_UP_CALLS):   # the calls that build (generic, specialised,
                fn()                         # the short path) must not set the loop's count
            number = 1
            while (elapsed := timer.timeit(number)) < min_time:
                number = max(2 * number, int(number * 1.2 * min_time / max(elapsed, 1e-9)))
        except Exception as error:
            notes[column] = describe(error)
            continue
        timers[column] = (timer, number)
    loops = {column: [] for column in timers}
    for _ in range(repeats):
        for column, (timer, number) in timers.items():
            loops[column].append(timer.timeit(number) / number)
    return {column: {"best": 1e6 * min(times), "median": 1e6 * statistics.median(times)}
            for column, times in loops.items()}


_fresh_names = (f"_bench_fresh_{n}" for n in itertools.count())


def fresh_copy(fn, directory):
    """Load ``fn`` again from its source, as a new module in ``directory``.

    The copy has a new code object, a real source file and the same globals, so a
    cache keyed on the function or its code misses, and source lookup still works.
    The caller removes ``sys.modules[copy.__module__]`` when done.
    """
    name = next(_fresh_names)
    path = Path(directory) / f"{name}.py"
    path.write_text(textwrap.dedent(inspect.getsource(fn)))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update({k: v for k, v in fn.__globals__.items() if not k.startswith("__")})
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, fn.__name__)


def first_call_ms(case, count, directory):
    """Milliseconds for ``st.grad`` on a never-seen function plus its first call,
    and for its second call (which builds the code specialised on the shapes).

    srctrans itself is already imported and has built the case once, so this is the
    cost a user pays per new function, not the one-off cost of loading the compiler.
    """
    firsts, seconds = [], []
    for _ in range(count):
        fresh = fresh_copy(case.fn, directory)
        if hasattr(st, "clear_cache"):
            st.clear_cache()
        try:
            start = time.perf_counter()
            gradient = srctrans_grad(case, fresh)
            gradient(*case.args)
            middle = time.perf_counter()
            gradient(*case.args)
            firsts.append(middle - start)
            seconds.append(time.perf_counter() - middle)
        finally:
            del sys.modules[fresh.__module__]
    return {"median": 1e3 * statistics.median(firsts), "best": 1e3 * min(firsts),
            "second_median": 1e3 * statistics.median(seconds)}


# --- checking ------------------------------------------------------------------------

def describe(error):
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def as_tuple(gradients):
    return (gradients,) if isinstance(gradients, np.ndarray) else tuple(gradients)


def compare(got, expected):
    """None if ``got`` matches ``expected`` gradient for gradient, else what differs."""
    got = [np.asarray(g) for g in as_tuple(got)]
    expected = [np.asarray(e) for e in expected]  # a hand gradient may return floats
    if len(got) != len(expected):
        return f"returned {len(got)} gradients, expected {len(expected)}"
    for k, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape:
            return f"gradient {k} has shape {g.shape}, expected {e.shape}"
        if not np.allclose(g, e):
            return f"gradient {k} differs by up to {np.max(np.abs(g - e)):.3g}"
    return None


def build_runners(case):
    """The gradient implementations to time for ``case``, checked against the hand one.

    Returns ``(runners, notes)``: ``runners`` maps a column to a zero-argument
    callable, ``notes`` maps a column to its error or mismatch, if any.
    """
    expected = case.hand_grad(*case.args)
    runners, notes = {}, {}

    if st is None:
        notes["srctrans"] = SRCTRANS_IMPORT_ERROR
    else:
        try:
            gradient = srctrans_grad(case)
            runners["srctrans"] = lambda: gradient(*case.args)
            mismatch = compare(runners["srctrans"](), expected)
            if mismatch:
                notes["srctrans"] = f"WRONG: {mismatch}"
        except Exception as error:
            runners.pop("srctrans", None)
            notes["srctrans"] = describe(error)

    for column, make in FRAMEWORKS.items():
        try:
            runners[column] = make(case)
            mismatch = compare(runners[column](), expected)
            if mismatch:
                notes[column] = f"WRONG: {mismatch}"
        except NotInstalled:
            runners.pop(column, None)
            notes[column] = "not installed"
        except Exception as error:
            runners.pop(column, None)
            notes[column] = describe(error)
    return runners, notes


# --- running -------------------------------------------------------------------------

def run_case(case, runners, notes, settings, directory):
    timing = {"repeats": settings["repeats"], "min_time": settings["min_time"]}
    columns = {"forward": lambda: case.fn(*case.args),
               "hand": lambda: case.hand_grad(*case.args),
               **runners}
    us = per_call(columns, notes=notes, **timing)

    first = None
    if "srctrans" in runners:
        try:
            first = first_call_ms(case, settings["first_calls"], directory)
        except Exception as error:
            notes["srctrans first call"] = describe(error)

    ratio = us["srctrans"]["best"] / us["hand"]["best"] if "srctrans" in us else None
    wrong = notes.get("srctrans", "").startswith("WRONG")
    return {
        "case": case.name,
        "size": case.size,
        "us_per_call": us,
        "srctrans_over_hand": ratio,
        "srctrans_first_call_ms": first,
        "targets": {
            "ratio": {"limit": case.ratio_target,
                      "verdict": verdict(ratio, case.ratio_target, wrong)},
            "first_call_ms": {"limit": FIRST_CALL_TARGET_MS,
                              "verdict": verdict(first and first["median"],
                                                 FIRST_CALL_TARGET_MS, wrong)},
        },
        "notes": notes,
    }


def verdict(value, limit, wrong):
    if wrong:
        return "WRONG"
    if value is None:
        return "ERR"
    return "PASS" if value <= limit else "MISS"


# --- reporting -----------------------------------------------------------------------

def fmt_us(result, column):
    timing = result["us_per_call"].get(column)
    return f"{timing['best']:,.1f}" if timing else "-"


def print_table(header, rows):
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]

    def line(cells):  # first column left-aligned, numbers right-aligned
        return "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


def report(results):
    print("\nper call, microseconds (best of repeats)")
    header = ["case", "forward", "hand", "srctrans", "srctrans/hand",
              "first call ms", "second call ms", "ratio target", "first-call target"]
    rows = []
    for r in results:
        ratio, first, targets = (r["srctrans_over_hand"], r["srctrans_first_call_ms"],
                                 r["targets"])
        rows.append([
            r["case"], fmt_us(r, "forward"), fmt_us(r, "hand"), fmt_us(r, "srctrans"),
            f"{ratio:.2f}x" if ratio is not None else "-",
            f"{first['median']:.1f}" if first else "-",
            f"{first['second_median']:.1f}" if first else "-",
            f"<= {targets['ratio']['limit']:.2f}x {targets['ratio']['verdict']}",
            f"< {targets['first_call_ms']['limit']:.0f} ms "
            f"{targets['first_call_ms']['verdict']}",
        ])
    print_table(header, rows)

    others = [c for c in FRAMEWORKS if any(c in r["us_per_call"] for r in results)]
    if others:
        print("\nother frameworks, microseconds per call (x hand-written)")
        rows = []
        for r in results:
            hand = r["us_per_call"]["hand"]["best"]
            cells = []
            for c in others:
                t = r["us_per_call"].get(c)
                cells.append(f"{t['best']:,.1f} ({t['best'] / hand:.2f}x)" if t else "-")
            rows.append([r["case"], *cells])
        print_table(["case", *others], rows)

    missing = [c for c in FRAMEWORKS
               if any(r["notes"].get(c) == "not installed" for r in results)]
    if missing:
        print("\n" + "; ".join(f"{c}: not installed" for c in missing))
    for r in results:
        for column, note in r["notes"].items():
            if note != "not installed":
                print(f"{r['case']} / {column}: {note}")


def environment():
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer and shorter repeats, for a rough look")
    parser.add_argument("--case", action="append", choices=sorted(CASES), metavar="NAME",
                        help="run only this case (repeatable); one of: "
                             + ", ".join(CASES))
    parser.add_argument("--json", metavar="PATH", help="also write the results here")
    parser.add_argument("--plot", metavar="PNG",
                        help="also save a chart of gradient time over forward time here "
                             "(needs matplotlib)")
    options = parser.parse_args(argv)
    settings = QUICK if options.quick else FULL
    cases = [CASES[name]() for name in (options.case or CASES)]

    if hasattr(st, "set_cache_directory"):
        st.set_cache_directory(None)     # first calls build; none reads a stored derivative
    env = environment()
    print(" ".join(f"{k} {v}" for k, v in env.items()),
          "| quick" if options.quick else "| full", "run")
    if SRCTRANS_IMPORT_ERROR:
        print(SRCTRANS_IMPORT_ERROR)

    print("\nchecking gradients against the hand-written ones (np.allclose)")
    prepared = []
    for case in cases:
        runners, notes = build_runners(case)
        prepared.append((case, runners, notes))
        for column in ["srctrans", *FRAMEWORKS]:
            note = notes.get(column)
            if note != "not installed":
                print(f"  {case.name:<20} {column:<9} {note or 'matches'}")

    print("\ntiming" + (" (quick)" if options.quick else ""), end="", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_reverse_") as directory:
        for case, runners, notes in prepared:
            results.append(run_case(case, runners, notes, settings, directory))
            print(".", end="", flush=True)
    print()
    report(results)

    if options.json:
        payload = {"environment": env, "quick": options.quick, "settings": settings,
                   "results": results}
        Path(options.json).write_text(json.dumps(payload, indent=2) + "\n")
        print(f"\nwrote {options.json}")
    if options.plot:
        try:
            from plot import plot
            plot(results, options.plot)
            print(f"wrote {options.plot}")
        except ImportError as error:
            print(f"\nno plot: {error} (pip install -e \".[plot]\")")


if __name__ == "__main__":
    main()

"""The differential fuzzer: random programs, each derivative checked against finite differences.

    python tests/fuzz.py --programs 10000 --seed 7

runs that many programs from that seed and prints a summary; a failing
program is shrunk and written to tests/fuzzing/regressions/ (the test suite
checks every file there). ``tests/test_fuzz.py`` runs a few hundred programs
under a fixed seed in CI.
"""

import argparse
import collections
import contextlib
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzzing import check as fuzz_check         # noqa: E402
from fuzzing.check import check, shrink        # noqa: E402
from fuzzing.generator import generate         # noqa: E402
from fuzzing.regressions import save           # noqa: E402

import srctrans as st                          # noqa: E402


def run(programs, seed, keep=True, report=print):
    """Check ``programs`` programs from ``seed``; a Counter of outcome kinds, and the failures."""
    rng = random.Random(seed)
    seeds = [rng.randrange(2 ** 63) for _ in range(programs)]
    counts, failures = collections.Counter(), []
    with tempfile.TemporaryDirectory() as directory, _persistent_cache_in(directory):
        for index in range(programs):
            program = generate(random.Random(seeds[index]), (seed, index))
            outcome = check(program.text, program.args, directory)
            counts[outcome.kind] += 1
            if (index + 1) % 250 == 0:
                report(f"{index + 1} programs: {dict(counts)}")
            if outcome.kind == "unstable":         # the reference's failure: shown, not kept
                report(f"program {index} of seed {seed}: unstable\n{outcome.message[:600]}")
            if outcome.kind in ("wrong", "refused", "internal"):
                text = shrink(program.text, program.args, directory, outcome.kind)
                path = save(text, program.args, seed, index, outcome) if keep else None
                failures.append((index, outcome, path))
                report(f"program {index} of seed {seed}: {outcome.kind}; kept in {path}\n"
                       f"{outcome.message[:1000]}")
    return counts, failures


@contextlib.contextmanager
def _persistent_cache_in(directory):
    """The persistent cache in ``directory`` while the programs run (check reads builds back)."""
    from srctrans.persist import directory as cache_directory
    st.set_cache_directory(os.path.join(directory, "cache"))
    try:
        yield
    finally:
        cache_directory.set_location()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    parser.add_argument("--no-keep", action="store_true", help="do not write regression files")
    parser.add_argument("--vmap", action="store_true",
                        help="also check st.vmap of each program and its gradient against a loop")
    options = parser.parse_args(argv)
    fuzz_check.VMAP = options.vmap
    started = time.perf_counter()
    counts, failures = run(options.programs, options.seed, keep=not options.no_keep)
    checked = sum(counts.values()) - counts["invalid"]
    print(f"seed {options.seed}: {options.programs} programs, {checked} checked "
          f"({counts['invalid']} invalid in plain Python) in {time.perf_counter() - started:.0f} s: "
          f"{counts['ok']} ok, {counts['wrong']} wrong, {counts['refused']} refused, "
          f"{counts['internal']} internal errors, {counts['unstable']} where finite "
          f"differences settle nowhere")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

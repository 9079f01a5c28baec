"""Mutation testing: does the test suite notice when one line of srctrans changes?

    python tests/mutants.py map                      # once (about 15 minutes on 2 cores)
    python tests/mutants.py run --sample 0.1 --seed 1 srctrans/optimise srctrans/repeat.py
    python tests/mutants.py report

``map`` runs the suite under coverage (needs the ``mutation`` extra:
coverage, pytest-cov) and records which tests run each line; ``run`` makes
the mutants of the named modules (tests/mutating/operators.py), draws a
random sample of them (stratified by module, ``--sample`` of each), and runs
each one's line's tests in a copy of the package; ``report`` prints the
score per module and every surviving mutant. Results accumulate in
``--work`` (default ``.mutants/``, not committed): a mutant already run is
not run again. Mutants judged equivalent (no test can tell them apart from
the original: the behaviour is the same) are listed, each with its reason,
in tests/mutating/equivalent.json and count neither way. A line only an
import runs (a module's table) is tried with the tests that run its module.
"""

import argparse
import collections
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mutating.operators import mutants                              # noqa: E402
from mutating.runner import (REPO, copied_path, covering_tests, map_lines, run_mutant)

EQUIVALENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mutating",
                          "equivalent.json")
# the modules issue 36 names
DEFAULT_MODULES = ("srctrans/optimise", "srctrans/normalize/effects.py", "srctrans/analyse",
                   "srctrans/persist", "srctrans/repeat.py", "runtime/foreign.py",
                   "srctrans/exporting.py")


def _modules(names):
    found = []
    for name in names:
        path = os.path.join(REPO, name)
        if os.path.isdir(path):
            found += sorted(os.path.join(path, f) for f in os.listdir(path)
                            if f.endswith(".py") and f != "__init__.py")
        else:
            found.append(path)
    return [os.path.relpath(p, REPO) for p in found]


def _results(work):
    path = os.path.join(work, "results.json")
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        return json.load(handle)


def _save(work, results):
    path = os.path.join(work, "results.json")
    with open(path + ".tmp", "w") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def _equivalent():
    """``(module, line text, operator, before, after)`` -> why the mutant is equivalent (what
    it changes cannot change what srctrans computes), from tests/mutating/equivalent.json.
    The line's text (stripped) tells apart equal changes on different lines, and survives
    edits elsewhere in the module."""
    if not os.path.exists(EQUIVALENT):
        return {}
    with open(EQUIVALENT) as handle:
        return {_change(e): e["why"] for e in json.load(handle)}


def _change(result):
    return (result["module"], result["context"], result["operator"], result["before"],
            result["after"])


def command_run(args):
    with open(os.path.join(args.work, "map.json")) as handle:
        mapping = json.load(handle)
    results = _results(args.work)       # the copy the map was made of: the checkout may change
    rng = random.Random(args.seed)
    chosen = []
    for module in _modules(args.modules or DEFAULT_MODULES):
        if not os.path.exists(copied_path(args.work, module)):
            continue                    # new since the map: not in its copy (map again)
        made = _mutants_of(args.work, module)
        count = max(1, round(len(made) * args.sample)) if made else 0
        chosen += rng.sample(made, count) if args.sample < 1 else made
    if args.survivors:          # those that survived before, found again by what they change
        earlier = [r for r in results.values() if r["outcome"] in ("survived", "uncovered")]
        candidates = {}
        for module in {r["module"] for r in earlier}:
            for m in _mutants_of(args.work, module):
                candidates.setdefault((m.path, m.operator, m.before, m.after), []).append(m)
        chosen, replaces = [], {}
        old_keys = {id(r): k for k, r in results.items()}
        for r in earlier:       # the same change nearest the line it was on (lines move)
            same = candidates.get((r["module"], r["operator"], r["before"], r["after"]), [])
            if same:
                found = min(same, key=lambda m: abs(m.line - r["line"]))
                chosen.append(found)
                replaces[found.key] = old_keys[id(r)]   # its earlier entry, dropped when it runs
            else:
                r["outcome"] = "gone"       # the code it changed is no longer there
        _save(args.work, results)
    for index, mutant in enumerate(chosen):
        if mutant.key in results and not (args.again or args.survivors):
            continue
        tests, covering = covering_tests(mapping, args.work, mutant, args.budget)
        outcome, seconds = run_mutant(args.work, mutant, tests, args.timeout)
        if args.survivors:
            results.pop(replaces.get(mutant.key), None)
        results[mutant.key] = {"module": mutant.path, "line": mutant.line,
                               "context": mutant.context,
                               "operator": mutant.operator, "before": mutant.before,
                               "after": mutant.after, "outcome": outcome,
                               "tests run": len(tests), "covering tests": covering,
                               "seconds": round(seconds, 1)}
        _save(args.work, results)
        print(f"[{index + 1}/{len(chosen)}] {outcome:9} {mutant.path}:{mutant.line} "
              f"{mutant.operator}: {mutant.before[:50]!r} -> {mutant.after[:50]!r}", flush=True)


def _mutants_of(work, module):
    with open(copied_path(work, module), encoding="utf-8") as handle:
        return mutants(module, handle.read())


def command_report(args):
    results, equivalent = _results(args.work), _equivalent()
    per_module = collections.defaultdict(collections.Counter)
    survivors = []
    for key, result in sorted(results.items()):
        outcome = "equivalent" if _change(result) in equivalent else result["outcome"]
        outcome = "killed" if outcome == "timeout" else outcome
        if outcome == "gone":
            continue
        per_module[result["module"]][outcome] += 1
        if outcome in ("survived", "uncovered"):
            survivors.append((key, result))
    total = collections.Counter()
    print(f"{'module':45} {'killed':>7} {'survived':>9} {'uncovered':>10} {'equivalent':>11} {'score':>7}")
    for module, counts in sorted(per_module.items()):
        total.update(counts)
        print(_row(module, counts))
    print(_row("all", total))
    for key, result in survivors:
        print(f"{result['outcome']:9} {key}  ({result['before'][:60]!r})")


def _row(name, counts):
    judged = counts["killed"] + counts["survived"] + counts["uncovered"]
    score = f"{100 * counts['killed'] / judged:.1f}%" if judged else "-"
    return (f"{name:45} {counts['killed']:7} {counts['survived']:9} {counts['uncovered']:10} "
            f"{counts['equivalent']:11} {score:>7}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default=os.path.join(REPO, ".mutants"))
    commands = parser.add_subparsers(dest="command", required=True)
    mapped = commands.add_parser("map", help="record which tests run each line")
    mapped.add_argument("--workers", type=int, default=2)
    run = commands.add_parser("run", help="run mutants of modules (default: issue 36's)")
    run.add_argument("modules", nargs="*")
    run.add_argument("--sample", type=float, default=1.0, help="fraction of each module's mutants")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--budget", type=float, default=20.0,
                     help="seconds of (recorded) test time per mutant, fastest tests first")
    run.add_argument("--timeout", type=float, default=300.0)
    run.add_argument("--again", action="store_true", help="run mutants already run again")
    run.add_argument("--survivors", action="store_true",
                     help="run again the mutants that survived (after a new map: new tests)")
    commands.add_parser("report", help="the score per module and the survivors")
    args = parser.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    if args.command == "map":
        status = map_lines(args.work, args.workers)
        print(f"map written to {os.path.join(args.work, 'map.json')} (pytest exit {status})")
    elif args.command == "run":
        command_run(args)
    else:
        command_report(args)


if __name__ == "__main__":
    main()

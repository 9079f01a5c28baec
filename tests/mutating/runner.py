"""Run mutants against the tests that execute their line, in a copy of the package.

Guarantees: the checkout is never changed. :func:`prepare` copies srctrans/
and runtime/ into ``work/site`` laid out as the wheel installs them
(``srctrans/runtime``); every test process gets ``PYTHONPATH=work/site``, so
``import srctrans`` (in subprocesses too) finds the copy. :func:`map_lines`
runs the test suite once under coverage with per-test contexts and records,
for each line of the copy, the tests that ran it, and each test's duration.
:func:`run_mutant` writes one mutant into the copy, runs its line's tests
(fastest first, up to a time budget) with ``-x``, and puts the original back.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_DURATION = re.compile(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(.+?)\s*$")   # ids hold spaces


def prepare(work):
    """Copy the package into ``work/site`` (afresh)."""
    site = os.path.join(work, "site")
    shutil.rmtree(site, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(os.path.join(REPO, "srctrans"), os.path.join(site, "srctrans"), ignore=ignore)
    shutil.copytree(os.path.join(REPO, "runtime"), os.path.join(site, "srctrans", "runtime"),
                    ignore=ignore)
    return site


def copied_path(work, path):
    """Where the repository file ``path`` (``srctrans/x.py``, ``runtime/y.py``) is in the copy."""
    relative = os.path.relpath(os.path.abspath(path), REPO)
    if relative.startswith("runtime" + os.sep):
        relative = os.path.join("srctrans", relative)
    return os.path.join(work, "site", relative)


def environment(work):
    return dict(os.environ, PYTHONPATH=os.path.join(work, "site"), PYTHONDONTWRITEBYTECODE="1",
                SRCTRANS_CACHE_DIR="", OPENBLAS_NUM_THREADS="1")


def map_lines(work, workers=2, tests=("tests",)):
    """Run the suite under coverage with a context per test; write ``work/map.json``:
    ``{"tests": [test ids], "lines": {copied file: {line: [test numbers]}}, "durations":
    {test id: seconds}, "failed": [test ids]}``: tests that fail on the unchanged copy kill
    nothing."""
    site = prepare(work)
    data_file = os.path.join(work, "coverage")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers),
               f"--cov={os.path.join(site, 'srctrans')}", "--cov-context=test", "--cov-report=",
               "--durations=0", "--durations-min=0", "--rootdir", REPO,
               "-c", os.path.join(REPO, "pyproject.toml"), *[os.path.join(REPO, t) for t in tests]]
    env = dict(environment(work), COVERAGE_FILE=data_file)
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    with open(os.path.join(work, "map.log"), "w") as handle:
        handle.write(done.stdout + done.stderr)
    failed = sorted({_relative_test(line.split()[1], work) for line in done.stdout.splitlines()
                     if line.startswith(("FAILED ", "ERROR ")) and len(line.split()) > 1})
    durations = {}
    for line in done.stdout.splitlines():
        found = _DURATION.match(line)
        if found:
            test = _relative_test(found.group(2))
            durations[test] = durations.get(test, 0.0) + float(found.group(1))
    import coverage
    data = coverage.CoverageData(basename=data_file)
    data.read()
    number = {}                            # each test id once; the lines hold their numbers
    lines = {}
    for path in data.measured_files():
        by_line = data.contexts_by_lineno(path)
        lines[path] = {str(n): sorted({number.setdefault(_relative_test(c.split("|")[0]),
                                                         len(number)) for c in contexts if c})
                       for n, contexts in by_line.items()}
    tests = sorted(number, key=number.get)
    with open(os.path.join(work, "map.json"), "w") as handle:
        json.dump({"tests": tests, "lines": lines, "durations": durations, "failed": failed,
                   "status": done.returncode}, handle)
    return done.returncode


def _relative_test(test_id, cwd=None):
    """A test id relative to the repository (``tests/test_x.py::test_y[...]``); ``cwd``: the
    directory a relative path in it is relative to (pytest's summary lines)."""
    path, sep, rest = test_id.partition("::")
    if cwd is not None and not os.path.isabs(path):
        path = os.path.join(cwd, path)
    if os.path.isabs(path):
        path = os.path.relpath(path, REPO)
    return path + sep + rest


def covering_tests(mapping, work, mutant, budget):
    """The tests that ran ``mutant``'s line (a line only imports run: the tests that ran its
    module), fastest first, while their time fits ``budget`` seconds (always at least one);
    and how many ran it in all."""
    lines = mapping["lines"].get(copied_path(work, mutant.path), {})
    numbers = lines.get(str(mutant.line))
    if not numbers:         # a line run on import (a module's table): no test's context holds
        numbers = sorted({n for each in lines.values() for n in each})   # it; the module's tests
    tests = [mapping["tests"][n] for n in numbers]
    failing = set(mapping.get("failed", ()))
    tests = [t for t in tests if t not in failing]
    durations = mapping["durations"]
    ordered = sorted(tests, key=lambda t: (durations.get(t, 1.0), t))
    chosen, spent = [], 0.0
    for test in ordered:
        cost = durations.get(test, 1.0)
        if chosen and spent + cost > budget:
            break
        chosen.append(test)
        spent += cost
    return chosen, len(tests)


def run_mutant(work, mutant, tests, timeout):
    """``"killed"``, ``"survived"``, ``"timeout"`` (counted as killed: the mutant hangs a test)
    or ``"uncovered"`` (no test runs its line), and the seconds it took."""
    if not tests:
        return "uncovered", 0.0
    target = copied_path(work, mutant.path)
    with open(target, encoding="utf-8") as handle:
        original = handle.read()
    started = time.perf_counter()
    try:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(mutant.text)
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                   "-p", "no:xdist", "--rootdir", REPO, "-c", os.path.join(REPO, "pyproject.toml"),
                   *[os.path.join(REPO, t) for t in tests]]
        try:
            done = subprocess.run(command, cwd=work, env=environment(work), capture_output=True,
                                  text=True, timeout=timeout)
            outcome = "survived" if done.returncode == 0 else "killed"
        except subprocess.TimeoutExpired:
            outcome = "timeout"
    finally:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(original)
    return outcome, time.perf_counter() - started

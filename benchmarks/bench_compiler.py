"""What building derivatives costs: import, first builds, length scaling, cache look-ups.

Run from the repository root:

    python benchmarks/bench_compiler.py            # every measurement
    python benchmarks/bench_compiler.py --quick    # skips the 2,000-statement build
    python benchmarks/bench_compiler.py --instructions   # the length scaling, under valgrind

Each build runs in a new process (``python -c``), so that nothing is cached and
the figure is what a script that starts, imports srctrans and asks for the
derivative once pays. Prints, one line each (best of ``--repeat`` processes):

* ``import srctrans`` beyond ``import numpy``, the first ``st.grad`` attribute (which
  imports the API and the cache) and the compiler (which the first build imports;
  the build figures below do not include it);
* the build and first call of the gradient of straight-line functions of 20, 1,000
  and 2,000 statements, and the ratio of the last two (linear would be 2); the
  first call runs the generic gradient, so the second call of the 20-statement
  gradient, which builds the code specialised on the shapes, is printed too;
* the second call of the gradient of a function of 100 and of 200 loops, one after
  another, which builds the code specialised on the shapes (its probe runs the generic
  forward pass under a line tracer), and the ratio of the two;
* the build and first call of a single 1,000-term expression's gradient;
* the first ``st.hvp`` and ``st.hessian`` of a small MLP loss;
* asking again for a built gradient (``st.grad(f)`` then a call, in one process);
* the build and first call of the 20-statement gradient in a new process when an
  earlier process built it (the persistent cache), and ``import srctrans`` plus the
  first ``st.grad`` attribute in that case.

``--instructions`` counts, with valgrind's cachegrind, the machine instructions of the
1,000- and 2,000-statement builds instead of timing them: the ratio of the counts says
whether the work grows linearly, free of the noise of a shared machine and of the
memory caches (a larger build's data spills further from the processor, so its time
grows a little faster than its work).

The processes may write Python's bytecode caches (``PYTHONDONTWRITEBYTECODE`` is dropped
from their environment): pip compiles an installed package's bytecode, so a user's
``import srctrans`` reads it, and so do these processes after the first. With that
variable set (as on some machines), every process would compile srctrans's source
again and the import figures would be those of a first start after an edit.

The 20-, 1,000- and 2,000-statement builds take turns, a process each per round, so
that the machine's slow spells fall on all sizes alike (their ratio is the figure of
interest). Builds use a persistent cache directory of their own (``SRCTRANS_CACHE_DIR``), empty
for every measurement of a build, so they include writing the entry.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

STRAIGHT_LINE = '''
import numpy as np
def f(x):
{body}
    return np.sum(v{last})
'''

MLP = '''
import numpy as np
def loss(w1, w2, x, y):
    h = np.tanh(x @ w1)
    return np.mean((h @ w2 - y) ** 2)
'''


def straight_line(statements):
    lines = ["    v0 = x * 1.0"]
    for i in range(1, statements):
        op = ("np.sin(v{p}) + v{p}", "v{p} * 0.5 + np.tanh(v{p})", "np.exp(-v{p} * v{p}) * v{p}")[i % 3]
        lines.append(f"    v{i} = " + op.format(p=i - 1))
    return STRAIGHT_LINE.format(body="\n".join(lines), last=statements - 1)


def loops(count):
    """``f(a, x)``: ``count`` loops of three steps of the logistic map, one after another."""
    body = "\n".join(f"    for i{k} in range(3):\n        x = a * x * (1.0 - x) + 0.01"
                     for k in range(count))
    return f"def f(a, x):\n{body}\n    return x\n"


def one_expression(terms):
    expression = " + ".join(f"np.sin(x * {k + 1}.0)" for k in range(terms))
    return f"import numpy as np\ndef f(x):\n    return np.sum({expression})\n"


CACHE = tempfile.mkdtemp(prefix="bench-compiler-")


def run(snippet, repeat, keep_cache=False):
    """Best of ``repeat`` fresh processes of ``snippet`` (which prints one float, in seconds).

    The persistent cache directory is emptied before each process unless ``keep_cache``.
    """
    best = float("inf")
    for _ in range(repeat):
        if not keep_cache:
            shutil.rmtree(CACHE, ignore_errors=True)
        env = dict(os.environ, SRCTRANS_CACHE_DIR=os.path.join(CACHE, "entries"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)        # an installed package's bytecode
        out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                             cwd=ROOT, check=True, env=env).stdout
        best = min(best, float(out.strip().splitlines()[-1]))
    return best


def counted_instructions(snippet):
    """Machine instructions that ``snippet`` runs in a fresh process, counted by
    valgrind's cachegrind (deterministic, unlike times: no other load, no cache misses
    or clock changes of the machine count)."""
    # one BLAS thread: an idle OpenBLAS thread spins, and its count would follow the time
    env = dict(os.environ, SRCTRANS_CACHE_DIR=os.path.join(CACHE, "entries"),
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    shutil.rmtree(CACHE, ignore_errors=True)
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", sys.executable, "-c", snippet],
                          capture_output=True, text=True, cwd=ROOT, check=True, env=env)
    for line in done.stderr.splitlines():
        if "I   refs:" in line or "I refs:" in line:
            return int(line.split(":")[1].replace(",", "").strip())
    raise RuntimeError("valgrind printed no instruction count:\n" + done.stderr[-2000:])


def build_instructions(statements):
    """Instructions of the build and first call of the gradient of a straight-line
    function of ``statements`` statements: those of a process that builds it, less
    those of the same process without the build."""
    path = os.path.join(CACHE + "-modules", f"counted_{statements}.py")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as stream:
        stream.write(straight_line(statements))
    counts = []
    for call in ("st.grad(module.f)(np.ones(3))", "np.ones(3)"):
        counts.append(counted_instructions(textwrap.dedent(f'''
            import sys, importlib.util
            sys.path.insert(0, {ROOT!r})
            import numpy as np
            import srctrans as st
            st.grad
            import srctrans.pipeline
            spec = importlib.util.spec_from_file_location("built", {path!r})
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            {call}
        ''')))
    return counts[0] - counts[1]


def timed_build(source, call, repeat, setup="", keep_cache=False):
    """A snippet that writes ``source`` to a module, imports srctrans, and times ``call``.

    The module is always the same file (``built.py`` in a directory of this run), so a
    process finds the entries an earlier one wrote when ``keep_cache``.
    """
    path = os.path.join(CACHE + "-modules", f"built_{abs(hash(source))}.py")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as stream:
        stream.write(source)
    snippet = textwrap.dedent(f'''
        import os, sys, time, importlib.util
        sys.path.insert(0, {ROOT!r})
        import numpy as np
        import srctrans as st
        st.grad
        {"import srctrans.pipeline          # the compiler: not part of the build" if not keep_cache else ""}
        path = {path!r}
        spec = importlib.util.spec_from_file_location("built", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        {setup}
        start = time.perf_counter()
        {call}
        print(time.perf_counter() - start)
    ''')
    return run(snippet, repeat, keep_cache)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--instructions", action="store_true",
                        help="only count the instructions of the 1,000- and 2,000-statement "
                             "builds under valgrind (a few minutes)")
    options = parser.parse_args()
    repeat = options.repeat
    if options.instructions:
        if shutil.which("valgrind") is None:
            sys.exit("--instructions counts with valgrind, which is not installed here")
        counts = {n: build_instructions(n) for n in (1000, 2000)}
        for statements, count in counts.items():
            print(f"instructions to build and call once, {statements:,} statements: "
                  f"{count / 1e9:.2f} billion")
        print(f"2,000 / 1,000 statements, instructions: {counts[2000] / counts[1000]:.3f}")
        return

    imported = run(textwrap.dedent(f'''
        import sys, time
        sys.path.insert(0, {ROOT!r})
        import numpy
        start = time.perf_counter()
        import srctrans
        print(time.perf_counter() - start)
    '''), repeat * 2)
    first_attribute = run(textwrap.dedent(f'''
        import sys, time
        sys.path.insert(0, {ROOT!r})
        import numpy, srctrans
        start = time.perf_counter()
        srctrans.grad
        print(time.perf_counter() - start)
    '''), repeat)
    compiler = run(textwrap.dedent(f'''
        import sys, time
        sys.path.insert(0, {ROOT!r})
        import numpy, srctrans
        srctrans.grad
        start = time.perf_counter()
        import srctrans.pipeline
        print(time.perf_counter() - start)
    '''), repeat)
    print(f"import srctrans beyond numpy: {imported * 1e3:.1f} ms (the first st.grad then "
          f"imports the API and cache: {first_attribute * 1e3:.0f} ms; the first build the "
          f"compiler: {compiler * 1e3:.0f} ms)")

    call = "st.grad(module.f)(np.ones(3))"
    results = {statements: float("inf") for statements in
               (20, 1000) + (() if options.quick else (2000,))}
    for _ in range(repeat):          # the sizes take turns: a slow spell falls on all of them
        for statements in results:
            results[statements] = min(results[statements],
                                      timed_build(straight_line(statements), call, 1))
    for statements, seconds in results.items():
        print(f"build and first call, {statements:,} statements: {seconds * 1e3:,.0f} ms")
    second = timed_build(straight_line(20), "g(x)", repeat,
                         setup="x = np.ones(3); g = st.grad(module.f); g(x)")
    print(f"second call, 20 statements (builds the code specialised on the shapes): "
          f"{second * 1e3:,.0f} ms")
    if 2000 in results:
        print(f"2,000 / 1,000 statements: {results[2000] / results[1000]:.2f}")
        specialising = {}
        for count in (100, 200):
            specialising[count] = timed_build(loops(count), "g(0.5, 0.3)", repeat,
                                              setup="g = st.grad(module.f, wrt=(0, 1)); g(0.5, 0.3)")
            print(f"second call, {count} loops (builds the code specialised on the shapes): "
                  f"{specialising[count] * 1e3:,.0f} ms")
        print(f"200 / 100 loops: {specialising[200] / specialising[100]:.2f}")
    expression = timed_build(one_expression(1000), call, repeat)
    print(f"build and first call, one 1,000-term expression: {expression * 1e3:,.0f} ms")

    arrays = ("rng = np.random.default_rng(0); w1 = rng.normal(size=(4, 8)); "
              "w2 = rng.normal(size=8); x = rng.normal(size=(16, 4)); y = rng.normal(size=16)")
    hvp = timed_build(MLP, "st.hvp(module.loss, (w1, w2, x, y), (w1, w2, None, None))", repeat,
                      setup=arrays)
    hessian = timed_build(MLP, "st.hessian(module.loss)(w1, w2, x, y)", repeat, setup=arrays)
    print(f"first st.hvp of an MLP loss: {hvp * 1e3:.0f} ms; first st.hessian: "
          f"{hessian * 1e3:.0f} ms")

    again = run(textwrap.dedent(f'''
        import os, sys, tempfile, time, importlib.util
        sys.path.insert(0, {ROOT!r})
        import numpy as np
        import srctrans as st
        path = os.path.join(tempfile.mkdtemp(), "built.py")
        open(path, "w").write({straight_line(20)!r})
        spec = importlib.util.spec_from_file_location("built", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        x = np.ones(3)
        st.grad(module.f)(x)
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(1000):
                st.grad(module.f)
            best = min(best, (time.perf_counter() - start) / 1000)
        print(best)
    '''), 1)
    print(f"asking again for a built gradient (st.grad(f)): {again * 1e6:.1f} µs")

    source = straight_line(20)
    timed_build(source, call, 1)                            # an earlier process builds it
    stored = timed_build(source, call, repeat * 3, keep_cache=True)
    print(f"build and first call, 20 statements, built by an earlier process: "
          f"{stored * 1e3:.1f} ms")
    path = os.path.join(CACHE + "-modules", f"built_{abs(hash(source))}.py")
    started = run(textwrap.dedent(f'''
        import sys, time, importlib.util
        sys.path.insert(0, {ROOT!r})
        import numpy as np
        start = time.perf_counter()
        import srctrans as st
        st.grad
        imported = time.perf_counter() - start
        spec = importlib.util.spec_from_file_location("built", {path!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        start = time.perf_counter()
        {call}
        print(imported + time.perf_counter() - start)
    '''), repeat * 3, keep_cache=True)
    print(f"  the same with import srctrans and the first st.grad: {started * 1e3:.0f} ms")
    shutil.rmtree(CACHE, ignore_errors=True)
    shutil.rmtree(CACHE + "-modules", ignore_errors=True)


if __name__ == "__main__":
    main()

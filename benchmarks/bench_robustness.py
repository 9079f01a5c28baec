"""Robustness measurements: inline gradients, memory given back, deep programs.

Run from the repository root:

    python benchmarks/bench_robustness.py                 # every measurement
    python benchmarks/bench_robustness.py --functions 500 --calls 50000

Prints, one line each:

* the cost of a call of a kept gradient (``g = st.grad(f)``, ``g(x)``) and of
  one written inline (``st.grad(f)(x)``, a new gradient object per call), best
  of several interleaved rounds, and what ``--calls`` inline calls added to
  memory (tracemalloc) and to the ``linecache`` entries of generated code;
* memory and ``linecache`` entries after building ``--functions`` functions,
  and what is left of them after ``st.clear_cache()``;
* the time to build and call the gradient of a chain of 500 nested helper
  calls and of a single 1,000-term expression.
"""

import argparse
import gc
import linecache
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import srctrans as st  # noqa: E402  (the checkout, not an installed copy)


def loss(x):
    return np.sum(np.tanh(x) * x)


def generated_entries():
    return sum(name.startswith("<srctrans ") for name in list(linecache.cache))


def inline_calls(calls):
    x = np.ones(10)
    kept = st.grad(loss)
    kept(x)
    st.grad(loss)(x)
    best_kept = best_inline = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(2000):
            kept(x)
        best_kept = min(best_kept, (time.perf_counter() - start) / 2000)
        start = time.perf_counter()
        for _ in range(2000):
            st.grad(loss)(x)
        best_inline = min(best_inline, (time.perf_counter() - start) / 2000)
    entries = generated_entries()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(calls):
        st.grad(loss)(x)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    print(f"kept gradient {best_kept * 1e6:.1f} us/call, inline st.grad(f)(x) "
          f"{best_inline * 1e6:.1f} us/call ({best_inline / best_kept:.2f}x); {calls} inline "
          f"calls added {grown / 1e6:.3f} MB and {generated_entries() - entries} linecache entries")


def module_from(text, name):
    directory = tempfile.mkdtemp()
    with open(os.path.join(directory, f"{name}.py"), "w") as handle:
        handle.write(text)
    sys.path.insert(0, directory)
    try:
        return __import__(name)
    finally:
        sys.path.remove(directory)


def clear_cache(functions):
    text = "import numpy as np\n" + "".join(
        f"def g{i}(x):\n    y = np.sin(x) * {i}.0\n    return np.sum(y * x)\n"
        for i in range(functions))
    module = module_from(text, "bench_many_functions")
    x = np.ones(3)
    st.clear_cache()
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    for i in range(functions):
        st.grad(getattr(module, f"g{i}"))(x)
    gc.collect()
    built, entries = tracemalloc.get_traced_memory()[0] - start, generated_entries()
    st.clear_cache()
    gc.collect()
    left = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    print(f"{functions} functions built: +{built / 1e6:.1f} MB, {entries} linecache entries; "
          f"after st.clear_cache(): +{left / 1e6:.2f} MB, {generated_entries()} entries")


def deep_programs(depth=500, terms=1000):
    lines = ["import numpy as np"]
    lines += [f"def f{i}(x):\n    return f{i + 1}(x) * 1.0001" for i in range(depth)]
    lines.append(f"def f{depth}(x):\n    return np.sin(x)")
    lines.append("def long_sum(x):\n    return " + " + ".join(f"x * {i}.0" for i in range(terms)))
    module = module_from("\n".join(lines) + "\n", "bench_deep_programs")
    for name, what in (("f0", f"a chain of {depth} nested helper calls"),
                       ("long_sum", f"a {terms}-term expression")):
        start = time.perf_counter()
        st.grad(getattr(module, name))(np.array([0.3, 0.2]))
        print(f"{what}: built and called in {time.perf_counter() - start:.2f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=500)
    parser.add_argument("--calls", type=int, default=50000)
    args = parser.parse_args(argv)
    inline_calls(args.calls)
    clear_cache(args.functions)
    deep_programs()


if __name__ == "__main__":
    main()

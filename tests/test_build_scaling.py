"""Build time grows linearly with the length of straight-line code.

The programs are generated into a temporary directory as real .py files (srctrans
reads source from files) and imported from there. Times are printed (run with
``-s`` to see them); the bounds are loose so slow CI machines pass.
"""

import importlib.util
import sys
import time

import numpy as np
import pytest

import srctrans as st

# statement i (i >= 1) as a function of the previous value h{j}; smooth on (-1, 1)
STATEMENTS = [
    "h{i} = np.sin(h{j}) * w + h{j}",
    "h{i} = h{j} * 0.5 + np.tanh(w * h{j})",
    "h{i} = h{j} - 0.1 * h{j} * h{j}",
]


def load(tmp_path, name, text):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"{name}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def straight_line(tmp_path, n):
    """A module with ``chain(x, w)`` of ``n`` statements."""
    lines = ["import numpy as np", "", "", "def chain(x, w):", "    h0 = x"]
    for i in range(1, n - 1):
        lines.append("    " + STATEMENTS[i % len(STATEMENTS)].format(i=i, j=i - 1))
    lines.append(f"    return np.sum(h{n - 2})")
    return load(tmp_path, f"chain{n}", "\n".join(lines) + "\n").chain


def timed_first_call(fn, *args):
    start = time.perf_counter()
    result = st.grad(fn, wrt=(0, 1))(*args)
    return time.perf_counter() - start, result


@pytest.fixture(scope="module")
def times(tmp_path_factory):
    """Build-and-run seconds of the 1,000- and 2,000-statement chains, and gradients.

    Each size is timed on a fresh function (fresh module, cleared cache); when
    the pair looks superlinear it is timed once more and the faster time of
    each kept, so a busy machine does not fail the linearity test by itself.
    """
    tmp_path = tmp_path_factory.mktemp("scaling")
    rng = np.random.default_rng(11)
    x, w = rng.uniform(-0.1, 0.1, 3), 0.2
    results = {}
    for attempt in range(2):
        for n in (1000, 2000):
            st.clear_cache()
            fn = straight_line(tmp_path / f"try{attempt}", n)
            seconds, grads = timed_first_call(fn, x, w)
            print(f"\n{n}-statement function: built and ran in {seconds:.2f} s")
            if n not in results or seconds < results[n][0]:
                results[n] = (seconds, fn, grads, (x, w))
        if results[2000][0] < 2.5 * results[1000][0]:
            break
    st.clear_cache()
    return results


def test_1000_statements_build_and_run_fast(times):
    seconds, fn, (dx, dw), (x, w) = times[1000]
    assert seconds < 20.0
    assert np.shape(dx) == (3,) and np.ndim(dw) == 0
    # the gradient the timed build gave, against central differences in each of the four
    # inputs (the function is smooth there; building it again to check would double the
    # test's time in the README's test command)
    step = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = step
        want = (fn(x + e, w) - fn(x - e, w)) / (2 * step)
        np.testing.assert_allclose(dx[i], want, rtol=1e-4, atol=1e-6)
    want = (fn(x, w + step) - fn(x, w - step)) / (2 * step)
    np.testing.assert_allclose(dw, want, rtol=1e-4, atol=1e-6)


def test_build_time_is_linear(times):
    small, large = times[1000][0], times[2000][0]
    print(f"\n2000/1000 build-time ratio: {large / small:.2f}")
    assert large < 3.0 * small


def test_long_expression_builds_without_recursion_error(tmp_path):
    terms = 500
    text = "def total(x):\n    return " + " + ".join(["x"] * terms) + "\n"
    fn = load(tmp_path, "sum500", text).total
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    g = st.grad(fn)(np.array([1.0, 2.0]))
    print(f"\n{terms}-term expression: built and ran in {time.perf_counter() - start:.2f} s")
    np.testing.assert_array_equal(g, [terms, terms])
    assert sys.getrecursionlimit() == limit          # the headroom was given back


def test_long_product_of_distinct_terms(tmp_path):
    terms = 500
    text = "def product(x, y):\n    return " + " + ".join(
        f"{i % 7 + 1}.0 * x * y" for i in range(terms)) + "\n"
    fn = load(tmp_path, "prod500", text).product
    x, y = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    dx, dy = st.grad(fn, wrt=(0, 1))(x, y)
    total = sum(i % 7 + 1.0 for i in range(terms))
    np.testing.assert_allclose(dx, total * y)
    np.testing.assert_allclose(dy, total * x)


def test_a_sums_seed_over_a_long_chain_of_temporaries_is_filled_without_recursion(tmp_path):
    """A sum of a value computed through 2,000 single-use temporaries, each arithmetic of the
    last: the spread of its seed is filled from the chain's leaves, found by a worklist (a
    recursion as deep as the chain ran out of stack)."""
    steps = 2000
    lines = ["import numpy as np", "", "", "def drifted(x):", "    s = x * 1.0"]
    lines += ["    s = s + 0.5"] * steps + ["    return np.sum(s)"]
    fn = load(tmp_path, "drift2000", "\n".join(lines) + "\n").drifted
    gradient = st.grad(fn)
    for _ in range(3):                        # generic, specialised (the fused gradient), short
        np.testing.assert_array_equal(gradient(np.ones(3)), np.ones(3))


def test_a_function_is_parsed_once_for_all_its_builds(tmp_path, monkeypatch):
    """Its check, the cache's and every build (generic, specialised, forward) read one parse
    of its text; an edit of the file (a new text) is parsed again."""
    import gast
    from srctrans.parse import source
    module = load(tmp_path, "parsed_once", "import numpy as np\n\n\ndef f(x, w):\n"
                                           "    return np.sum(np.sin(x * w))\n")
    parsed = []
    real_parse = gast.parse
    def parse(text):
        if text.startswith("def f("):                  # (rule templates are parsed too)
            parsed.append(text)
        return real_parse(text)
    monkeypatch.setattr(source.gast, "parse", parse)
    x, w = np.arange(3.0), 0.5
    for _ in range(3):
        st.grad(module.f)(x, w)
    st.jvp(module.f, (x, w), (x, w))
    st.source(module.f, args=(x, w))
    assert len(parsed) == 1
    path = tmp_path / "parsed_once.py"
    path.write_text(path.read_text().replace("np.sin", "np.cos"))
    edited = load(tmp_path, "parsed_once", path.read_text())
    st.grad(edited.f)(x, w)
    assert len(parsed) == 2 and "np.cos" in parsed[-1]

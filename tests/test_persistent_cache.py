"""The persistent cache: a later process reads back what an earlier one built, and never
trusts an entry beyond its checks.

Each test runs small programs in fresh Python processes sharing a cache
directory of the test's own, and compares what they print.
"""

import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

import srctrans as st
from srctrans.persist import directory

MODEL = '''
import numpy as np
from helpers import layer

def loss(w, x):
    h = layer(x, w)
    s = np.sum(h ** 2)
    return s + np.sum(np.exp(-h))
'''

HELPERS = '''
import os
import numpy as np

act = np.sin if os.environ.get("ACTIVATION") == "sin" else np.tanh

def layer(x, w):
    return act(x @ w)
'''

DRIVER = '''
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import srctrans as st
import model, helpers

if os.environ.get("REWRITE_MODEL"):                # the file edited after Python compiled it
    with open(model.__file__, "w") as handle:
        handle.write(os.environ["REWRITE_MODEL"])

if os.environ.get("DOUBLED_RULE"):
    def doubled_layer_vjp(g, ans, x, w):          # twice tanh(x @ w)'s
        gz = 2.0 * g * (1.0 - ans * ans)
        return gz @ w.T, x.T @ gz

    def doubled_layer_jvp(tangents, ans, x, w):
        dx, dw = (0.0 if t is None else t for t in tangents)
        return 2.0 * (1.0 - ans * ans) * (dx @ w + x @ dw)

    st.register_vjp(helpers.layer, doubled_layer_vjp)
    st.register_jvp(helpers.layer, doubled_layer_jvp)

rows = int(os.environ.get("ROWS", "4"))
w = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
x = np.linspace(-1.0, 1.0, 3 * rows).reshape(rows, 3)
g = st.grad(model.loss)(w, x)
built_for_grad = "srctrans.pipeline" in sys.modules
_, tangent = st.jvp(model.loss, (w, x), (np.ones_like(w), np.zeros_like(x)))
print(json.dumps({"grad": g.tolist(), "jvp": float(tangent), "built_for_grad": built_for_grad,
                  "built": "srctrans.pipeline" in sys.modules,
                  "rule_modules": sorted(m for m in sys.modules if m.startswith("srctrans.rules.")),
                  "runtime_modules": sorted(m for m in sys.modules
                                            if m.startswith("srctrans.runtime.")),
                  "hashlib": "hashlib" in sys.modules,
                  "directory": st.cache_directory()}))
'''


@pytest.fixture
def program(tmp_path):
    """Write the model, its helpers and the driver; returns ``run(**environment) -> dict``."""
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "driver.py").write_text(DRIVER)
    cache = tmp_path / "cache"

    def run(cache_dir=cache, **environment):
        env = dict(os.environ, SRCTRANS_CACHE_DIR=str(cache_dir), PYTHONDONTWRITEBYTECODE="1")
        env.pop("ACTIVATION", None)
        env.update(environment)
        done = subprocess.run([sys.executable, str(tmp_path / "driver.py")], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["stderr"] = done.stderr
        return result

    run.folder, run.cache = tmp_path, cache
    return run


def _expected(activation=np.tanh, rows=4, factor=1.0):
    """The gradient of MODEL's loss with respect to w, written by hand."""
    w = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
    x = np.linspace(-1.0, 1.0, 3 * rows).reshape(rows, 3)
    z = x @ w
    h = activation(z)
    dh = 2 * h - np.exp(-h)
    dz = dh * (1 - h * h if activation is np.tanh else np.cos(z))
    return factor * x.T @ dz


def test_a_second_process_reads_the_build_back_without_the_compiler(program):
    first = program()
    second = program()
    assert first["built"] and not second["built"]
    assert second["rule_modules"] == ["srctrans.rules.registry"]   # the rules load to build only
    # nor what a hit does not call: hashlib (it loads OpenSSL), the runtime's other modules
    assert not second["hashlib"]
    assert "srctrans.runtime.decompositions" not in second["runtime_modules"]
    assert "srctrans.runtime.broadcast" in second["runtime_modules"]
    assert second["grad"] == first["grad"] and second["jvp"] == first["jvp"]
    np.testing.assert_allclose(second["grad"], _expected(), rtol=1e-12)
    assert second["directory"] == str(program.cache)


def test_entries_are_private_json_holding_generated_source(program):
    program()
    folder = program.cache
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
    names = os.listdir(folder)
    assert names and all(name.endswith(".json") for name in names)
    for name in names:
        path = folder / name
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        entry = json.loads(directory.payload(path.read_text(), name))
        assert entry["text"].startswith("def __srctrans_factory__(")
        assert "def " in entry["source"]


def test_an_edited_function_is_built_again(program):
    program()
    model = program.folder / "model.py"
    model.write_text(MODEL.replace("h ** 2", "h ** 2 * 3.0"))
    edited = program()
    assert edited["built_for_grad"]
    w = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
    x = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    h = np.tanh(x @ w)
    expected = x.T @ ((6 * h - np.exp(-h)) * (1 - h * h))
    np.testing.assert_allclose(edited["grad"], expected, rtol=1e-12)


def test_an_edit_of_instructions_only_is_built_again(program):
    """`+` -> `-` keeps every name and constant: the entry's digest must cover the code's
    instructions (co_code), or the stale derivative is read back (issue 36)."""
    program()
    model = program.folder / "model.py"
    model.write_text(MODEL.replace("s + np.sum", "s - np.sum"))
    edited = program()
    assert edited["built_for_grad"]
    w = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
    x = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    h = np.tanh(x @ w)
    np.testing.assert_allclose(edited["grad"], x.T @ ((2 * h + np.exp(-h)) * (1 - h * h)),
                               rtol=1e-12)


def test_an_entry_of_the_text_on_disk_is_not_read_for_older_instructions(program):
    """The file is edited after Python compiled the function, back to a text an entry was
    built from: the code that runs is not that text's, so the entry must not be read (the
    digest covers co_code; without it the derivative of `s + ...` came back for `s - ...`)."""
    program()                                           # the entry of `s + np.sum(...)`
    model = program.folder / "model.py"
    model.write_text(MODEL.replace("s + np.sum", "s - np.sum"))
    done = subprocess.run([sys.executable, str(program.folder / "driver.py")],
                          env=dict(os.environ, SRCTRANS_CACHE_DIR=str(program.cache),
                                   PYTHONDONTWRITEBYTECODE="1", REWRITE_MODEL=MODEL),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "model.py" in done.stderr, done.stderr    # as with no cache
    assert "NoSourceError" in done.stderr and "changed since Python compiled it" in done.stderr


def test_an_edited_callee_is_built_again(program):
    program()
    (program.folder / "helpers.py").write_text(HELPERS.replace("act(x @ w)", "act(x @ w) * 2.0"))
    edited = program()
    assert edited["built_for_grad"]
    w = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
    x = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    h = 2.0 * np.tanh(x @ w)
    expected = x.T @ ((2 * h - np.exp(-h)) * 2.0 * (1 - np.tanh(x @ w) ** 2))
    np.testing.assert_allclose(edited["grad"], expected, rtol=1e-12)


def test_a_name_that_denotes_another_function_is_built_again(program):
    program()
    rebound = program(ACTIVATION="sin")         # same files; `act` is np.sin in this process
    assert rebound["built_for_grad"]
    np.testing.assert_allclose(rebound["grad"], _expected(np.sin), rtol=1e-12)
    back = program()              # the entry holds the latest build: built again, correctly
    np.testing.assert_allclose(back["grad"], _expected(), rtol=1e-12)
    assert not program()["built"]


def test_a_rule_the_user_registers_is_part_of_the_key(program):
    program()
    with_rule = program(DOUBLED_RULE="1")
    assert with_rule["built_for_grad"]
    np.testing.assert_allclose(with_rule["grad"], _expected(factor=2.0), rtol=1e-12)
    read_back = program(DOUBLED_RULE="1")                 # the registry loads for the user's rule
    assert not read_back["built"] and "srctrans.rules.elementwise" in read_back["rule_modules"]
    np.testing.assert_allclose(read_back["grad"], _expected(factor=2.0), rtol=1e-12)
    without = program()
    assert not without["built"]
    np.testing.assert_allclose(without["grad"], _expected(), rtol=1e-12)


def test_each_shape_has_its_own_specialised_entry(program):
    program(ROWS="4")
    other = program(ROWS="7")
    np.testing.assert_allclose(other["grad"], _expected(rows=7), rtol=1e-12)
    again = program(ROWS="7")
    assert not again["built"]
    np.testing.assert_allclose(again["grad"], _expected(rows=7), rtol=1e-12)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "renamed", "old format"])
def test_a_damaged_entry_is_built_again_and_replaced(program, damage):
    program()
    names = sorted(os.listdir(program.cache))
    for name in names:
        path = program.cache / name
        text = path.read_text()
        if damage == "garbage":
            text = "not an entry"
        elif damage == "truncated":
            text = text[: len(text) // 2]
        elif damage == "flipped":             # the generated code computes something else
            text = text.replace("np.exp", "np.sin")
        elif damage == "renamed":             # a valid entry under another entry's name
            text = (program.cache / names[(names.index(name) + 1) % len(names)]).read_text()
        else:
            entry = json.loads(directory.payload(text, name))
            entry["format"] = -1
            text = directory.framed(json.dumps(entry), name)
        path.write_text(text)
    damaged = program()
    assert damaged["built_for_grad"]
    np.testing.assert_allclose(damaged["grad"], _expected(), rtol=1e-12)
    assert not program()["built"]             # the rebuilt entries replaced the damaged ones


def test_a_directory_others_can_write_is_not_used(program):
    os.makedirs(program.cache, mode=0o700)
    os.chmod(program.cache, 0o777)
    result = program()
    assert result["directory"] is None and "persistent cache is off" in result["stderr"]
    assert os.listdir(program.cache) == []
    np.testing.assert_allclose(result["grad"], _expected(), rtol=1e-12)


def test_a_symbolic_link_is_never_followed(program, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    os.symlink(elsewhere, program.cache)
    result = program()
    assert result["directory"] is None and "symbolic link" in result["stderr"]
    assert os.listdir(elsewhere) == []
    os.unlink(program.cache)
    program()                                           # entries written for real
    target = tmp_path / "target.json"
    target.write_text("kept")
    for name in os.listdir(program.cache):              # each entry now a link to a file
        os.unlink(program.cache / name)
        os.symlink(target, program.cache / name)
    relinked = program()
    assert relinked["built_for_grad"]                   # links are not read ...
    assert target.read_text() == "kept"                 # ... nor written through
    assert not any(os.path.islink(program.cache / n) for n in os.listdir(program.cache))


def test_an_entry_others_can_read_is_not_trusted(program):
    program()
    for name in os.listdir(program.cache):
        os.chmod(program.cache / name, 0o644)
    assert program()["built_for_grad"]


def test_an_empty_setting_switches_it_off(program):
    result = program(cache_dir="")
    assert result["directory"] is None and result["built"]
    assert not os.path.exists(program.cache)


def test_clear_cache_can_delete_the_entries(tmp_path):
    folder = tmp_path / "entries"
    st.set_cache_directory(folder)
    try:
        assert st.cache_directory() == str(folder)
        st.clear_cache()
        st.grad(_cubed)(2.0)
        assert os.listdir(folder)
        st.clear_cache()
        assert os.listdir(folder)                   # memory only by default
        st.clear_cache(persistent=True)
        assert os.listdir(folder) == []
        st.set_cache_directory(None)
        assert st.cache_directory() is None
    finally:
        directory.set_location()
        st.clear_cache()


def _cubed(x):
    return x ** 3


def test_a_loaded_build_gives_what_a_fresh_build_gives_in_this_process(tmp_path):
    """Second and mixed derivatives of functions loaded from entries (in-process)."""
    st.set_cache_directory(tmp_path / "entries")
    try:
        x = np.linspace(0.2, 1.4, 5)
        results = []
        for _ in range(2):                  # built, then read back after forgetting memory
            st.clear_cache()
            results.append((st.grad(_chain)(x), st.jvp(_chain, (x,), (x,))[1],
                            st.hessian(_chain)(x), st.hvp(_chain, (x,), (x,))[0]))
        for built, loaded in zip(*results):
            np.testing.assert_allclose(loaded, built, rtol=1e-13)
        st.set_cache_directory(None)
        st.clear_cache()
        fresh = st.hessian(_chain)(x)
        np.testing.assert_allclose(results[1][2], fresh, rtol=1e-13)
    finally:
        directory.set_location()
        st.clear_cache()


def _inner(v):
    return np.sin(v) * v


def _chain(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(_inner(x * (k + 1)) ** 2)
    return total


def _make_scaled(factor):
    def scaled(v):
        return np.tanh(v) * factor
    return scaled


_SCALED = _make_scaled(3.0)               # reachable by no module and name: not fingerprinted
_SETTINGS = {"power": 2}                  # a value the generated code reads live


def _calls_a_made_function(x):
    return np.sum(_SCALED(x) ** 2)


def _reads_a_dict(x):
    return np.sum(x ** _SETTINGS["power"])


def _calls_a_module_function(x):
    return np.sum(_inner(x) ** 2)


@pytest.mark.parametrize("fn, stored", [(_calls_a_made_function, False),
                                        (_calls_a_module_function, True),
                                        (_reads_a_dict, True)])
def test_what_cannot_be_recognised_later_is_built_in_each_process(tmp_path, monkeypatch, fn,
                                                                  stored):
    import srctrans.pipeline
    built = []
    real = srctrans.pipeline.build_reverse

    def counting(function, *args, **kwargs):
        built.append(function.__name__)
        return real(function, *args, **kwargs)

    monkeypatch.setattr(srctrans.pipeline, "build_reverse", counting)
    st.set_cache_directory(tmp_path / "entries")
    try:
        x = np.linspace(0.1, 0.9, 4)
        st.clear_cache()
        first = st.grad(fn)(x)
        assert fn.__name__ in built
        built.clear()
        st.clear_cache()
        np.testing.assert_allclose(st.grad(fn)(x), first, rtol=1e-14)
        assert (fn.__name__ not in built) == stored
    finally:
        directory.set_location()
        st.clear_cache()


def test_a_stored_build_reads_the_values_it_does_not_call_live(tmp_path, monkeypatch):
    st.set_cache_directory(tmp_path / "entries")
    try:
        x = np.linspace(0.1, 0.9, 4)
        st.clear_cache()
        np.testing.assert_allclose(st.grad(_reads_a_dict)(x), 2 * x)
        st.clear_cache()                                    # read back from the entry ...
        monkeypatch.setitem(_SETTINGS, "power", 3)          # ... with another value read live
        np.testing.assert_allclose(st.grad(_reads_a_dict)(x), 3 * x ** 2)
    finally:
        directory.set_location()
        st.clear_cache()


LOADED_BY_PATH = '''
import importlib.util, json, sys
import numpy as np
import srctrans as st
spec = importlib.util.spec_from_file_location("unregistered", sys.argv[1])
module = importlib.util.module_from_spec(spec)       # not in sys.modules
spec.loader.exec_module(module)
g = st.grad(module.f)(np.linspace(0.1, 0.9, 4))
print(json.dumps({"grad": g.tolist(), "built": "srctrans.pipeline" in sys.modules}))
'''


def test_a_module_loaded_from_a_path_is_read_back_too(tmp_path):
    """Its functions cannot be found by module and name; the function itself needs not be."""
    (tmp_path / "f.py").write_text("import numpy as np\ndef f(x):\n    return np.sum(np.sin(x) * x)\n")
    (tmp_path / "driver.py").write_text(LOADED_BY_PATH)
    env = dict(os.environ, SRCTRANS_CACHE_DIR=str(tmp_path / "cache"))
    results = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "f.py")],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        results.append(json.loads(done.stdout))
    assert results[0]["built"] and not results[1]["built"]
    x = np.linspace(0.1, 0.9, 4)
    np.testing.assert_allclose(results[1]["grad"], np.cos(x) * x + np.sin(x), rtol=1e-14)


def test_the_least_recently_used_entries_go_when_there_are_too_many(tmp_path):
    folder = tmp_path / "entries"
    folder.mkdir(mode=0o700)
    names = [f"{k:02d}{directory.SUFFIX}" for k in range(12)]
    for age, name in enumerate(names):
        assert directory.write(str(folder), name, f"entry {name}")
        os.utime(folder / name, ns=(10**18 + age * 10**9,) * 2)     # written in this order
    assert directory.read(str(folder), names[0]) == f"entry {names[0]}"   # the oldest, read now
    assert directory.prune(str(folder), limit=8) == 6                  # down to 3/4 of 8
    kept = sorted(os.listdir(folder))
    assert kept == sorted([names[0]] + names[7:])


def test_the_least_recently_used_entries_go_when_they_take_too_many_bytes(tmp_path):
    folder = tmp_path / "entries"
    folder.mkdir(mode=0o700)
    names = [f"{k:02d}{directory.SUFFIX}" for k in range(6)]
    for age, name in enumerate(names):
        assert directory.write(str(folder), name, "x" * 1000)
        os.utime(folder / name, ns=(10**18 + age * 10**9,) * 2)
    size = os.path.getsize(folder / names[0])
    assert directory.prune(str(folder), max_bytes=6 * size) == 0           # at the bound: kept
    # over 4 entries' bytes: down to 3/4 of that, so the three oldest go and three stay
    assert directory.prune(str(folder), max_bytes=4 * size) == 3
    assert sorted(os.listdir(folder)) == names[3:]


def test_a_notebook_kernel_started_again_reads_back_its_cells_derivatives(tmp_path, monkeypatch):
    """Cells are compiled under a file name that changes with each kernel."""
    import nbclient             # the test extra installs both, with ipykernel
    import nbformat
    monkeypatch.setenv("SRCTRANS_CACHE_DIR", str(tmp_path / "cache"))
    cells = ["import sys\nimport numpy as np\nimport srctrans as st",
             "def energy(x):\n    return np.sum(np.tanh(x) ** 2)",
             "print(st.grad(energy)(np.linspace(0.1, 0.9, 3)).tolist(), "
             "'srctrans.pipeline' in sys.modules)"]
    printed = []
    for _ in range(2):
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
        printed.append(notebook.cells[2].outputs[0]["text"].strip())
    first, second = printed
    assert first.endswith("True") and second.endswith("False")      # built, then read back
    assert first.rsplit(" ", 1)[0] == second.rsplit(" ", 1)[0]


def test_the_command_line_shows_and_clears_the_cache(tmp_path, monkeypatch, capsys):
    from srctrans.cli import main
    monkeypatch.setenv("SRCTRANS_CACHE_DIR", str(tmp_path / "entries"))
    directory.write(directory.location(), "a" + directory.SUFFIX, "{}")
    assert main(["cache"]) == 0
    assert capsys.readouterr().out == (
        f"{tmp_path / 'entries'}: 1 entry, 0.0 MiB (bounds: {directory.MAX_ENTRIES} entries, "
        f"{directory.MAX_BYTES // 2**20} MiB; the least recently used go beyond either)\n")
    assert main(["cache", "--clear"]) == 0
    assert "deleted 1 entry" in capsys.readouterr().out
    assert os.listdir(tmp_path / "entries") == []
    monkeypatch.setenv("SRCTRANS_CACHE_DIR", "")
    assert main(["cache"]) == 0
    assert capsys.readouterr().out == "the persistent cache is off: SRCTRANS_CACHE_DIR is set and empty\n"


def _decorated(f):
    return f


@_decorated
def _with_a_tail(x,
                 scale=2.0):
    def inner(y):
        return (y
                * scale)
    # a comment between statements
    return inner(x)   # the last line of code
    # a trailing comment, and blank lines after it


def _docstring_only():
    """Nothing but a docstring: its lines hold no instruction."""


def test_a_functions_code_lines_run_from_its_decorator_to_its_last_line_of_code():
    import inspect
    from srctrans.places import code_lines
    lines, first = code_lines(_with_a_tail)
    whole, start = inspect.getsourcelines(_with_a_tail)
    assert first == start and lines[0].startswith("@_decorated")
    if sys.version_info < (3, 11):                # no end lines: inspect's lines (documented)
        assert lines == whole
    else:
        assert lines[-1].strip() == "return inner(x)   # the last line of code"
        assert lines == whole[:len(lines)] and len(lines) == len(whole) - 1
    lines, _ = code_lines(_docstring_only)       # (its fingerprint: the def line, the code)
    assert lines[0].startswith("def _docstring_only")


LOADING_RACE = '''
import threading, time
import numpy as np
from srctrans.rules import REGISTRY
load = REGISTRY._builtins
REGISTRY._builtins = lambda: (time.sleep(0.3), load())     # a slow first load
found = {}
first = threading.Thread(target=lambda: found.setdefault("first", REGISTRY.lookup(np.tanh)))
first.start()
time.sleep(0.1)                                             # while the first thread loads
found["second"] = REGISTRY.lookup(np.tanh)
first.join()
print(found["first"] is not None, found["second"] is not None, REGISTRY.loaded)
'''


def test_a_lookup_while_another_thread_loads_the_rules_waits_for_them(tmp_path):
    """srctrans's rules load at the registry's first query (a cache hit needs none); a
    query from another thread meanwhile waits for all of them, and finds its rule. (Run
    from a scratch directory: the checkout's srctrans/ must not shadow the installed one.)"""
    done = subprocess.run([sys.executable, "-c", LOADING_RACE], capture_output=True, text=True,
                          timeout=120, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]

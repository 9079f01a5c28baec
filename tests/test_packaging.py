"""What a user installs works: the sdist and the wheel hold every package, the version is
defined once, the suite tests the installed package when CI runs it, and it leaves the
user's own cache alone."""

import importlib
import importlib.metadata
import os
import pathlib
import subprocess
import sys
import sysconfig
import textwrap

import pytest

import srctrans

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPTIONAL = {"scipy", "dask", "distributed", "pygments", "matplotlib"}     # the extras' modules


def _checkout_modules():
    """Every module of the checkout, as the installed package names it."""
    names = []
    for folder, prefix in ((ROOT / "srctrans", "srctrans"), (ROOT / "runtime", "srctrans.runtime")):
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join((prefix, *parts)))
    return names


@pytest.mark.skipif(not os.environ.get("SRCTRANS_TESTS_INSTALLED"),
                    reason="only when .ci/run tests the installed wheel")
def test_every_module_of_the_checkout_is_in_the_installed_wheel():
    """The wheel .ci/run built from the sdist holds every module of the checkout (a package
    left out of the wheel is what a user meets first)."""
    site = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
    for name in _checkout_modules():
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:        # only an optional extra may be missing
            assert error.name.split(".")[0] in OPTIONAL, (name, error)
            continue
        assert pathlib.Path(module.__file__).resolve().is_relative_to(site), module.__file__


def test_no_module_shadows_a_public_function():
    """Importing a submodule sets it as an attribute of the package: one named like a public
    function (``srctrans/export.py`` once) would replace ``st.export`` with a module."""
    modules = {name.split(".")[1] for name in _checkout_modules() if name.count(".") >= 1}
    public = set(srctrans._PUBLIC) | set(srctrans._RENAMED)
    assert not modules & public, modules & public


def test_the_version_is_defined_once():
    assert importlib.metadata.version("srctrans") == srctrans.__version__


@pytest.mark.skipif(not os.environ.get("SRCTRANS_TESTS_INSTALLED"),
                    reason="only when .ci/run tests the installed wheel")
def test_ci_tests_the_installed_wheel_not_the_checkout():
    installed = pathlib.Path(srctrans.__file__).resolve()
    site = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
    assert installed.is_relative_to(site), installed
    assert not installed.is_relative_to(ROOT), installed
    # and so do the subprocesses the tests start (the CLI, the samples)
    done = subprocess.run([sys.executable, "-c", "import srctrans; print(srctrans.__file__)"],
                          capture_output=True, text=True, check=True)
    assert pathlib.Path(done.stdout.strip()).resolve() == installed


@pytest.mark.skipif(bool(os.environ.get("SRCTRANS_TESTS_INSTALLED")),
                    reason=".ci/run built the wheel from the sdist and installed it: the suite "
                           "tests that package (and the test below checks its modules)")
def test_the_sdist_installs_and_works_in_a_fresh_environment(tmp_path):
    """Build the sdist, install it (pip builds the wheel from it) into a new virtual environment
    and use it there: every module of the checkout imports, a gradient, a JVP, the CLI and
    ``srctrans cache`` work."""
    build = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir",
                            str(tmp_path / "dist"), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    sdist, = (tmp_path / "dist").glob("srctrans-*.tar.gz")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q",
                              "--disable-pip-version-check", str(sdist)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "model.py").write_text(textwrap.dedent("""\
        import numpy as np

        def loss(w, x):
            return np.sum(np.tanh(x @ w) ** 2)
        """))
    script = textwrap.dedent(f"""\
        import importlib, sys
        import numpy as np
        import srctrans as st
        from model import loss
        assert "site-packages" in st.__file__, st.__file__
        for name in {_checkout_modules()!r}:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as error:     # only an optional extra may be missing
                assert error.name.split(".")[0] in {sorted(OPTIONAL)!r}, (name, error)
        w, x = np.array([0.3, -0.2]), np.array([[1.0, 2.0], [0.5, -1.0]])
        g = st.grad(loss)(w, x)
        v = np.array([1.0, 0.5])
        _, t = st.jvp(loss, (w, x), (v, np.zeros_like(x)))
        assert np.isclose(g @ v, t), (g, t)
        print("ok", st.__version__)
        """)
    env = {**os.environ, "SRCTRANS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PYTHONPATH", None)
    work = tmp_path / "work"
    ran = subprocess.run([str(python), "-c", script], cwd=work, env=env, capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == f"ok {srctrans.__version__}"
    command = venv / "bin" / "srctrans"
    cli = subprocess.run([str(command), "model.py:loss"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stderr
    assert "def loss_bwd" in cli.stdout or "def loss" in cli.stdout, cli.stdout
    cache = subprocess.run([str(command), "cache"], cwd=work, env=env, capture_output=True,
                           text=True, timeout=120)
    assert cache.returncode == 0 and "Traceback" not in cache.stderr, cache.stderr
    assert cache.stdout.startswith(str(tmp_path / "cache")) and "entr" in cache.stdout


def test_a_run_that_writes_into_the_real_cache_fails(tmp_path):
    """The suite's conftest fails the run when a test lets a build reach the user's own cache
    (here a test that drops the suite's cache directory, as a subprocess with a clean
    environment would)."""
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tmp_path / "test_leak.py").write_text(textwrap.dedent("""\
        import os
        import numpy as np
        import srctrans as st

        def f(x):
            return np.sum(x * x)

        def test_leak():
            os.environ.pop("SRCTRANS_CACHE_DIR")
            st.grad(f)(np.ones(2))
        """))
    home = tmp_path / "home"
    env = {**os.environ, "XDG_CACHE_HOME": str(home)}
    env.pop("SRCTRANS_CACHE_DIR", None)
    env.pop("SRCTRANS_TEST_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert f"wrote 1 entries into the real cache {home / 'srctrans'}" in done.stdout

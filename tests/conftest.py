"""The whole suite runs with the persistent cache on, in a directory of its own.

Every build the tests make is written there, and every build a test asks for
again after ``st.clear_cache()`` (or another test's identical build) is read
back from it: the suite checks loaded derivatives as much as built ones.
Subprocesses inherit the directory through ``SRCTRANS_CACHE_DIR``. Tests that
must see a build happen switch the cache off with the ``no_persistent_cache``
fixture.

``SRCTRANS_TEST_CACHE_DIR=DIR python -m pytest`` uses ``DIR`` instead and keeps
it: run the suite twice so that the second run reads nearly every derivative
back from the first run's entries.
"""

import os
import sys

# One BLAS thread in each test process (and the processes the tests start), unless the
# environment says otherwise: an idle OpenBLAS thread spins, and beside the other xdist
# worker on a 2-core machine it took a fifth of the suite's time (the rule tests: 56 s ->
# 45 s with one thread). Set before NumPy loads, which reads it once.
if "numpy" not in sys.modules:
    for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _suite_cache_directory(tmp_path_factory):
    folder = os.environ.get("SRCTRANS_TEST_CACHE_DIR") or \
        tmp_path_factory.mktemp("srctrans-cache") / "cache"
    previous = os.environ.get("SRCTRANS_CACHE_DIR")
    os.environ["SRCTRANS_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("SRCTRANS_CACHE_DIR", None)
    else:
        os.environ["SRCTRANS_CACHE_DIR"] = previous


@pytest.fixture
def no_persistent_cache(monkeypatch):
    """The persistent cache off for one test (its builds happen in this process)."""
    monkeypatch.setenv("SRCTRANS_CACHE_DIR", "")


# -- the user's own cache is left as it was ------------------------------------------------

def _real_cache_entries():
    """The entry names in the cache directory srctrans uses outside the tests (the platform's
    user cache directory, or ``$SRCTRANS_CACHE_DIR`` as the user set it)."""
    from srctrans.persist import directory
    place = _REAL_CACHE[0]
    return set(directory._names(place, (directory.SUFFIX, ".tmp"))) if place else set()


_REAL_CACHE = [None]
_BEFORE = [set()]


def pytest_sessionstart(session):
    from srctrans.persist import directory
    _REAL_CACHE[0] = os.environ.get(directory.ENVIRONMENT) or directory._platform_directory()
    _BEFORE[0] = _real_cache_entries()


def pytest_sessionfinish(session, exitstatus):
    """Fail the run when it wrote into the real cache: every test's builds belong in the
    suite's own directory (``_suite_cache_directory``)."""
    written = _real_cache_entries() - _BEFORE[0]
    if written:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\nthe test run wrote {len(written)} entries into the real cache "
              f"{_REAL_CACHE[0]} (e.g. {sorted(written)[:3]}); tests must use the suite's "
              f"own cache directory", flush=True)

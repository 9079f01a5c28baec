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

import pytest


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

"""Which packages the distribution holds: found on disk, never listed by hand.

Everything else about the build is in pyproject.toml. This file exists only because
pyproject.toml's package discovery cannot express the one mapping srctrans needs: the
repository's top-level ``runtime/`` folder is installed as ``srctrans.runtime`` (a top-level
``runtime`` package could be shadowed by any ``runtime.py`` in a user's directory), and its
subpackages, if it ever has any, go with it.
"""

from setuptools import find_packages, setup

RUNTIME = "srctrans.runtime"
runtime_packages = [RUNTIME] + [f"{RUNTIME}.{name}" for name in find_packages("runtime")]

setup(
    packages=find_packages(include=["srctrans", "srctrans.*"]) + runtime_packages,
    package_dir={RUNTIME: "runtime"},
)

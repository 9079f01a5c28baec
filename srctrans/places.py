"""Where a function's code comes from: an installed package or the standard library, or not.

Guarantees: :func:`is_installed` is true for Python functions whose file lies
under the standard library or a site-packages directory of this interpreter.
"""

import os
import site
import sysconfig


def _installed_directories():
    paths = sysconfig.get_paths()
    places = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    places.update(getattr(site, "getsitepackages", lambda: [])())
    places.add(getattr(site, "getusersitepackages", lambda: None)())
    return tuple(os.path.abspath(p) + os.sep for p in places if p)


INSTALLED = _installed_directories()


def is_installed(callee):
    """Whether ``callee`` is a Python function of an installed package or the standard library."""
    code = getattr(callee, "__code__", None) or getattr(getattr(callee, "__func__", None),
                                                        "__code__", None)
    return code is not None and os.path.abspath(code.co_filename).startswith(INSTALLED)


def is_installed_file(path):
    """Whether the file ``path`` lies under the standard library or an installed package."""
    return os.path.abspath(path).startswith(INSTALLED)

"""Where a function's code comes from: its source lines, and whether it is installed code.

Guarantees: :func:`source_lines` gives the lines of a function's ``def`` as
:func:`inspect.getsourcelines` of its code object does, in a fraction of the
time; :func:`code_lines` those holding its code, without tokenizing;
:func:`is_installed` is true for Python functions whose file lies under the
standard library or a site-packages directory of this interpreter.
"""

import inspect
import linecache
import os
import site
import sysconfig


def source_lines(fn):
    """``(lines, first)``: the lines of the ``def`` of ``fn`` (a function or a code object),
    decorators included, and the line number of the first; raises OSError without source.

    What ``inspect.getsourcelines(fn.__code__)`` returns, without its search of
    every loaded module for the one that holds the file (milliseconds a call):
    a function's globals say where its lines come from (a loader, a notebook
    cell). Lines cached from a file that changed since are read again, as inspect does.
    """
    code = getattr(fn, "__code__", fn)
    filename = code.co_filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, getattr(fn, "__globals__", None))
    if not lines:
        raise OSError(f"could not get source code of {code.co_name} from {filename}")
    first = code.co_firstlineno            # the first decorator's line, or the def's
    if not 0 < first <= len(lines):
        raise OSError(f"line {first} is out of bounds of {filename}")
    return inspect.getblock(lines[first - 1:]), first


def code_lines(fn):
    """``(lines, first)``: the lines from the first of ``fn``'s ``def`` (decorators included)
    to the last its code object or a nested one has instructions on; raises OSError without
    source. Every line of code of :func:`source_lines`'s, without its trailing comments and
    blank lines, and without tokenizing (whose first use compiles its patterns: milliseconds
    of a new process's first gradient). Before Python 3.11 (no end lines), ``source_lines``."""
    code = getattr(fn, "__code__", fn)
    if not hasattr(code, "co_positions"):
        return source_lines(fn)
    filename = code.co_filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, getattr(fn, "__globals__", None))
    first = code.co_firstlineno
    if not lines or not 0 < first <= len(lines):
        raise OSError(f"could not get source code of {code.co_name} from {filename}")
    last, pending = first, [code]
    while pending:
        current = pending.pop()
        for _, end, _, _ in current.co_positions():
            if end is not None and end > last:
                last = end
        pending.extend(c for c in current.co_consts if isinstance(c, type(code)))
    return lines[first - 1:min(last, len(lines))], first


def _installed_directories():
    paths = sysconfig.get_paths()
    places = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    places.update(getattr(site, "getsitepackages", list)())
    places.add(getattr(site, "getusersitepackages", lambda: None)())
    return tuple(os.path.abspath(p) + os.sep for p in places if p)


INSTALLED = _installed_directories()


def is_installed(callee):
    """Whether ``callee`` is a Python function of an installed package or the standard library."""
    code = getattr(callee, "__code__", None) or getattr(getattr(callee, "__func__", None),
                                                        "__code__", None)
    return code is not None and is_installed_file(code.co_filename)


def is_installed_file(path):
    """Whether the file ``path`` lies under the standard library or an installed package."""
    return os.path.abspath(path).startswith(INSTALLED)

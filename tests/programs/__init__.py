"""User functions the tests differentiate.

srctrans reads a function's source from its file, so every function a test
differentiates lives in a real module here. Functions whose line numbers a
test checks carry a marker comment (``# marker: NAME``) that
:func:`line_of` finds, so tests never hard-code line numbers.
"""

import inspect


def line_of(module, marker):
    """The 1-based line number of the line of ``module`` holding ``# marker: <marker>``."""
    lines = inspect.getsource(module).splitlines()
    tag = f"# marker: {marker}"
    found = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(tag)]
    if len(found) != 1:
        raise LookupError(f"{len(found)} lines of {module.__name__} carry {tag!r}")
    return found[0]

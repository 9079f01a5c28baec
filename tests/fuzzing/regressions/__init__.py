"""Programs the fuzzer once failed on, shrunk: each file is a module with ``program`` and the
``ARGS`` it failed at (``tests/test_fuzz.py`` checks every one)."""

import os

import numpy as np

DIRECTORY = os.path.dirname(os.path.abspath(__file__))


def save(text, args, seed, index, outcome):
    """Write a failing program with its arguments as ``seed_<seed>_<index>.py``; the path."""
    path = os.path.join(DIRECTORY, f"seed_{seed}_{index}.py")
    header = (f'"""Fuzzer seed {seed}, program {index}: once {outcome.kind}.\n\n'
              + outcome.message.splitlines()[0][:300].replace('"""', "'''") + '\n"""\n\n')
    with open(path, "w") as handle:
        handle.write(header + text + f"\n\nARGS = {_literal(args)}\n")
    return path


def files():
    """The paths of the kept programs, sorted."""
    return sorted(os.path.join(DIRECTORY, name) for name in os.listdir(DIRECTORY)
                  if name.startswith("seed_") and name.endswith(".py"))


def _literal(value):
    if isinstance(value, tuple):
        return "(" + "".join(_literal(v) + ", " for v in value) + ")"
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    return repr(value)

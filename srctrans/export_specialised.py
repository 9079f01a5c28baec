"""Exports specialised on example arguments (``st.export(f, args=...)``, ``--args``).

Requires: a specialised reverse or forward instance (``examples.instance_for``).
Guarantees: :func:`specialised_export` returns the builds to write and the edits
that make their entry points safe for any call, or None when the call's code
is not specialised (the generic export is right for every argument). The
edited entry points (``NAME_fwd`` and the fused ``NAME_grad``, or ``NAME_jvp``)
first call ``_like_example(...)``, which raises ``ValueError`` for arguments
whose kinds the code was not specialised on (another shape, dtype or type, or
another value of an int, bool or string); ``NAME_grad`` returns one array for
one selected argument and copies a gradient that is an argument, or a view of
one, as ``st.grad`` does.
"""

import ast

import numpy as np

from srctrans.ownership import argument_arrays

CHECK = "_like_example"


def specialised_export(found, args, base, mode, single):
    """``(build, edits)`` for the instance ``found`` a call with ``args`` runs, or None when
    it is not specialised, or when its fused gradient does not return gradients of the
    arguments' kinds for ``args`` (the generic code is then exported). ``found`` takes no
    branch as the measuring call took it (``examples.instance_for`` without ``guess``): the
    export must hold for every value of the arguments' shapes. ``edits`` is applied to the
    generated text by :func:`edited`."""
    if not found.specialised:
        return None
    entries = [f"{base}_jvp"] if mode == "forward" else [f"{base}_fwd", f"{base}_grad"]
    copies = ()
    if mode == "reverse":
        if found.grad is None:
            return None
        raw = found.grad(*args)
        copies = _shared(raw, args)
        if copies is None:
            return None
    # floats compared by value when a shape or a branch depends on one (every float: stricter)
    floats = found.build.float_values_matter or bool(found.build.value_floats)
    return found.build, {"entries": entries, "grad": f"{base}_grad", "single": single,
                         "copies": copies, "example": [_kind(a, floats) for a in args],
                         "floats": floats}


def _shared(raw, args):
    """The positions of the gradients in ``raw`` to copy (an argument, a view, or another
    gradient), or None when one is not an array or float as its argument is."""
    if not isinstance(raw, tuple):
        return None
    taken, copies = argument_arrays(args), []
    for k, g in enumerate(raw):
        if type(g) is np.ndarray:
            if g.base is not None or id(g) in taken or not g.flags.writeable:
                copies.append(k)
            taken.add(id(g))
        elif type(g) not in (float, np.float64, np.float32):
            return None
    return tuple(copies)


def _kind(value, float_values):
    """What the exported check compares an argument by (see ``_like`` in :data:`CHECK_SOURCE`)."""
    if type(value) is np.ndarray:
        return (str(value.dtype), value.shape)
    if isinstance(value, float) and not float_values:
        return type(value).__name__
    return (type(value).__name__, value.item() if isinstance(value, np.generic) else value)


CHECK_SOURCE = '''\
def _like(value, float_values):
    if type(value) is np.ndarray:
        return (str(value.dtype), value.shape)
    if isinstance(value, float) and not float_values:
        return type(value).__name__
    return (type(value).__name__, value)


def _compare(args):
    """Raise ValueError for the first of ``args`` unlike the example argument."""
    if len(args) != len(_EXAMPLE):
        raise ValueError(f"{{len(args)}} arguments, but this module was exported for "
                         f"{{len(_EXAMPLE)}}")
    for name, value, like in zip(_PARAMETERS, args, _EXAMPLE):
        if _like(value, {floats}) != like:
            raise ValueError(f"{{name}} is {{_like(value, {floats})}}, but this module was "
                             f"exported for {{like}}: export it again with example arguments "
                             f"like these (--args), or without them for any arguments")


def {check}({parameters}):
    """Raise ValueError unless the arguments are like the example ones the code below was
    specialised on: arrays of their shapes and dtypes, floats, and ints, bools and strings
    of their values."""
    if not ({fast}):
        _compare(({arguments}))'''


def _fast_test(name, kind):
    """A quick test that the argument ``name`` is like the example of kind ``kind``
    (``_compare`` decides where it fails: another byte order of one dtype passes there)."""
    if isinstance(kind, tuple) and isinstance(kind[1], tuple):          # (dtype, shape)
        return (f"type({name}) is np.ndarray and {name}.shape == {kind[1]!r} "
                f"and {name}.dtype is _DTYPES[{kind[0]!r}]")
    if isinstance(kind, str):                                           # a float's type
        return f"type({name}) is {_type_expression(kind)}"
    return f"type({name}) is {_type_expression(kind[0])} and {name} == {kind[1]!r}"


_BUILT_IN_TYPES = {"int": "int", "bool": "bool", "str": "str", "float": "float",
                   "NoneType": "type(None)"}


def _type_expression(name):
    """The expression for the type named ``name`` (a built-in one, else NumPy's)."""
    return _BUILT_IN_TYPES.get(name, f"np.{name}")


def edited(text, edits, parameters):
    """``text`` (the generated source) with the check called first in each entry point and
    ``NAME_grad``'s return as :func:`specialised_export` says; and the check's source."""
    lines = text.split("\n")
    tree = ast.parse(text)
    changes = []                      # (line index, lines to remove, lines to insert)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name not in edits["entries"]:
            continue
        first = node.body[0]           # the docstring: the check goes right after it
        at = first.end_lineno if ast.get_docstring(node) is not None else first.lineno - 1
        names = [a.arg for a in node.args.posonlyargs + node.args.args]
        changes.append((at, 0, [" " * first.col_offset + f"{CHECK}({', '.join(names)})"]))
        returned = node.body[-1]
        if node.name == edits["grad"] and isinstance(returned, ast.Return) \
                and isinstance(returned.value, ast.Tuple):
            entries = [ast.unparse(e) + (".copy()" if k in edits["copies"] else "")
                       for k, e in enumerate(returned.value.elts)]
            value = entries[0] if edits["single"] else "(" + ", ".join(entries) + ")"
            changes.append((returned.lineno - 1, returned.end_lineno - returned.lineno + 1,
                            [" " * returned.col_offset + "return " + value]))
    for index, removed, inserted in sorted(changes, reverse=True):
        lines[index:index + removed] = inserted
    example = edits["example"]
    dtypes = sorted({kind[0] for kind in example if isinstance(kind, tuple)
                     and isinstance(kind[1], tuple)})
    fast = " and\n            ".join(_fast_test(name, kind)
                                      for name, kind in zip(parameters, example)) or "True"
    check = "\n".join([
        "# The functions below are specialised on arguments like the example ones they were",
        "# exported for; other arguments raise ValueError (export without --args for any).",
        f"_PARAMETERS = {tuple(parameters)!r}",
        f"_EXAMPLE = {tuple(example)!r}",
        "_DTYPES = {" + ", ".join(f"{d!r}: np.dtype({d!r})" for d in dtypes) + "}",
        "", "", CHECK_SOURCE.format(check=CHECK, floats=edits["floats"], fast=fast,
                                    parameters=", ".join(parameters),
                                    arguments="".join(f"{p}, " for p in parameters).rstrip())])
    return "\n".join(lines), check


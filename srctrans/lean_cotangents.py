"""The short path's fused gradient without conforming the containers' cotangents it made.

Requires: a fused gradient (generated code, its text registered with linecache)
specialised on a call's shape key, that call's arguments, and what the fused
gradient returned for them.
Guarantees: :func:`lean_gradient` returns the same function with each top-level
``dq = rt.container_cotangent({...}, q)`` (or ``rt.attributes_cotangent``) written
``dq = {...}``, when on the call at hand the whole result is the same (the same
kinds of containers, keys in the same order, arrays of the same dtypes, shapes and
values); else None. A call the short path's guard admits has the same types,
shapes, dtypes, keys and ints as that call, and runs the same statements outside
loops, so each of those calls again only hands back the entries it was given.

``rt.container_cotangent(found, q)`` makes the cotangent of a dict, list or
object ``q`` from the cotangents ``found`` of the entries the function read: it
adds zeros for the entries it did not read, casts to an entry's dtype, and
orders the keys as ``q`` has them. For a dict of parameters the function reads
whole, all of that is checked and nothing done, a microsecond per call
(``gaussian_kl``: five for the authors' whole gradient). The guard has done the
checking once and for all.
"""

import ast
import inspect
import textwrap
import types

import numpy as np

from srctrans import runtime

_CONFORMING = ("container_cotangent", "attributes_cotangent")


def lean_gradient(fused, args, raw):
    """``(lean, what lean(*args) gave)``: ``fused`` without its top-level conforming of
    containers' cotangents; or None (none to drop, its text is gone, or dropping one
    changes what ``fused(*args)`` gives: ``raw``)."""
    if not any(name in fused.__code__.co_names for name in _CONFORMING):
        return None
    try:
        text = textwrap.dedent(inspect.getsource(fused))
    except (OSError, TypeError):
        return None
    function = ast.parse(text).body[0]
    ast.increment_lineno(function, fused.__code__.co_firstlineno - 1)    # (its traceback's)
    cells = dict(zip(fused.__code__.co_freevars, fused.__closure__ or ()))
    free = {name: cell.cell_contents for name, cell in cells.items()}
    arguments = dict(zip((a.arg for a in function.args.args), args))
    if not _drop_conforming(function, free, arguments):
        return None
    lean = _compiled(function, fused, cells)
    try:
        out = lean(*args)
    except Exception:                       # (the guard's call runs the full path instead)
        return None
    return (lean, out) if _same(out, raw) else None


def _drop_conforming(function, free, arguments):
    """Rewrite, in place, ``x = rt.container_cotangent({...}, c)`` at the top level of
    ``function`` (``rt`` a free name holding the runtime) as ``x = {...}``, its keys in the
    order of the dict ``c`` is in ``arguments`` (the parameters' values); whether any."""
    dropped = False
    for stmt in function.body:
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in _CONFORMING and isinstance(value.func.value, ast.Name)
                and free.get(value.func.value.id) is runtime and len(value.args) == 2
                and not value.keywords and isinstance(value.args[0], ast.Dict)):
            found, container = value.args
            if isinstance(container, ast.Name):
                _order_like(found, arguments.get(container.id))
            stmt.value = found
            dropped = True
    return dropped


def _order_like(found, container):
    """The entries of the dict display ``found`` put in the order of the keys of the dict
    ``container`` (in place), with None for its text entries ``found`` lacks (their
    cotangent), when ``found``'s keys are constants and all the others'."""
    if (type(container) is not dict or not all(isinstance(k, ast.Constant) for k in found.keys)
            or len({k.value for k in found.keys}) != len(found.keys)):
        return
    by_key = {k.value: (k, v) for k, v in zip(found.keys, found.values)}
    for key, entry in container.items():
        if key not in by_key and type(entry) is str and type(key) in (str, int):
            by_key[key] = (ast.Constant(key), ast.Constant(None))
    if by_key.keys() == container.keys():
        pairs = [by_key[key] for key in container]
        found.keys, found.values = [k for k, _ in pairs], [v for _, v in pairs]


def _compiled(function, fused, cells):
    """``function`` compiled as ``fused`` was: its globals, defaults and the cells of the
    free names it still reads."""
    factory = ast.FunctionDef(name="_factory", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=name) for name in cells], kwonlyargs=[],
        kw_defaults=[], defaults=[]),
        body=[function, ast.Return(ast.Name(id=function.name, ctx=ast.Load()))],
        decorator_list=[], returns=None)
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    code = compile(module, fused.__code__.co_filename, "exec")
    made = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in made.co_consts if isinstance(c, types.CodeType)
                 and c.co_name == function.name)
    lean = types.FunctionType(inner, fused.__globals__, fused.__name__, fused.__defaults__,
                              tuple(cells[name] for name in inner.co_freevars))
    lean.__kwdefaults__ = fused.__kwdefaults__
    return lean


def _same(a, b):
    """Whether ``a`` and ``b`` are the same result: containers of the same kinds, keys and
    order, arrays of the same dtypes, shapes and values, numbers of the same types and
    values, or the same object."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is np.ndarray:
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)):
        return a == b or (a != a and b != b)
    return False

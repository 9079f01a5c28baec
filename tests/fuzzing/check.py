"""Run generated programs through srctrans and compare with finite differences.

Each program is written to a file (srctrans reads source from files) and
imported. :func:`check` then runs ``st.check_grads`` to second order: reverse
mode with a random output cotangent on the generic, specialised and fused
paths, forward mode, and the derivatives of the generated gradient and JVP;
then the gradient again, from the cache, which must give the same numbers;
then, with the in-memory cache forgotten, the gradient and the second-order
check again, on derivatives read back from the persistent cache (the module is
registered in ``sys.modules``, so the helpers it calls can be found by name);
then the gradient and a JVP with every array argument a ``Duck`` (a NEP-18
array that fails on any conversion to NumPy, ``tests/duck_arrays.py``): each
must equal the NumPy one and stay a ``Duck``, or be refused with
``UnsupportedArrayError`` (a program whose plain run converts is not checked);
then the gradient at other values of the same shapes, which run the code
specialised on them, on whichever branches and ``while`` trips those take;
then, with ``VMAP`` set (``tests/fuzz.py --vmap``), ``st.vmap`` of the program and
of its gradient over a batch of three members (one argument batched along its
last axis) against a loop.

Outcomes: ``ok``; ``wrong`` (a derivative or value disagrees at every
finite-difference step tried); ``refused`` (a ``SrcTransError`` for a program
the generator only builds from supported syntax); ``internal`` (any other
exception from srctrans); ``invalid`` (the program itself fails or is not
finite in plain Python: not counted).
"""

import importlib.util
import itertools
import os
import sys
import traceback
import warnings

import numpy as np

import srctrans as st
from duck_arrays import Converted, Duck, unwrap

_modules = itertools.count()
STEPS = (1e-6, 1e-5, 1e-7)      # a disagreement at every step is a wrong derivative, not noise


class Outcome:
    def __init__(self, kind, message=""):
        self.kind = kind
        self.message = message

    def __repr__(self):
        return f"Outcome({self.kind!r}, {self.message[:200]!r})"


def load(text, directory):
    """Import ``text`` as a fresh module from a file in ``directory``; its ``program``."""
    name = f"fuzz_program_{os.getpid()}_{next(_modules)}"
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as handle:
        handle.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module        # its helpers can be found by name, so builds are stored
    spec.loader.exec_module(module)
    return module.program


def check(text, args, directory, vmap=None):
    """The :class:`Outcome` of one program (module ``text``) called with ``args``; ``vmap``
    (default ``VMAP``) adds the check of ``st.vmap``."""
    try:
        fn = load(text, directory)
    except Exception as error:                      # the program, not srctrans
        return Outcome("invalid", f"{type(error).__name__}: {error}")
    invalid = _invalid(fn, args)
    if invalid is not None:
        return Outcome("invalid", invalid)
    try:
        eps, wrong = _checked(fn, args, order=2)
        if wrong is not None:
            verdict = _reference_verdict(fn, args)      # (second order: no steep pass)
            if isinstance(verdict, tuple):
                return Outcome("unstable", f"{verdict[1]}; check_grads said: {wrong}")
            return Outcome("wrong", str(wrong))
        first = st.grad(fn, wrt=(0, 1, 2, 3))(*_copies(args))
        again = st.grad(fn, wrt=(0, 1, 2, 3))(*_copies(args))
        if _differ(first, again, _within_ulps):
            return Outcome("wrong", "a cached call gave another gradient")
        shared = _shared_memory(first, args) or _shared_memory(again, args)
        if shared is not None:
            return Outcome("wrong", shared)
        different = _with_aux(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _with_varargs(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _of_a_dict(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _of_a_list(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _of_rows(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _with_options(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _as_method(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _of_one_number(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _read_back(fn, args, first, eps)
        if different is not None:
            return Outcome("wrong", different)
        different = _on_duck_arrays(fn, args, first)
        if different is not None:
            return Outcome("wrong", different)
        different = _on_other_values(fn, args)
        if different is not None:
            return Outcome("wrong", different)
        different = vmap_difference(fn, args) if (VMAP if vmap is None else vmap) else None
        if different is not None:
            return Outcome("wrong", different)
    except st.InternalError as error:           # a failure of srctrans, not a refusal
        original = error.internal if error.internal is not None else error
        return Outcome("internal", "".join(traceback.format_exception(original))[-3000:])
    except st.SrcTransError as error:
        return Outcome("refused", f"{type(error).__name__}: {error}")
    except Exception as error:
        return Outcome("internal", "".join(traceback.format_exception(error))[-3000:])
    return Outcome("ok")


def _with_aux(fn, args, gradients):
    """What the program's has-aux twin (``program_with_aux``, returning ``(output, aux)``)
    gets wrong against ``program``'s ``gradients``, its JVP and its aux, or None."""
    twin = fn.__globals__.get("program_with_aux")
    if twin is None:
        return None
    expected_aux = twin(*_copies(args))[1]
    tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args)
    _, expected_tangent = st.jvp(fn, _copies(args), tangents)
    for _ in range(2):                               # generic, then specialised code
        got, aux = st.grad(twin, wrt=(0, 1, 2, 3), has_aux=True)(*_copies(args))
        if _differ(got, gradients, _to_rounding):
            return "has_aux=True gave another gradient than the program without aux"
        _, tangent, aux2 = st.jvp(twin, _copies(args), tangents, has_aux=True)
        if not np.allclose(tangent, expected_tangent, rtol=1e-9, atol=1e-12):
            return "has_aux=True gave another JVP than the program without aux"
        for found in (aux, aux2):
            if not _same_tree(found, expected_aux):
                return f"the aux value came back changed: {found!r} for {expected_aux!r}"
    return None


def _with_varargs(fn, args, gradients):
    """What the program's twin taking ``y, s, W`` through ``*args`` (``program_with_varargs``,
    passing them on whole to a function of its own) gets wrong against ``program``'s
    ``gradients`` and JVP (both modes), or None."""
    twin = fn.__globals__.get("program_with_varargs")
    if twin is None:
        return None
    tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args)
    _, expected_tangent = st.jvp(fn, _copies(args), tangents)
    for _ in range(2):                               # generic, then specialised code
        gx, rest = st.grad(twin, wrt=(0, "args"))(*_copies(args))
        for a, b, arg in zip((gx, *rest), gradients, args):
            a, b = (np.zeros_like(arg) if g is None else g for g in (a, b))    # unconnected:
            if not np.allclose(a, b, rtol=1e-9, atol=1e-12):      # None here, zeros through
                return "the *args twin gave another gradient than the program"    # a call
        _, tangent = st.jvp(twin, _copies(args), tangents)
        if not _same_tree(tangent, expected_tangent, rtol=1e-9, atol=1e-12):
            return "the *args twin gave another JVP than the program"
    return None


def _of_a_dict(fn, args, gradients):
    """What the program's twin reading ``x`` and ``y`` from a dict (``program_of_a_dict``,
    the dict holding an int and a string too) gets wrong against ``program``'s
    ``gradients`` and JVP, or None; its fused gradient makes the dict's cotangent key by
    key (optimise/container_cotangents.py)."""
    twin = fn.__globals__.get("program_of_a_dict")
    if twin is None:
        return None
    x, y, s, W = args

    def params(unit=False):            # (x is read as p['x'] * p.get('unit', 1.0))
        return {"x": _copies((x,))[0], "y": _copies((y,))[0], "n": 3, "label": "p",
                **({"unit": 1.0} if unit else {})}
    tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args)
    _, expected_tangent = st.jvp(fn, _copies(args), tangents)
    for unit in (False, False, False, True, True, True, False):   # generic, specialised, short
        gp, gs, gW = st.grad(twin, wrt=(0, 1, 2))(params(unit), s, W)
        if gp is None:                         # an output that depends on neither x nor y
            gp = {"x": None, "y": None, "n": None, "label": None}
        if gp["n"] is not None or gp["label"] is not None:
            return f"the dict's int and string entries got cotangents: {gp!r}"
        for a, b, arg in zip((gp["x"], gp["y"], gs, gW), gradients, args):
            a, b = (np.zeros_like(arg) if g is None else g for g in (a, b))
            if not np.allclose(a, b, rtol=1e-9, atol=1e-12):
                return "the dict twin gave another gradient than the program"
        dp = {"x": tangents[0], "y": tangents[1], "n": None, "label": None}
        _, tangent = st.jvp(twin, (params(), s, W), (dp, tangents[2], tangents[3]))
        if not _same_tree(tangent, expected_tangent, rtol=1e-9, atol=1e-12):
            return "the dict twin gave another JVP than the program"
    return None


def _of_a_list(fn, args, gradients):
    """What the program's twin unpacking ``x`` and ``y`` from a list (``program_of_a_list``:
    ``x, y = xy``, or read from its end and by slices, ``xy[-1]``, ``xy[:-1]``, whose
    cotangent the fused gradient makes a tuple and the short path
    hands back as a list) gets wrong against ``program``'s ``gradients``, or None; three
    calls (generic, specialised, short path)."""
    twin = fn.__globals__.get("program_of_a_list")
    if twin is None:
        return None
    x, y, s, W = args
    for _ in range(3):
        gxy, gs, gW = st.grad(twin, wrt=(0, 1, 2))([*_copies((x, y))], s, W)
        if gxy is not None and type(gxy) is not list:
            return f"the list twin's gradient of the list is a {type(gxy).__name__}"
        gx, gy = gxy if gxy is not None else (None, None)
        for a, b, arg in zip((gx, gy, gs, gW), gradients, args):
            a, b = (np.zeros_like(np.asarray(arg)) if g is None else g for g in (a, b))
            if not np.allclose(a, b, rtol=1e-9, atol=1e-12):
                return "the list twin gave another gradient than the program"
    return None


def _as_method(fn, args, gradients):
    """What the program's twin as a method reading ``W`` from ``self`` through another
    method (``Holder.program_as_method``: a call through ``self``, whose class test the
    specialised code folds) gets wrong against ``program``'s ``gradients``, or None; three
    calls each (generic, specialised, short path), with respect to the arguments and to
    ``self`` (its ``W``)."""
    holder_class = fn.__globals__.get("Holder")
    if holder_class is None:
        return None
    x, y, s, W = args
    expected = [None if g is None else np.asarray(g) for g in gradients]
    for _ in range(3):
        holder = holder_class(_copies((W,))[0])
        got = st.grad(holder.program_as_method, wrt=(0, 1, 2))(*_copies((x, y, s)))
        for a, b, arg in zip(got, expected[:3], (x, y, s)):
            a, b = (np.zeros_like(np.asarray(arg)) if g is None else g for g in (a, b))
            if not np.allclose(a, b, rtol=1e-9, atol=1e-12):
                return "the method twin gave another gradient than the program"
        of_self = st.grad(holder.program_as_method, wrt="self")(*_copies((x, y, s)))
        found = None if of_self is None else (of_self.get("W") if isinstance(of_self, dict)
                                                else getattr(of_self, "W", None))
        a, b = (np.zeros_like(W) if g is None else g for g in (found, expected[3]))
        if not np.allclose(a, b, rtol=1e-9, atol=1e-12):
            return "the method twin gave another gradient of self.W than the program of W"
    return None


def _of_rows(fn, args, gradients):
    """What the program's twin picking ``x`` out of a stack ``xs`` by an index argument
    ``k`` (``program_of_rows``: an int, an int array, a list of ints or a one-entry mask, as
    ``ROWS_INDEX`` says) gets wrong against ``program``'s ``gradients``, or None. ``k``
    picks each row in turn, three calls each (generic, specialised, short path): code
    specialised for one index must not answer for another (analyse/indices.py)."""
    twin = fn.__globals__.get("program_of_rows")
    if twin is None:
        return None
    x, y, s, W = args
    rows = 3
    for row in (1, 2, 1, 0):
        xs = np.stack([x * (0.5 + r) if r != row else x for r in range(rows)])
        k = {"int": row, "array": np.array([row]), "list": [row],
             "mask": np.arange(rows) == row}[fn.__globals__["ROWS_INDEX"]]
        for _ in range(3):
            gxs, gy, gs, gW = st.grad(twin, wrt=(0, 1, 2, 3))(xs.copy(), *_copies((y, s, W)), k)
            expected = [np.zeros_like(np.asarray(a)) if g is None else g
                        for g, a in zip(gradients, args)]
            gxs = np.zeros_like(xs) if gxs is None else gxs
            want = np.zeros_like(xs)
            want[row] = expected[0]
            for a, b, arg in zip((gxs, gy, gs, gW), (want, *expected[1:]), (xs, y, s, W)):
                a = np.zeros_like(arg) if a is None else a
                if not np.allclose(a, b, rtol=1e-9, atol=1e-12):
                    return (f"the twin picking x by a {fn.__globals__['ROWS_INDEX']} index "
                            f"(row {row}) gave another gradient than the program")
    return None


# (c, mode) for which program_with_options' branches all leave x as it is (a float32 `c`
# takes the branch that leaves `c` out: x * float32(1.0) of a Python float x is a float32)
OPTIONS = [(1.0, "on"), (-2.0, "on"), (1.0, "off"), (-2.0, "on"), (np.array(1.0), "on"),
           (np.array(-2.0), "on"), (1.0, "on"), (np.float32(0.5), "off"), (-2.0, "off")]


def _with_options(fn, args, gradients):
    """What the program's twin taking options ``c`` and ``mode`` (``program_with_options``,
    whose branches on them scale ``x`` by 1 for every option in :data:`OPTIONS`) gets wrong
    against ``program``'s ``gradients``, or None. Each option three calls (generic,
    specialised, short path): code specialised on one value must not answer for another
    (analyse/keyed_tests.py), nor for a 0-d array, whose value no shape key holds."""
    twin = fn.__globals__.get("program_with_options")
    if twin is None:
        return None
    for c, mode in OPTIONS:
        for _ in range(3):
            got = st.grad(twin, wrt=(0, 1, 2, 3))(*_copies(args), c, mode)
            for a, b, arg in zip(got, gradients, args):
                a = np.zeros_like(np.asarray(arg)) if a is None else a
                b = np.zeros_like(np.asarray(arg)) if b is None else b
                if not np.allclose(a, b, rtol=1e-9, atol=1e-12):
                    return (f"the twin taking options (c={c!r}, mode={mode!r}) gave another "
                            f"gradient than the program")
    return None


def _same_tree(a, b, rtol=1e-12, atol=0.0):
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(
            _same_tree(a[k], b[k], rtol, atol) for k in b)
    if isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(
            _same_tree(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(b, str):
        return a == b
    return np.allclose(a, b, rtol=rtol, atol=atol)


def _shared_memory(gradients, args):
    """What a returned gradient shares memory with (an argument, another gradient), or None:
    the caller may change any of them in place."""
    arrays = [("an argument", a) for a in _arrays_in(args)]
    for g in _arrays_in(gradients):
        for what, other in arrays:
            if np.shares_memory(g, other):
                return f"a gradient shares memory with {what}"
        arrays.append(("another gradient", g))
    return None


def _differ(got, want, same):
    """Whether two tuples of gradients differ: None in one where the other has an array, or
    arrays that ``same`` does not take for equal."""
    return any((a is None) != (b is None) or a is not None and not same(a, b)
               for a, b in zip(got, want))


def _within_ulps(a, b):                # one path called twice: its own rounding, again
    return np.allclose(a, b, rtol=1e-12, atol=0)


def _to_rounding(a, b):                # two ways of computing one derivative
    return np.allclose(a, b, rtol=1e-9, atol=1e-12)


def _arrays_in(value):
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays_in(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in _arrays_in(v)]
    return []


def _read_back(fn, args, gradient, eps):
    """None if, once the in-memory cache is forgotten, the derivatives srctrans reads back from
    the persistent cache (or builds again, when it is off) give on each path exactly what the
    built ones gave there: the generic code the built generic code's numbers, and the short
    path ``gradient`` (a call's third); the two paths agree as other code computing the same
    derivative does (to rounding, ``rtol=1e-9, atol=1e-12`` as :func:`_with_aux` has it: a
    fused gradient sums in other orders, so a derivative that is 0 by cancellation is
    rounding noise of its own); and they pass the second-order check that the built ones
    passed; else what differs."""
    built = st.grad(fn, wrt=(0, 1, 2, 3), specialize=False)(*_copies(args))
    st.clear_cache()
    read_back = st.grad(fn, wrt=(0, 1, 2, 3))
    first = read_back(*_copies(args))             # the generic code, read back
    if _differ(built, first, np.array_equal):
        return "the generic code read back from the persistent cache differs from the built one"
    if _differ(gradient, first, _to_rounding):
        return "the gradient read back from the persistent cache differs from the built one"
    for _ in range(2):                            # then the specialised code, and the path
        again = read_back(*_copies(args))         # ``gradient`` took: the same numbers
    if _differ(gradient, again, np.array_equal):
        return "the gradient read back from the persistent cache differs from the built one"
    st.clear_cache()
    try:
        st.check_grads(fn, _copies(args), order=2, wrt=(0, 1, 2, 3), eps=eps, rtol=1e-4,
                       atol=1e-6)
    except AssertionError as error:
        return f"read back from the persistent cache: {error}"
    return None


def shrink(text, args, directory, kind):
    """``text`` with as many statements of ``program`` removed as keep the outcome ``kind``."""
    head, body, tail = _split(text)
    statements = _statements(body)
    changed = True
    while changed:
        changed = False
        for i in range(len(statements)):
            trial = statements[:i] + statements[i + 1:]
            candidate = head + "".join(line for s in trial for line in s) + tail
            if check(candidate, args, directory).kind == kind:
                statements, changed = trial, True
                break
    return head + "".join(line for s in statements for line in s) + tail


def _split(text):
    lines = text.splitlines(True)
    start = next(i for i, line in enumerate(lines) if line.startswith("def program(")) + 1
    end = max(i for i, line in enumerate(lines) if line.startswith("    return "))
    return "".join(lines[:start]), lines[start:end], "".join(lines[end:])


def _statements(lines):
    """Top-level statements of the body (a header with its indented block is one)."""
    statements = []
    for line in lines:
        if line.startswith("        ") or line.startswith(("    else", "    elif")):
            statements[-1].append(line)
        else:
            statements.append([line])
    return statements


def _on_duck_arrays(fn, args, gradient):
    """None if the gradient (``gradient`` with NumPy arrays) and a JVP of ``fn`` on Duck arrays
    match NumPy's and stay Duck arrays, or are refused; else what differs."""
    def fresh_ducks():                     # a program may write into its arguments
        return tuple(Duck(a) if isinstance(a, np.ndarray) else a for a in _copies(args))

    try:
        with np.errstate(all="ignore"):
            primal = fn(*fresh_ducks())
    except Exception:                      # the program itself converts: Python would too
        return None
    ducks = fresh_ducks()
    tangents = tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args)
    try:
        with np.errstate(all="ignore"):
            got = st.grad(fn, wrt=(0, 1, 2, 3))(*ducks)
            _, want_tangent = st.jvp(fn, _copies(args), tangents)
            _, got_tangent = st.jvp(fn, fresh_ducks(), tuple(
                Duck(t) if isinstance(t, np.ndarray) else t for t in tangents))
    except st.UnsupportedArrayError:
        return None
    except Converted as error:
        return f"on duck arrays, srctrans converted one: {error}"
    # a gradient of an array argument is a duck array, and so is the tangent of an array
    # output that is one (a number, or an output computed from numbers only, may be NumPy's:
    # no array the size of the data is made)
    for what, a, b, duck in [(f"gradient {i}", g, w, isinstance(x, np.ndarray) and np.ndim(x))
                             for i, (g, w, x) in enumerate(zip(got, gradient, args))] + [
                                ("JVP", got_tangent, want_tangent,
                                 isinstance(primal, Duck) and primal.ndim > 0)]:
        if (a is None) != (b is None):
            return f"on duck arrays, the {what} is {a!r} where NumPy's is {b!r}"
        if a is None:
            continue
        if duck and not isinstance(a, Duck):
            return f"on duck arrays, the {what} came back as {type(a).__name__}"
        if not np.allclose(np.asarray(unwrap(a), dtype=float), b, rtol=1e-9, atol=1e-12,
                           equal_nan=True):
            return f"on duck arrays, the {what} differs: {unwrap(a)!r} against {b!r}"
    return None


# other values of the same shapes: the code specialised on the shapes runs for them too, and
# they may take other branches and other numbers of while iterations
OTHER_VALUES = ((-1.0, 0.0), (0.5, 0.7), (2.0, -0.4))


def _of_one_number(fn, args, gradients):
    """None if the gradient with respect to each float argument alone, from its third call on
    (forward mode where the program has a loop: ``srctrans/scalar_gradients.py``), gives what
    the gradient of all four arguments gave, and, on that code, what the reverse pass gives at
    other values of the same shapes (where the program is defined); else what differs."""
    for index, value in enumerate(args):
        if type(value) is not float or gradients[index] is None:
            continue
        alone = st.grad(fn, wrt=index)
        for _ in range(3):
            got = alone(*_copies(args))
        if not _agree(got, gradients[index]):
            return f"the gradient of argument {index} alone: {got} for {gradients[index]}"
        for scale, shift in OTHER_VALUES:
            other = tuple(a * scale + shift for a in args)
            if _invalid(fn, other) is not None:
                continue
            got = alone(*_copies(other))
            want = st.grad(fn, wrt=(0, 1, 2, 3))(*_copies(other))[index]
            if not _agree(got, want):
                return (f"at {scale} * args + {shift}, the gradient of argument {index} alone: "
                        f"{got} for {want}")
    return None


def _agree(got, want):
    """Two computations of one derivative, by forward and by reverse mode: equal to rounding,
    or both not finite alike."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if not (np.isfinite(got).all() and np.isfinite(want).all()):
        return bool(np.array_equal(got, want, equal_nan=True))
    return bool(np.allclose(got, want, rtol=1e-7, atol=1e-10 * (1.0 + np.abs(want).max())))


def _on_other_values(fn, args):
    """None if the derivatives (specialised on ``args``' shapes by the checks before) are right
    for other values of those shapes, where the program is defined; else what differs."""
    for scale, shift in OTHER_VALUES:
        other = tuple(a * scale + shift for a in args)
        if _invalid(fn, other) is not None:         # not defined there: the program's own limit
            continue
        _, wrong = _checked(fn, other, order=1)
        if wrong is not None and _reference_verdict(fn, other) is None:
            return f"at {scale} * args + {shift} (the same shapes): {wrong}"
    return None      # (a point where careful differences agree, or settle nowhere: passed)


VMAP = False     # also check st.vmap of every program (``tests/fuzz.py --vmap``; CI: an eighth)
MEMBER_SCALES = (1.0, 0.9, 1.1)       # the members of a batch: the arguments, scaled


def vmap_difference(fn, args):
    """None if ``st.vmap`` of the program and of its gradient equal a loop over a batch of
    three members (the arguments scaled, where the program is defined there), with every
    float argument batched, the first along its last axis, and so do ``st.vmap`` of its
    pullback and of ``st.hvp`` of it; else what differs."""
    members = [tuple(a * scale if _is_float(a) else a for a in args) for scale in MEMBER_SCALES]
    if any(_invalid(fn, m) is not None for m in members):
        return None
    axes = [None if not _is_float(a) else 0 for a in args]
    first = next((i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim), None)
    if first is not None:
        axes[first] = -1
    batch = []
    for i, ax in enumerate(axes):
        if ax is None:
            batch.append(args[i])
        else:
            batch.append(np.stack([np.asarray(m[i], dtype=float) for m in members], axis=ax))
    wrt = tuple(i for i, a in enumerate(args) if _is_float(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", st.BatchingWarning)
        got = st.vmap(fn, in_axes=tuple(axes))(*_copies(tuple(batch)))
        expected = np.stack([fn(*_copies(m)) for m in members])
        if not np.allclose(got, expected, rtol=1e-9, atol=1e-12):
            return f"vmap of the program: {got} for {expected}"
        if not wrt:
            return None
        gradient = st.grad(fn, wrt=wrt, unconnected_gradients="zero")
        got = st.vmap(gradient, in_axes=tuple(axes))(*_copies(tuple(batch)))
        for position, index in enumerate(wrt):
            expected = np.stack([np.broadcast_to(gradient(*_copies(m))[position],
                                                 np.shape(args[index])) for m in members])
            if not np.allclose(np.broadcast_to(got[position], expected.shape), expected,
                               rtol=1e-7, atol=1e-9):
                return f"vmap of the gradient, argument {index}: {got[position]} for {expected}"
        return _vmap_of_derivatives_difference(fn, args, wrt)


COTANGENT_SCALES = (1.0, -0.5, 2.0)     # a batch of cotangents (and tangents): ones, scaled


def _vmap_of_derivatives_difference(fn, args, wrt):
    """None if ``st.vmap`` of the program's pullback (over a batch of cotangents) and of
    ``st.hvp(fn)`` (over a batch of tangents, for a number output) equal loops; else what
    differs. A derivative srctrans refuses for the members is no test of the batch."""
    try:
        out, pullback = st.vjp(fn, *_copies(args), wrt=wrt, unconnected_gradients="zero")
        cotangents = [np.ones_like(np.asarray(out, dtype=float)) * s for s in COTANGENT_SCALES]
        expected = [pullback(c) for c in cotangents]
    except (st.SrcTransError, TypeError, ValueError):
        return None
    got = st.vmap(pullback)(np.stack(cotangents))
    for position, index in enumerate(wrt):
        want = np.stack([np.broadcast_to(e[position], np.shape(args[index])) for e in expected])
        if not np.allclose(np.broadcast_to(got[position], want.shape), want, rtol=1e-7,
                           atol=1e-9):
            return f"vmap of the pullback, argument {index}: {got[position]} for {want}"
    if np.ndim(out) != 0:
        return None
    tangents = [tuple(np.ones_like(a) * s if i in wrt else None for i, a in enumerate(args))
                for s in COTANGENT_SCALES]
    try:
        expected = [st.hvp(fn, _copies(args), t) for t in tangents]
    except (st.SrcTransError, TypeError, ValueError):
        return None
    batch = tuple(np.stack([t[i] for t in tangents]) if i in wrt else None
                  for i in range(len(args)))
    got = st.vmap(st.hvp(fn), in_axes=((None,) * len(args),
                                       tuple(0 if i in wrt else None for i in range(len(args)))))(
        _copies(args), batch)
    for index in wrt:
        want = np.stack([e[index] for e in expected])
        if not np.allclose(got[index], want, rtol=1e-7, atol=1e-9, equal_nan=True):
            return f"vmap of st.hvp, argument {index}: {got[index]} for {want}"
    return None


def _is_float(value):
    return isinstance(value, float) or isinstance(value, np.ndarray) and value.dtype.kind == "f"


def _invalid(fn, args):
    """Why ``fn`` is no fair test at ``args`` (it fails, or its value is not finite), or None."""
    try:
        with np.errstate(all="raise"):
            value = fn(*_copies(args))
    except Exception as error:                      # the program, not srctrans
        return f"{type(error).__name__}: {error}"
    try:
        if not np.all(np.isfinite(value)) or np.max(np.abs(value)) > 1e6:
            return "not finite"
    except (TypeError, ValueError):                 # (a shrunk program returning no number)
        return f"its output is a {type(value).__name__}"
    return None


def _checked(fn, args, order):
    """``(step, None)`` for the first finite-difference step at which ``st.check_grads``
    passes to ``order``, else ``(None, the error at the last step)``: a disagreement at
    every step is a wrong derivative, not noise."""
    wrong = None
    for eps in STEPS:
        try:
            st.check_grads(fn, _copies(args), order=order, wrt=(0, 1, 2, 3), eps=eps,
                           rtol=1e-4, atol=1e-6)
            return eps, None
        except AssertionError as error:
            wrong = error
    return None, wrong


# Richardson extrapolation from central differences at h and h / 2, at steps from coarse to
# fine: a smooth program's estimates settle (two in a row agree) at some step
SETTLING_STEPS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def _reference_verdict(fn, args):
    """What finite differences, taken with more care, say of ``fn``'s first derivatives at
    ``args`` where ``_checked`` found them wrong at every step: ``"agrees"``, ``"unsettled"``
    (with why), or None (the disagreement stands).

    Along one random direction (and output cotangent), forward and reverse mode must agree
    with each other to 1e-8 (they are computed apart: a wrong rule shows there), else None.
    The Richardson estimates of the directional derivative at :data:`SETTLING_STEPS` settle
    where two in a row agree to 1e-6: at the first such pair, ``"agrees"`` when the modes
    agree with it to 1e-5 (a steep program, whose fair step is finer than ``_checked``'s),
    None when they do not. Settling nowhere (a program chaotic at its arguments: a loop
    driving a value into the thousands), no step is fair: ``("unsettled", why)``."""
    rng = np.random.default_rng(7)
    directions = [rng.standard_normal(np.shape(a)) for a in args]
    directions = [d if np.ndim(a) else float(d) for d, a in zip(directions, args)]
    out = np.asarray(fn(*_copies(args)), dtype=float)
    cotangent = rng.standard_normal(out.shape)

    def projected(t):
        moved = [a + t * d for a, d in zip(args, directions)]
        return float(np.sum(cotangent * np.asarray(fn(*moved), dtype=float)))

    def central(h):
        return (projected(h) - projected(-h)) / (2 * h)

    with np.errstate(all="ignore"):
        estimates = [(4 * central(h / 2) - central(h)) / 3 for h in SETTLING_STEPS]
    _, tangent = st.jvp(fn, _copies(args), tuple(directions))
    forward = float(np.sum(cotangent * np.asarray(tangent, dtype=float)))
    _, pullback = st.vjp(fn, *_copies(args), wrt=(0, 1, 2, 3), unconnected_gradients="zero")
    reverse = sum(float(np.sum(np.asarray(g) * d))
                  for g, d in zip(pullback(cotangent if out.ndim else float(cotangent)),
                                  directions))
    if not abs(forward - reverse) <= 1e-8 * max(abs(forward), abs(reverse), 1e-300):
        return None
    for a, b in zip(estimates, estimates[1:]):
        if np.isfinite(a) and np.isfinite(b) and abs(a - b) <= 1e-6 * max(abs(a), abs(b)):
            return "agrees" if abs(forward - b) <= 1e-5 * max(abs(b), 1e-12) else None
    return "unsettled", (
        f"finite differences settle at no step (Richardson estimates "
        f"{', '.join(f'{e:.6g}' for e in estimates)} for steps {SETTLING_STEPS}), while "
        f"forward and reverse mode agree: {forward!r}, {reverse!r}")


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)

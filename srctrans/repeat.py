"""The shortest path for a call shaped like the previous one: a guard generated for its key.

Requires: the generic :class:`~srctrans.instances.Instance` of a function, the
fused gradient specialised on one call's shape key, and that call.
Guarantees: :func:`make_repeat` returns ``repeat(fn, args)``, which returns
the gradients of a call ``grad(fn)(*args)`` when that call has the same
shape key (the same number of positional arguments, the same shapes, the
same types of floats and values of ints, bools, strings and None), floating
selected arguments (arrays of the same dtypes, when that call's gradients
needed no conforming), and an instance that is still current (no called
name rebound, the same defaults); otherwise None, and the caller takes the
full path. The gradients are conformed to their arguments as the full path
conforms them. Containers and objects among the arguments (a bound method's
object first) are tested entry by entry (:mod:`srctrans.repeat_structures`);
for them :func:`make_repeat` returns None unless the full path would return the
fused gradient's own containers and arrays, none of them an argument's (a list's gradient
the fused gradient made a tuple, ``dparams = (dW1, db1)`` of ``W1, b1 = params``, is
handed back as the list the full path makes of it, ``list(g0)``).

Checking all that in a generic loop costs more than the fused gradient of
a small problem, so the checks are written out for the key at hand, one
comparison per argument, and compiled. For ``xent(W, b, x, labels_onehot)``
with ``wrt=(0, 1)``:

    def xent_repeat(fn, args):
        # xent's fused gradient, for calls shaped like the one this guard was made for
        if len(args) != 4:
            return None
        (a0, a1, a2, a3) = args
        if not (type(a0) is ndarray and a0.shape == (32, 10) and a0.dtype is dtype_a0
                and type(a1) is ndarray and a1.shape == (10,) and a1.dtype is dtype_a1
                and type(a2) is ndarray and a2.shape == (64, 32) and a2.dtype is dtype_a2
                and type(a3) is ndarray and a3.shape == (64, 10) and a3.dtype is dtype_a3):
            return None
        if namespace['np'] is not assumed_0:
            return None
        return fused(a0, a1, a2, a3)

(``fn``'s defaults are tested when a call that passes as many arguments could use them.)

The gradients of the call the guard was made for needed no conforming, so
those of a call with the same shapes and the same dtypes need none either
(specialised code has no branches). Otherwise the guard checks the
selected arrays' dtypes are floating, and checks each gradient after the
call, as the full path does (the same type and dtype as its argument, its
own memory, its argument's shape), handing those that fail to ``finish``.

A selected Python float gets an ``np.float64`` gradient, as :func:`grad` documents.

:func:`make_jvp_repeat` makes the same kind of guard for :func:`srctrans.jvp`:
it checks the primals and the tangents (None at the same places, arrays of
the same shapes and dtypes elsewhere) and calls the JVP specialised on their
shapes; :func:`make_hvp_repeat` for :func:`srctrans.hvp`, calling the JVP of
the fused gradient specialised on them; :func:`make_hessian_repeat` for
:func:`srctrans.hessian`, calling that JVP's batched form over the argument's basis.
"""

import re
import types

import numpy as np

from srctrans import shape_keys
from srctrans.emit.compile import register_source
from srctrans.repeat_stale import stale_tests
from srctrans.repeat_structures import StructureTests, leaf_arrays, same_leaves
from srctrans.ownership import owned_tangent
from srctrans.runtime.objects import UnseenCallee
from srctrans.runtime.seeding import check_outputs


def call_last(guards, last, args, kwargs):
    """What the last guard made for ``args[0]`` returns for a call ``entry(f, primals,
    tangents)`` of :func:`srctrans.jvp` or :func:`srctrans.hvp`, or None when the call is of
    another form, there is no guard, or it does not hold (the caller takes the full path).

    ``guards`` maps a function to its table, which holds the last guard under ``last``.
    """
    if (len(args) != 3 or kwargs or type(args[0]) is not types.FunctionType
            or type(args[1]) is not tuple or type(args[2]) is not tuple):
        return None                    # (lists are refused by the full path)
    table = guards.get(args[0])
    guard = table.get(last) if table is not None else None
    if guard is None:
        return None
    try:
        return guard(*args)
    except UnseenCallee:
        return None                    # the full path notes the callee


def remember(table, kinds, code, make, last, bound):
    """Make ``table[last]`` the guard for calls of these ``kinds`` that runs the generated
    ``code``: the one made before for them, unless it was made for code since rebuilt (a
    rebound helper), else ``make()``, kept while ``table`` holds fewer than ``bound``
    entries."""
    made = table.get(kinds)
    if made is not None and made[0] is not code:
        made = None
    if made is None and len(table) < bound:
        made = table[kinds] = (code, make())
    if made is not None:
        table[last] = made[1]


def fits(args, key, places):
    """Whether a call's arguments can take this path: a key, selected arrays, Python floats,
    containers or objects (whose gradients must then need no conforming: see make_repeat)."""
    return key is not None and all(
        type(args[index]) is np.ndarray or type(args[index]) is float
        or shape_keys.key_part(args[index]) is None for index, _, _ in places)


def make_repeat(fn, instance, fused, args, key, places, single, finish, raw):
    """``repeat(fn, args)`` for calls with the shape key ``key`` of ``args``.

    Args:
      fn: the user's function (its defaults and globals are checked).
      instance: its generic :class:`~srctrans.instances.Instance` (what it assumed).
      fused: the fused gradient specialised on ``key``.
      args: the positional arguments of the call the guard is made for.
      key: their shape key (:func:`srctrans.shape_keys.args_key`, as a tuple).
      places: the selected arguments, ``(position, name, default)`` each.
      single: return the one gradient rather than a tuple.
      finish: ``finish(raw, values)`` conforms gradients the general way.
      raw: what ``fused(*args)`` returned. When those gradients needed no
        conforming, neither do those of a call whose arrays have the same
        dtypes (the same objects): specialised code has no branches, so the
        same types, shapes and dtypes in give the same out. The guard then
        checks nothing of the gradients. It checks every array's dtype either
        way (specialised code may take a float array's kind for granted).

    None when the function (or a callee) calls a function of the user's that may write
    (``Build.may_write``): a call whose guard fails is run again on the full path, which
    could then not tell that the failed run had made such a call.
    """
    if instance.build.may_write:
        return None
    namespace = {"ndarray": np.ndarray, "float64": np.float64, "fused": fused, "finish": finish}
    count = len(args)
    names = [f"a{i}" for i in range(count)]
    selected = [index for index, _, _ in places]
    gradients = [f"g{k}" for k in range(len(selected))]

    structured = any(shape_keys.key_part(value) is None for value in args)
    listed = set()          # the gradients the full path makes lists of the fused tuples of
    if structured:      # containers, objects: trusted when the full path returns raw's own
        finished = finish(raw, tuple(args[i] for i in selected), args)
        finished = (finished,) if single else finished
        listed = {k for k, (f, g) in enumerate(zip(finished, raw))   # a list's, made a tuple
                  if type(f) is list and type(g) is tuple and same_leaves(f, list(g))}
        trusted = all(k in listed or same_leaves(f, g)
                      for k, (f, g) in enumerate(zip(finished, raw))) \
            and _owns_its_memory(raw, args)
        if not trusted:
            return None
    else:
        trusted = all(_conforms(g, args[index]) for g, index in zip(raw, selected)) and \
            _owns_its_memory(raw, args)
    shapes = []
    structures = StructureTests(namespace)
    # every array's dtype: the specialised code may take a float array's kind for granted
    # (``1.0 * a`` is ``a``), and indexes read from the arguments pick shapes their dtypes
    # decide (a mask's, an int array's)
    for i, (value, part) in enumerate(zip(args, key)):
        tests = structures.tests(f"a{i}", value, part, dtype=True)
        if tests is None:
            return None
        if type(value) is np.ndarray and not trusted and i in selected:
            tests.append(f"a{i}.dtype.kind == 'f'")
        shapes.append(" and ".join(tests))

    stale = stale_tests(fn, instance, namespace, passed=count)

    conforming, converted = [], []
    arrays = [f"a{i}" for i, value in enumerate(args) if type(value) is np.ndarray]
    for k, (g, index) in enumerate(zip(gradients, selected)):
        if type(args[index]) is np.ndarray:
            # an array of its own: no argument, and no other gradient (the caller may write
            # into it); owning its memory (base None), it is no view of one either
            others = " and ".join(f"{g} is not {other}" for other in arrays + gradients[:k])
            conforming.append(f"type({g}) is ndarray and {g}.dtype is a{index}.dtype and "
                              f"{g}.base is None and {g}.shape == a{index}.shape"
                              + (f" and {others}" if others else ""))
            converted.append(g)
        elif type(args[index]) is not float:      # a container's or object's: as fused gave it
            converted.append(f"list({g})" if k in listed else g)
        elif raw[k] is None:                      # an unconnected float's: None (float64(None)
            conforming.append(f"{g} is not None")  # is NaN), or what finish makes of it
            converted.append(g)
        else:                                     # a Python float gets an np.float64
            conforming.append(f"(type({g}) is float or type({g}) is float64)")
            converted.append(f"float64({g})")
    returned = converted[0] if single else _tuple(converted)
    if trusted and returned == _tuple(gradients):        # arrays only: as the fused gradient gave
        call = [f"    return fused({', '.join(names)})"]
    elif trusted:
        call = [f"    {', '.join(gradients)}{',' if len(gradients) == 1 else ''} = fused({', '.join(names)})",
                f"    return {returned}"]
    else:
        call = [f"    {', '.join(gradients)}{',' if len(gradients) == 1 else ''} = fused({', '.join(names)})",
                *_condition("if not", conforming, f"        return finish({_tuple(gradients)}, "
                                                  f"{_tuple([f'a{i}' for i in selected])}, "
                                                  f"{_tuple(names) if names else '()'})"),
                f"    return {returned}"]

    name = f"{fn.__name__}_repeat"
    lines = [
        f"def {name}(fn, args):",
        f"    # {fn.__name__}'s fused gradient, for calls shaped like the one this guard was made for",
        f"    if len(args) != {count}:",
        "        return None",
        f"    {_tuple(names)} = args" if count else "",
        *_checked(_condition("if not", shapes, "        return None")
                  + _condition("if", stale, "        return None"), "        return None"),
        *call,
    ]
    for bound in (False, True) if count else (False,):
        lines += _entry(f"{name}_{'bound' if bound else 'plain'}", names, bound, shapes, stale,
                        call)
    repeat = _compiled(lines, name, namespace, fn)
    repeat.entries = {False: namespace[f"{name}_plain"], True: namespace.get(f"{name}_bound")}
    return repeat


def _entry(name, names, bound, shapes, stale, call):
    """The lines of ``name(d, *args, **kwargs)``: the guard's tests and call written as the
    ``__call__`` of the gradient ``d`` (``api._Differentiated._set_repeat``), which reads the function
    and, ``bound``, the object first among the arguments from ``d``; any other call takes
    ``d._full(args, kwargs)``, and an error the fused gradient raises is raised as
    ``d._failed`` has it reported (raised here: a user's traceback holds this one frame of
    srctrans's, as the full path's holds its ``__call__``)."""
    own = names[1:] if bound else names
    full = "        return d._full(args, kwargs)"
    body = "\n".join(call).splitlines()
    return [
        f"def {name}(d, *args, **kwargs):",
        f"    if kwargs or len(args) != {len(own)}:",
        full,
        f"    {_tuple(own)} = args" if own else "",
        "    a0 = d._self" if bound else "",
        "    fn = d._fn" if any(_FUNCTION.search(test) for test in stale) else "",
        *_checked(_condition("if not", shapes, full) + _condition("if", stale, full), full),
        "    try:",
        *[f"    {line}" for line in body],
        "    except Exception as error:",
        "        raised = d._failed(error, args, kwargs)",
        "        if raised is not None:",
        "            raise raised",
        "    return d._full(args, kwargs)",
    ]


_FUNCTION = re.compile(r"\bfn\b")      # a test reading the guarded function


def make_jvp_repeat(fn, instance, jvp, primals, tangents, keywords, out):
    """``repeat(fn, primals, tangents)``: ``jvp(*primals, **tangents by keyword)`` for calls
    shaped like this one of :func:`srctrans.jvp`, else None (the caller takes the full path).

    Args:
      fn: the user's plain function (no bound self, no keyword arguments).
      instance: its generic :class:`~srctrans.instances.ForwardInstance`.
      jvp: the JVP specialised on this call's shape key.
      primals, tangents: this call's, each tangent None or as it was passed
        (an array of its primal's shape, of floats, as was the primal).
      keywords: ``(position, keyword)`` of each given tangent.
      out: the output of this call, checked (a later output of another type
        is checked again).

    A later call takes this path when its primals have the same types,
    shapes, dtypes (and values of ints, bools, strings and None) and its
    tangents are None at the same places and elsewhere arrays of the same
    shapes and dtypes, and ``fn``'s defaults and called names are unchanged.
    """
    namespace = {"ndarray": np.ndarray, "jvp": jvp, "out_type": type(out),
                 "check_outputs": check_outputs, "owned_tangent": owned_tangent}
    checks, arguments = _primals_and_tangents(primals, tangents, keywords, namespace)
    name = f"{fn.__name__}_jvp_repeat"
    lines = [
        f"def {name}(fn, primals, tangents):",
        f"    # {fn.__name__}'s JVP, for calls shaped like the one this guard was made for",
        *checks,
        *_checked(_condition("if", stale_tests(fn, instance, namespace, passed=len(primals)),
                             "        return None"),
                  "        return None"),
        f"    result = jvp({arguments})",
        "    if type(result[0]) is not out_type:",
        "        check_outputs(result[0])",
        "    return owned_tangent(result, primals, tangents)",
    ]
    return _compiled(lines, name, namespace, fn)


def make_hvp_repeat(fn, instance, gradient, jvp_instance, jvp, primals, tangents, keywords):
    """``repeat(fn, primals, tangents)``: what :func:`srctrans.hvp` returns for calls shaped
    like this one, else None (the caller takes the full path).

    Args:
      fn: the user's plain function (no bound self).
      instance: its generic reverse :class:`~srctrans.instances.Instance`.
      gradient: its fused gradient specialised on this call's shape key, whose JVP an
        HVP is.
      jvp_instance: the generic :class:`~srctrans.instances.ForwardInstance` of ``gradient``
        (the tangent only).
      jvp: that JVP specialised on this call's shape key.
      primals, tangents: this call's, each tangent None or an array of its primal's
        shape, of floats, as the primal is.
      keywords: ``(position, keyword)`` of each given tangent.

    A later call takes this path under the conditions of :func:`make_jvp_repeat`, with
    ``fn``'s reverse instance and ``gradient``'s forward instance both current.
    """
    namespace = {"ndarray": np.ndarray, "jvp": jvp, "gradient": gradient,
                 "gradient_stale": _stale_check(gradient, jvp_instance)}
    checks, arguments = _primals_and_tangents(primals, tangents, keywords, namespace)
    given = [i for i, _ in keywords]
    products = [f"products[{given.index(i)}]" if i in given else "None"
                for i in range(len(primals))]
    name = f"{fn.__name__}_hvp_repeat"
    lines = [
        f"def {name}(fn, primals, tangents):",
        f"    # the HVP of {fn.__name__} (the JVP of its fused gradient), for calls shaped like",
        "    # the one this guard was made for",
        *checks,
        *_checked(_condition("if", stale_tests(fn, instance, namespace, passed=len(primals))
                             + ["gradient_stale(gradient)"], "        return None"),
                  "        return None"),
        f"    products = jvp({arguments})",
        f"    return {_tuple(products)}",
    ]
    return _compiled(lines, name, namespace, fn)


def make_hessian_repeat(fn, instance, gradient, jvp_instance, kernel, basis, primals,
                        keyword, finish):
    """``repeat(fn, args)``: what ``st.hessian(fn)(*args)`` returns for calls shaped like this
    one (one selected array argument, the Hessian from one batched JVP), else None.

    Args:
      fn: the user's plain function (no bound self).
      instance: its generic reverse :class:`~srctrans.instances.Instance`.
      gradient: its fused gradient specialised on this call's shape key.
      jvp_instance: the generic :class:`~srctrans.instances.ForwardInstance` of ``gradient``
        (the tangent only).
      kernel: the batched form of that JVP specialised on this call's shape key, a plain
        function of the primals and ``keyword`` (the tangents, batched along axis 0).
      basis: the selected argument's basis, read-only, which every call passes.
      primals: this call's arguments.
      finish: makes the Hessian of the kernel's output.

    A later call takes this path under the conditions of :func:`make_hvp_repeat` (the same
    kinds of arguments, ``fn``'s reverse instance and ``gradient``'s forward instance both
    current).
    """
    namespace = {"ndarray": np.ndarray, "kernel": kernel, "basis": basis, "finish": finish,
                 "gradient": gradient, "gradient_stale": _stale_check(gradient, jvp_instance)}
    checks, arguments = _primals_and_tangents(primals, None, (), namespace)
    name = f"{fn.__name__}_hessian_repeat"
    lines = [
        f"def {name}(fn, primals):",
        f"    # the Hessian of {fn.__name__} (one batched JVP of its fused gradient), for calls",
        "    # shaped like the one this guard was made for",
        *checks,
        *_checked(_condition("if", stale_tests(fn, instance, namespace, passed=len(primals))
                             + ["gradient_stale(gradient)"], "        return None"),
                  "        return None"),
        f"    return finish(kernel({arguments}, {keyword}=basis))",
    ]
    return _compiled(lines, name, namespace, fn)


def _primals_and_tangents(primals, tangents, keywords, namespace):
    """``(lines, arguments)``: the lines of a guard of ``guard(fn, primals, tangents)`` that
    return None unless the primals and tangents are of the kinds of this call's (primals of
    the same types, shapes, dtypes and values of ints, bools, strings and None; tangents None
    at the same places and arrays of the same shapes and dtypes elsewhere), and the arguments
    that call the JVP with them (tangents by ``keywords``, ``(position, keyword)`` each);
    adds what the lines read to ``namespace``. With ``tangents`` None, a guard of
    ``guard(fn, primals)`` that tests the primals alone."""
    count = len(primals)
    tests = []
    for i, primal in enumerate(primals):
        tests.append(_kind_test(f"p{i}", primal, shape_keys.key_part(primal), namespace, dtype=True))
        if tangents is not None:
            tangent = tangents[i]
            tests.append(f"t{i} is None" if tangent is None else
                         _kind_test(f"t{i}", tangent, tangent.shape, namespace, dtype=True))
    unpacked = [f"    {_tuple([f'p{i}' for i in range(count)])} = primals"]
    if tangents is None:
        lines = [f"    if len(primals) != {count}:", "        return None", *unpacked]
    else:
        lines = [f"    if len(primals) != {count} or len(tangents) != {count}:",
                 "        return None", *unpacked,
                 f"    {_tuple([f't{i}' for i in range(count)])} = tangents"]
    lines += _condition("if not", tests, "        return None")
    arguments = ", ".join([f"p{i}" for i in range(count)] + [f"{k}=t{i}" for i, k in keywords])
    return lines, arguments


def _stale_check(fn, instance):
    """``stale(fn)``: whether :func:`_stale_tests` finds ``instance`` no longer holds for ``fn``."""
    namespace = {}
    tests = stale_tests(fn, instance, namespace)
    lines = ["def stale(fn):", *_checked([f"    return ({' or '.join(tests)})"],
                                         "        return True")]
    return _compiled(lines, "stale", namespace, fn)


def _kind_test(name, value, part, namespace, dtype):
    """The test that the argument ``name`` has the shape key part ``part`` of ``value``: an
    array of that shape (and, with ``dtype``, of ``value``'s dtype; a complex array's part is
    no shape, so none passes), a float of its type, an int, bool, string or None of its type
    and value; adds what the test reads to ``namespace``."""
    if type(value) is np.ndarray:
        test = f"type({name}) is ndarray and {name}.shape == {part!r}"
        if dtype:
            namespace[f"dtype_{name}"] = value.dtype
            test += f" and {name}.dtype is dtype_{name}"
        return test
    if isinstance(part, type):                    # a float: its type
        namespace[f"type_{name}"] = part
        return f"type({name}) is type_{name}"
    namespace[f"type_{name}"], namespace[f"value_{name}"] = part     # (type, value)
    return f"type({name}) is type_{name} and {name} == value_{name}"


def _compiled(lines, name, namespace, fn):
    """The function ``name`` that ``lines`` define, run in ``namespace``."""
    text = "\n".join(line for line in lines if line) + "\n"
    # made once per instance and shape key (st.clear_cache takes the linecache entry back)
    exec(compile(text, register_source(text, f"repeat guard of {fn.__qualname__}"), "exec"),
         namespace)
    return namespace[name]


def _conforms(g, value):
    """Whether the gradient ``g`` of ``value`` is returned as it is (see ``api._finish``)."""
    if type(value) is np.ndarray:
        return (type(g) is np.ndarray and g.dtype is value.dtype and g.base is None
                and g.shape == value.shape)
    return type(g) is float or type(g) is np.float64


def _owns_its_memory(gradients, args):
    """Whether each array among ``gradients`` (in containers too) is none of the arrays in
    ``args`` (their containers' and objects' too), no view, and no other gradient."""
    arrays = leaf_arrays(gradients)
    taken = {id(a) for a in leaf_arrays(args)}
    return (all(id(g) not in taken and g.base is None for g in arrays)
            and len({id(g) for g in arrays}) == len(arrays))


def _tuple(items):
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _checked(lines, then):
    """``lines`` (a guard's tests) inside ``try``: a test that finds an entry, an attribute
    or a global gone (``KeyError``, ``AttributeError``) fails, running ``then``. (A subscript
    costs less than ``dict.get``, and ``try`` nothing when nothing is raised.)"""
    if not lines:
        return []
    return ["    try:", *[f"    {line}" for line in lines],
            "    except (KeyError, AttributeError):", then]


def _condition(keyword, tests, then):
    """``keyword (t1 or t2 ...):`` (``and`` after ``if not``), one test a line; nothing if none."""
    if not tests:
        return []
    joiner = "\n            and " if keyword == "if not" else "\n            or "
    return [f"    {keyword} ({joiner.join(tests)}):", then]

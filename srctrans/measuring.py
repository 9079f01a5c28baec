"""What one run of a build's generic forward pass shows of the shapes inside it.

Requires: a generic forward pass (a compiled function) and the build it belongs to.
Guarantees: :func:`run_keeping_locals` runs it once, watching its lines (and, asked,
those of the callees' forward passes it watches, over all their calls: :class:`Watched`),
and gives the locals it returned with and the names whose shape changed; :func:`measure`
turns such a run into the shapes (and the values of the tests the shape key decides) a
specialised build of it needs, for it and for each callee (``instances.Instance.for_call``
specialises on them).
"""

import dis
import sys

import numpy as np


def run_keeping_locals(generated, args, kwargs, watch_lines=True, callees=None):
    """``(generated(*args, **kwargs), its local values when it returned, varying names,
    mixed names)`` (the names that held a float and a value of another kind, seen on the
    lines watched).

    With ``watch_lines``, every line of the run is watched (this thread only,
    this one call): a name whose shape changes during the run (in a loop) is
    left out (and one that held a list or another object without a shape as well
    as an array), so code specialised on the returned values holds for every
    iteration. At each line only the names the line run before it assigns are
    looked at (``stores_by_line``), so the watching costs time linear in the
    lines run. Code without loops assigns each name once, so only its return
    is watched. ``callees`` maps the code objects of other functions the run
    calls to a :class:`Watched` each: their lines are watched too, over all
    their calls, and their locals kept at each return.
    """
    top = Watched()
    states = {generated.__code__: top, **(callees or {})}
    stores = {code: stores_by_line(code) for code in states}
    last = {}                         # frame -> the line run before this event

    def watch(frame, event, arg):
        state = states.get(frame.f_code)
        if state is None:
            return None
        if event == "call" and not watch_lines and state is top:
            frame.f_trace_lines = False
        if event in ("line", "return"):
            local = frame.f_locals
            by_line, anywhere = stores[frame.f_code]
            before = last.get(frame)
            if before is None:
                for name, value in local.items():
                    state.note(name, value)
            else:
                for name in by_line.get(before, ()) + anywhere:
                    if name in local:
                        state.note(name, local[name])
            last[frame] = frame.f_lineno
            if event == "return":
                state.values.update(local)
                state.calls += 1
                del last[frame]
        return watch

    previous = sys.gettrace()
    sys.settrace(watch)
    try:
        result = generated(*args, **kwargs)
    finally:
        sys.settrace(previous)
    values = top.values
    for name in top.varying:
        values.pop(name, None)
    return result, values, top.varying, top.mixed


def stores_by_line(code):
    """``(line -> the names its instructions assign, the names assigned by instructions of no
    line)`` of the code object ``code``."""
    stores, anywhere, current = {}, [], None
    for instruction in dis.get_instructions(code):
        positions = getattr(instruction, "positions", None)       # Python 3.11 and later
        if positions is None and instruction.starts_line is not None:
            current = instruction.starts_line
        if not instruction.opname.startswith(("STORE_FAST", "STORE_DEREF", "DELETE_FAST")):
            continue
        names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
        line = positions.lineno if positions is not None else current
        if line is None:
            anywhere.extend(names)
        else:
            stores[line] = stores.get(line, ()) + tuple(names)
    return stores, tuple(anywhere)


def measure(build, out, residuals, values=None, varying=frozenset(), watched=None,
            own_call=True, taken=None, guess=True, mixed=frozenset()):
    """The shapes a specialised build of ``build`` needs, from one run's values.

    Returns ``(own, callees, tests, floats, divisors)``: (name, shape) pairs of the forward
    pass's local values (``values``, else just the residuals) and of the
    output's cotangent, (residual name, measurement) pairs for each called
    user function, measured on the residuals it saved, (name, bool, checked) triples
    of the tests the shape key decides (``Build.keyed_tests``) as they ran (checked False)
    and, given ``taken`` (``settled``), of every other test as it ran, which the specialised
    code checks as it runs (checked True: ``runtime.branches``); its callees' too, with
    ``guess``; and, in the function's ``own_call``, the names among its local ``values``
    that held floats (:func:`is_float`; not those in ``mixed``, which held other numbers
    too): the shape key holds the kinds of the arrays (``shape_keys``), so every call with
    the key computes floats there; and, with ``guess``, the names of the local values that
    held a float neither 0 nor NaN or a float array all above 0 (:func:`divisor_names`): the
    specialised fused gradient divides by them unguarded, checking each once
    (``optimise.divisors``). Names in ``varying`` changed shape during the run: they get
    none; nor do a callee's names whose shape depends on its path. A watched callee
    (:func:`watches`) is measured on the locals the run watched in all its calls
    (``watched``: ``watched_callees``), as the function itself is; unwatched, it gets none
    (its residuals show its loops' last step only, one call's tests only). A test of values
    (``clip > 0``) counts only in the function's ``own_call``, when every value it compares
    is a number the shape key holds by value: a callee's arguments are values its caller
    computed, which the caller's key does not hold.
    """
    own, callees = {}, {}
    outputs = dict(build.callee_outputs)
    if values is None:       # a callee, seen only through the residuals it saved
        varying = set(varying) | set(build.path_dependent)   # another call may differ
    for name, value in (values or {}).items():
        if name not in build.callee_residuals and has_shape(value):
            own[name] = np.shape(value)
    for name, value in zip(build.residuals, residuals):
        if name in build.callee_residuals and (name in varying or value is None):
            continue                 # a callee called with other shapes as a loop ran, or in
                                     # a loop that never ran (its placeholder): generic
        if name in build.callee_residuals:
            callee = build.callee_residuals[name]
            output = outputs.get(name)                 # its output's shape: its seed's
            callees[name] = measure_callee(
                callee, value, watched or {}, guess,
                None if output in varying else (values or {}).get(output))
        elif has_shape(value) and name not in varying:
            own[name] = np.shape(value)
    if has_shape(out) and build.seed not in varying:
        own[build.seed] = np.shape(out)
    decided = {name: bool(values[name]) for name, operands in build.keyed_tests
               if name in (values or {}) and name not in varying and _is_bool(values[name])
               and (not operands or own_call and all(
                   _held_by_value(_read(values, path)) for path in operands))}
    tests = [(name, value, False) for name, value in decided.items()]
    tests += [(name, value, True) for name, value in (taken or {}).items() if name not in decided]
    floats = [name for name in float_names(values or {}, mixed) if own_call and name in own]
    divisors = divisor_names(values or {}) if guess else ()
    return (tuple(sorted(own.items())), tuple(sorted(callees.items())), tuple(sorted(tests)),
            tuple(floats), divisors)


def measure_callee(callee, residuals, watched, guess=True, out=None):
    """``measure`` of the instance ``callee`` from the residuals one call saved (and its
    output ``out``, where the caller's run kept it: its seed's shape), and, for a
    callee :func:`watches`, from its watched locals (none watched: no shapes)."""
    if not watches(callee.build):
        return measure(callee.build, out, residuals, watched=watched, own_call=False,
                       guess=guess)
    seen = watched.get(callee.fwd.__code__)
    if seen is None or seen.calls == 0:   # its names may change shape as its loops run
        return (), (), (), (), ()         # (u = xs[i] over [array, float]): generic
    values, varying, taken = settled(callee.build, dict(seen.values), seen.varying, guess)
    return measure(callee.build, out, residuals, values, varying, watched, own_call=False,
                   taken=taken, guess=guess)


def settled(build, values, varying, guess=True):
    """``(values, varying, taken)`` of a watched run of ``build``'s forward pass, with the
    names whose shape another call with the same key may change (path dependent, or carried
    by a ``while`` loop that ran no step) counted as varying and left out of the values.

    With ``guess``, ``taken`` maps each ``if`` test to the bool it held when the run decided
    every ``if`` it reached (:func:`taken_branches`): code specialised to
    take those branches, checked as it runs, is straight-line, so only the names a loop
    changes are path dependent. Else (or when some ``if`` stayed undecided) ``taken`` is
    None and the branches' names are."""
    # a keyed test's value is decided by the key on whichever path computes it
    keyed = {name for name, _ in build.keyed_tests}
    taken = taken_branches(build.branch_tests, values, varying) if guess else None
    if taken is None:
        dependent, conditions = build.path_dependent, build.path_conditions
    else:
        dependent, conditions = build.guessed_paths
        keyed |= set(taken)
    varying = set(varying) | (set(dependent) - keyed)
    for name, counters in conditions:                        # a while loop that ran no step
        if any(not isinstance(values.get(c), int) or values[c] < 1 for c in counters):
            varying.add(name)
    for name in varying:
        values.pop(name, None)
    return values, varying, taken


def taken_branches(tests, values, varying):
    """``{test: bool}`` of each test of ``tests`` (``analyse.branch_tests``) that held one bool
    in the measuring run (``values``, not ``varying``), when every other lies in a branch the
    run did not take; else None (some reached ``if`` is undecided)."""
    taken = {name: bool(values[name]) for name, _ in tests
             if name is not None and name in values and name not in varying
             and _is_bool(values[name])}
    for name, enclosing in tests:
        if name not in taken and not any(outer in taken and taken[outer] is not side
                                         for outer, side in enclosing):
            return None
    return taken


class Watched:
    """What a watched run saw of one forward pass, over all its calls: the locals of the
    last, the names whose shape changed, or whose value did for a bool (a test a callee's
    specialised build would fold: ``len(rest) > 1`` of two calls with 1 and 2 arguments),
    and the names that held both a float and a number or array of another kind (``acc = 0``
    before a loop adds arrays to it) (:func:`run_keeping_locals`)."""

    def __init__(self):
        self.values, self.varying, self.calls = {}, set(), 0
        self.shapes, self.unshaped = {}, set()
        self.kinds, self.mixed = {}, set()

    def note(self, name, value):
        if has_shape(value):
            kind = is_float(value)
            if self.kinds.setdefault(name, kind) != kind:
                self.mixed.add(name)
        shape = signature(value)
        if _is_bool(value):
            shape = (shape, bool(value))  # a test: another call may take the other branch
        if shape is None:           # a list or another object (None: not yet set)
            if value is not None:
                self.unshaped.add(name)
                if name in self.shapes:
                    self.varying.add(name)
        elif self.shapes.setdefault(name, shape) != shape or name in self.unshaped:
            self.varying.add(name)  # (a name that held a list, then an array, too)


def watches(build):
    """Whether a callee's forward pass is watched as it runs: it has loops (a name may
    change shape as they run), or tests its shape key decides (whose values the
    specialised build takes its branches by: ``len(args) > 1``), or any ``if``."""
    return build.has_loops or bool(build.keyed_tests) or bool(build.branch_tests)


def watched_callees(build):
    """The code of the generic forward passes of the user functions ``build`` calls,
    directly or not, that are watched as they run (:func:`watches`)."""
    found, seen, pending = [], set(), list(build.callees)
    while pending:
        _, callee = pending.pop()
        fwd = getattr(callee, "fwd", None)
        if fwd is None or id(callee) in seen:
            continue
        seen.add(id(callee))
        if watches(callee.build):
            found.append(fwd.__code__)
        pending.extend(callee.build.callees)
    return found


def signature(value):
    """The shape of a number or array, the shapes in a tuple of them (a callee's residuals),
    or None for other values: what must not change for specialised code to hold."""
    if has_shape(value):
        return np.shape(value)
    if type(value) is tuple:
        return tuple(signature(v) for v in value)
    return None


def has_shape(value):
    return isinstance(value, (np.ndarray, np.generic, float, int)) and not isinstance(value, bool)


def float_names(values, mixed):
    """The names of ``values`` (a run's locals) that held real floats alone (:func:`is_float`;
    not those in ``mixed``, which held other numbers too), sorted: ``1.0 * x`` is ``x`` there."""
    return sorted(name for name, value in values.items() if name not in mixed and is_float(value))


def divisor_names(values):
    """The names of ``values`` (a run's locals, those whose shape no other call with the key
    changes) that held a real float number neither 0 nor NaN, or a float array with entries
    all above 0, sorted."""
    return tuple(sorted(name for name, value in values.items()
                        if type(value) in (float, np.float64, np.float32)
                        and value != 0 and value == value
                        or type(value) is np.ndarray and value.dtype.kind == "f"
                        and value.size and value.min() > 0))


def is_float(value):
    """Whether ``value`` is a real float: a Python float, a NumPy floating scalar, or an array
    of a floating dtype (``1.0 * value`` is then ``value``)."""
    return isinstance(value, (float, np.floating)) or \
        type(value) is np.ndarray and value.dtype.kind == "f"


_UNREAD = object()


def _read(values, path):
    """The value ``path`` (``analyse.keyed_tests``: a parameter, then attributes and constant
    entries) reads from a run's ``values``, or ``_UNREAD``."""
    parameter, steps = path
    value = values.get(parameter, _UNREAD)
    for kind, key in steps:
        if value is _UNREAD:
            break
        try:
            value = getattr(value, key) if kind == "attr" else value[key]
        except Exception:                 # (as the run read it: an object may refuse now)
            return _UNREAD
    return value


def _held_by_value(value):
    """Whether a shape key holds ``value`` by its value (with the floats of its argument:
    ``shape_keys.shape_key``'s ``value_floats``): a Python or NumPy int, bool, a string,
    None, or a Python float (a NumPy float64 too)."""
    return type(value) in (int, bool, str, type(None)) or \
        isinstance(value, (float, np.integer, np.bool_))


def _is_bool(value):
    """Whether ``value`` is a test's result: a Python or NumPy bool."""
    return type(value) is bool or type(value) is np.bool_

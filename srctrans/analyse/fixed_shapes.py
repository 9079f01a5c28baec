"""Which shapes of a function the shape key of its inputs fixes.

Requires: a function (or its forward statements) in A-normal form, its calls annotated with
what they call.
Guarantees: :func:`shape_obstacle` names the first construct that makes a shape depend on
values in a way specialised code cannot leave aside (the function is then not specialised),
and :func:`value_dependent_roots` the names a value decides the shape of (``kept = z[z >
0]``, ``np.nonzero(x)``): :func:`value_dependent_names` extends them to what is computed from
them, and specialised code takes none of their measured shapes; :func:`path_dependent_names`
names the values whose shape depends on the path a call takes through ``if`` and ``while``
(likewise), and those whose shape holds when each ``while`` loop they depend on ran a step.
"""

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans import runtime
from srctrans.analyse.indices import Indexing
from srctrans.annotations import Anno
from srctrans.nodes import changed_in_place
from srctrans.optimise.dce import reads_of, stores_of
from srctrans.treewalk import walk, walk_names

# Functions whose result's shape depends on the values of their arguments.
VALUE_DEPENDENT_SHAPES = frozenset({
    np.nonzero, np.unique, np.argwhere, np.flatnonzero, np.compress, np.extract,
})

# Functions whose result is real or complex as the values of their arguments decide
# (specialised code assumes the real values the measuring call saw stay real).
VALUE_DEPENDENT_DTYPES = frozenset({
    np.linalg.eigvals, np.linalg.eig, np.roots, np.emath.sqrt, np.emath.log, np.emath.log2,
    np.emath.log10, np.emath.logn, np.emath.power, np.emath.arccos, np.emath.arcsin,
    np.emath.arctanh,
})



def shape_obstacle(function, indexing=None):
    """What in ``function`` (ANF) makes a shape depend on values, as a phrase naming its
    line; None when every shape is fixed by the shape key of its inputs, the path a
    call takes through its branches and ``while`` loops, and the values of
    :func:`value_dependent_roots`.

    Subscripts with computed indices (boolean masks) and functions such as
    ``np.nonzero`` make shapes depend on values: the name such an expression is
    assigned to is a root (its shape, and those computed from it, are left out of
    the measured shapes); one anywhere else (an argument of a call, say) is an
    obstacle, and the function is not specialised. An index of ints, int arrays or
    values read from the arguments does not (:class:`~srctrans.analyse.indices.Indexing`, which ``indexing``
    is, if given: it notes whether one reads the arguments). A ``for`` loop over
    ``range(...)`` repeats the same statements a number of times fixed by its
    bounds, which come from shapes and int arguments (both in the shape key); a
    name whose shape changes from one iteration to the next is left out of the
    measured shapes (see ``measuring.run_keeping_locals``). Names whose shape
    depends on the path are left out too (:func:`path_dependent_names`).
    """
    for node in walk(function):
        if isinstance(node, gast.For):
            if not (isinstance(node.iter, gast.Call) and isinstance(node.iter.func, gast.Name)
                    and node.iter.func.id == "range"):
                return f"{_at(node)}a `for` loop over a sequence srctrans did not turn into a range"
    indexing = indexing or Indexing(function)
    assigned = {id(stmt.value) for stmt in walk(function) if _assigns_names(stmt)}
    for node in walk(function):
        if isinstance(node, gast.Call):
            callee = anno.get(node, Anno.CALLEE)
            try:
                if callee in VALUE_DEPENDENT_DTYPES:
                    return (f"{_at(node)}`{callee.__module__}.{callee.__name__}`, whose result is "
                            "real or complex as values decide")
            except TypeError:
                continue
        decided = _decided_by_values(node, indexing)
        if decided is not None and id(node) not in assigned:
            return decided
    return None


def value_dependent_roots(function, indexing=None):
    """The names of ``function`` (ANF) assigned a value whose shape its values decide: a
    subscript by a computed index (a mask), a call of ``np.nonzero``, ``np.unique``...,
    ``np.where(condition)``, or an order or choice of values (``sorted(xs, key=...)``,
    ``max(xs, key=...)``, read through ``rt.sort_order`` and ``rt.best_index``, or
    ``max(xs)``: which of values of other shapes comes first)."""
    indexing = indexing or Indexing(function)
    return {name for stmt in walk(function) if _assigns_names(stmt)
            and _decided_by_values(stmt.value, indexing) is not None
            for target in stmt.targets for name in stored_names(target)}


def _assigns_names(stmt):
    return isinstance(stmt, gast.Assign) and all(
        isinstance(t, (gast.Name, gast.Tuple)) for t in stmt.targets)


def _decided_by_values(node, indexing):
    """A phrase naming ``node``'s line when it is an expression whose shape values decide,
    else None."""
    if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
        name = indexing.unfixed(node)
        if name is not None:
            return (f"{_at(node)}a subscript by `{name}`, a computed index (a mask or an "
                    "index array) or bound")
    if isinstance(node, gast.Call):
        callee = anno.get(node, Anno.CALLEE)
        try:
            if callee in VALUE_DEPENDENT_SHAPES:
                return f"{_at(node)}`np.{callee.__name__}`, whose result's shape depends on values"
        except TypeError:
            return None
        if callee is np.where and len(node.args) == 1:
            return f"{_at(node)}`np.where(condition)`, whose result's shape depends on values"
        if callee is runtime.sort_order or callee is runtime.best_index \
                or (callee is min or callee is max) and len(node.args) == 1:
            return (f"{_at(node)}an order or choice of values (`sorted`, `max`, `min`), which "
                    "decides which value, of which shape, is where")
    return None


def value_dependent_names(statements, roots):
    """``roots`` (:func:`value_dependent_roots`) and the names of ``statements`` computed from
    them, but those a whole reduction assigns (``np.sum(kept)``: a number whatever the
    length summed), whose values still pass the dependence on (``np.zeros(int(n))``), and
    those assigned once arithmetic of such numbers, literals and names of fixed shape
    (``np.sum(kept) * 3.0``)."""
    if not roots:
        return set()
    dependents, reductions, assigned, counts = {}, set(), [], {}
    for stmt in (n for top in statements for n in walk(top)):
        if isinstance(stmt, gast.Assign):
            targets = [n for t in stmt.targets for n in stored_names(t)]
            written = [name for name in map(changed_in_place, stmt.targets) if name]  # xs[i] = v
            _depends(dependents, reads_of(stmt.value), targets + written)
            if _is_whole_reduction(stmt.value) and len(targets) == 1:
                reductions.add(targets[0])
            if len(targets) == 1:
                assigned.append((targets[0], stmt.value))
        elif isinstance(stmt, gast.For):
            _depends(dependents, reads_of(stmt.iter), stored_names(stmt.target))
        elif isinstance(stmt, gast.Expr) and changed_in_place(stmt.value):   # xs.append(v)
            _depends(dependents, reads_of(stmt.value), [changed_in_place(stmt.value)])
        for target in stores_of(stmt) if isinstance(stmt, (gast.Assign, gast.AugAssign,
                                                            gast.For)) else ():
            counts[target] = counts.get(target, 0) + 1
    closure = _closure(set(roots), dependents)
    fixed = set(reductions)              # arithmetic of reductions, numbers and fixed shapes
    for target, value in assigned:       # (np.sum(kept) * 3.0): its shape is theirs
        if counts.get(target) == 1 and _shape_fixed(value, closure, fixed):
            fixed.add(target)
    return closure - fixed


def _shape_fixed(value, dependent, fixed):
    """Whether ``value``'s shape follows from the inputs' shapes alone: arithmetic of
    literals, whole reductions and names outside ``dependent`` or in ``fixed``."""
    if isinstance(value, gast.Constant):
        return True
    if isinstance(value, gast.Name):
        return value.id not in dependent or value.id in fixed
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
        return _shape_fixed(value.operand, dependent, fixed)
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Sub, gast.Mult,
                                                               gast.Div, gast.Pow)):
        return _shape_fixed(value.left, dependent, fixed) and \
            _shape_fixed(value.right, dependent, fixed)
    return _is_whole_reduction(value)


def _is_whole_reduction(value):
    """``np.sum(x)`` (one argument) or ``x.sum()`` of the reductions to one number."""
    if not isinstance(value, gast.Call) or value.keywords:
        return False
    callee = anno.get(value, Anno.CALLEE)
    if len(value.args) == 1 and any(callee is f for f in WHOLE_REDUCTIONS):
        return True
    return not value.args and isinstance(value.func, gast.Attribute) and \
        value.func.attr in ("sum", "mean", "max", "min", "prod") and callee is None


# the reductions of a whole array (called with it alone) to one number
WHOLE_REDUCTIONS = (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.linalg.norm)


def _at(node):
    line = getattr(node, "lineno", None)
    return "" if line is None else f"line {line}: "


def path_dependent_names(statements, keyed=frozenset()):
    """``(names, conditional)``: the names of forward-pass ``statements`` whose shape may
    depend on the path a call takes through their ``if`` and ``while`` statements, not
    only on the inputs' shapes.

    A name assigned at one place has the shape that place gives it whenever it
    has a value (when its branch did not run, nothing reads it). A name assigned
    at several places, one of them inside an ``if``, has the shape of whichever
    ran last, and a container written into or resized inside an ``if`` or a
    ``while`` holds what that path put in it: both depend on values, and so does
    every name computed from one of them (the saved values of a call too). These
    are ``names``: specialised code takes none of their measured shapes. An
    ``if`` whose test is one of ``keyed`` (tests the shape key decides,
    ``analyse.keyed_tests``: the class of an argument, a key of a dict argument)
    takes the same branch on every call with the key: it counts as straight-line
    code.

    A name that only a ``while`` loop's body assigns again (the state the loop
    carries) keeps one shape for any number of steps when the measuring call ran
    the body at least once without its shape changing (the measuring call drops
    the names that changed): the body then maps that shape to itself.
    ``conditional`` maps such a name, and each name computed from it, to the
    trip counters of its loops (``trips = trips + 1`` heads each ``while`` body of
    the forward pass); the cache keeps its measured shape only when each counted
    at least one step. The tape's pushes, pops and placeholders (``Anno.SAVES``)
    are not assignments of the program's.
    """
    sites, branch, loops, dependents = {}, set(), {}, {}
    pending = [(stmt, None) for stmt in statements]      # context: None, "if", or counters
    while pending:
        stmt, context = pending.pop()
        if anno.get(stmt, Anno.SAVES) is not None:
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            inner = context
            if isinstance(stmt, gast.If) and not (isinstance(stmt.test, gast.Name)
                                                  and stmt.test.id in keyed) or context == "if":
                inner = "if"
            elif isinstance(stmt, gast.While):
                counter = _trip_counter(stmt)
                inner = "if" if counter is None else (context or ()) + (counter,)
            pending.extend((s, inner) for s in stmt.body + stmt.orelse)
            if isinstance(stmt, gast.For):
                _depends(dependents, reads_of(stmt.iter), stored_names(stmt.target))
                _assigned_at(sites, branch, loops, stored_names(stmt.target), context)
            continue
        if isinstance(stmt, gast.Assign):
            targets = [n for t in stmt.targets for n in stored_names(t)]
            _depends(dependents, reads_of(stmt.value), targets)
            _assigned_at(sites, branch, loops, targets, context)
        for node in walk(stmt):
            changed = changed_in_place(node)
            if changed is not None and context is not None:
                sites[changed] = 2                     # a container changed on one path,
                branch.add(changed)                    # or as many times as a loop ran
    names = _closure({name for name in branch if sites.get(name, 0) > 1}, dependents)
    conditional = {}
    for root, counters in loops.items():
        if sites.get(root, 0) > 1 and root not in names:
            for name in _closure({root}, dependents) - names:
                conditional.setdefault(name, set()).update(counters)
    return names, conditional


def _trip_counter(loop):
    """The name of ``trips = trips + 1``, the first statement of a forward ``while`` body."""
    first = loop.body[0] if loop.body else None
    if (isinstance(first, gast.Assign) and isinstance(first.targets[0], gast.Name)
            and isinstance(first.value, gast.BinOp) and isinstance(first.value.left, gast.Name)
            and first.value.left.id == first.targets[0].id):
        return first.targets[0].id
    return None


def _closure(roots, dependents):
    found, work = set(roots), list(roots)
    while work:
        for name in dependents.get(work.pop(), ()):
            if name not in found:
                found.add(name)
                work.append(name)
    return found


def stored_names(target):
    """The names an assignment's ``target`` stores."""
    return [n.id for n in walk_names(target) if isinstance(n.ctx, gast.Store)]


def _depends(dependents, reads, targets):
    for name in reads:
        dependents.setdefault(name, set()).update(targets)


def _assigned_at(sites, branch, loops, names, context):
    for name in names:
        sites[name] = sites.get(name, 0) + 1
        if context == "if":
            branch.add(name)
        elif context:
            loops.setdefault(name, set()).update(context)

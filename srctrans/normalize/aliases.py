"""Which names may share memory, and the refusal of an in-place change another name sees.

Requires: a function after the fence and desugar, before A-normal form (augmented
assignments still visible), and its resolver.
Guarantees: :func:`check_aliases` raises :class:`UnsupportedSyntaxError` at an in-place
change (``y[i] = v``, ``y[i] += v``, ``y += v``) of an array that another name, bound to it
or to a view of it before the change, reads after it: srctrans computes each name's value
separately, so such a read would see the old value where Python sees the new one. Its hint
writes out the copy to make, at the statement where the sharing begins. It refuses nothing
else: a store into an array the function made copies the value; a tuple assigned to a tuple
binds each name to its own element; replacing an entry of a dict or list leaves the values
other names took from it as they were; a name bound anew to a new value (``x = x * 1.0``) by
the function's own block since it shared memory shares it no more.
"""

import gast
import numpy as np

from srctrans import runtime
from srctrans.errors import UnsupportedSyntaxError
from srctrans.nodes import in_runtime, parameter_names
from srctrans.parse.resolve import MISSING
from srctrans.treewalk import walk, walk_names

# NumPy functions whose result may share memory with their (first) argument.
_VIEW_FUNCTIONS = (np.asarray, np.asanyarray, np.reshape, np.ravel, np.transpose, np.squeeze,
                   np.expand_dims, np.moveaxis, np.swapaxes, np.rollaxis, np.broadcast_to,
                   np.diagonal, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.real, np.imag,
                   np.ascontiguousarray, np.asfortranarray, np.flip, np.fliplr, np.flipud,
                   np.rot90, np.split, np.array_split, np.hsplit, np.vsplit)
_VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "view", "squeeze", "swapaxes",
                           "diagonal", "conj", "conjugate", "get", "values", "items", "keys",
                           "pop"})
_METADATA = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})
# Containers whose entries are the same objects as their argument's.
_CONTAINER_CALLS = (list, tuple, dict, sorted, reversed, zip, enumerate)


def is_numpy(callee):
    if callee is None:
        return False
    module = getattr(callee, "__module__", None) or ""
    if isinstance(callee, np.ufunc):
        return True
    owner = getattr(callee, "__self__", None)         # np.add.at: a method of a ufunc
    if isinstance(owner, np.ufunc):
        return True
    return module == "numpy" or module.startswith("numpy.")


def root_of(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


_DICT_METHODS = frozenset({"get", "items", "keys", "values", "setdefault", "update"})


def used_as_dicts(function):
    """Names the function calls a method only dicts have on (``d.get(k, v)``, ``d.items()``):
    if they held anything else, Python would stop there."""
    return {node.func.value.id for node in walk(function)
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in _DICT_METHODS and isinstance(node.func.value, gast.Name)}


def check_aliases(parsed, resolver):
    """Refuse an in-place change of an array that another name, bound to it (or a view of it)
    before the change, reads after it."""
    order = _Order(parsed.node)
    writes = [(position, name) for position, stmt in order.statements
              for name in [_changed_in_place(stmt)] if name is not None]
    if not writes:
        return
    arrays, containers = _fresh_names(parsed.node, order, resolver)
    containers |= used_as_dicts(parsed.node)          # replacing an entry changes no other
    bindings = []     # (position, name, the names whose memory it may share, how it is bound)
    for position, stmt in order.statements:
        for target, value in _bindings(stmt, arrays):
            roots = _roots(value, resolver)
            if roots:
                fresh = _is_new_container(value, resolver) and not isinstance(stmt, gast.For)
                entry_of = _entry_of(value)
                bindings.extend((position, name, roots, fresh, entry_of, stmt, value)
                                for name in _names_in(target))
    order.note_renewals(lambda value: makes_new_value(value, resolver))
    for position, written in writes:
        classes = _AliasClasses()
        entry = _replaces_an_entry(order.at(position))
        renewed = order.renewed_before(written, position)
        sharing = {}          # name -> the (target, value) of a binding that shares memory
        for bound, name, roots, fresh, entry_of, stmt, value in bindings:
            if not order.before(bound, position) or order.rebound(name, bound, position):
                continue      # (x, y = xy; x = x * 1.0: x holds a new array when written)
            roots = {root for root in roots if not order.rebound(root, bound, position)}
            if renewed and bound > position and roots == {written}:
                continue      # d[t] = v at the end of a step, v made anew before this write
            if entry and fresh:
                continue      # d = dict(e); d[k] = v replaces an entry of the new dict, not e's
            if entry and written in containers and (entry_of == written or name == written):
                continue      # a = d[k]; d[j] = v: a holds an entry, which stays as it was;
                #               d[k] = a: d holds a, and replacing an entry changes no value
            for root in roots:
                classes.join(name, root)
            sharing.setdefault(name, (bound, stmt, value))
        # the names the user wrote first (srctrans's own start with "_": `_items`, a loop's
        # sequence bound before it), so that the message names one of the user's
        for name in sorted(classes.members(written) - {written}, key=lambda n: (n[:1] == "_", n)):
            read = order.read_after(name, position)
            if read is not None:
                raise UnsupportedSyntaxError(
                    f"`{written}` is changed in place here while `{name}` may share its memory "
                    f"and is read after the change (line {read})", parsed.location(order.at(position)),
                    _alias_hint(written, name, sharing, order))


def _entry_of(value):
    """The container ``value`` reads one entry of (``d[k]``, ``d.get(k, default)``), or None."""
    if isinstance(value, gast.Subscript):
        return root_of(value)
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "get" and isinstance(value.func.value, gast.Name)):
        return value.func.value.id
    return None


def _alias_hint(written, name, sharing, order):
    """What to write instead: copy where the sharing began (the statement that bound ``name``,
    or ``written``, to memory the other one holds), or rebind instead of changing in place."""
    from srctrans.emit.printer import unparse
    rebind = f"or rebind instead of changing in place (`{written} = {written} + ...`)"
    for holder in (name, written):
        if holder not in sharing:
            continue
        bound, stmt, value = sharing[holder]
        copied = unparse(value)
        if not isinstance(value, (gast.Name, gast.Subscript, gast.Attribute, gast.Call)):
            copied = f"({copied})"
        copied += ".copy()"
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and stmt.value is value:
            fixed = f"{unparse(stmt.targets[0])} = {copied}"
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):   # xs.append(v)
            call = stmt.value
            fixed = f"{unparse(call.func)}({copied})" if len(call.args) == 1 else None
        else:
            fixed = None              # a tuple unpacked, a loop's target: no one-line fix
        if fixed is not None:
            where = order.line(bound)
            line = f" (line {where})" if where is not None else ""
            return f"copy where they begin to share{line}: `{fixed}`, {rebind}"
    return f"make a copy of `{written}` before the change, {rebind}"


class _Order:
    """The statements of a function in source order, with the loops around each."""

    def __init__(self, function):
        self.statements = []
        self.loops = {}                      # position -> positions of its enclosing loops' spans
        self.reads = {}                      # name -> positions that read it
        self.owners = {}                     # position -> position of the statement around it
        self.renewals = {}                   # name -> positions binding it anew (note_renewals)
        self._walk(function.body, [], None)

    def _walk(self, statements, loops, owner):
        for stmt in statements:
            position = len(self.statements)
            self.statements.append((position, stmt))
            self.loops[position] = list(loops)
            self.owners[position] = owner
            for node in _own_nodes(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    self.reads.setdefault(node.id, []).append(position)
            if isinstance(stmt, gast.FunctionDef):
                continue
            inner_loops = loops
            if isinstance(stmt, (gast.For, gast.While)):
                span = [position, None]
                inner_loops = loops + [span]
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    self._walk(inner, inner_loops, position)
            if isinstance(stmt, (gast.For, gast.While)):
                span[1] = len(self.statements) - 1

    def before(self, first, second):
        """Whether a binding at ``first`` may be in force at ``second`` (earlier, or in a loop
        around both)."""
        return first < second or any(start <= first <= end for start, end in self.loops[second])

    def note_renewals(self, fresh):
        """Note where each name is bound to a new value (``fresh(value)``: ``x = x * 1.0``), by
        a statement of one name, for :meth:`renewed_before` and :meth:`rebound`."""
        for position, stmt in self.statements:
            if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name) and fresh(stmt.value)):
                self.renewals.setdefault(stmt.targets[0].id, []).append(position)

    def renewed_before(self, name, position):
        """Whether every step of the innermost loop around ``position`` binds ``name`` to a new
        value before ``position``: by a statement of the loop's own body."""
        if not self.loops[position]:
            return False
        start = self.loops[position][-1][0]
        return any(start < renewal < position and self.owners[renewal] == start
                   for renewal in self.renewals.get(name, ()))

    def rebound(self, name, first, second):
        """Whether a statement of the function's own block (no loop or branch around it)
        between positions ``first`` and ``second`` binds ``name`` to a new value, so that what
        ``name`` held at ``first`` is not what it holds at ``second``."""
        return any(first < renewal < second and self.owners[renewal] is None
                   for renewal in self.renewals.get(name, ()))

    def read_after(self, name, position):
        """The line of a read of ``name`` that may run after ``position``, or None."""
        spans = self.loops[position]
        for read in self.reads.get(name, ()):
            if read > position or any(start <= read <= end for start, end in spans):
                return self.line(read)
        return None

    def at(self, position):
        return self.statements[position][1]

    def line(self, position):
        return getattr(self.statements[position][1], "lineno", None)


def _own_nodes(stmt):
    """The nodes of ``stmt`` outside its nested blocks (a loop's target and iterable, a test)."""
    if not hasattr(stmt, "body") or isinstance(stmt, gast.FunctionDef):
        yield from walk(stmt)
        return
    for field in ("test", "iter", "target", "items"):
        part = getattr(stmt, field, None)
        for node in part if isinstance(part, list) else [part] if part is not None else []:
            yield from walk(node)


class _AliasClasses:
    """Union-find over names: names that may share memory end in one class."""

    def __init__(self):
        self.parent = {}

    def find(self, name):
        self.parent.setdefault(name, name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, a, b):
        self.parent[self.find(a)] = self.find(b)

    def members(self, name):
        root = self.find(name)
        return {n for n in list(self.parent) if self.find(n) == root}


def _bindings(stmt, arrays=frozenset()):
    """``(target, value)`` pairs by which ``stmt`` binds a name to a value (or puts the value in
    a container: ``xs.append(v)``, ``d[k] = v``). A store into one of ``arrays`` (names that
    only ever hold new NumPy arrays) copies the value: it binds nothing. A tuple assigned to a
    tuple of the same length binds each name to its own element."""
    if isinstance(stmt, (gast.Assign, gast.AnnAssign)) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, gast.Subscript):
                if root_of(target) not in arrays:
                    yield gast.Name(root_of(target), gast.Store(), None, None), stmt.value
            else:
                yield from _paired(target, stmt.value)
    elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        func = stmt.value.func
        if isinstance(func, gast.Attribute) and func.attr in ("append", "extend", "insert") \
                and root_of(func.value) is not None:
            for arg in stmt.value.args:
                yield gast.Name(root_of(func.value), gast.Store(), None, None), arg
    elif isinstance(stmt, gast.For):
        yield stmt.target, stmt.iter


def _paired(target, value):
    """``(target, value)`` pairs of an assignment, element by element where both sides are
    tuples or lists of one length without a starred element."""
    pending = [(target, value)]
    while pending:
        target, value = pending.pop()
        if (isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple, gast.List))
                and len(target.elts) == len(value.elts)
                and not any(isinstance(e, gast.Starred) for e in target.elts + value.elts)):
            pending.extend(zip(target.elts, value.elts))
        else:
            yield target, value


def _fresh_names(function, order, resolver):
    """``(arrays, containers)``: the local names every binding of which is a new NumPy array
    (``np.zeros(...)``, ``np.empty_like(x)``, ``np.ndarray(shape)``, or arithmetic, which
    :func:`makes_new_value` too counts as new: ``v = np.zeros_like(x)`` filled, then ``v = v *
    0.5``; a store into one copies the value), and those every binding of which is a new
    list or dict (replacing one of its entries changes no other value). Parameters and
    loop variables are neither."""
    values = {}
    for _, stmt in order.statements:
        if isinstance(stmt, (gast.For, gast.With)):
            targets = [stmt.target] if isinstance(stmt, gast.For) else \
                [item.optional_vars for item in stmt.items if item.optional_vars is not None]
            for name in (n for target in targets for n in _names_in(target)):
                values.setdefault(name, []).append(None)
        elif isinstance(stmt, (gast.Assign, gast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            for target in targets:
                for bound, value in _paired(target, stmt.value):
                    if isinstance(bound, gast.Name):
                        values.setdefault(bound.id, []).append(value)
                    elif not isinstance(bound, (gast.Subscript, gast.Attribute)):
                        for name in _names_in(bound):
                            values.setdefault(name, []).append(None)
    parameters = set(parameter_names(function))
    arrays = {name for name, bound in values.items() if name not in parameters
              and all(_is_new_array(v, resolver) or isinstance(v, (gast.BinOp, gast.UnaryOp))
                      for v in bound)}
    containers = {name for name, bound in values.items() if name not in parameters
                  and all(v is not None and _is_new_container(v, resolver) for v in bound)}
    return frozenset(arrays), frozenset(containers)


def makes_new_value(value, resolver):
    """Arithmetic, a NumPy call that returns a new array, or ``x.copy()``: never a value
    another name holds."""
    return isinstance(value, (gast.BinOp, gast.UnaryOp)) or _is_new_array(value, resolver) \
        or (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "copy" and not value.args)


def _is_new_array(value, resolver):
    """A call of a NumPy function that returns a new array (not a view, never its argument)."""
    if not isinstance(value, gast.Call):
        return False
    callee = resolver.resolve(value.func)
    if callee is None or callee is MISSING or not (is_numpy(callee) or callee is np.ndarray):
        return False
    if any(callee is f for f in _VIEW_FUNCTIONS) or isinstance(callee, np.ufunc):
        return False          # a ufunc may write into out= and return it
    return callee is not np.array or not any(k.arg == "copy" for k in value.keywords)


def _names_in(target):
    return [n.id for n in walk_names(target)]


def _roots(value, resolver):
    """Local names whose memory ``value`` may share (its result is, or views, or holds them)."""
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, gast.Subscript):
        return _roots(value.value, resolver)
    if isinstance(value, gast.Attribute):
        return set() if value.attr in _METADATA else _roots(value.value, resolver)
    if isinstance(value, (gast.Tuple, gast.List)):
        return set().union(*(_roots(e, resolver) for e in value.elts))
    if isinstance(value, gast.Dict):
        return set().union(*(_roots(v, resolver) for v in value.values))
    if isinstance(value, gast.IfExp):
        return _roots(value.body, resolver) | _roots(value.orelse, resolver)
    if isinstance(value, gast.BoolOp):
        return set().union(*(_roots(v, resolver) for v in value.values))
    if isinstance(value, (gast.ListComp, gast.GeneratorExp)):
        found = _roots(value.elt, resolver)
        for generator in value.generators:
            found |= _roots(generator.iter, resolver)
        return found
    if isinstance(value, gast.DictComp):
        found = _roots(value.value, resolver)
        for generator in value.generators:
            found |= _roots(generator.iter, resolver)
        return found
    if isinstance(value, gast.Call):
        func = value.func
        callee = resolver.resolve(func)
        arguments = list(value.args) + [k.value for k in value.keywords]
        if isinstance(func, gast.Attribute) and callee is MISSING:     # a method of a local value
            return _roots(func.value, resolver) if func.attr in _VIEW_METHODS else set()
        if callee is None or callee is MISSING:
            return set().union(set(), *(_roots(a, resolver) for a in arguments))
        if any(callee is f for f in _VIEW_FUNCTIONS) or callee in _CONTAINER_CALLS \
                or callee is np.array and any(k.arg == "copy" for k in value.keywords):
            return set().union(set(), *(_roots(a, resolver) for a in arguments))
        if is_numpy(callee) or any(callee is f for f in (len, range, float, int, abs, sum)):
            return set()
        if in_runtime(callee) and callee not in (runtime.identity, runtime.stop_gradient):
            return set()          # the helpers of generated code make new values
        # a user function or another callable may return its argument itself
        return set().union(set(), *(_roots(a, resolver) for a in arguments))
    return set()


def _is_new_container(value, resolver):
    """A new list or dict holding the values (a display, a comprehension, ``list(...)``,
    ``dict(...)``, ``sorted(...)``): replacing one of its entries changes no other value."""
    if isinstance(value, (gast.List, gast.Dict, gast.ListComp, gast.DictComp)):
        return True
    return isinstance(value, gast.Call) and any(
        resolver.resolve(value.func) is kind for kind in (list, dict, sorted))


def _replaces_an_entry(stmt):
    """``d[k] = v``: a write that replaces one entry of the container ``d`` names."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript) \
        and isinstance(stmt.targets[0].value, gast.Name)


def _changed_in_place(stmt):
    """The name whose array ``stmt`` changes in place (``y[i] = v``, ``y[i] += v``, ``y += v``)."""
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
        return root_of(stmt.targets[0])
    if isinstance(stmt, gast.AugAssign):
        return root_of(stmt.target)
    return None

"""Small constructors and utilities for gast nodes, shared by the passes."""

import operator

import gast

from srctrans import runtime

from srctrans import annotations
from srctrans.annotations import Anno
from srctrans.treewalk import replace_names, walk, walk_names


# Methods of lists and dicts that change how many entries they hold.
RESIZING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                              "setdefault", "popitem"})


def changed_in_place(node, methods=RESIZING_METHODS):
    """The name ``node`` changes in place: ``y`` of a write ``y[i] = ...`` or of a call
    ``y.m(...)`` of one of ``methods``; None for any other node."""
    if (isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
            and isinstance(node.value, gast.Name)):
        return node.value.id
    if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in methods and isinstance(node.func.value, gast.Name)):
        return node.func.value.id
    return None


def writes_in_place(stmt):
    """Whether ``stmt`` may write into an array: an entry's assignment, an augmented one,
    a call given ``out=``."""
    return any(isinstance(n, gast.AugAssign)
               or isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
               or isinstance(n, gast.keyword) and n.arg == "out" for n in walk(stmt))


def is_constant(node, value):
    """Whether ``node`` is the literal ``value``, one of ``None``, ``True``, ``False``
    (compared by identity: ``1`` is no ``True``)."""
    return isinstance(node, gast.Constant) and node.value is value


def may_change(stmt, names):
    """Whether ``stmt`` may change a value of ``names``: assigns or deletes one (a ``del``
    that releases it), writes into one (an item or in place), or calls anything (which may
    write into an argument) but the tape's ``pop`` of a saved value (``Anno.SAVES``)."""
    if annotations.get(stmt, Anno.SAVES) is not None:
        return any(n.id in names for n in walk_names(stmt)
                   if not isinstance(n.ctx, gast.Load))
    for node in walk(stmt):
        if isinstance(node, gast.Call):
            return True
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and node.id in names:
            return True
        if isinstance(node, (gast.Subscript, gast.Attribute)) and not isinstance(node.ctx, gast.Load):
            root = node
            while isinstance(root, (gast.Subscript, gast.Attribute)):
                root = root.value
            if isinstance(root, gast.Name) and root.id in names:
                return True
    return False


def int_literal(node):
    """The value of an integer literal (``1``, ``-1``: a minus sign is an operator), else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = int_literal(node.operand)
        return None if inner is None else -inner
    return node.value if isinstance(node, gast.Constant) and type(node.value) is int else None


def ints_literal(node):
    """The ints of an int literal or of a tuple or list display of them (``2``, ``(3, 1)``), as
    a tuple, else None."""
    if int_literal(node) is not None:
        return (int_literal(node),)
    if isinstance(node, (gast.Tuple, gast.List)) and node.elts:
        values = tuple(int_literal(e) for e in node.elts)
        return None if None in values else values
    return None


def int_tuple(values):
    """A tuple display of the int constants ``values``."""
    return gast.Tuple([gast.Constant(v, None) for v in values], gast.Load())


def number_literal(node):
    """Whether ``node`` is an int or float constant (not a bool)."""
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def constant_key(node):
    """The key a constant names, a str or an int (``d['w']``, ``t[0]``), else None."""
    if isinstance(node, gast.Constant) and type(node.value) in (str, int):
        return node.value
    return None


def whole_slice(node):
    """Whether ``node`` is ``:``, a slice with no bound and no step."""
    return isinstance(node, gast.Slice) and node.lower is None and node.upper is None \
        and node.step is None


def none_literal(node):
    """Whether ``node`` is the constant None."""
    return isinstance(node, gast.Constant) and node.value is None


def load(name):
    """``name`` read."""
    return gast.Name(name, gast.Load(), None, None)


def dotted(base, *names):
    """``base.name1.name2...`` to load (``np.linalg.solve``)."""
    node = load(base)
    for name in names:
        node = gast.Attribute(node, name, gast.Load())
    return node


def store(name):
    """``name`` assigned."""
    return gast.Name(name, gast.Store(), None, None)


def single_target(stmt):
    """``name`` when ``stmt`` is ``name = value`` (one plain name assigned), else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def assign(name, value):
    """``name = value``."""
    return gast.Assign([store(name)], value, None)


def runtime_call(aliases, function, args, keywords=()):
    """``rt.function(*args)``: a call of the runtime package under its alias in ``aliases``."""
    from srctrans.naming import RUNTIME_ALIAS
    return gast.Call(gast.Attribute(load(aliases[RUNTIME_ALIAS]), function, gast.Load()),
                     list(args), list(keywords))


def resolved_runtime_call(aliases, function, args):
    """:func:`runtime_call`, annotated with the helper it calls (``Anno.CALLEE``), for passes
    that run before calls are resolved."""
    call = runtime_call(aliases, function, args)
    annotations.set_(call, annotations.Anno.CALLEE, getattr(runtime, function))
    return call


def clone(node):
    """A deep copy of a gast tree, sharing annotation values (faster than copy.deepcopy).

    Iterative, so a deep expression cannot exhaust the recursion limit. Each node is copied
    with its attributes (its fields, position and annotations: a node keeps them in its
    ``__dict__``), then its nodes below it are.
    """
    if not isinstance(node, gast.AST):
        return node
    root = _shallow_copy(node)
    stack = [root]
    while stack:
        held = stack.pop().__dict__
        for field, value in held.items():        # (replacing values, adding no key)
            if isinstance(value, gast.AST):
                held[field] = copy = _shallow_copy(value)
                stack.append(copy)
            elif value.__class__ is list:
                items = value[:]
                for i, item in enumerate(items):
                    if isinstance(item, gast.AST):
                        items[i] = copy = _shallow_copy(item)
                        stack.append(copy)
                held[field] = items
    return root


def _shallow_copy(node):
    """``node``'s class with ``node``'s attributes, and a dict of annotations of its own."""
    cls = node.__class__
    copy = cls.__new__(cls)
    held = copy.__dict__
    held.update(node.__dict__)
    annotations.own_store(copy)
    return copy


def appended_to(stmt):
    """``(list name, value node)`` when ``stmt`` is ``name.append(value)``, else None."""
    if (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "append"
            and isinstance(stmt.value.func.value, gast.Name) and len(stmt.value.args) == 1):
        return stmt.value.func.value.id, stmt.value.args[0]
    return None


def popped_from(call):
    """``(list, count)`` for ``xs.pop()`` (count None) or ``rt.pop_many(xs, n)``, else None.

    The tape of a generated backward pass: forward mode pops the tangents its
    appends pushed from a list beside it; reverse mode pushes the cotangents
    of what it pops back onto the list's cotangent.
    """
    if not isinstance(call, gast.Call):
        return None
    callee = annotations.get(call, annotations.Anno.CALLEE)
    if (callee is None and isinstance(call.func, gast.Attribute) and call.func.attr == "pop"
            and not call.args and not call.keywords and isinstance(call.func.value, gast.Name)):
        return call.func.value, None
    if callee is runtime.pop_many and len(call.args) == 2 and isinstance(call.args[0], gast.Name):
        return call.args[0], call.args[1]
    return None


def parameter_names(function):
    """The names of a FunctionDef's parameters, ``*args`` and ``**kwargs`` included."""
    args = function.args
    names = [p.id for p in args.posonlyargs + args.args + args.kwonlyargs]
    names += [p.id for p in (args.vararg, args.kwarg) if p is not None]
    return names


def local_names(function):
    """The names a FunctionDef binds: its parameters and every name it assigns, those of the
    local functions it defines included (srctrans inlines them, so theirs become its own)."""
    names = set(parameter_names(function))
    names.update(n.id for n in walk(function)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)))
    return names


def subscripts_of(tree, names):
    """The subscripts in ``tree`` of a name among ``names`` (``d[k]``, read or written), or
    None when such a name is used any other way (passed, returned, aliased)."""
    subscripts, uses = [], 0
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id in names:
            uses += 1
        elif isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and node.value.id in names:
            subscripts.append(node)
    return subscripts if uses == len(subscripts) else None


def substitute_names(tree, replacements):
    """``tree`` with each read of a name in ``replacements`` replaced by a copy of its node."""
    def substitute(node):
        if isinstance(node.ctx, gast.Load) and node.id in replacements:
            return clone(replacements[node.id])
        return node
    return replace_names(tree, substitute)


def rename_reads(tree, renaming):
    """Rename, in place, each read of a name in ``tree`` that ``renaming`` maps (old -> new)."""
    if not renaming:
        return
    for node in walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in renaming:
            node.id = renaming[node.id]


def in_runtime(callee):
    """Whether ``callee`` is one of the runtime's helpers (``srctrans.runtime``)."""
    module = module_of(callee)
    return module == runtime.__name__ or module.startswith(runtime.__name__ + ".")


def module_of(callee):
    """The name of the module ``callee`` belongs to, or ``""``: its ``__module__`` when that
    is a string (on Python 3.10 a method descriptor of a compiled class may give another
    descriptor)."""
    module = getattr(callee, "__module__", None)
    return module if isinstance(module, str) else ""


_ORDERINGS = {gast.Gt: operator.gt, gast.GtE: operator.ge, gast.Lt: operator.lt,
              gast.LtE: operator.le, gast.Eq: operator.eq, gast.NotEq: operator.ne}


def literal_truth(test):
    """The truth of ``test`` when it compares two literals, else None: ``None is None``
    (``is``/``is not`` of None, True, False: a rule's test of a default) or ``2 > 1`` (an
    ordering of ints: an inlined helper's ``len(args) > 1``)."""
    if not (isinstance(test, gast.Compare) and len(test.ops) == 1):
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    if not (isinstance(left, gast.Constant) and isinstance(right, gast.Constant)):
        return None
    if op in (gast.Is, gast.IsNot) and all(side.value in (None, True, False)
                                           for side in (left, right)):
        return (left.value is right.value) == (op is gast.Is)
    if op in _ORDERINGS and type(left.value) is int and type(right.value) is int:
        return _ORDERINGS[op](left.value, right.value)
    return None

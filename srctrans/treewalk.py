"""Walking a syntax tree: every node but the load/store contexts, in the order :func:`ast.walk`
gives, in a sixth of its time.

Requires: a gast (or ast) node.
Guarantees: :func:`walk` yields the node and all its descendants breadth-first,
children in field order, as ``gast.walk`` does, except the ``ctx`` marks
(``Load()``, ``Store()``, ``Del()``) of names, attributes, subscripts, starred
expressions, tuples and lists: a pass reads a name's role from ``name.ctx``, never
from a walk, and the marks were four in ten of the nodes a walk yielded. The
passes walk whole functions many times per build (walking was a quarter of a small
function's build time); ``ast.walk`` spends most of its time in the generic
``iter_fields``/``iter_child_nodes`` helpers, and in reading fields that only ever
hold names and numbers. This loop inlines the helpers and reads, for each node
class, only the fields that can hold nodes (:func:`child_fields`); those hold a node,
None, or a list of nodes (where None may stand for a missing entry: a ``**`` entry's
key, a keyword-only argument without a default), so a list is taken whole (without
its Nones) and no item is tested.
"""

import gast

_AST = gast.AST

# Fields that hold a string, a number or a constant, never a node; ``name`` is a
# string everywhere except ExceptHandler and TypeAlias, where gast makes it a Name. ``ctx``
# holds a node, a leaf the walks leave out (see the module's docstring).
_NEVER_NODES = frozenset({"id", "attr", "arg", "asname", "module", "level", "kind",
                          "conversion", "is_async", "type_comment", "n", "s", "rest", "ctx"})
_NAME_IS_A_NODE = frozenset({"ExceptHandler", "TypeAlias"})
# Fields of one node class that hold no node: strings, numbers, a pattern's constant.
_NEVER_NODES_OF = {"Constant": {"value"}, "AnnAssign": {"simple"}, "Global": {"names"},
                   "Nonlocal": {"names"}, "MatchClass": {"kwd_attrs"},
                   "MatchSingleton": {"value"}, "Interpolation": {"str"},
                   "TypeIgnore": {"lineno", "tag"}}
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(cls):
    """The fields of node class ``cls`` that may hold a node or a list of nodes, in order,
    but ``ctx``: each holds a node, None or a list of nodes (and Nones)."""
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        never = _NEVER_NODES_OF.get(cls.__name__, ())
        fields = _CHILD_FIELDS[cls] = tuple(
            field for field in cls._fields
            if field not in _NEVER_NODES and field not in never
            and not (field == "name" and cls.__name__ not in _NAME_IS_A_NODE))
    return fields


def walk(node):
    """Yield ``node`` and every node below it, breadth-first (as :func:`ast.walk`)."""
    todo = [node]
    push, extend, fields_of = todo.append, todo.extend, _CHILD_FIELDS.get
    for node in todo:                          # the list grows as the loop runs
        fields = fields_of(node.__class__)
        if fields is None:
            fields = child_fields(node.__class__)
        held = node.__dict__                   # (a node's fields are in its dict: dict.get
        for field in fields:                   # costs less than getattr with a default)
            value = held.get(field)
            if value.__class__ is list:
                if None in value:
                    value = [item for item in value if item is not None]
                extend(value)
            elif value is not None:
                push(value)
        yield node


def walk_names(node):
    """The Name nodes of ``node`` and below, in :func:`walk`'s order, as a list: what most
    walks look for, found without handing every node to the caller."""
    todo, found = [node], []
    push, extend, keep, fields_of = todo.append, todo.extend, found.append, _CHILD_FIELDS.get
    name = gast.Name
    for node in todo:
        cls = node.__class__
        if cls is name:
            keep(node)
        fields = fields_of(cls)
        if fields is None:
            fields = child_fields(cls)
        held = node.__dict__
        for field in fields:
            value = held.get(field)
            if value.__class__ is list:
                if None in value:
                    value = [item for item in value if item is not None]
                extend(value)
            elif value is not None:
                push(value)
    return found


def replace_names(tree, replace):
    """``tree`` with each Name node ``n`` in it replaced by ``replace(n)`` (``n`` itself keeps it).

    The names are visited in the order a ``gast.NodeTransformer`` visits them (depth
    first, fields in order), so a ``replace`` with effects sees them in source order; what
    it returns is not visited again. Changes ``tree`` in place and returns it (or the
    replacement, when ``tree`` is a Name). Iterative, and makes no class per call.
    """
    if isinstance(tree, gast.Name):
        return replace(tree)
    stack = [(tree, None, None, None)]
    fields_of = _CHILD_FIELDS.get
    while stack:
        node, owner, field, index = stack.pop()
        if node.__class__ is gast.Name:
            new = replace(node)
            if new is not node:
                if index is None:
                    setattr(owner, field, new)
                else:
                    getattr(owner, field)[index] = new
            continue
        fields = fields_of(node.__class__)
        if fields is None:
            fields = child_fields(node.__class__)
        children = []
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                children.extend((item, node, name, i) for i, item in enumerate(value)
                                if isinstance(item, _AST))
            elif value is not None and isinstance(value, _AST):
                children.append((value, node, name, None))
        stack.extend(reversed(children))
    return tree


def replace_children(tree, replace):
    """``tree`` with each node below it replaced by ``replace(node)``, in place.

    ``replace`` returns the node itself to keep it, another node, or, for an entry of a
    list field (a call's arguments), a list of nodes to put in its place
    (``f(a, *args)`` as ``f(a, b, c)``). Each node's children are offered once, those
    of the replacements too (a breadth-first walk of the tree as it was).
    """
    fields_of = _CHILD_FIELDS.get
    for node in list(walk(tree)):
        fields = fields_of(node.__class__)
        if fields is None:
            fields = child_fields(node.__class__)
        held = node.__dict__
        for field in fields:
            value = held.get(field)
            if value.__class__ is list:
                new = []
                for item in value:
                    got = item if item is None else replace(item)
                    new.extend(got if isinstance(got, list) else [got])
                value[:] = new
            elif value is not None:
                setattr(node, field, replace(value))
    return tree


_COMPOUND = (gast.If, gast.For, gast.While, gast.With, gast.Try)


def own_nodes(stmt):
    """The nodes of statement ``stmt`` outside the statements nested in it: of an ``if``, a
    loop, a ``with`` or a ``try``, the nodes of its test, target, iterable or items (a pass
    that visits the nested blocks itself reads each node once, not once for each block
    around it); of any other statement (a nested ``def`` too), all of its nodes."""
    if not isinstance(stmt, _COMPOUND):
        return list(walk(stmt))
    heads = [getattr(stmt, f) for f in ("test", "iter", "target") if getattr(stmt, f, None)]
    heads += [item.context_expr for item in getattr(stmt, "items", [])]
    return [node for head in heads for node in walk(head)]


def statement_lists(function):
    """Every statement list of ``function`` (bodies, else branches, finally blocks), its own
    included, in the order of a breadth-first walk; a rewrite changes them in place, so the
    list stays true. Only statements (and a ``try``'s handlers, a ``match``'s cases) hold
    statement lists, so the walk does not go into expressions."""
    found, todo = [], [function]
    for node in todo:                          # the list grows as the loop runs
        held = node.__dict__
        for field in holding_statements(node.__class__):
            value = held.get(field)
            if value.__class__ is list:
                if field in _STATEMENT_LISTS:
                    found.append(value)
                todo.extend(item for item in value if isinstance(item, gast.AST))
    return found


_STATEMENT_LISTS = ("body", "orelse", "finalbody")
_HOLDING: dict = {}


def holding_statements(cls):
    """The fields of node class ``cls`` that may hold statements, in its fields' order."""
    fields = _HOLDING.get(cls)
    if fields is None:
        fields = _HOLDING[cls] = tuple(f for f in child_fields(cls)
                                       if f in _STATEMENT_LISTS or f in ("handlers", "cases"))
    return fields

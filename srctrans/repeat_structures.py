"""The short path's tests of arguments that are containers or objects, written out.

Requires: an argument and its part of a shape key (:func:`srctrans.shape_keys.guard_key`).
Guarantees: :func:`structure_tests` returns Python test expressions that hold for
another value exactly when it has the same key part (the same class, the same keys
in the same order or the same attributes, and entries that pass the same tests,
arrays of the same shapes and, when asked, dtypes), reading each entry once (a
walrus name; an object's attribute by subscript of its ``__dict__``, which raises
``KeyError`` when it is gone: the guard takes that as a failed test);
:func:`same_leaves` tells whether two gradients are the same objects in the same
structure (the full path would return the fused gradient's own);
:func:`leaf_arrays` lists the arrays inside arguments, objects' attributes included.

For ``loss(params, x)`` with ``params = {"W": W, "b": b}``::

    type(a0) is type_0 and [*a0] == keys_0
    and type(e1 := a0["W"]) is ndarray and e1.shape == (3, 2) and e1.dtype is dtype_e1
    and type(e2 := a0["b"]) is ndarray and e2.shape == (2,) and e2.dtype is dtype_e2
"""

import numpy as np

from srctrans.runtime import objects
from srctrans.runtime.containers import entries, is_container, REGISTERED
from srctrans.shape_keys import DEEPEST_KEY, array_part_shape, keyed_entries

class StructureTests:
    """Writes the tests; ``namespace`` receives what they read."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.count = 0
        namespace.setdefault("ndarray", np.ndarray)

    def tests(self, expression, value, part, dtype):
        """The tests that ``expression`` (evaluated once, first) has ``value``'s ``part``;
        None when a value of its kind cannot be tested here (an object with slots)."""
        if type(value) is np.ndarray:
            name = self._name(expression)
            shape = array_part_shape(part)          # (None: a complex one's, which no
            tests = [f"type({expression}) is ndarray and {name}.shape == {shape!r}"    # guard
                     if shape is not None else "False"]                              # passes)
            if dtype:
                self.namespace[f"dtype_{name}"] = value.dtype
                tests.append(f"{name}.dtype is dtype_{name}")
            return tests
        if isinstance(part, type):                          # a float: its type
            return [f"type({expression}) is {self._bind('type', part)}"]
        if not _is_structure(part):                         # (type, value)
            name = self._name(expression)
            kind, known = part
            return [f"type({expression}) is {self._bind('type', kind)} and "
                    f"{name} == {self._bind('value', known)}"]
        kind, parts = part
        name = self._name(expression)
        tests = [f"type({expression}) is {self._bind('type', kind)}"]
        if isinstance(value, dict):
            # its keys in order (a list display of them is made faster than a tuple)
            tests.append(f"[*{name}] == {self._bind('keys', [k for k, _ in parts])}")
            reads = [f"{name}[{k!r}]" for k, _ in parts]
        elif isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            tests.append(f"len({name}) == {len(parts)}")
            reads = [f"{name}[{k!r}]" for k, _ in parts]
        elif isinstance(value, tuple):                      # a named tuple: fields by type
            reads = [f"{name}[{i}]" for i in range(len(parts))]
        elif is_container(value) or type(value) in REGISTERED:   # dataclass, registered
            reads = [f"{name}.{k}" for k, _ in parts]
        elif objects.is_plain_object(value) and not objects.has_slots(type(value)):
            fields = self._fresh("d")
            tests.append(f"len({fields} := {name}.__dict__) == {len(parts)}")
            reads = [f"{fields}[{k!r}]" for k, _ in parts]      # (gone: KeyError)
        else:
            return None
        for read, (_, entry), (_, entry_part) in zip(reads, keyed_entries(value), parts):
            inner = self.tests(f"({self._fresh('e')} := {read})", entry, entry_part, dtype)
            if inner is None:
                return None
            tests.extend(inner)
        return tests

    def _name(self, expression):
        """The name an expression ``(e1 := ...)`` binds, or the expression (a plain name)."""
        return expression[1:].split(" := ")[0] if expression.startswith("(") else expression

    def _fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def _bind(self, prefix, value):
        name = self._fresh(prefix + "_")
        self.namespace[name] = value
        return name


def _is_structure(part):
    return (type(part) is tuple and len(part) == 2 and isinstance(part[0], type)
            and type(part[1]) is tuple and all(type(p) is tuple and len(p) == 2 for p in part[1]))


def same_leaves(a, b):
    """Whether ``a`` and ``b`` are containers of the same kinds, keys and order whose leaves
    are the same objects (or are themselves the same object)."""
    if a is b:
        return True
    if type(a) is not type(b) or not (is_container(a) or isinstance(a, dict)):
        return False
    pairs_a, pairs_b = entries(a), entries(b)
    return (len(pairs_a) == len(pairs_b) and all(
        ka == kb and same_leaves(va, vb) for (ka, va), (kb, vb) in zip(pairs_a, pairs_b)))


def leaf_arrays(values, depth=0):
    """The NumPy arrays among ``values``, in their containers and objects' attributes (as
    deep as a shape key looks)."""
    found = []
    for value in values:
        if type(value) is np.ndarray:
            found.append(value)
        elif depth < DEEPEST_KEY and (pairs := keyed_entries(value)) is not None:
            found += leaf_arrays([v for _, v in pairs], depth + 1)
    return found

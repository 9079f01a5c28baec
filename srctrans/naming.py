"""Naming conventions of generated code, in one place.

Generated names are derived from the user's names so a reader can follow the
adjoint: the adjoint of ``h`` is ``dh``, the adjoint of the temporary
``_matmul`` is ``d_matmul``, and a temporary is named after the operation that
produced it. A :class:`Namer` knows every identifier of the user's function and
never hands out a name that is already taken.
"""

import gast
from srctrans.treewalk import walk

RUNTIME_ALIAS = "rt"       # how generated code refers to the runtime package
NUMPY_ALIAS = "np"         # how rule templates refer to numpy
RESIDUALS = "residuals"    # the forward pass's saved values, passed to the backward pass

_OPERATOR_NAMES = {
    gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "div",
    gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.Pow: "pow",
    gast.MatMult: "matmul", gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not",
}


def operator_name(op):
    """A short lowercase name for a gast operator node (``gast.Add()`` -> ``'add'``)."""
    return _OPERATOR_NAMES.get(type(op), type(op).__name__.lower())


def temporary_word(flat):
    """A word for what a flat expression computes, used to name its temporary."""
    if isinstance(flat, (gast.BinOp, gast.UnaryOp)):
        return operator_name(flat.op)
    if isinstance(flat, gast.Call):
        func = flat.func
        if isinstance(func, gast.Attribute):
            return func.attr
        if isinstance(func, gast.Name):
            return func.id
        return "call"
    if isinstance(flat, gast.Attribute):
        return flat.attr
    if isinstance(flat, gast.Subscript):
        return "item"
    if isinstance(flat, gast.Compare):
        return "cmp"
    if isinstance(flat, (gast.Tuple, gast.List)):
        return "tuple"
    if isinstance(flat, gast.Dict):
        return "dict"
    return "t"


def function_base(fn):
    """The word generated names of ``fn``'s derivatives start with: ``loss`` for a function,
    ``MLP_call`` for ``MLP.__call__``, ``Net_forward`` for a method ``Net.forward``."""
    parts = getattr(fn, "__qualname__", fn.__name__).split(".")
    if parts[-1] != fn.__name__:        # a generated function bears its user function's qualname
        parts = [fn.__name__]
    parts = [p for p in parts[-2:] if p != "<locals>"]
    return "_".join(p[2:-2] if p.startswith("__") and p.endswith("__") and len(p) > 4 else p
                    for p in parts)


def identifiers(tree):
    """Every identifier that appears in ``tree``: names, parameters, attributes."""
    found = set()
    for node in walk(tree):
        if isinstance(node, gast.Name):
            found.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.Lambda)) and hasattr(node, "name"):
            found.add(node.name)
        elif isinstance(node, gast.alias):
            found.add(node.asname or node.name.split(".")[0])
    return found


class Namer:
    """Hands out fresh names that clash with nothing in the user's function.

    ``taken`` is the set of identifiers already in use. Every name returned by
    :meth:`fresh`, :meth:`temporary` or :meth:`adjoint` is added to it, and to
    ``generated``.
    """

    def __init__(self, taken):
        self.taken = set(taken)
        self._adjoints = {}
        self._next_suffix = {}
        self.temporaries = set()
        self.generated = set()          # every name handed out: all of them are locals

    def fresh(self, base):
        """``base`` itself if free, else ``base_2``, ``base_3``, ..."""
        name, n = base, self._next_suffix.get(base, 1)
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self._next_suffix[base] = n
        self.taken.add(name)
        self.generated.add(name)
        return name

    def constant(self, base):
        """A fresh name for a value the compiler binds (a class, a function): not a local."""
        name = self.fresh(base)
        self.generated.discard(name)
        return name

    def temporary(self, operation):
        """A name for a temporary holding the result of ``operation`` (``'_tanh'``)."""
        name = self.fresh("_" + operation)
        self.temporaries.add(name)
        return name

    def adjoint(self, name):
        """The adjoint of ``name``: ``h`` -> ``dh``, ``_t`` -> ``d_t``; stable per name."""
        if name not in self._adjoints:
            self._adjoints[name] = self.fresh("d" + name)
        return self._adjoints[name]

    def prefer_adjoint(self, name, adjoint):
        """Name the adjoint of ``name`` ``adjoint`` (the user's name for it, from
        ``with st.grad_of(h) as dh``) unless either already has another use."""
        if name not in self._adjoints and adjoint not in self._adjoints.values():
            self._adjoints[name] = adjoint
            self.taken.add(adjoint)

    def primal_of(self, adjoint):
        """The name whose adjoint is ``adjoint`` (inverse of :meth:`adjoint`)."""
        for name, known in self._adjoints.items():
            if known == adjoint and isinstance(name, str):
                return name
        raise KeyError(adjoint)

"""Resolve names in the user's function to the live objects they denote.

Requires: the live function (for its globals, closure cells and builtins) and
the set of the function's local names.
Guarantees: :meth:`Resolver.resolve` returns the object a Name or an attribute
chain (``np.linalg.norm``) denotes when it is read from globals, closure or
builtins, and records each root name it read so a cached build can later check
that those names still denote the same objects; and each attribute chain that ends at
a function of the user's (``helpers.smooth``: not an installed package's), which
rebinding the attribute or reloading its module changes while the root stays.
"""

import builtins
import types

import gast
from srctrans.treewalk import walk

_MISSING = object()


class Resolver:
    """Looks up non-local names of one function.

    Attributes:
      assumptions: dict root name -> object, every global/closure/builtin name
        the build depends on, and dotted chain (``"helpers.smooth"``) -> the user's
        function it ended at.
      synthetic: dict name -> object, the names the compiler bound itself (the
        classes and functions of calls through values, ``normalize.dispatch``).
      sites: dict call site -> the kinds of callee compiled for it (``runtime.objects``).
      methods: dict (class, name) -> the function ``getattr(class, name)`` gave, for each
        method a call through a value was compiled to call (``Net.act`` rebound counts).
    """

    def __init__(self, fn, local_names, generated=frozenset()):
        self.fn = fn
        self.local_names = frozenset(local_names)
        self.generated = generated        # names the compiler made (a live set): locals too
        self.assumptions = {}
        self.synthetic = {}
        self.sites = {}
        self.methods = {}
        code = fn.__code__
        cells = fn.__closure__ or ()
        self._closure = dict(zip(code.co_freevars, cells))

    def lookup_root(self, name):
        """The object bound to the non-local ``name``, or ``_MISSING``."""
        if name in self.synthetic:
            return self.synthetic[name]
        if name in self.local_names or name in self.generated:
            return _MISSING
        if name in self._closure:
            try:
                value = self._closure[name].cell_contents
            except ValueError:       # an empty cell: defined later in the enclosing scope
                return _MISSING
        elif name in self.fn.__globals__:
            value = self.fn.__globals__[name]
        else:
            value = getattr(builtins, name, _MISSING)
        if value is not _MISSING:
            self.assumptions[name] = value
        return value

    def resolve(self, node):
        """The live object ``node`` denotes, or ``None``-like ``_MISSING``.

        Only Name and attribute chains rooted at a non-local name resolve.
        """
        path = []
        while isinstance(node, gast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name):
            return _MISSING
        value = self.lookup_root(node.id)
        for attr in reversed(path):
            if value is _MISSING:
                return _MISSING
            value = getattr(value, attr, _MISSING)
        if path and isinstance(value, types.FunctionType):
            from srctrans.places import is_installed     # (a build's; a cache hit needs none)
            if not is_installed(value):
                self.assumptions[".".join([node.id, *reversed(path)])] = value
        return value

    def note_method(self, value, function, name=None):
        """Record (in :attr:`methods`) that a call of the object ``value`` (a bound method
        read as the attribute ``name``, ``MODEL.apply``, or an object with a ``__call__``) was
        compiled to call ``function``, the function its class gives."""
        if isinstance(value, types.MethodType):
            kind, name = type(value.__self__), name or function.__name__
        else:
            kind, name = type(value), "__call__"
        if getattr(kind, name, None) is function:
            self.methods[(kind, name)] = function

    def is_static(self, node):
        """True when ``node`` reads no local variable (so it can carry no derivative)."""
        for sub in walk(node):
            if isinstance(sub, gast.Name) and (sub.id in self.local_names
                                               or sub.id in self.generated):
                return False
            if isinstance(sub, (gast.Call, gast.Lambda, gast.NamedExpr)):
                return False
        return True


def still_valid(fn, assumptions):
    """True when every root name in ``assumptions`` still denotes the same object."""
    for name, value in assumptions.items():
        current = current_value(fn, name)
        if current is _MISSING or current is not value:
            return False
    return True


def current_value(fn, name):
    """What the non-local ``name`` denotes for ``fn`` now (a closure cell, a global or a
    builtin; a dotted chain, ``"helpers.smooth"``, from its root), or ``MISSING``."""
    if "." in name:
        root, *attributes = name.split(".")
        value = current_value(fn, root)
        for attribute in attributes:
            value = getattr(value, attribute, _MISSING)
        return value
    code = fn.__code__
    if name in code.co_freevars:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:                   # an empty cell
            return _MISSING
    value = fn.__globals__.get(name, _MISSING)
    return getattr(builtins, name, _MISSING) if value is _MISSING else value


MISSING = _MISSING

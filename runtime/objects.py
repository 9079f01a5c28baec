"""Calls through objects: which callee a call like ``model(x)`` meets at run time.

A differentiated function may call an object or a function it was passed
(``model(x)``, ``layer.apply(x)``, ``self.forward(x)``, ``act(x)``). What is
called depends on the value, so srctrans compiles such a call as a switch over
the kinds of callee the call has met so far, each branch an ordinary call of
a known function, and a last branch that calls :func:`unseen_callee`. That
branch raises :class:`UnseenCallee`; the API records the new kind with
:func:`note_callee` (in :data:`SITES`) and runs the call again with code
rebuilt to include it, as a JIT compiler does when a type guard fails.

A *site* is the text ``"file:line:column"`` of the call in the user's source.
A *kind* is ``("class", cls)`` for an object (dispatched on its exact class) or
``("is", value)`` for a function or other callable compared by identity.
"""

import functools
import types
from typing import Any

import numpy as np

from .accumulate import zeros_like
from .containers import REGISTERED, is_container
from .foreign import is_foreign
from .refusals import unsupported
from .seeding import is_integer

SITES: dict[tuple, list] = {}
"""site -> list of the kinds of callee seen there, in the order they were first seen (the
last :data:`SITE_KINDS` of them, unless one call met more)."""

SITE_KINDS = 8
"""How many kinds a site's switch keeps. A site that meets more (a sweep passing function
after function to one caller) drops the kind it met first when it notes a new one, so that
its derivative is rebuilt with a switch of at most this many branches each time, rather than
with every kind it ever met (the builds grew without bound, and past about 95 kinds the
switch's nested branches were more than Python's parser takes). A kind met again after it
was dropped is noted again, at the cost of a build."""

VERSION = [0]
"""Bumped by each :func:`note_callee`: a build made at an older version re-checks its sites."""

# callees a switch tells apart by identity: functions (NumPy's non-ufunc functions, such as
# np.sinc, are objects of a dispatcher class of their own) and classes
BY_IDENTITY = (types.FunctionType, types.BuiltinFunctionType, np.ufunc, type(np.sinc), type)


class UnseenCallee(Exception):
    """A call through a value met a kind of callee its compiled switch does not have."""

    def __init__(self, site, kind):
        super().__init__(f"{site}: a call through a {_describe(kind)} not seen there before")
        self.site, self.kind = site, kind


def kind_of(value, by_class=False, method=None):
    """The kind a call of ``value`` dispatches on (by its class when ``by_class``: a method call,
    ``value.method(...)``; an object holding an attribute ``method`` of its own, which
    shadows its class's, is a kind of its own)."""
    if not by_class and isinstance(value, BY_IDENTITY):
        return ("is", value)
    if by_class and method is not None and method in getattr(value, "__dict__", _NOTHING):
        return ("own", type(value))
    return ("class", type(value))


def unseen_callee(value, site, by_class=False, method=None):
    """The last branch of a switch: raise :class:`UnseenCallee` for ``value`` at ``site``."""
    raise UnseenCallee(site, kind_of(value, by_class, method))


def has_class(value, cls):
    """Whether ``value``'s class is exactly ``cls`` (a switch's test for an object)."""
    return type(value) is cls


def has_method(value, cls, name):
    """Whether ``value``'s class is exactly ``cls`` and ``value.name`` is its class's method
    (no attribute of the object's own shadows it: a switch's test for ``value.name(...)``)."""
    return type(value) is cls and name not in getattr(value, "__dict__", _NOTHING)


def holds_own(value, cls, name):
    """Whether ``value``'s class is exactly ``cls`` and ``value`` holds an attribute ``name`` of
    its own, which ``value.name(...)`` calls rather than the class's method."""
    return type(value) is cls and name in getattr(value, "__dict__", _NOTHING)


_NOTHING: frozenset[str] = frozenset()        # (the attributes of an object without a __dict__)


def is_same(value, known):
    """Whether ``value`` is ``known`` (a switch's test for a function passed in)."""
    return value is known


def note_callee(error, keep=()):
    """Record the kind :class:`UnseenCallee` ``error`` met, so that the next build includes it.

    A site holding more than :data:`SITE_KINDS` kinds then drops those it met first, but never
    one of ``keep`` (the kinds the call being run again met: it needs them all at once).
    """
    kinds = SITES.setdefault(error.site, [])
    if error.kind not in kinds:
        kinds.append(error.kind)
        VERSION[0] += 1
        droppable = [kind for kind in kinds[:-1] if kind not in keep]
        del droppable[max(0, len(kinds) - SITE_KINDS):]
        for kind in droppable:
            kinds.remove(kind)


def forget_callee(error):
    """Undo :func:`note_callee` for ``error``: the run that followed it failed."""
    kinds = SITES.get(error.site)
    if kinds is not None and error.kind in kinds:
        kinds.remove(error.kind)
        VERSION[0] += 1


def sites_covered(sites):
    """Whether a build that compiled ``sites`` (site -> kinds) has every kind seen since."""
    for site, kinds in sites.items():
        seen = SITES.get(site)
        if seen is not None and any(kind not in kinds for kind in seen):
            return False
    return True


def methods_unchanged(methods):
    """Whether each ``(class, name, function)`` of a build's ``methods`` still holds:
    ``getattr(class, name)`` is that function (not rebound on the class or a base)."""
    return all(getattr(kind, name, None) is function for kind, name, function in methods)


def _describe(kind):
    how, value = kind
    if how == "own":
        return f"{value.__qualname__} object holding the attribute it calls"
    if how == "is":
        return getattr(value, "__qualname__", None) or repr(value)
    return f"{value.__qualname__} object"


def is_plain_object(value):
    """An object of a user's class that is not a container (its attributes are its entries:
    :func:`attributes`)."""
    return not (value is None or isinstance(value, (bool, int, float, complex, str, bytes,
                                                    np.ndarray, np.generic, type, ObjectTangent))
                or is_container(value) or isinstance(value, BY_IDENTITY) or is_foreign(value)) \
        and (hasattr(value, "__dict__") or bool(_slots(type(value))))


def attributes(obj):
    """The attributes of a plain object, by name: its ``__dict__`` and its ``__slots__``."""
    found = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
    for name in _slots(type(obj)):
        if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
            found[name] = getattr(obj, name)
    return found


def has_slots(cls):
    """Whether objects of ``cls`` keep attributes in ``__slots__``."""
    return any(name not in ("__dict__", "__weakref__") for name in _slots(cls))


def _slots(cls):
    names = []
    for klass in cls.__mro__:
        slots = vars(klass).get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return names


class ObjectTangent:
    """The tangent of a plain object in forward mode: reading an attribute gives that
    attribute's tangent, zeros for an attribute given none (a dict of the attributes'
    tangents is how a user passes one, as reverse mode returns an object's gradient)."""

    __slots__ = ("_primal", "_entries")

    def __init__(self, primal, entries):
        object.__setattr__(self, "_primal", primal)
        object.__setattr__(self, "_entries", entries)

    def __getattr__(self, name):
        entries = object.__getattribute__(self, "_entries")
        if name in entries:
            return entries[name]
        return zeros_like(getattr(object.__getattribute__(self, "_primal"), name))

    def __repr__(self):
        return f"ObjectTangent({object.__getattribute__(self, '_entries')!r})"


def attribute_tangent(t, obj, name):
    """The tangent of ``obj.name`` given the tangent ``t`` of ``obj`` (forward mode), and so
    also the entry ``name`` of a cotangent ``t`` of ``obj`` (the transpose of
    ``getattr_grad``).

    ``t`` is of ``obj``'s kind (a named tuple, a dataclass, a registered class),
    an :class:`ObjectTangent`, or a dict of attributes' derivatives. An attribute
    that is a constant (one holding an int, or one a registered class does not list
    among its fields), or that ``t`` lacks, gets zeros.
    """
    refuse_computed(obj, name)
    field = getattr(obj, name)
    registered = REGISTERED.get(type(obj))
    if is_integer(field) or registered is not None and name not in registered[0]:
        return zeros_like(field)
    value = t.get(name) if isinstance(t, dict) else getattr(t, name, None)
    return zeros_like(field) if value is None else value


# (class, attribute name) -> the kind of descriptor computing it, or None
_COMPUTED: dict[tuple[type, str], Any] = {}


def refuse_computed(obj, name):
    """Raise for ``obj.name`` when the class computes it (a ``property``, a
    ``cached_property``): its derivative belongs to the attributes the getter reads,
    which srctrans does not see; else nothing."""
    key = (type(obj), name)
    kind = _COMPUTED.get(key, key)
    if kind is key:
        kind = None
        for klass in type(obj).__mro__:
            if name in vars(klass):
                if isinstance(vars(klass)[name], (property, functools.cached_property)):
                    kind = type(vars(klass)[name]).__name__
                break
        _COMPUTED[key] = kind
    if kind is not None:
        unsupported(f"reading `{name}`, a {kind} of {type(obj).__qualname__}, in a function "
                    "differentiated with respect to the object",
                    f"make it a method and call it (`obj.{name}()`), or read the attributes "
                    "it is computed from")

"""Calls through values: ``model(x)``, ``layer.apply(x)``, ``self.forward(x)``, ``act(x)``.

Requires: a call met by A-normal form whose callee is a local value (a
parameter, a loop variable, an attribute or item of one), and the
normaliser that met it (for its atoms, names and resolver).
Guarantees: :func:`switch` emits an ``if``/``elif`` chain over the kinds of
callee this call site has met at run time (``runtime.objects.SITES``): each
branch tests the value cheaply (``rt.has_class(model, MLP)``,
``rt.is_same(act, tanh)``; ``rt.has_method(self, Net, "act")`` for a method of the class,
which an attribute of the object's own would shadow: such an object is a kind of its own,
``rt.holds_own``, whose branch calls what the attribute holds) and calls a known function,
the method itself
with the object first (``MLP.__call__(model, x)``), so the passes after it
differentiate an ordinary call of user source or of a function with a rule.
The last branch calls ``rt.unseen_callee``, which raises for a kind not seen
yet; the API records it and runs the call again on a rebuilt derivative
(``runtime.objects``). The kinds compiled are recorded in
``resolver.sites`` so that a cached build can tell when it is stale.
"""

import inspect
import sys
import types

import gast

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.emit.printer import unparse
from srctrans.errors import MissingRuleError
from srctrans.naming import function_base
from srctrans.normalize.callees import call_site, inlinable
from srctrans.differentiate.calls import is_library
from srctrans.nodes import assign, clone, load, module_of
from srctrans.places import is_installed_file
from srctrans.rules import METHODS
from srctrans.runtime.objects import BY_IDENTITY, SITES
from srctrans.treewalk import walk

# methods of lists, dicts and arrays that later passes handle where they meet them
_CONTAINER_METHODS = frozenset({
    "append", "extend", "insert", "pop", "pop_many", "get", "keys", "values", "items",
    "fill", "sort", "put", "partition", "resize", "itemset", "setfield", "setflags",
    "byteswap", "item", "tolist", "at", "copyto"})


def is_call_through_value(call, normalizer):
    """Whether ``call`` calls a value of the function (so what it calls is known only at run time)."""
    func = call.func
    resolver = normalizer.resolver
    if isinstance(func, gast.Name):
        return func.id in resolver.local_names or func.id in resolver.generated
    if isinstance(func, gast.Subscript):                 # layers[0](x), MODEL.layers[0](x)
        return True
    return (isinstance(func, gast.Attribute) and func.attr not in METHODS
            and func.attr not in _CONTAINER_METHODS
            and (normalizer._reads_local(func.value)
                 or any(isinstance(n, (gast.Subscript, gast.Call)) for n in walk(func.value))))


def switch(call, normalizer, out):
    """The flat expression (a temporary) the switch for ``call`` leaves its result in."""
    func = call.func
    by_class = isinstance(func, gast.Attribute)
    receiver = normalizer._atom(func.value if by_class else func, out)
    method = func.attr if by_class else "__call__"
    args = [normalizer.argument(a, out) for a in call.args]
    keywords = [gast.keyword(k.arg, normalizer.argument(k.value, out)) for k in call.keywords]
    site = call_site(call, normalizer.parsed)
    return _switch(_Site(call, normalizer, site, receiver, method, by_class, args, keywords), out)


class _Site:
    """One call through a value, as the switch for it needs it."""

    def __init__(self, call, normalizer, site, receiver, method, by_class, args, keywords):
        self.call, self.normalizer, self.site = call, normalizer, site
        self.receiver, self.method, self.by_class = receiver, method, by_class
        self.args, self.keywords = args, keywords


def _switch(at, out):
    normalizer = at.normalizer
    kinds = tuple(SITES.get(at.site, ()))
    normalizer.resolver.sites[at.site] = kinds
    result = normalizer.namer.temporary(at.method.strip("_") or "call")
    unseen = normalizer._runtime_call("unseen_callee", [
        clone(at.receiver), gast.Constant(at.site, None), gast.Constant(at.by_class, None),
        gast.Constant(at.method if at.by_class else None, None)])
    orelse = [assign(result, unseen)]
    for how, value in reversed(kinds):
        block = []
        normalizer._depth += 1              # the branch is a block: x = f(x) in an inlined
        try:                                # helper gets a temporary (SSA renames only outside)
            block.append(assign(result, _branch(at, how, value, block)))
        finally:
            normalizer._depth -= 1
        test_name = normalizer.namer.temporary("is_" + _base(value))
        known = constant_name(normalizer, _base(value), value)
        test = normalizer._runtime_call(*_test(at, how, value, known))
        orelse = [assign(test_name, test), gast.If(load(test_name), block, orelse)]
    out.extend(orelse)
    return load(result)


def _test(at, how, value, known):
    """``(runtime helper, arguments)`` of the test for the kind ``(how, value)``: the object
    itself for a function passed in, its class, and for a method of its class called on it,
    that it holds no attribute of that name of its own (which it would call instead)."""
    receiver, name = clone(at.receiver), gast.Constant(at.method, None)
    if how == "is":
        return "is_same", [receiver, known]
    if how == "own":
        return "holds_own", [receiver, known, name]
    if at.by_class and isinstance(inspect.getattr_static(value, at.method, None),
                                  (staticmethod, types.FunctionType)):
        return "has_method", [receiver, known, name]
    return "has_class", [receiver, known]


def _branch(at, how, value, block):
    """The call that runs in the branch for the kind ``(how, value)``; may add to ``block``."""
    normalizer = at.normalizer
    if how == "is":                                    # a function passed in: call it
        return _known_call(constant_name(normalizer, _base(value), value), value,
                           at.args, at.keywords)
    if how == "own":                                   # an attribute of its own: what it holds
        return _held_call(at, block)
    attribute = inspect.getattr_static(value, at.method, None)
    if isinstance(attribute, staticmethod):
        function, args = attribute.__func__, at.args
    elif isinstance(attribute, types.FunctionType):
        function, args = attribute, [clone(at.receiver)] + at.args
    elif at.by_class and _holds_values(value, attribute):
        # an attribute of the object holding something callable: self.layer(x), p.layer(x)
        return _held_call(at, block)
    else:
        function = None
    if isinstance(attribute, staticmethod) and function is not None and is_library(function):
        # act = staticmethod(np.tanh) in the class: the library function itself, by its rule
        normalizer.resolver.methods[(value, at.method)] = function      # rebinding it counts
        return _known_call(constant_name(normalizer, _base(function), function), function,
                           args, at.keywords)
    if function is None or is_library(function):
        if at.by_class:       # a method of a library object: the passes' own message for it
            return gast.Call(gast.Attribute(clone(at.receiver), at.method, gast.Load()),
                             [clone(a) for a in at.args], [clone(k) for k in at.keywords])
        raise MissingRuleError(
            f"`{unparse(at.call.func)}` is an object of class {value.__qualname__}, and srctrans "
            f"cannot differentiate calling it: its `{at.method}` "
            + ("belongs to an installed package" if function is not None else
               "is not a Python function"),
            normalizer.parsed.location(at.call),
            "pass a function with a derivative rule, or an object of a class of yours "
            "whose __call__ is written in Python")
    normalizer.resolver.methods[(value, at.method)] = function     # rebinding it counts
    inlined = normalizer.parsed.inlined.get(function)
    call = gast.Call(load(inlined), args, list(at.keywords)) if inlined else None
    if inlined is not None and inlinable(normalizer, call):     # a small helper: its body
        return normalizer._inline(inlined, call, block)
    return _known_call(bound_name(normalizer, function), function, args, at.keywords)


def _held_call(at, block):
    """The switch over what ``obj.name`` holds, called: ``held = obj.name`` in ``block``."""
    normalizer = at.normalizer
    held = normalizer.namer.temporary(at.method)
    block.append(assign(held, gast.Attribute(clone(at.receiver), at.method, gast.Load())))
    inner = _Site(at.call, normalizer, f"{at.site}.{at.method}", load(held), "__call__", False,
                  at.args, at.keywords)
    return _switch(inner, block)


# what a class attribute is when obj.name(...) calls a method, not a value obj.name holds
_METHOD_KINDS = (classmethod, property, types.BuiltinFunctionType, types.MethodDescriptorType,
                 types.WrapperDescriptorType, types.ClassMethodDescriptorType)


def _holds_values(cls, attribute):
    """Whether ``obj.name`` of a ``cls`` object is a value the object holds: an instance
    attribute (no class attribute), a named tuple's field, a slot, a class attribute
    holding a function or an object (``act = np.tanh``); not a method, and nothing of a
    class from NumPy or an installed package."""
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    if module_of(cls).split(".")[0] == "numpy" or (
            module is not None and is_installed_file(getattr(module, "__file__", None) or "")):
        return False
    return not isinstance(attribute, _METHOD_KINDS)


def _known_call(name, function, args, keywords):
    """``name(*args, **keywords)``, annotated as a call of ``function``."""
    call = gast.Call(name, [clone(a) for a in args], [clone(k) for k in keywords])
    anno.set_(call, Anno.CALLEE, function)
    return call


def user_method_of(value):
    """The user's function a call of the non-local ``value`` runs with ``value`` first: that
    of a bound method (``net.loss``) or the ``__call__`` of an object (``model``); else None."""
    if isinstance(value, types.MethodType):
        function = value.__func__
    elif isinstance(value, BY_IDENTITY) or module_of(type(value)).split(".")[0] == "srctrans":
        return None
    else:
        function = inspect.getattr_static(type(value), "__call__", None)
    if isinstance(function, types.FunctionType) and not is_library(function):
        return function
    return None


def bound_name(normalizer, function):
    """The name generated code calls ``function`` by (``Net_loss`` for ``Net.loss``)."""
    return constant_name(normalizer, function_base(function), function)


def constant_name(normalizer, base, value):
    """A name generated code reads ``value`` by (one per object, not a local)."""
    resolver = normalizer.resolver
    for name, known in resolver.synthetic.items():
        if known is value:
            return load(name)
    name = normalizer.namer.constant(base)
    resolver.synthetic[name] = value
    return load(name)


def _base(value):
    return getattr(value, "__name__", None) or type(value).__name__

"""Auxiliary outputs (``has_aux=True``): the function returns ``(output, aux)`` and only
``output`` is differentiated.

Requires: the parsed function of a *variant* made by :func:`variant_with_aux` (the
user's function object is never marked: its plain derivatives stay as they are).
Guarantees: after :func:`split_aux_returns`, every ``return`` of the function gives
``(output, rt.stop_gradient(aux))``, so no derivative flows into or out of ``aux``
and activity analysis drops the derivative code of what only ``aux`` needs; a
``return`` of a literal tuple of another length is refused at its line, and one of
any other expression is checked when it runs (a value that is not a pair of length 2
raises ``UsageError`` at the user's ``return``).
"""

import types
import weakref

import gast

from srctrans.errors import UsageError
from srctrans.nodes import assign, load, resolved_runtime_call
from srctrans.normalize.desugar import located, walk_own
from srctrans.treewalk import statement_lists

HAS_AUX = "__srctrans_has_aux__"
_variants: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def has_aux(fn):
    """Whether ``fn`` is a variant made by :func:`variant_with_aux`."""
    return getattr(fn, HAS_AUX, False)


def variant_with_aux(fn):
    """A function object running ``fn``'s code (same globals, closure, defaults, name),
    marked so that srctrans builds it as returning ``(output, aux)``; one per ``fn``
    while ``fn`` lives (made again when its defaults change), so its derivatives are cached."""
    if has_aux(fn):
        return fn
    found = _variants.get(fn)
    if found is not None and found.__defaults__ is fn.__defaults__ \
            and found.__kwdefaults__ is fn.__kwdefaults__ and found.__code__ is fn.__code__:
        return found
    made = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__qualname__, made.__module__, made.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    made.__dict__.update(fn.__dict__)
    setattr(made, HAS_AUX, True)
    _variants[fn] = made
    return made


def own_returns(function):
    """The ``return`` statements of the gast ``function`` itself (not of functions defined
    inside it)."""
    return [n for stmt in function.body for n in walk_own(stmt) if isinstance(n, gast.Return)]


def split_aux_returns(parsed, namer, aliases):
    """Rewrite each ``return`` of the parsed has-aux function (in place), as the module
    docstring says; ``aliases`` name the runtime package in generated code."""
    body = parsed.node.body
    if not isinstance(body[-1], gast.Return):       # falling off the end returns None
        body.append(located(gast.Return(gast.Constant(None, None)), body[-1]))
    own = {id(r) for r in own_returns(parsed.node)}
    for statements in statement_lists(parsed.node):
        for position in reversed(range(len(statements))):
            stmt = statements[position]
            if id(stmt) in own:
                statements[position:position + 1] = _split(stmt, parsed, namer, aliases)


def _split(stmt, parsed, namer, aliases):
    value = stmt.value
    if isinstance(value, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in value.elts):
        if len(value.elts) != 2:
            raise UsageError(f"with has_aux=True, {parsed.name} must return a pair "
                             f"(output, aux), but this return gives {len(value.elts)} values",
                             parsed.location(stmt), "return (output, aux)")
        output, aux = value.elts
        return [located(gast.Return(_pair(output, aux, aliases)), stmt)]
    pair = namer.fresh("_pair")
    check = gast.If(resolved_runtime_call(aliases, "not_an_aux_pair", [load(pair)]),
                    [gast.Raise(resolved_runtime_call(aliases, "aux_pair_error", [load(pair)]),
                                None)], [])
    entry = [gast.Subscript(load(pair), gast.Constant(i, None), gast.Load()) for i in (0, 1)]
    return [located(s, stmt) for s in (assign(pair, value or gast.Constant(None, None)), check,
                                       gast.Return(_pair(*entry, aliases)))]


def _pair(output, aux, aliases):
    stopped = resolved_runtime_call(aliases, "stop_gradient", [aux])
    return gast.Tuple([output, stopped], gast.Load())

"""Calls that unpack a sequence or a dict whose length and keys the source fixes.

Requires: the parsed function, before the fence (which refuses the starred arguments this
pass leaves).
Guarantees: :func:`expand_static_unpacking` rewrites, in every call,

* ``f(a, *(b, c))`` and ``f(a, *[b, c])`` into ``f(a, b, c)``;
* ``f(a, *t)``, ``t`` a local bound once (at the top of the body, before the call) to a
  tuple display of n elements, into ``f(a, t[0], ..., t[n - 1])`` (a list display
  likewise, when the list is only ever read by subscript, unpacked or measured);
* ``f(**{"k": v})`` into ``f(k=v)``, and ``f(**d)``, ``d`` a local bound once to a dict
  display with string keys (or ``dict(k=v, ...)``) and only ever read, into
  ``f(k=d["k"], ...)``.

Python's meaning is unchanged: the same values reach the same parameters, read once each
and in order. Any other unpacking is left as it is.

>>> import gast, ast
>>> f = gast.parse("def f(x):\\n    p = (1.0, x)\\n    return g(x, *p, **{'s': 2})").body[0]
>>> expand_static_unpacking(f)
>>> print(ast.unparse(gast.gast_to_ast(f)))
def f(x):
    p = (1.0, x)
    return g(x, p[0], p[1], s=2)
"""

import gast

from srctrans.normalize.namespaces import bound_once
from srctrans.treewalk import walk

_READS = ("Starred", "keyword", "Subscript")      # how a list or dict display may be read


def expand_static_unpacking(function, scope=None):
    """Rewrite the unpacking of displays in the calls of ``function`` (see the module);
    ``scope`` (the function's globals) says whether ``dict`` is the builtin."""
    calls = [node for node in walk(function) if isinstance(node, gast.Call)
             and (any(isinstance(a, gast.Starred) for a in node.args)
                  or any(k.arg is None for k in node.keywords))]
    if not calls:
        return
    builtin_dict = scope is None or scope.get("dict", dict) is dict
    displays = _displays(function, builtin_dict)
    for call in calls:
        args = []
        for arg in call.args:
            args.extend(_positional(arg, displays) or [arg])
        call.args = args
        keywords = []
        for keyword in call.keywords:
            keywords.extend(_named(keyword, displays) or [keyword])
        call.keywords = keywords


def _positional(arg, displays):
    """The arguments ``*value`` passes, or None when they are not fixed by the source."""
    if not isinstance(arg, gast.Starred):
        return None
    value = arg.value
    if isinstance(value, (gast.Tuple, gast.List)) and not _has_starred(value.elts):
        return list(value.elts)
    display = displays.get(value.id) if isinstance(value, gast.Name) else None
    if isinstance(display, (gast.Tuple, gast.List)):
        return [gast.Subscript(gast.Name(value.id, gast.Load(), None, None),
                               gast.Constant(i, None), gast.Load()) for i in range(len(display.elts))]
    return None


def _named(keyword, displays):
    """The keywords ``**value`` passes, or None when they are not fixed by the source."""
    if keyword.arg is not None:
        return None
    value = keyword.value
    if isinstance(value, gast.Dict) and _string_keys(value) is not None:
        return [gast.keyword(k, v) for k, v in zip(_string_keys(value), value.values)]
    display = displays.get(value.id) if isinstance(value, gast.Name) else None
    keys = _string_keys(display) if display is not None else None
    if keys is None:
        return None
    return [gast.keyword(k, gast.Subscript(gast.Name(value.id, gast.Load(), None, None),
                                           gast.Constant(k, None), gast.Load())) for k in keys]


def _displays(function, builtin_dict=True):
    """Local name -> the display it is bound to, for the names bound once, by a plain
    statement of the body, to a tuple, list or dict display (or ``dict(k=v)``) that nothing
    can change: a list or dict is read only by subscript or unpacking, and never before
    its binding."""
    bound = bound_once(function, lambda value: _as_display(value, builtin_dict))
    found = {name: display for name, (_, display) in bound.items()}
    for parent in walk(function):
        for child in gast.iter_child_nodes(parent):
            if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load) \
                    and child.id in found and not isinstance(found[child.id], gast.Tuple) \
                    and (type(parent).__name__ not in _READS
                         or not isinstance(getattr(parent, "ctx", gast.Load()), gast.Load)):
                del found[child.id]             # handed on or written: may change
    return found


def _as_display(value, builtin_dict=True):
    """``value`` as a tuple, list or dict display, or None."""
    if isinstance(value, (gast.Tuple, gast.List)) and not _has_starred(value.elts):
        return value
    if isinstance(value, gast.Dict) and _string_keys(value) is not None:
        return value
    if (builtin_dict and isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and value.func.id == "dict" and not value.args
            and all(k.arg is not None for k in value.keywords)):
        return gast.Dict([gast.Constant(k.arg, None) for k in value.keywords],
                         [k.value for k in value.keywords])
    return None


def _string_keys(display):
    if not isinstance(display, gast.Dict) or not all(
            isinstance(k, gast.Constant) and isinstance(k.value, str) for k in display.keys):
        return None
    return [k.value for k in display.keys]


def _has_starred(elements):
    return any(isinstance(e, gast.Starred) for e in elements)

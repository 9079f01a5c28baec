"""``name = dict(source, key=value, ...)`` and ``name = {**source, "key": value, ...}``: a copy
of a mapping (or of pairs) with keys added.

Requires: the parsed function and its resolver, before desugaring (the writes this pass
makes are then modelled as every other store into a fresh dict).
Guarantees: :func:`split_dict_calls` rewrites each such assignment statement into

    _dict = dict(source)
    _value = value                 # each keyword's value, in order
    _dict["key"] = _value
    name = _dict

which evaluates the same expressions in the same order (the values read the bindings
they read in Python: ``p = dict(p, m=p["w"])`` reads the old ``p``) and binds ``name``
to an equal new dict. A display that unpacks one mapping first and then gives constant keys,
``name = {**source, "key": value}``, is the same copy with keys added (the fence accepts
those, :func:`copied_dict_displays`; ``dict(source)`` refuses a source that is not a dict,
where the display refuses one that is not a mapping). ``dict(...)`` elsewhere in an
expression, or with ``**``, is left as it is (ANF refuses it with a hint to write these
statements).

>>> import gast, ast
>>> from srctrans.naming import Namer
>>> f = gast.parse("def f(p, x):\\n    q = dict(p, m=x * 2.0)\\n    return q").body[0]
>>> split_dict_calls(f, Namer({"f", "p", "x", "q"}))
>>> print(ast.unparse(gast.gast_to_ast(f)))
def f(p, x):
    _dict = dict(p)
    _value = x * 2.0
    _dict['m'] = _value
    q = _dict
    return q
"""

import gast

from srctrans.nodes import assign, constant_key, load
from srctrans.normalize.desugar import located
from srctrans.treewalk import statement_lists, walk


def split_dict_calls(function, namer, resolver=None):
    """Rewrite ``name = dict(source, key=value)`` statements of ``function`` in place (see
    the module); ``resolver`` says whether ``dict`` is the builtin (None: assume it)."""
    builtin = None          # whether dict is the builtin: asked (and assumed) when needed
    for statements in statement_lists(function):
        for position in reversed(range(len(statements))):
            stmt = statements[position]
            called = _is_dict_call_with_keys(stmt)
            if not (called or _assigns_copied_display(stmt)):
                continue
            if builtin is None:
                builtin = resolver is None or resolver.lookup_root("dict") is dict
            if not builtin:
                return
            if called:
                pairs = [(gast.Constant(k.arg, None), k.value) for k in stmt.value.keywords]
                split = _split(stmt.targets[0].id, stmt.value.args, pairs, namer)
            else:
                pairs = list(zip(stmt.value.keys[1:], stmt.value.values[1:]))
                split = _split(stmt.targets[0].id, stmt.value.values[:1], pairs, namer)
            statements[position:position + 1] = [located(s, stmt) for s in split]


def copied_dict_displays(function):
    """The dict displays ``{**source, "key": value, ...}`` (one mapping unpacked first, then
    constant keys, str or int) that are the whole value of a statement assigning one name:
    what :func:`split_dict_calls` makes a copy with keys added."""
    return {stmt.value for stmt in walk(function) if _assigns_copied_display(stmt)}


def _assigns_copied_display(stmt):
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Dict)):
        return False
    keys = stmt.value.keys
    return bool(keys) and keys[0] is None and all(constant_key(k) is not None for k in keys[1:])


def _is_dict_call_with_keys(stmt):
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    call = stmt.value
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
            and call.func.id == "dict" and len(call.args) == 1
            and not isinstance(call.args[0], gast.Starred) and call.keywords
            and all(k.arg is not None for k in call.keywords))


def _split(name, source, pairs, namer):
    """``_dict = dict(*source)``, each pair's value into a name, each written at its key (a
    constant node), then ``name = _dict``."""
    made = namer.fresh("_dict")
    values = [namer.fresh("_value") for _ in pairs]
    return ([assign(made, gast.Call(gast.Name("dict", gast.Load(), None, None), source, []))]
            + [assign(v, value) for v, (_, value) in zip(values, pairs)]
            + [gast.Assign([gast.Subscript(load(made), key, gast.Store())], load(v), None)
               for v, (key, _) in zip(values, pairs)]
            + [assign(name, load(made))])

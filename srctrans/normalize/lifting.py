"""A function defined inside the differentiated function and passed to ``st.grad``: the
nested derivative of a closure (``st.grad(lambda y: inner(x, y))(x)``, as autograd and JAX
users write it).

Requires: the local ``def`` or lambda (its parameters plain positional ones), the names of
the enclosing function's locals, and the enclosing function itself (ANF calls
:func:`lifted_derivative_call` and :func:`lifted_jvp_call` for the calls of ``st.grad``
and ``st.jvp`` it meets). Guarantees:
:func:`lift` returns a new function taking the local one's parameters followed by the
enclosing locals it reads (its free variables, in sorted order), with its body; it is
compiled as generated code whose statements name the user's lines, so srctrans
differentiates it as any function. ``st.grad(h, wrt=...)(a)`` then means
``st.grad(lifted, wrt=...)(a, *free)``: the same derivative in ``h``'s parameters, and the
free variables are arguments through which the enclosing function's derivative flows.
A local function with defaults, ``*args``, keyword-only parameters, or that assigns a
free variable (``nonlocal``) or calls another local function, is refused at the call.
"""

import gast

from srctrans.annotations import Anno, Origin
from srctrans import annotations as anno
from srctrans.emit.compile import compile_functions
from srctrans.errors import UnsupportedSyntaxError
from srctrans.interface import API
from srctrans.nodes import clone, load
from srctrans.normalize.dispatch import constant_name
from srctrans.parse.resolve import MISSING
from srctrans.treewalk import walk


def lift(definition, name, enclosing_locals, local_functions, parsed, location):
    """``(lifted function, free variable names)`` for the local ``definition`` (a gast
    FunctionDef or Lambda) named ``name``; see the module."""
    args = definition.args
    if args.defaults or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise UnsupportedSyntaxError(
            f"`{name}`, passed to st.grad inside the differentiated function, with defaults, "
            "*args or keyword-only parameters", location,
            "give it plain positional parameters only")
    params = [a.id for a in args.args]
    body = [gast.Return(definition.body)] if isinstance(definition, gast.Lambda) else definition.body
    assigned = {n.id for stmt in body for n in walk(stmt)
                if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))}
    read = {n.id for stmt in body for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    called_locals = sorted(read & set(local_functions) - set(params))
    if called_locals or any(isinstance(n, (gast.Nonlocal, gast.Global)) for s in body for n in walk(s)):
        raise UnsupportedSyntaxError(
            f"`{name}`, passed to st.grad inside the differentiated function, "
            + (f"calls the local function `{called_locals[0]}`" if called_locals
               else "declares nonlocal or global names"), location,
            "define the functions at module level, passing what they read as arguments")
    free = sorted((read & set(enclosing_locals)) - set(params) - assigned)
    lifted_name = f"{parsed.name}_{name}_lifted"
    arguments = gast.arguments([gast.Name(p, gast.Param(), None, None) for p in params + free],
                               [], None, [], [], None, [])
    statements = [clone(stmt) for stmt in body]
    for stmt in statements:
        for node in walk(stmt):
            if isinstance(node, gast.stmt):
                lineno = getattr(node, "lineno", None) or location.lineno
                anno.set_(node, Anno.ORIGIN, Origin(lineno, parsed.line_text(lineno)))
    node = gast.FunctionDef(lifted_name, arguments, statements, [], None, None, [])
    gast.copy_location(node, definition)
    compiled = compile_functions([node], {}, parsed.fn, f"{parsed.fn.__qualname__} {name} lifted")
    (function,) = compiled.instantiate(parsed.fn)
    function.__qualname__ = lifted_name
    return function, free


def free_arguments(free):
    """The free variables as the call's extra arguments."""
    return [load(name) for name in free]


def lifted_derivative_call(normalizer, call, out):
    """``st.grad(h, ...)(a)`` of a local function ``h`` (or a lambda): the same
    derivative of ``h`` lifted to a function of its free variables too
    (``normalize.lifting``), called with them."""
    made = call.func
    location = normalizer.parsed.location(call)
    name, lifted, free = _lifted(normalizer, made.args[0], call)
    values = [normalizer.static_value(a) for a in made.args[1:]]
    keywords = {k.arg: normalizer.static_value(k.value) for k in made.keywords}
    if MISSING in values or MISSING in keywords.values() or None in keywords:
        raise UnsupportedSyntaxError(
            f"st.grad of `{name}` with options computed inside the function", location,
            "write wrt= and the other options as literals")
    derivative = API.grad(lifted, *values, **keywords)
    args = [normalizer.argument(a, out) for a in call.args] + free_arguments(free)
    keywords = [gast.keyword(k.arg, normalizer.argument(k.value, out)) for k in call.keywords]
    new = gast.Call(constant_name(normalizer, f"{name}_grad", derivative), args, keywords)
    anno.set_(new, Anno.CALLEE, derivative)
    return new


def lifted_jvp_call(normalizer, call):
    """``st.jvp(h, (a,), (v,))`` of a local function ``h``: ``st.jvp(lifted, (a, *free),
    (v, None, ...))``, the free variables held constant in the inner JVP."""
    local, primals, tangents = call.args
    name, lifted, free = _lifted(normalizer, local, call)
    return gast.copy_location(gast.Call(call.func, [
        constant_name(normalizer, name, lifted),
        gast.Tuple(list(primals.elts) + free_arguments(free), gast.Load()),
        gast.Tuple(list(tangents.elts) + [gast.Constant(None, None) for _ in free], gast.Load())],
        call.keywords), call)


def _lifted(normalizer, local, call):
    """``(name, lifted function, its free variables)`` of the local function (a name or a
    lambda) ``local`` passed to a transform at ``call`` (``normalize.lifting``)."""
    name = local.id if isinstance(local, gast.Name) else "lambda"
    definition = normalizer.local_functions[local.id] if isinstance(local, gast.Name) else local
    lifted, free = lift(definition, name, normalizer.resolver.local_names,
                        normalizer.local_functions, normalizer.parsed, normalizer.parsed.location(call))
    return name, lifted, free

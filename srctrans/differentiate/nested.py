"""Calls of srctrans itself inside a function being differentiated.

Requires: a Call node of the normalised function and its resolved callee
(``Anno.CALLEE``).
Guarantees: :func:`derivative_call` turns a call that runs a derivative made
by srctrans -- ``st.grad(g)(x)``, a grad object called through a global name,
or ``st.jvp(g, (a, b), (da, db))`` -- into a call of the generated function
that computes it (plain source, so it is differentiated like any user
function), with the arguments that function takes. Any other call is left
alone.
"""

import inspect

import gast

from srctrans.errors import UnsupportedSyntaxError
from srctrans.interface import API
from srctrans.signatures import positional_names
from srctrans.treewalk import walk


# srctrans's modules whose functions make or run derivatives: called inside a differentiated
# function, only st.grad(g)(x) (and the objects of grad and value_and_grad) and st.jvp are
# generated source srctrans can differentiate again
_TRANSFORMS = ("srctrans.api", "srctrans.composed", "srctrans.second_order",
               "srctrans.forward_api", "srctrans.checks", "srctrans.exporting")
# the ones whose result is no such source (a pullback closure, a matrix assembled in Python)
_NOT_NESTABLE = frozenset({"vjp", "hessian", "jacobian", "batch_jacobian", "hvp",
                           "check_grads", "source", "export"})


def refuse_unnestable_calls(parsed, resolver):
    """Refuse, at the user's line, each call of a srctrans transform whose result cannot be
    differentiated again (``st.vjp(g, x)`` inside the function): before any other pass, so
    that a pullback it returns is never taken for a value called through."""
    for node in walk(parsed.node):
        if isinstance(node, gast.Call):
            callee = resolver.resolve(node.func)
            if getattr(callee, "__module__", None) in _TRANSFORMS and \
                    getattr(callee, "__name__", None) in _NOT_NESTABLE:
                _refuse(callee, parsed.location(node))


def _refuse(callee, location):
    name = getattr(callee, "__name__", "this function")
    raise UnsupportedSyntaxError(
        f"calling `st.{name}` inside a differentiated function", location,
        "inside a differentiated function call st.grad(g)(x) or st.jvp(g, (x,), (dx,)) "
        "(for a vector-Jacobian product v^T J, st.grad of `def gv(x, v): return "
        f"np.sum(g(x) * v)`); call st.{name} outside it")


def derivative_call(callee, call, resolver, location):
    """``(function, call)`` running the same derivative as generated source, or None.

    Raises :class:`UnsupportedSyntaxError` at the call for another of srctrans's transforms
    (``st.vjp``, ``st.hessian``...): its result is no generated source to differentiate.
    """
    plain = API.plain_function(callee)
    if plain is not None:
        return plain, call
    if API.is_jvp(callee):
        return _jvp_call(call, resolver, location)
    if getattr(callee, "__module__", None) in _TRANSFORMS:
        _refuse(callee, location)
    return None


def _jvp_call(call, resolver, location):
    """``st.jvp(g, (a, b), (da, db))`` -> ``g_jvp(a, b, da=da, db=db)``."""
    hint = "write st.jvp(g, (x, ...), (dx, ...)) with a function defined with def and tuple literals"
    if len(call.args) != 3 or call.keywords:
        raise UnsupportedSyntaxError("this call of st.jvp inside a differentiated function", location,
                                     hint)
    function, primals, tangents = call.args
    fn = resolver.resolve(function)
    fn = API.plain_function(fn) or fn
    if not inspect.isfunction(fn) or not isinstance(primals, gast.Tuple) or \
            not isinstance(tangents, gast.Tuple) or len(primals.elts) != len(tangents.elts):
        raise UnsupportedSyntaxError("this call of st.jvp inside a differentiated function", location,
                                     hint)
    names = positional_names(fn)[:len(primals.elts)]
    selected = [(name, tangent) for name, tangent in zip(names, tangents.elts)
                if not (isinstance(tangent, gast.Constant) and tangent.value is None)]
    if not selected:
        raise UnsupportedSyntaxError("st.jvp with every tangent None inside a differentiated function",
                                     location, "call the function itself: its tangent is zero")
    found = API.forward_instance(fn, tuple(name for name, _ in selected), location=location)
    keywords = [gast.keyword(found.build.tangents[name], tangent) for name, tangent in selected]
    return found.jvp, gast.Call(call.func, list(primals.elts), keywords)

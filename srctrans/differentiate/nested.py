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


def derivative_call(callee, call, resolver, location):
    """``(function, call)`` running the same derivative as generated source, or None."""
    plain = API.plain_function(callee)
    if plain is not None:
        return plain, call
    if API.is_jvp(callee):
        return _jvp_call(call, resolver, location)
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

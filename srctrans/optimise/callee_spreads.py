"""A called function whose output a fused gradient only sums: one call of its spread gradient.

Requires: the top-level statements of a specialised fused gradient (its forward statements,
then its backward ones), the callees that have a spread gradient
(:attr:`srctrans.front_end.Unit.spread_grads`), and the names that hold numbers.
Guarantees: the values computed are unchanged. The caller of ``f`` in ``np.sum(f(x))`` runs
``f``'s forward pass, for its saved values and for an output that only gives its shape to
the sum's cotangent, then ``f``'s backward pass from that cotangent::

    out, res = f_fwd(x, y)                          _spread = f_spread_grad(x, y, seed=1.0)
    ...                                     ->      ...
    d = rt.unreduce(1.0, out, None, False)
    dx, dy = f_bwd(res, d)                          dx, dy = _spread

``f_spread_grad`` (a callee's build specialised on an array output has one: see
``pipeline._spread_gradient``) is ``f``'s fused gradient of its output's sum times the number
it is given: it computes what ``f_fwd`` and ``f_bwd`` compute of the gradient, but not the
output where only the spread read it (a likelihood's normalising constant, two ``gammaln``
calls for a Student-t density). The rewrite holds when ``out``, ``res`` and ``d`` are each
read once, there; the number is a float literal or a name of a number assigned before the
forward call (or not in these statements at all); the call passes no ``**`` mapping and no
keyword of the number parameter's name; and the three statements are in this order in the
same block. The call moves to the forward call's place, where ``f_fwd`` ran:
its arguments are read where they were.
"""

import gast

from srctrans.nodes import load
from srctrans.optimise.dce import name_counts
from srctrans.optimise.expression_shapes import is_runtime_helper_call


def call_spread_gradients(body, spread_grads, numbers, fresh):
    """``body`` with each callee the module describes called once (``spread_grads``: a fwd's
    closure name -> ``(bwd name, spread gradient's name, its number parameter)``;
    ``numbers``: names of numbers; ``fresh(base)``: a new name)."""
    if not spread_grads:
        return body
    stores, reads = name_counts(body)
    position = {id(stmt): index for index, stmt in enumerate(body)}
    forward_calls = {}                   # output name -> (statement, fwd name, residuals name)
    for stmt in body:
        called = _forward_call(stmt, spread_grads)
        if called is not None:
            output, residuals, fwd = called
            forward_calls[output] = (stmt, fwd, residuals)
    if not forward_calls:
        return body
    dropped = set()
    for stmt in body:
        spread = _spread_of(stmt, forward_calls, numbers)
        if spread is None:
            continue
        cotangent, number, output = spread
        first, fwd, residuals = forward_calls[output]
        bwd, spread_grad, parameter = spread_grads[fwd]
        last = _backward_call(body[position[id(stmt)] + 1:], bwd, residuals, cotangent)
        if last is None or any(reads.get(name) != 1 or stores.get(name) != 1
                               for name in (output, residuals, cotangent)):
            continue
        if isinstance(number, gast.Name) and stores.get(number.id) and (
                stores[number.id] != 1
                or number.id not in name_counts(body[:position[id(first)]])[0]):
            continue                # (bound once, before the forward call, or not here at all)
        if any(k.arg is None or k.arg == parameter for k in first.value.keywords):
            continue                # (**options, or the parameter's name among its keywords)
        made = fresh("_spread_grads")
        call = first.value
        first.targets = [gast.Name(made, gast.Store(), None, None)]
        first.value = gast.Call(load(spread_grad), call.args,
                                call.keywords + [gast.keyword(parameter, number)])
        last.value = load(made)
        dropped.add(id(stmt))
    return [stmt for stmt in body if id(stmt) not in dropped]


def _forward_call(stmt, spread_grads):
    """``(output, residuals, fwd)`` of ``output, residuals = fwd(...)``, fwd a callee's with
    a spread gradient, or None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Tuple) and len(stmt.targets[0].elts) == 2
            and all(isinstance(e, gast.Name) for e in stmt.targets[0].elts)
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
            and stmt.value.func.id in spread_grads):
        return None
    output, residuals = (e.id for e in stmt.targets[0].elts)
    return output, residuals, stmt.value.func.id


def _spread_of(stmt, forward_calls, numbers):
    """``(d, number, output)`` of ``d = rt.unreduce(number, output, None, False)``, the output
    a callee's forward call's and the number a float literal or a name, or None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and is_runtime_helper_call(stmt.value, "unreduce") and len(stmt.value.args) == 4
            and not stmt.value.keywords):
        return None
    number, output, axis, keepdims = stmt.value.args
    if not (isinstance(output, gast.Name) and output.id in forward_calls
            and isinstance(axis, gast.Constant) and axis.value is None
            and isinstance(keepdims, gast.Constant) and keepdims.value is False):
        return None
    if not (isinstance(number, gast.Constant) and type(number.value) is float
            or isinstance(number, gast.Name) and number.id in numbers):
        return None
    return stmt.targets[0].id, number, output.id


def _backward_call(statements, bwd, residuals, cotangent):
    """The first of ``statements`` assigning ``bwd(residuals, cotangent)``, or None."""
    for stmt in statements:
        value = getattr(stmt, "value", None)
        if (isinstance(stmt, gast.Assign) and isinstance(value, gast.Call)
                and isinstance(value.func, gast.Name) and value.func.id == bwd
                and not value.keywords and len(value.args) == 2
                and all(isinstance(a, gast.Name) for a in value.args)
                and [a.id for a in value.args] == [residuals, cotangent]):
            return stmt
    return None


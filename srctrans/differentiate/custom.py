"""Reverse mode through gradients the user wrote, and code the user put in the backward pass.

Requires: the statement-level reverse pass (:mod:`srctrans.differentiate.reverse`)
to provide ``_contribute``, ``_contribute_all``, ``_emit``, ``_closure`` and
``_fail``, and a function in A-normal form.
Guarantees:

* a call of a function with a rule from ``st.register_vjp`` keeps its
  forward statement; the backward pass calls the rule,
  ``rule(g, ans, *args, **kwargs)``, and hands the cotangents it returns
  (checked by ``rt.custom_cotangents``) to the active positional arguments;
* a call of a ``st.custom_gradient`` function ``f`` becomes
  ``y, f_backward = f.forward(...)`` in the forward pass, and the backward pass
  calls ``f_backward(dy)``;
* an active value passed to either where no cotangent comes back (by keyword
  to a registered rule, to a keyword-only parameter of a custom-gradient
  function) is an error naming the call;
* a ``with st.grad_of(h) as dh:`` block adds nothing to the forward pass. In
  the backward pass its statements run where the block stands, with ``dh``
  the adjoint of ``h``, after the adjoints of every statement that follows it,
  so ``dh`` is complete (the fence checked that no use of ``h`` comes between
  its assignment and the block). When nothing else gave ``h`` a gradient the
  block starts from zeros, so it can set a synthetic one.

:func:`differentiate_as_call` makes a function that has a user rule (or is
declared non-differentiable) differentiate as one call of itself.
"""

import inspect
import re

import gast

from srctrans.runtime.custom import custom_gradient_of
from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.calls import describe
from srctrans.emit.printer import unparse
from srctrans.errors import UnsupportedSyntaxError
from srctrans.nodes import assign, clone, load, parameter_names, runtime_call, store
from srctrans.rules import REGISTRY
from srctrans.treewalk import walk


class CustomGradients:
    """Mixin of the reverse pass: user rules, custom-gradient functions, gradient hooks."""

    def _custom_rule(self, primal, rule_fn, args, keywords, g, ans, node):
        """The backward statements of a call of ``primal``, whose VJP the user registered."""
        self._positional_only(primal, keywords, node, "registered VJP")
        written = node.func if isinstance(node, gast.Call) else None
        rule_name = self._closure(_identifier(primal, written) + "_vjp", rule_fn)
        call = gast.Call(load(rule_name), [clone(g), clone(ans)] + [clone(a) for a in args],
                         [gast.keyword(key, clone(value)) for key, value in keywords.items()])
        self._hand_out(primal, call, args, single=False, written=written)

    def _custom_gradient_call(self, target, callee, call, args, keywords, g, stmt):
        """``y, f_backward = f.forward(...)``; the backward pass calls ``f_backward(dy)``.

        ``f_backward`` returns one cotangent per positional parameter of ``f``
        (the bare cotangent when there is one), whether the call passed the
        argument by position or by name; a ``*args`` parameter has one per
        argument it received. Keyword-only parameters receive none.
        """
        signature = inspect.signature(callee.function)
        try:
            bound = signature.bind(*args, **keywords)
        except TypeError as error:
            self._fail(call, UnsupportedSyntaxError, f"the call of {describe(callee)} does not "
                       f"match its signature ({error})", "fix the call's arguments")
        inputs, others = [], {}
        for name, parameter in signature.parameters.items():
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                inputs.append(bound.arguments.get(name, gast.Constant(None, None)))
            elif parameter.kind is parameter.VAR_POSITIONAL:
                inputs.extend(bound.arguments.get(name, ()))
            elif parameter.kind is parameter.VAR_KEYWORD:
                others.update(bound.arguments.get(name, {}))
            elif name in bound.arguments:
                others[name] = bound.arguments[name]
        self._positional_only(callee, others, call, "custom gradient")
        backward = self.namer.fresh(_identifier(callee, call.func) + "_backward")
        forward_call = gast.Call(gast.Attribute(clone(call.func), "forward", gast.Load()),
                                 call.args, call.keywords)
        replacement = gast.Assign([gast.Tuple([store(target), store(backward)], gast.Store())],
                                  forward_call, None)
        anno.copy(stmt, replacement)
        self._hand_out(callee, gast.Call(load(backward), [clone(g)], []), inputs,
                       single=len(inputs) == 1, written=call.func)
        return replacement

    def _hand_out(self, primal, cotangents, args, single, written=None):
        """Give each active positional argument its entry of the user's ``cotangents``.

        ``written`` is the expression the call names the function by (for messages)."""
        active = [self._carries_gradient(a) for a in args]
        passed = gast.Tuple([clone(a) if on else gast.Constant(None, None)
                             for a, on in zip(args, active)], gast.Load())
        described = describe(primal) if written is None else unparse(written)
        checking = [cotangents, passed, gast.Constant(described, None)]
        flag = [gast.keyword("single", gast.Constant(True, None))] if single else []
        checked = runtime_call(self.aliases, "custom_cotangents", checking, flag)
        what = _identifier(primal, written) + "_grads"
        self._contribute_all([(a, i) for i, a in enumerate(args)], checked, what,
                             length=len(args))      # a display argument: entry by entry

    def _carries_gradient(self, node):
        if isinstance(node, (gast.List, gast.Tuple)):
            return any(self._carries_gradient(e) for e in node.elts)
        return isinstance(node, gast.Name) and node.id in self.active

    def _positional_only(self, primal, keywords, node, kind):
        for key, value in keywords.items():
            if self._carries_gradient(value):
                self._fail(node, UnsupportedSyntaxError,
                           f"`{key}=` passes a value that carries a gradient to "
                           f"{describe(primal)}, whose {kind} gives cotangents to "
                           f"positional parameters only",
                           f"pass `{key}` positionally, or wrap it in st.stop_gradient(...) "
                           f"if it should carry none")

    def _gradient_hook(self, stmt):
        """(forward, backward) statements of ``with st.grad_of(h) as dh:``."""
        item = stmt.items[0]
        name = item.context_expr.args[0].id
        if name not in self.active:            # no gradient flows through h: nothing to run
            return [], []
        adjoint = self.namer.adjoint(name)
        start = []
        if adjoint not in self.initialised:
            zero = runtime_call(self.aliases, "zeros_like", [load(name)])
            start = [assign(adjoint, zero)]
            anno.set_(start[0], Anno.ORIGIN, self._origin)
            self.initialised.add(adjoint)
        renamed = {item.optional_vars.id: adjoint}
        body = [_rename(clone(s), renamed) for s in stmt.body]
        return [], start + body


def gradient_hooks(function):
    """The ``with st.grad_of(h) as dh:`` blocks of ``function`` (after ANF)."""
    return [node for node in walk(function) if isinstance(node, gast.With)]


def hooked_shapes(unit, shapes):
    """``{dh: shape of h}`` for each ``with st.grad_of(h) as dh:`` block whose ``h`` has a
    measured shape: a block keeps a gradient shaped like its value, so code after it
    may be specialised on that shape too."""
    found = {}
    for hook in gradient_hooks(unit.function):
        name = hook.items[0].context_expr.args[0].id
        if name in unit.active and name in shapes:
            found[unit.namer.adjoint(name)] = shapes[name]
    return found


def differentiate_as_call(parsed, mode="reverse"):
    """Replace the body of a function with a user rule by a call of the function itself.

    When ``parsed.fn`` has a VJP from ``st.register_vjp`` (a JVP from
    ``st.register_jvp`` when ``mode`` is ``"forward"``), is declared
    non-differentiable, or is the function of a ``st.custom_gradient`` object,
    its source is not differentiated (``"batch"`` mode batches the body of any but the
    last): the body becomes ``return fn(params...)``
    (a call of the custom-gradient object for the last), a call the reverse
    pass differentiates by the rule. Returns ``{name: callee}``, the name the
    call uses (for the generated code's closure), or ``{}`` for any other
    function.
    """
    fn = parsed.fn
    rule = REGISTRY.lookup(fn)
    callee = custom_gradient_of(fn) or fn          # st.grad of a custom_gradient function
    if mode == "batch" and callee is fn:           # batching runs the body as written
        return {}
    custom = None if rule is None else rule.custom_vjp if mode == "reverse" else rule.custom_jvp
    if not (callee is not fn or custom is not None or REGISTRY.is_nondifferentiable(fn)):
        return {}
    function = parsed.node
    arguments = function.args
    if arguments.vararg is not None or arguments.kwarg is not None:
        raise UnsupportedSyntaxError(
            f"differentiating {fn.__qualname__} itself by its registered rule, with `*args` or "
            f"`**kwargs` in its signature", parsed.location(function),
            f"call {fn.__name__} from another function and differentiate that")
    taken = set(parameter_names(function)) | set(fn.__code__.co_freevars)
    name = fn.__name__
    while name in taken:
        name += "_itself"
    call = gast.Call(load(name), [load(p.id) for p in arguments.posonlyargs + arguments.args],
                     [gast.keyword(p.id, load(p.id)) for p in arguments.kwonlyargs])
    anno.set_(call, Anno.CALLEE, callee)
    returned = gast.Return(call)
    for node in walk(returned):
        if "lineno" in node._attributes:
            node.lineno = function.lineno
    function.body = [returned]
    return {name: callee}


def _rename(tree, renamed):
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id in renamed:
            node.id = renamed[node.id]
    return tree


def _identifier(primal, written=None):
    """A word for ``primal`` to name generated variables after (``erf`` -> ``erf_vjp``):
    the last name of the expression that calls it, else its own name."""
    if isinstance(written, gast.Attribute):
        name = written.attr
    elif isinstance(written, gast.Name):
        name = written.id
    else:
        name = getattr(primal, "__name__", None) or type(primal).__name__
    name = re.sub(r"\W+", "_", str(name)).strip("_")
    return name if name.isidentifier() else "custom"

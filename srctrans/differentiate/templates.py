"""Instantiate a rule template at one call site.

Requires: a :class:`~srctrans.rules.registry.Template` and the call's argument
nodes (atoms, or list literals of atoms).
Guarantees: :func:`cotangents` returns, for every argument that has a
derivative, the expression of its cotangent with ``g``, ``ans`` and the rule's
parameters replaced by the call site's nodes.
"""

import inspect

import gast
import numpy

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.naming import NUMPY_ALIAS, RUNTIME_ALIAS
from srctrans.nodes import clone
from srctrans.treewalk import replace_names, walk


class Binding:
    """One primal parameter's argument and the expression of its cotangent.

    ``argument`` is the node passed at the call site; ``cotangent`` is None
    when the rule gives the parameter no derivative. ``sequence`` is true when
    the argument is a list literal and the cotangent a sequence (one per element).
    """

    __slots__ = ("name", "argument", "cotangent")

    def __init__(self, name, argument, cotangent):
        self.name = name
        self.argument = argument
        self.cotangent = cotangent

    @property
    def sequence(self):
        return isinstance(self.argument, (gast.List, gast.Tuple))


def bind(template, args, keywords):
    """Bind call-site nodes to the template's primal parameters.

    Returns an ordered list of (parameter name, node) with defaults filled in as
    constants, and a ``*args`` parameter expanded into one entry per argument.
    Raises TypeError when the call does not fit the signature.
    """
    bound = template.signature.bind(*args, **keywords)
    bound.apply_defaults()
    pairs = []
    for name, param in template.signature.parameters.items():
        value = bound.arguments.get(name)
        if param.kind is param.VAR_POSITIONAL:
            pairs.extend((name, node) for node in value)
        elif param.kind is param.VAR_KEYWORD:
            pairs.extend(value.items())
        elif isinstance(value, gast.AST):
            pairs.append((name, value))
        else:
            pairs.append((name, gast.Constant(value, None)))
    return pairs


def cotangents(template, pairs, g, ans, aliases):
    """The :class:`Binding` of each bound parameter, in signature order.

    ``aliases`` maps the template's module names (``np``, ``rt``) to the names
    the generated module uses. When the returned tuple contains a starred
    entry, the result is (None, expression): the caller stores the whole tuple
    and indexes it.
    """
    substitutions = {"g": g, "ans": ans}
    for name, param in template.signature.parameters.items():
        if param.kind is param.VAR_POSITIONAL:
            nodes = [node for n, node in pairs if n == name]
            substitutions[name] = gast.Tuple(nodes, gast.Load())
        elif param.kind is not param.VAR_KEYWORD:
            substitutions[name] = dict(pairs)[name]
    returned = _substitute(template.returned, substitutions, aliases)
    if not template.is_tuple:
        expressions = [returned] + [None] * (len(pairs) - 1)
    elif any(isinstance(e, gast.Starred) for e in returned.elts):
        return None, returned
    else:
        expressions = list(returned.elts)
    if len(expressions) < len(pairs):
        expressions += [None] * (len(pairs) - len(expressions))
    return [Binding(name, node, _none_to_absent(expr))
            for (name, node), expr in zip(pairs, expressions)], None


def _none_to_absent(expr):
    if expr is None or isinstance(expr, gast.Constant) and expr.value is None:
        return None
    return expr


def _substitute(expression, substitutions, aliases):
    expression = clone(expression)
    calls = walk(expression) if "np" not in substitutions else ()
    for call in calls:                    # np.where(...) of the template: NumPy's, noted
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and isinstance(call.func.value, gast.Name) and call.func.value.id == "np"):
            anno.set_(call, Anno.TEMPLATE_NUMPY, getattr(numpy, call.func.attr, None))
    rename = {"np": aliases.get(NUMPY_ALIAS, NUMPY_ALIAS), "rt": aliases.get(RUNTIME_ALIAS, RUNTIME_ALIAS)}

    def substitute(node):
        if node.id in substitutions:
            return _as_load(clone(substitutions[node.id]))
        if node.id in rename:
            node.id = rename[node.id]
        return node

    return replace_names(expression, substitute)


def _as_load(node):
    for sub in walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = gast.Load()
    return node


def tangent_of_call(template, pairs, tangent_of, ans, aliases, zeros_like):
    """The expression of the output tangent of one call, or None when no argument is active.

    ``template`` is a :class:`~srctrans.rules.registry.JvpTemplate`, ``pairs``
    the call's bound arguments (:func:`bind`); ``tangent_of(node)`` gives an
    argument's tangent expression or None for a constant, and
    ``zeros_like(node)`` a zero tangent for it.
    """
    substitutions = {"ans": ans}
    arguments = {}
    for name, param in template.signature.parameters.items():
        if param.kind is param.VAR_POSITIONAL:
            arguments[name] = gast.Tuple([node for n, node in pairs if n == name], gast.Load())
        elif param.kind is not param.VAR_KEYWORD:
            arguments[name] = dict(pairs)[name]
    substitutions.update(arguments)
    tangents = {}                     # tangent parameter -> expression, or None when inactive
    for primal, tangent in template.tangents.items():
        argument = arguments[primal]
        if template.signature.parameters[primal].kind is inspect.Parameter.VAR_POSITIONAL:
            parts = [tangent_of(node) for node in argument.elts]
            tangents[tangent] = None if all(p is None for p in parts) else gast.Tuple(
                [p if p is not None else zeros_like(node) for p, node in zip(parts, argument.elts)],
                gast.Load())
        else:
            tangents[tangent] = tangent_of(argument)
    if all(t is None for t in tangents.values()):
        return None
    if template.per_argument:
        terms = [_substitute(entry, {**substitutions, tangent: tangents[tangent]}, aliases)
                 for entry, tangent in zip(template.returned.elts, template.tangents.values())
                 if tangents[tangent] is not None]
        total = terms[0]
        for term in terms[1:]:
            total = gast.BinOp(total, gast.Add(), term)
        return total
    for primal, tangent in template.tangents.items():
        if tangents[tangent] is None:
            tangents[tangent] = zeros_like(arguments[primal])
    return _substitute(template.returned, {**substitutions, **tangents}, aliases)

"""One registry of derivative rules.

A VJP rule is a plain Python function ``rule(g, ans, *primal_args)`` whose
body is a single ``return``. It reads as mathematics and is also a template:
the reverse-mode generator inlines the returned expression, substituting the
cotangent ``g``, the primal output ``ans`` and the call's arguments.

What the rule returns:
  * one expression: the cotangent of the first primal parameter (the others
    get none), e.g. ``return g * np.cos(x)``;
  * a tuple: one entry per primal parameter in signature order (a ``*args``
    parameter contributes one entry per argument it received); ``None`` marks
    a parameter without a derivative.
An argument passed as a list literal (``np.concatenate([a, b])``) receives a
sequence of cotangents, one per element.

``elementwise=True`` declares a broadcasting function: the generator sums each
cotangent back to its argument's shape (``rt.unbroadcast``) unless the other
arguments are scalar constants, so rules state only the pointwise derivative.

Templates may use the names ``np`` (numpy) and ``rt`` (the runtime package);
the generator maps them to the aliases of the generated module.
"""

import inspect
import textwrap
import warnings

import gast


class Rule:
    """The derivative rules of one primal callable."""

    def __init__(self, primal, vjp=None, elementwise=False, jvp=None):
        self.primal = primal
        self.vjp = vjp
        self.jvp = jvp
        self.elementwise = elementwise
        self._template = None

    @property
    def template(self):
        """The parsed VJP template (parsed once, on first use)."""
        if self._template is None:
            self._template = Template(self.vjp)
        return self._template


class Template:
    """A rule function parsed for inlining.

    Attributes:
      signature: the primal part of the rule's signature (without g and ans).
      returned: the gast expression of its single ``return``.
      is_tuple: whether it returns one entry per primal parameter.
    """

    def __init__(self, rule_fn):
        source = inspect.getsource(rule_fn)
        node = gast.parse(textwrap.dedent(source)).body[0]
        body = [s for s in node.body if not _is_docstring(s)]
        if len(body) != 1 or not isinstance(body[0], gast.Return):
            raise TypeError(f"rule {rule_fn.__qualname__} must be a single `return`")
        full = inspect.signature(rule_fn)
        params = list(full.parameters.values())
        if [p.name for p in params[:2]] != ["g", "ans"]:
            raise TypeError(f"rule {rule_fn.__qualname__} must start with (g, ans, ...)")
        self.name = rule_fn.__qualname__
        self.signature = full.replace(parameters=params[2:])
        self.returned = body[0].value
        self.is_tuple = isinstance(self.returned, gast.Tuple)


def _is_docstring(stmt):
    return (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)
            and isinstance(stmt.value.value, str))


class RuleRegistry:
    """Maps primal callables to their :class:`Rule` and knows which are constant.

    Keys are the callables themselves (``np.tanh``); lookups are by identity
    of the live object, so aliases (``np.absolute is np.abs``) share a rule.
    """

    def __init__(self):
        self._rules = {}
        self._nondifferentiable = {}

    # -- registration ------------------------------------------------------
    def vjp(self, *primals, elementwise=False):
        """Decorator: register the decorated function as the VJP rule of ``primals``."""
        def register(rule_fn):
            for primal in primals:
                self.register_vjp(primal, rule_fn, elementwise=elementwise)
            return rule_fn
        return register

    def register_vjp(self, primal, rule_fn, elementwise=False, replace=False):
        """Register ``rule_fn`` as the VJP of ``primal``.

        Registering a primal twice is an error unless ``replace`` is true, in
        which case the old rule is replaced with a warning.
        """
        key = _key(primal)
        existing = self._rules.get(key)
        if existing is not None and existing.vjp is not None:
            if not replace:
                raise ValueError(f"a VJP rule for {primal!r} is already registered")
            warnings.warn(f"replacing the VJP rule of {primal!r}", stacklevel=3)
        if existing is None:
            self._rules[key] = Rule(primal, rule_fn, elementwise)
        else:
            existing.vjp, existing.elementwise, existing._template = rule_fn, elementwise, None

    def nondifferentiable(self, *primals):
        """Declare that the results of ``primals`` carry no derivative."""
        for primal in primals:
            self._nondifferentiable[_key(primal)] = primal

    # -- lookup --------------------------------------------------------------
    def lookup(self, primal):
        """The :class:`Rule` of ``primal``, or None."""
        try:
            return self._rules.get(_key(primal))
        except TypeError:          # unhashable callables have no rule
            return None

    def is_nondifferentiable(self, primal):
        try:
            return _key(primal) in self._nondifferentiable
        except TypeError:
            return False

    def __contains__(self, primal):
        return self.lookup(primal) is not None


def _key(primal):
    # Callables hash by identity; the registry keeps them alive, so keys stay valid.
    return primal

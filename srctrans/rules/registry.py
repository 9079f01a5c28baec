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

A JVP rule is a plain Python function ``rule(dx, dy, ans, x, y)``, also a
single ``return`` used as a template by the forward-mode generator. The
parameters before ``ans`` are tangents: ``d`` + the name of each primal
parameter that has a derivative. What it returns:
  * with one tangent parameter: one expression, the output's tangent;
  * a tuple with one entry per tangent parameter: the contribution of each
    argument (each linear in its own tangent); the generator adds up the
    contributions of the active arguments and skips the others;
  * one expression with several tangent parameters: the whole tangent; the
    tangents of inactive arguments are replaced by zeros shaped like them.
A ``*args`` primal parameter ``*xs`` has the tangent parameter ``dxs``: the
tuple of the arguments' tangents. A list literal argument's tangent is the
list of its elements' tangents.

``REGISTRY.linear(f, ...)`` declares functions linear in their first argument
(``np.sum``, ``np.reshape``): their JVP is the same call with the first
argument replaced by its tangent, so they need no template.

Rules registered by users through the public API (``st.register_vjp``,
``st.register_jvp``) are not templates but callables run by the generated
code: ``custom_vjp(g, ans, *args, **kwargs)`` returns one cotangent per
positional argument; ``custom_jvp(tangents, ans, *args, **kwargs)`` returns
the output's tangent.

Templates may use the names ``np`` (numpy) and ``rt`` (the runtime package);
the generator maps them to the aliases of the generated module.
"""

import contextlib
import importlib
import sys
import inspect
import textwrap
import threading
import warnings

from srctrans.places import source_lines


class Rule:
    """The derivative rules of one primal callable."""

    def __init__(self, primal, vjp=None, elementwise=False, jvp=None):
        self.primal = primal
        self.vjp = vjp
        self.jvp = jvp
        self.elementwise = elementwise
        self.linear = False          # JVP: the same call on the first argument's tangent
        self.custom_vjp = None       # user-registered callables (see the module docstring)
        self.custom_jvp = None
        self._template = None
        self._jvp_template = None

    @property
    def template(self):
        """The parsed VJP template (parsed once, on first use)."""
        if self._template is None:
            self._template = Template(self.vjp)
        return self._template

    @property
    def jvp_template(self):
        """The parsed JVP template (parsed once, on first use), or None."""
        if self._jvp_template is None and self.jvp is not None:
            self._jvp_template = JvpTemplate(self.jvp)
        return self._jvp_template

    @property
    def has_jvp(self):
        return self.jvp is not None or self.linear or self.custom_jvp is not None

    @property
    def has_vjp(self):
        return self.vjp is not None or self.custom_vjp is not None


class Template:
    """A rule function parsed for inlining.

    Attributes:
      signature: the primal part of the rule's signature (without g and ans).
      returned: the gast expression of its single ``return``.
      is_tuple: whether it returns one entry per primal parameter.
    """

    def __init__(self, rule_fn):
        self.returned, self.is_tuple = _returned(rule_fn)
        full = inspect.signature(rule_fn)
        params = list(full.parameters.values())
        if [p.name for p in params[:2]] != ["g", "ans"]:
            raise TypeError(f"rule {rule_fn.__qualname__} must start with (g, ans, ...)")
        self.name = rule_fn.__qualname__
        self.signature = full.replace(parameters=params[2:])


class JvpTemplate:
    """A JVP rule function parsed for inlining.

    Attributes:
      signature: the primal part of the rule's signature (after ``ans``).
      tangents: primal parameter name -> the rule's tangent parameter name.
      returned: the gast expression of its single ``return``.
      per_argument: whether it returns one contribution per tangent parameter.
    """

    def __init__(self, rule_fn):
        self.returned, returns_tuple = _returned(rule_fn)
        full = inspect.signature(rule_fn)
        params = list(full.parameters.values())
        names = [p.name for p in params]
        if "ans" not in names:
            raise TypeError(f"JVP rule {rule_fn.__qualname__} must have an `ans` parameter")
        split = names.index("ans")
        primal_params = params[split + 1:]
        primal_names = {p.name for p in primal_params}
        self.tangents = {}
        for tangent in names[:split]:
            if not (tangent.startswith("d") and tangent[1:] in primal_names):
                raise TypeError(f"JVP rule {rule_fn.__qualname__}: tangent parameter `{tangent}` "
                                f"must be `d` + the name of a primal parameter")
            self.tangents[tangent[1:]] = tangent
        self.name = rule_fn.__qualname__
        self.signature = full.replace(parameters=primal_params)
        self.per_argument = returns_tuple and len(self.tangents) > 1
        if self.per_argument and len(self.returned.elts) != len(self.tangents):
            raise TypeError(f"JVP rule {rule_fn.__qualname__} must return one entry per tangent")


def _returned(rule_fn):
    """The expression of ``rule_fn``'s single ``return`` (a docstring may precede it), and
    whether it is a tuple."""
    import gast          # here: a process that builds nothing (a cache hit) never imports gast
    node = gast.parse(textwrap.dedent("".join(source_lines(rule_fn)[0]))).body[0]
    body = [s for s in node.body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant)
                                         and isinstance(s.value.value, str))]
    if len(body) != 1 or not isinstance(body[0], gast.Return):
        raise TypeError(f"rule {rule_fn.__qualname__} must be a single `return`")
    return body[0].value, isinstance(body[0].value, gast.Tuple)


class RuleRegistry:
    """Maps primal callables to their :class:`Rule` and knows which are constant.

    Keys are the callables themselves (``np.tanh``); lookups are by identity
    of the live object, so aliases (``np.absolute is np.abs``) share a rule.

    srctrans's own rule modules are imported at the first query, not before
    (:meth:`load_builtins_with`): a process whose derivatives all come from
    the persistent cache never imports them. Everything a user registers or
    declares comes after them, so a user's registration wins.
    """

    def __init__(self):
        self._rules = {}
        self._nondifferentiable = {}
        self._constant_owners = ()      # types whose bound methods give constants
        self.version = 0                # changes whenever a user registers or declares something
        self._through = set()           # installed functions whose source srctrans may read
        self._user_through = set()      # those of them a user named (st.differentiate_through)
        self._declared = {}             # the non-differentiable declarations users made
        self._tuple_valued = set()      # primals whose results are tuples
        self._computed_as = {}          # a NumPy function -> the plain NumPy srctrans reads for it
        self._standing_for = {}         # a runtime function -> the NumPy function whose rules it has
        self._on_demand = {}            # package -> rule module, imported once the user imports it
        self._consulted = None          # while a build records: id -> each callable looked up
        self._builtins = None           # imports srctrans's rule modules, until it has run
        self._loading = False           # while it runs (a lookup it makes finds what is in)
        self._loading_lock = threading.RLock()

    def load_builtins_with(self, loader):
        """Run ``loader`` (which imports srctrans's rule modules, filling the registry) before
        the first query or user registration, once; it leaves :attr:`version` as it was."""
        self._builtins = loader

    @property
    def loaded(self):
        """Whether srctrans's own rules are loaded; until they are, no user registered anything."""
        return self._builtins is None

    def _ready(self):
        if self._builtins is None:
            return
        with self._loading_lock:          # another thread waits until the rules are all in
            if self._builtins is None or self._loading:   # loaded meanwhile, or by this thread
                return
            self._loading, version = True, self.version
            try:
                self._builtins()
                self._builtins, self.version = None, version
            finally:
                self._loading = False

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
        rule = self._rule_for(primal)
        if rule.vjp is not None:
            if not replace:
                raise ValueError(f"a VJP rule for {primal!r} is already registered")
            warnings.warn(f"replacing the VJP rule of {primal!r}", stacklevel=3)
        rule.vjp, rule.elementwise, rule._template = rule_fn, elementwise, None

    def jvp(self, *primals):
        """Decorator: register the decorated function as the JVP rule of ``primals``."""
        def register(rule_fn):
            for primal in primals:
                self.register_jvp(primal, rule_fn)
            return rule_fn
        return register

    def register_jvp(self, primal, rule_fn, replace=False):
        """Register ``rule_fn`` as the JVP template of ``primal`` (see the module docstring)."""
        rule = self._rule_for(primal)
        if rule.jvp is not None and not replace:
            raise ValueError(f"a JVP rule for {primal!r} is already registered")
        rule.jvp, rule._jvp_template = rule_fn, None

    def linear(self, *primals):
        """Declare ``primals`` linear in their first argument (their JVP needs no template)."""
        for primal in primals:
            self._rule_for(primal).linear = True

    def _rule_for(self, primal):
        key = _key(primal)
        if key not in self._rules:
            self._rules[key] = Rule(primal)
        return self._rules[key]

    def same_rules_as(self, primal, stand_in):
        """Let :meth:`lookup` of ``stand_in`` (a runtime function computing what ``primal``
        does: ``rt.inv`` for ``np.linalg.inv``) find ``primal``'s rule, which stays one rule
        of one function (:meth:`rules`)."""
        self._standing_for[_key(stand_in)] = primal

    def nondifferentiable(self, *primals, by_user=False):
        """Declare that the results of ``primals`` carry no derivative.

        A user-registered rule of one of them is dropped: the latest
        declaration wins. Returns the primals that had one. ``by_user``
        marks a user's declaration (:meth:`user_made`).
        """
        if by_user:
            self._ready()
        dropped = []
        for primal in primals:
            self._nondifferentiable[_key(primal)] = primal
            if by_user:
                self._declared[_key(primal)] = primal
            rule = self._rules.get(_key(primal))
            if rule is not None and (rule.custom_vjp or rule.custom_jvp) is not None:
                rule.custom_vjp = rule.custom_jvp = None
                dropped.append(primal)
        self.version += 1
        return dropped

    def constant_methods_of(self, *types):
        """Declare that the methods of instances of ``types`` give constants (random generators).

        Bound methods are new objects at every attribute access, so they are
        recognised by the type of their ``__self__``.
        """
        self._constant_owners += types

    # -- rules users register (callables, not templates) ------------------------
    def set_custom_vjp(self, primal, rule_fn):
        """Make ``rule_fn`` the user's VJP of ``primal``; it overrides templates and source.

        A declaration that ``primal`` is non-differentiable is dropped.
        Returns True when it replaced an earlier user VJP.
        """
        return self._set_custom(primal, "custom_vjp", rule_fn)

    def set_custom_jvp(self, primal, rule_fn):
        """Make ``rule_fn`` the user's JVP of ``primal`` (see :meth:`set_custom_vjp`)."""
        return self._set_custom(primal, "custom_jvp", rule_fn)

    def _set_custom(self, primal, slot, rule_fn):
        self._ready()
        rule = self._rule_for(primal)
        replaced = getattr(rule, slot) is not None
        setattr(rule, slot, rule_fn)
        self._nondifferentiable.pop(_key(primal), None)
        self._declared.pop(_key(primal), None)
        self.version += 1
        return replaced

    def user_made(self):
        """``(custom, declared, through)``: the rules users registered (primal -> (VJP, JVP)),
        the primals they declared non-differentiable and the functions whose source they let
        srctrans read. Answered without loading srctrans's own rules."""
        custom = {key: (rule.custom_vjp, rule.custom_jvp) for key, rule in self._rules.items()
                  if (rule.custom_vjp or rule.custom_jvp) is not None}
        return custom, list(self._declared.values()), set(self._user_through)

    def user_rules(self):
        """A snapshot of what users registered and declared, for :meth:`restore_user_rules`."""
        self._ready()
        custom, _, _ = self.user_made()
        return (custom, dict(self._nondifferentiable), set(self._through), dict(self._declared),
                set(self._user_through))

    def restore_user_rules(self, snapshot):
        """Undo every registration and declaration users made since ``snapshot`` was taken
        (tests). What srctrans's own rule modules loaded meanwhile registered stays (a module
        of SciPy's rules, imported once a test imports SciPy, is not imported again)."""
        custom, nondifferentiable, through, declared, user_through = snapshot
        self._through = set(through) | {key for key in self._through
                                        if key not in self._user_through}
        self._user_through = set(user_through)
        for key in list(self._rules):
            rule = self._rules[key]
            rule.custom_vjp, rule.custom_jvp = custom.get(key, (None, None))
            if not rule.has_vjp and not rule.has_jvp:       # made only for a user's rule
                del self._rules[key]
        restored = dict(nondifferentiable)
        restored.update((key, primal) for key, primal in self._nondifferentiable.items()
                        if key not in restored and key not in self._declared)
        self._nondifferentiable = restored
        self._declared = dict(declared)
        self.version += 1

    def returns_tuple(self, *primals):
        """Declare that ``primals`` return tuples (``np.linalg.slogdet``), or may
        (``scipy.special.logsumexp`` with ``return_sign=True``): the analyses never take
        their results for arrays (``+`` on a tuple is not addition)."""
        self._tuple_valued.update(_key(p) for p in primals)

    def is_tuple_valued(self, primal):
        self._ready()
        try:
            return _key(primal) in self._tuple_valued
        except TypeError:
            return False

    def differentiate_through(self, fn, by_user=False):
        """Let srctrans read ``fn``'s source although it belongs to an installed package
        (``by_user``: a user's request, :meth:`user_made`)."""
        if by_user:
            self._ready()
            self._user_through.add(_key(fn))
        self._through.add(_key(fn))
        self.version += 1

    def differentiate_through_module(self, module, *, except_=()):
        """:meth:`differentiate_through` for every function ``module`` defines (not the ones
        it imports), but those in ``except_``: a runtime module of formulas in plain NumPy,
        whose second derivatives srctrans gets by reading their source."""
        for value in vars(module).values():
            if inspect.isfunction(value) and value.__module__ == module.__name__ \
                    and value not in except_:
                self.differentiate_through(value)

    def compute_as(self, primal, equivalent):
        """Let srctrans differentiate calls of ``primal`` (a library function it cannot read)
        as calls of ``equivalent``: plain NumPy computing the same values from the same
        arguments, whose source srctrans reads (``np.gradient``: ``runtime/stencils.py``)."""
        self._computed_as[_key(primal)] = (primal, equivalent)
        self.differentiate_through(equivalent)

    def computed_as(self, primal):
        """What srctrans differentiates a call of ``primal`` as: the equivalent registered
        with :meth:`compute_as`, else ``primal`` itself."""
        self._ready()
        try:
            return self._computed_as.get(_key(primal), (None, primal))[1]
        except TypeError:            # unhashable: no equivalent
            return primal

    def computed_equivalents(self):
        """``[(primal, equivalent)]``: every :meth:`compute_as` registration."""
        self._ready()
        return list(self._computed_as.values())

    def differentiated_through(self, fn):
        """Whether :meth:`differentiate_through` was asked for ``fn``."""
        self._ready()
        return _key(fn) in self._through

    # -- lookup --------------------------------------------------------------
    def load_on_demand(self, package, module):
        """Import the rule module ``module`` at the first look-up that misses once the user
        has imported ``package`` (``scipy.special``: srctrans never imports SciPy itself,
        and a program can only call SciPy's functions after importing them)."""
        self._on_demand[package] = module

    @contextlib.contextmanager
    def recording(self):
        """While active, note every callable whose rule is looked up: what a build relied on
        (a rule found, or none). Yields the dict id -> callable; nested recordings are separate."""
        outer, self._consulted = self._consulted, {}
        try:
            yield self._consulted
        finally:
            self._consulted = outer

    def lookup(self, primal):
        """The :class:`Rule` of ``primal``, or None."""
        if self._builtins is not None:
            self._ready()
        if self._consulted is not None and callable(primal):
            self._consulted[id(primal)] = primal
        try:
            rule = self._rules.get(_key(primal))
        except TypeError:          # unhashable callables have no rule
            return None
        if rule is None and primal in self._standing_for:
            return self.lookup(self._standing_for[primal])
        if rule is None:           # an object that carries its own rule (an st.vmap function)
            own = getattr(type(primal), "__srctrans_rule__", None)
            if own is not None:
                return own(primal)
        if rule is None and self._on_demand:
            ready = [package for package in self._on_demand if package in sys.modules]
            for package in ready:
                importlib.import_module(self._on_demand.pop(package))   # registers its rules
            if ready:
                return self.lookup(primal)
        return rule

    def is_nondifferentiable(self, primal):
        self._ready()
        try:
            if _key(primal) in self._nondifferentiable:
                return True
        except TypeError:
            return False
        owner = getattr(primal, "__self__", None)
        if owner is None or not isinstance(owner, self._constant_owners):
            return False
        rule = self._rules.get(_key(primal))
        return rule is None or rule.custom_vjp is None

    def __contains__(self, primal):
        return self.lookup(primal) is not None

    def rules(self):
        """Every :class:`Rule` the registry holds (srctrans's own and users')."""
        self._ready()
        return list(self._rules.values())


def _key(primal):
    # Callables hash by identity; the registry keeps them alive, so keys stay valid.
    return primal


REGISTRY = RuleRegistry()
"""The one registry: the rule files fill it, ``srctrans.rules`` loads them all."""

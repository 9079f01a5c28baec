"""What a call in the normalised function calls, for both modes.

Requires: a Call node annotated by ANF with ``Anno.CALLEE`` (None for a
method of a local value).
Guarantees: :func:`resolve_call` returns the primal the call stands for and
its arguments as that primal takes them: a method becomes its NumPy function
with the receiver first (``x.sum(0)`` is ``np.sum(x, 0)``), and a call that
runs a derivative srctrans made becomes a call of its generated code
(``differentiate.nested``). An unknown method or an unresolved name is a
``MissingRuleError`` at the user's line.
"""

import inspect

import gast
import numpy as np

from srctrans import annotations as anno
from srctrans.annotations import Anno
from srctrans.differentiate.nested import derivative_call
from srctrans.emit.printer import unparse
from srctrans.differentiate.templates import bind
from srctrans.errors import MissingRuleError, UnsupportedSyntaxError
from srctrans.parse.resolve import MISSING
from srctrans.emit.compile import is_generated
from srctrans.nodes import in_runtime, module_of
from srctrans.places import is_installed
from srctrans.rules import METHODS, REGISTRY


class Generator:
    """What the generators share (reverse and forward mode, and batching).

    Requires ``self.unit``, ``self.namer``, ``self.result.closure`` (closure
    name -> object) and ``self._origin`` (the statement being differentiated).
    """

    def _closure(self, base, value):
        """The closure name generated code reads ``value`` through (one name per object)."""
        for name, existing in self.result.closure.items():
            if existing is value:
                return name
        name = self.namer.fresh(base)
        self.result.closure[name] = value
        return name

    def _reject_output_arguments(self, primal, keywords, node, args=()):
        """NumPy's ``out=`` and ``where=`` write into existing arrays: not differentiable here.
        Nor is ``np.einsum``'s interleaved form (operands and lists of axes) left by ANF
        (which rewrites literal lists of axes into subscripts)."""
        for keyword in ("out", "where", "retstep"):
            if keyword in keywords and not (isinstance(keywords[keyword], gast.Constant)
                                            and keywords[keyword].value in (None, False)):
                self._fail(node, UnsupportedSyntaxError,
                           f"the `{keyword}=` argument of {describe(primal)} is not supported",
                           "compute the full result into a new name; use np.where for selections")
        if primal is np.einsum and args and not (
                isinstance(args[0], gast.Constant) and isinstance(args[0].value, str)) and (
                isinstance(args[0], gast.Name) and args[0].id in self.active
                or len(args) > 1 and isinstance(args[1], (gast.Tuple, gast.List))):
            self._fail(node, UnsupportedSyntaxError,
                       "np.einsum's interleaved form with axes that are not literal lists of "
                       "ints", "write the lists of axes in the call (np.einsum(a, [0, 1], b, "
                       "[1, 2])) or the subscripts string (np.einsum('ij,jk', a, b))")

    def _bind(self, template, args, keywords, primal, node):
        """The call's arguments bound to a rule template's primal parameters (``templates.bind``)."""
        try:
            return bind(template, args, keywords)
        except TypeError as error:
            self._fail(node, UnsupportedSyntaxError,
                       f"the call of {describe(primal)} does not match its rule's signature ({error})",
                       "srctrans's rule supports the arguments listed in docs/rules.md")

    def _missing_rule(self, call, callee):
        """Note a call of ``callee``, which has no rule the pass can use; the pass goes on, and
        :meth:`_report_missing_rules` raises one error naming every such call."""
        if not hasattr(self, "_missing"):
            self._missing = []
        lineno = getattr(call, "lineno", None) or (self._origin.lineno if self._origin else None)
        self._missing.append((lineno or 0, getattr(call, "col_offset", 0) or 0,
                              unparse(call.func), callee))

    def _report_missing_rules(self, mode):
        """Raise a MissingRuleError for the calls :meth:`_missing_rule` noted, if any."""
        if not getattr(self, "_missing", None):
            return
        missing = [(line, name, callee) for line, _, name, callee in   # in source order
                   sorted(self._missing, key=lambda entry: entry[:2])]
        parsed = self.unit.parsed
        for lineno, name, callee in missing:
            if isinstance(callee, type) and not is_library(callee) and not is_installed(callee):
                raise UnsupportedSyntaxError(
                    f"making an object of your class `{name}` from values that carry "
                    f"derivatives, inside the differentiated function", parsed.location_of_line(lineno),
                    f"make the {name} outside and pass it in as an argument (the gradient of an "
                    "object is a dict of its attributes' gradients, see docs/models.md), or "
                    "compute with its values directly")
        written = {}                                    # each function once, as first written
        for _, name, callee in missing:
            written.setdefault(id(callee), (name, callee))
        if len(missing) == 1:
            _, name, callee = missing[0]
            message = f"{_called(name, callee)} {_why_no_rule(callee, mode)}"
        else:
            calls = ", ".join(f"{_called(name, callee)} at line {lineno}"
                              for lineno, name, callee in missing)
            message = f"{len(missing)} calls have no derivative rule for {mode} mode: {calls}"
        lines = [line for name, callee in written.values()
                 for line in registration(name, callee, _needs(callee, mode))]
        hint = ("give each a rule: a VJP rule returns one cotangent per positional argument, "
                "a JVP rule the output's tangent; both take the arguments as the call passes "
                "them:\n      "
                + "\n      ".join(lines) + "\n  or use a function that has a rule "
                "(docs/rules.md lists them)")
        if any(is_installed(callee) for _, callee in written.values()):
            hint += "; st.differentiate_through(f) differentiates an installed function's source"
        raise MissingRuleError(message, parsed.location_of_line(missing[0][0]), hint)

    def _refuse_append(self, stmt, xs):
        """Appending to ``xs``, a list the function did not make, is refused at the user's line."""
        if xs in self.unit.resolver.local_names:         # a parameter, or bound to one
            self._fail(stmt, UnsupportedSyntaxError,
                       f"appending to `{xs}`, which may be a list the caller passed",
                       f"append to a copy: {xs} = list({xs}) first")
        self._fail(stmt, UnsupportedSyntaxError,
                   f"appending to `{xs}`, a list of the enclosing scope (a change the caller "
                   "would see, which srctrans does not differentiate)",
                   f"make a list of the function's own and return it: items = list({xs}), "
                   "then items.append(...)")

    def _fail(self, node, error, message, hint):
        """Raise ``error`` at the user's line of the statement being differentiated."""
        lineno = getattr(node, "lineno", None) or (self._origin.lineno if self._origin else None)
        raise error(message, self.unit.parsed.location_of_line(lineno), hint)


# the methods of a frozen scipy.stats distribution, made while the function runs
_DISTRIBUTION_METHODS = {"logpdf", "pdf", "cdf", "logcdf", "logpmf", "pmf", "sf", "logsf", "ppf"}
_FROZEN_HINT = ("for a frozen scipy.stats distribution (stats.norm(loc, scale).logpdf(x)), call "
                "the distribution's method with its parameters: stats.norm.logpdf(x, loc, scale)")


def resolve_call(call, unit, fail):
    """``(callee, call, args, keywords)``: the primal, the call node to use, and its arguments.

    ``fail(node, error, message, hint)`` raises at the user's line.
    """
    callee = anno.get(call, Anno.CALLEE)
    args = list(call.args)
    keywords = {k.arg: k.value for k in call.keywords}
    if callee is None:                                 # a method of a local value
        method = METHODS.get(call.func.attr)
        if method is None:
            fail(call, MissingRuleError, f"no derivative rule for the method `.{call.func.attr}()`",
                 _FROZEN_HINT if call.func.attr in _DISTRIBUTION_METHODS else
                 "call the NumPy function instead (see docs/rules.md for the supported "
                 "list); for a random generator passed in, whose draws are constants, "
                 "draw from constant arguments (x + rng.normal(size=...)) or wrap the "
                 "arguments in st.stop_gradient(...)")
        if method.pack and len(args) > 1:
            args = [gast.Tuple(args, gast.Load())]
        args = [call.func.value] + args
        callee = method.primal
    if callee is MISSING:
        fail(call, MissingRuleError, f"cannot resolve `{unparse(call.func)}`",
             "make sure the name is defined before the derivative is first called")
    if any(isinstance(a, gast.Starred) for a in args) and (
            is_library(callee) or not inspect.isfunction(callee)):
        fail(call, UnsupportedSyntaxError, *STARRED_REFUSAL)    # only a function of yours takes it
    nested = derivative_call(callee, call, unit.resolver, unit.parsed.location(call))
    if nested is not None:               # st.grad(g)(x), st.jvp(g, ...): their generated code
        callee, call = nested
        args, keywords = list(call.args), {k.arg: k.value for k in call.keywords}
    return callee, call, args, keywords


STARRED_REFUSAL = (
    "starred expression (`*args`) of a length the source does not fix",
    "pass the arguments one by one; the function's own `*args` may be passed on whole, as "
    "the last positional argument, to a function of yours whose `*args` receives all of it")


def starred_to_varargs(signature, bound, args, fail):
    """The name whose tuple a call's ``*name`` argument passes whole to the callee's ``*args``
    (``helper(r, *args)`` of ``def helper(r, *rest)``), or None for a call without one;
    ``fail()`` (which raises) for a starred argument that does not fill the callee's
    ``*args`` exactly."""
    starred = [a for a in args if isinstance(a, gast.Starred)]
    if not starred:
        return None
    varargs = [name for name, p in signature.parameters.items() if p.kind is p.VAR_POSITIONAL]
    if len(starred) > 1 or args[-1] is not starred[0] or not varargs \
            or tuple(bound.arguments.get(varargs[0], ())) != (starred[0],):
        fail()
    return starred[0].value


def is_library(callee):
    """NumPy's, the runtime's and installed packages' Python functions are primitives:
    differentiated by rule, never by source (a function of SciPy without a rule is a
    MissingRuleError, not a trip through its implementation), unless the user asked for
    its source with ``st.differentiate_through`` (or srctrans did, for runtime helpers
    written to be differentiated again)."""
    if module_of(callee).split(".")[0] == "numpy":
        return True
    if in_runtime(callee) or is_installed(callee):    # (a derivative generated of one of those
        return not (REGISTRY.differentiated_through(callee) or is_generated(callee))  # is read)
    return False


def _called(name, callee):
    """```name``` as written, with what it is when that says more: ```lse` (scipy...)``."""
    described = describe(callee)
    return f"`{name}`" if name == described or "<" in described else f"`{name}` ({described})"


def _why_no_rule(callee, mode):
    if is_installed(callee):
        return ("has no derivative rule; it is a function of an installed package, whose "
                "source srctrans does not differentiate")
    if _needs(callee, mode) == (mode,):           # it has the other mode's rule
        return f"has a {'JVP' if mode == 'reverse' else 'VJP'} rule but no " \
               f"{'VJP' if mode == 'reverse' else 'JVP'} rule"
    if is_library(callee):
        return "has no derivative rule"
    return "has no derivative rule and no Python source"


def _needs(callee, mode):
    """The modes whose rule ``callee`` lacks: the other mode's too unless it has one."""
    rule = REGISTRY.lookup(callee)
    if rule is not None and rule.has_vjp and mode == "forward":
        return ("forward",)
    if rule is not None and rule.has_jvp and mode == "reverse":
        return ("reverse",)
    return ("reverse", "forward")


def registration(name, callee, modes=("reverse", "forward")):
    """The lines that register rules for ``callee`` (called as ``name``) in ``modes``."""
    try:           # the required positional parameters; the call may pass more
        parameters = [p.name for p in inspect.signature(callee).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                      and p.default is p.empty]
    except (TypeError, ValueError):
        parameters = [f"x{i + 1}" for i in range(getattr(callee, "nin", 1))]
    arguments = ", ".join(parameters + ["*args", "**kwargs"])
    lines = {"reverse": f"st.register_vjp({name}, lambda g, ans, {arguments}: (...,))",
             "forward": f"st.register_jvp({name}, lambda tangents, ans, {arguments}: ...)"}
    return [lines[mode] for mode in modes]


def describe(obj):
    """How errors name a called object: ``np.linalg.norm``, ``np.sum``, ``helper``."""
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    if module == "numpy" or module.startswith("numpy."):
        module = "np" + module[len("numpy"):]
        module = {"np._core.fromnumeric": "np", "np.core.fromnumeric": "np"}.get(module, module)
    return f"{module}.{name}" if module and module not in ("builtins", "__main__") else name

"""Print the rule tables of docs/rules.md from the live registry.

Run from the repository root after adding or changing a rule:

    python docs/rules_table.py            # print the tables
    python docs/rules_table.py --write    # replace them in docs/rules.md

``--write`` replaces the text between the ``<!-- rules:begin -->`` and
``<!-- rules:end -->`` markers of docs/rules.md.

Every table is read from srctrans itself (``REGISTRY``, ``METHODS``,
``ATTRIBUTES`` and the operator map), so the page cannot list a rule that does
not exist. The rule columns are the rules' ``return`` expressions, unparsed:
the VJP's, and the JVP's ("linear" for a primal declared linear).
"""

import ast
import builtins
import math
import sys
from pathlib import Path

# Document this checkout, even when another srctrans is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gast  # noqa: E402
import numpy as np  # noqa: E402

from srctrans import runtime
import srctrans
from srctrans.rules import ATTRIBUTES, METHODS, REGISTRY, operators
from srctrans.rules.registry import JvpTemplate, Template
import scipy.linalg  # noqa: E402,F401  (the table lists SciPy's rules too)
import scipy.signal  # noqa: E402,F401
import scipy.spatial.distance  # noqa: E402,F401
import scipy.special  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401
import srctrans.rules.scipy_linalg  # noqa: E402,F401
import srctrans.rules.scipy_signal  # noqa: E402,F401
import srctrans.rules.scipy_distance  # noqa: E402,F401
import srctrans.rules.scipy_special  # noqa: E402,F401
import srctrans.rules.scipy_stats  # noqa: E402,F401

# The rule files, in the order of srctrans/rules/__init__.py, with a heading each.
GROUPS = [
    ("srctrans.rules.elementwise", "Elementwise (ufuncs and friends; broadcasting)"),
    ("srctrans.rules.reductions", "Reductions"),
    ("srctrans.rules.linalg", "Products and linear algebra"),
    ("srctrans.rules.shapes", "Shapes, joins and conversions"),
    ("srctrans.rules.complex_numbers", "Complex numbers' parts (docs/complex.md)"),
    ("srctrans.rules.fourier", "Fourier transforms (np.fft)"),
    ("srctrans.rules.builtins", "Python builtins"),
    ("srctrans.rules.scipy_special", "SciPy (scipy.special; loaded when a program imports it)"),
    ("srctrans.rules.scipy_linalg", "SciPy (scipy.linalg; loaded when a program imports it)"),
    ("srctrans.rules.scipy_signal", "SciPy (scipy.signal; loaded when a program imports it)"),
    ("srctrans.rules.scipy_distance",
     "SciPy (scipy.spatial.distance; loaded when a program imports it)"),
    ("srctrans.rules.scipy_stats", "SciPy (scipy.stats; loaded when a program imports it)"),
    ("srctrans.rules.runtime_helpers", "Runtime helpers (what derivatives of derivatives differentiate)"),
    ("srctrans.rules.product_helpers", "Runtime helpers of products (the same)"),
    ("srctrans.rules.scan_helpers",
     "Runtime helpers of scans, differences and uniform-grid gradients (the same)"),
    ("srctrans.rules.fold_helpers",
     "Runtime helpers of folds (a loop of np.logaddexp over an array's slices, as one call)"),
    ("srctrans.rules.softmax_log_helpers",
     "Runtime helpers of softmax logs (np.log of a softmax's probabilities, as one call: the "
     "log-softmax's derivative goes to the logits, none to the probabilities)"),
    ("srctrans.rules.softplus_helpers",
     "Runtime helpers of softplus terms (max(z, 0) + log1p(exp(-|z|)) in one sum: the "
     "softplus's derivative, a sigmoid, goes to z through the tail)"),
    ("srctrans.rules.cholesky_helpers",
     "Runtime helpers of Cholesky terms (solve(L.T, solve(L, b)) and log(diag(L)) of L = "
     "cholesky(a): the derivative goes to a, none to L)"),
    ("srctrans.rules.container_helpers",
     "Runtime helpers of subscripts, attributes and containers (the same, for parts of values)"),
    ("srctrans.rules.control_helpers",
     "Runtime helpers of gradient control (straight-through: the value of one argument, the "
     "derivative of the other)"),
]


def spelled(primal):
    """How a user writes ``primal``: ``np.abs`` / ``np.absolute``, ``abs``, ``x.copy()``."""
    if primal is runtime.identity:
        names = sorted(f"`x.{name}()`" for name, m in METHODS.items() if m.primal is primal)
        return ", ".join(names)
    name = getattr(primal, "__name__", "")
    if getattr(runtime, name, None) is primal:
        return f"`rt.{name}`"
    if getattr(builtins, name, None) is primal:
        return f"`{primal.__name__}`"
    for module, prefix in ((math, "math"), (np.random, "np.random"), (srctrans, "st")):
        if getattr(module, name, None) is primal:
            return f"`{prefix}.{name}`"
    for module, prefix in ((np.linalg, "np.linalg"), (np.fft, "np.fft"),
                           (scipy.special, "scipy.special"), (scipy.linalg, "scipy.linalg"),
                           (scipy.signal, "scipy.signal"),
                           (scipy.spatial.distance, "scipy.spatial.distance")):
        if getattr(module, name, None) is primal:
            return f"`{prefix}.{name}`"
    owner = getattr(primal, "__self__", None)
    distribution = next((n for n in dir(scipy.stats) if owner is not None
                         and getattr(scipy.stats, n) is owner), None)
    if distribution:
        return f"`scipy.stats.{distribution}.{name}`"         # a distribution's method
    if getattr(primal, "__module__", "").startswith("srctrans.runtime."):
        return f"`rt.{primal.__module__.rsplit('.', 1)[1]}.{name}`"   # a helper of a helper
    names = sorted({name for name in dir(np) if not name.startswith("_")
                    and getattr(np, name) is primal}, key=lambda n: (n != primal.__name__, n))
    return ", ".join(f"`np.{name}`" for name in names) or f"`{primal!r}`"


def rule_text(rule):
    template = Template(rule.vjp)
    returned = ast.unparse(gast.gast_to_ast(template.returned))
    return f"`{template.signature}`", f"`{returned}`"


def tangent_text(rule):
    """The JVP column: "linear", the template's ``return`` expression, or "none"."""
    if rule.linear:
        return "linear"
    if rule.jvp is None:
        return "none"
    return f"`{ast.unparse(gast.gast_to_ast(JvpTemplate(rule.jvp).returned))}`"


def cell(text):
    return text.replace("|", "\\|")


def rule_tables():
    rules = list(REGISTRY.rules())        # no public iterator yet
    lines = []
    for module, heading in GROUPS:
        group = [r for r in rules if r.vjp.__module__ == module]
        if not group:
            continue
        lines += [f"### {heading}", "",
                  "| function | arguments | cotangents returned | tangent (JVP) |",
                  "|---|---|---|---|"]
        by_rule = {}                               # one row per pair of rule functions
        for rule in group:
            by_rule.setdefault((rule.vjp, rule.jvp, rule.linear), []).append(rule)
        for sharing in by_rule.values():
            names = ", ".join(dict.fromkeys(spelled(r.primal) for r in sharing))
            params, returned = rule_text(sharing[0])
            tangent = tangent_text(sharing[0])
            lines.append(f"| {names} | {params} | {cell(returned)} | {cell(tangent)} |")
        lines.append("")
    unknown = [r for r in rules if r.vjp.__module__ not in dict(GROUPS)]
    if unknown:
        lines += ["### Other", ""] + sorted(f"- {spelled(r.primal)}" for r in unknown) + [""]
    return lines


def operator_table():
    lines = ["### Operators", "", "| operator | differentiated as |", "|---|---|"]
    symbols = {gast.Add: "a + b", gast.Sub: "a - b", gast.Mult: "a * b", gast.Div: "a / b",
               gast.Pow: "a ** b", gast.MatMult: "a @ b", gast.FloorDiv: "a // b",
               gast.Mod: "a % b", gast.USub: "-a", gast.UAdd: "+a", gast.Not: "not a",
               gast.Invert: "~a", gast.BitAnd: "a & b", gast.BitOr: "a | b",
               gast.BitXor: "a ^ b", gast.LShift: "a << b", gast.RShift: "a >> b"}
    for op, primal in operators._PRIMALS.items():
        if REGISTRY.lookup(primal) is not None:
            status = spelled(primal)
        elif REGISTRY.is_nondifferentiable(primal):
            status = f"{spelled(primal)} (constant: no derivative)"
        else:
            status = f"{spelled(primal)} (no rule yet)"
        written = symbols.get(op, op.__name__)        # a new operator still gets a row
        lines.append(f"| `{cell(written)}` | {status} |")
    return lines + [""]


def method_tables():
    lines = ["### Array methods", "", "| method | differentiated as |", "|---|---|"]
    for name, method in METHODS.items():
        if method.primal is runtime.identity:
            target = "the identity (the cotangent passes through)"
        elif REGISTRY.is_nondifferentiable(method.primal):
            target = f"{spelled(method.primal)} (constant: no derivative)"
        else:
            target = spelled(method.primal)
        packed = " (shape or axes as one tuple or as several integers)" if method.pack else ""
        lines.append(f"| `x.{name}()` | {target}{packed} |")
    lines += ["", "### Array attributes", "", "| attribute | differentiated as |", "|---|---|"]
    for name, primal in ATTRIBUTES.items():
        target = "constant" if primal is None else spelled(primal)
        lines.append(f"| `x.{name}` | {target} |")
    return lines + [""]


def constant_list():
    # sorted: the registry's order depends on which rule module a process imported first
    names = sorted(set(spelled(p) for p in REGISTRY._nondifferentiable.values()), key=_by_name)
    owners = ", ".join(f"`np.random.{t.__name__}`" for t in REGISTRY._constant_owners)
    return ["### Constant (non-differentiable) functions", "",
            ", ".join(names), "",
            f"and every method of an instance of {owners} (so `np.random.normal(...)` and "
            f"`rng.normal(...)` of a generator `rng` read from the module's globals), and "
            f"`x.astype(dtype)` to an integer or boolean dtype written in the call. "
            f"`st.nondifferentiable(fn)` adds to the list; see "
            f"[controlling.md](controlling.md).", ""]


def _by_name(spelling):
    """A spelled function's place in a list: NumPy's, then math's, SciPy's, the builtins'
    and the runtime's, each alphabetical."""
    name = spelling.strip("`")
    prefixes = ("np.", "math.", "scipy.", "rt.")
    group = next((i for i, p in enumerate(prefixes) if name.startswith(p)), len(prefixes) - 1.5)
    return (group, name)


BEGIN, END = "<!-- rules:begin -->", "<!-- rules:end -->"


def coverage():
    """One sentence: how many functions of NumPy, math and SciPy have rules in both modes."""
    helpers = {module for module, _ in GROUPS if module.endswith("_helpers")}   # the runtime's
    both = [r for r in REGISTRY.rules() if r.vjp is not None and r.has_jvp
            and r.vjp.__module__ in dict(GROUPS) and r.vjp.__module__ not in helpers]
    return [f"{len(both)} functions of NumPy, `math`, SciPy and Python's builtins have a VJP and "
            "a JVP rule (the operators, array methods and runtime helpers below come on top).",
            ""]


def equivalents_list():
    """The functions differentiated as a plain NumPy equivalent srctrans reads."""
    found = sorted(REGISTRY.computed_equivalents(), key=lambda pair: _by_name(spelled(pair[0])))
    if not found:
        return []
    return (["### Differentiated through an equivalent", "",
             "These library functions have no rule: srctrans reads the source of an equivalent "
             "in the runtime (the same values, in plain NumPy or with functions that have "
             "rules), in both modes and to any order.", ""]
            + [f"- {spelled(primal)}: `{equivalent.__module__.replace('srctrans.', '')}."
               f"{equivalent.__name__}`" for primal, equivalent in found] + [""])


def tables():
    lines = [f"<!-- generated by docs/rules_table.py with NumPy {np.__version__} -->", ""]
    lines += (coverage() + rule_tables() + equivalents_list() + operator_table() + method_tables()
              + constant_list())
    return "\n".join(lines).rstrip() + "\n"


def main(argv):
    text = tables()
    if argv != ["--write"]:
        sys.stdout.write(text)
        return
    page = Path(__file__).with_name("rules.md")
    old = page.read_text()
    if BEGIN not in old or END not in old:
        sys.exit(f"{page}: the markers {BEGIN} and {END} are missing")
    head, _, rest = old.partition(BEGIN + "\n")
    _, _, tail = rest.partition(END)
    page.write_text(head + BEGIN + "\n" + text + END + tail)


if __name__ == "__main__":
    main(sys.argv[1:])

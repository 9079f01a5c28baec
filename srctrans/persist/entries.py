"""A build as an entry of the persistent cache, and an entry back as a build.

Requires: a build the in-memory cache made (callees linked), or the function
and options the cache is asked for.
Guarantees: :func:`save` keeps a build on disk when everything it depends on
has a fingerprint (:mod:`.fingerprint`); :func:`load` returns a build only when
the entry's name (a digest of the function's source and code, the options,
srctrans's files, Python's and NumPy's versions and the users' rules) matches
and every name the build resolved still denotes an object with the same
fingerprint, and the user functions it calls load or build for the same
options. Anything else (no entry, a stale, corrupt or foreign one) gives None,
and the caller builds afresh: an entry is never trusted beyond its checks.

An entry is JSON: the generated module's text and its readable source, the
closure (srctrans's runtime, NumPy, called derivatives, user rules) as
references, the assumptions as fingerprints, and the build's facts.
"""

import json
import sys

import numpy

from srctrans.builds import Build, ForwardBuild
from srctrans.emit.compile import compile_text, is_generated
from srctrans.persist import directory, fingerprint
from srctrans.persist.fingerprint import (
    digest, locate, of_function, of_installation, of_object, of_user_rules)
from srctrans.parse.resolve import MISSING, current_value
from srctrans.rules import REGISTRY

FORMAT = 5
# what specialising a build on a call's shapes needs (shape_facts.ShapeFacts), in both modes
_SHAPE_FACTS = ("follows_inputs", "shape_obstacle", "data_names", "float_values_matter",
                "indexes_by_arguments", "fed_callees", "keyed_tests", "value_floats",
                "has_loops", "path_dependent", "path_conditions", "branch_tests", "guessed_paths",
                "rebound_in_blocks")
_FORWARD_FACTS = ("backward_code", "notes_effects") + _SHAPE_FACTS
_REVERSE_FACTS = ("residuals", "seed", "spread_seed", "callee_outputs", "tape_index",
                  "notes_effects") + _SHAPE_FACTS
_rules = [None, None]          # [REGISTRY.version, of_user_rules] of the last computation


def entry_name(fn, options):
    """The file name of ``fn``'s entry for ``options``, or None when it cannot have one."""
    if is_generated(fn):
        return None
    described = of_function(fn)
    rules = _user_rules()
    if described is None or rules is None:
        return None
    return digest([FORMAT, of_installation(), fn.__module__, described, options, rules]) \
        + directory.SUFFIX


def _user_rules():
    if _rules[0] != REGISTRY.version:
        _rules[:] = [REGISTRY.version, of_user_rules(REGISTRY)]
    return _rules[1]


def save(fn, options, build):
    """Keep ``build`` (of ``fn`` for ``options``) on disk if it can be; True when it was."""
    place = directory.location()
    if place is None:
        return False
    name = entry_name(fn, options)
    entry = _entry(fn, build) if name is not None else None
    if entry is None:
        return False
    try:
        text = json.dumps(entry)
    except (TypeError, ValueError):          # a fact JSON cannot hold: kept in memory only
        return False
    return directory.write(place, name, text)


def _entry(fn, build):
    if build.sites or build.methods:     # what a call through a value meets, the methods of
        return None                      # classes it calls: known to this process only
    closure = []
    for name, value in build.compiled.closure.items():
        spec = _closure_spec(value, build.callees)
        if spec is None:
            return None
        closure.append([name, spec])
    assumptions = []
    for name, value in build.assumptions.items():
        described = of_object(value)
        if described is None:
            return None
        assumptions.append([name, described])
    rules = []
    for primal in build.consulted:
        described = _ITSELF if primal is fn else of_object(primal)   # fn: found by its source
        state = _rule_state(primal)
        if described is None or described[0] not in _LOCATABLE or state is None:
            return None
        rules.append([described, state])
    residual_of = {id(found): name for name, found in getattr(build, "callee_residuals", {}).items()}
    callees = []
    for callee, found in build.callees:
        described = of_object(callee)
        if described is None or described[0] != "function":
            return None
        callees.append([described, found.build.options, residual_of.get(id(found))])
    facts = {"wrt": list(build.wrt)}
    if isinstance(build, ForwardBuild):
        facts["tangents"] = build.tangents
    facts.update((fact, getattr(build, fact)) for fact in
                 (_FORWARD_FACTS if isinstance(build, ForwardBuild) else _REVERSE_FACTS))
    compiled = build.compiled
    return {"format": FORMAT, "kind": "forward" if isinstance(build, ForwardBuild) else "reverse",
            "label": compiled.label, "text": compiled.text, "source": compiled.source,
            "closure": closure, "assumptions": assumptions, "rules": rules, "callees": callees,
            "facts": facts}


def _closure_spec(value, callees):
    for index, (_, found) in enumerate(callees):
        for part in ("fwd", "bwd", "grad", "spread_grad"):
            if getattr(found, part, None) is value:
                return ["callee", index, part]
    described = of_object(value)
    if described is None or described[0] not in _LOCATABLE:
        return None
    return ["object", described]


_LOCATABLE = ("module", "ufunc", "library", "function", "class", "itself")   # found again
_ITSELF = ["itself"]           # the function being built, among the callables a build consulted


def _rule_state(primal):
    """What the registry holds for ``primal`` now, as fingerprints; None if one has none."""
    rule = REGISTRY.lookup(primal)
    if rule is None:
        return ["no rule"]
    parts = [of_object(part) for part in
             (rule.vjp, rule.jvp, rule.custom_vjp, rule.custom_jvp)]
    if None in parts:
        return None
    return [*parts, bool(rule.linear), bool(rule.elementwise)]


def load(fn, options, request):
    """The build of ``fn`` for ``options`` from its entry, or None (see the module docstring).

    ``request(callee, options)`` gives the cache's instance of a called user
    function (loaded or built). The build's ``callees`` and
    ``callee_residuals`` are set; the cache derives the rest from them.
    """
    place = directory.location()
    if place is None:
        return None
    name = entry_name(fn, options)
    text = directory.read(place, name) if name is not None else None
    if text is None:
        return None
    try:
        entry = json.loads(text)
        if entry.get("format") != FORMAT:
            return None
        return _build(fn, entry, request)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, SyntaxError):
        return None                       # a corrupt entry: built afresh (and replaced)


def _build(fn, entry, request):
    assumptions = {}
    for name, described in entry["assumptions"]:
        value = current_value(fn, name)
        if value is MISSING or of_object(value) != described:
            return None
        assumptions[name] = value
    consulted = []
    # Before the registry loads, no user has registered a rule: the entry's name, which pins
    # srctrans's files and the users' rules, then pins every rule state the entry records.
    pinned = not REGISTRY.loaded
    for described, state in entry["rules"]:
        primal = fn if described == _ITSELF else _referenced(described)
        if primal is None or not pinned and _rule_state(primal) != state:
            return None
        consulted.append(primal)
    callees, residuals = [], {}
    for described, options, residual in entry["callees"]:
        callee = locate(described[1], described[2])
        if callee is None or of_object(callee) != described:
            return None
        found = request(callee, _tupled(options))
        callees.append((callee, found))
        if residual is not None:
            residuals[residual] = found
    closure = {}
    for name, (kind, *spec) in entry["closure"]:
        if kind == "callee":
            value = getattr(callees[spec[0]][1], spec[1])
        else:
            value = _referenced(spec[0])
        if value is None:
            return None
        closure[name] = value
    compiled = compile_text(entry["text"], closure, entry["source"], fn, entry["label"])
    facts = entry["facts"]
    if entry["kind"] == "forward":
        build = ForwardBuild(compiled, tuple(facts["wrt"]), dict(facts["tangents"]), assumptions)
    else:
        build = Build(compiled, tuple(facts["wrt"]), assumptions)
        build.callee_residuals = residuals
    for fact in _FORWARD_FACTS if entry["kind"] == "forward" else _REVERSE_FACTS:
        value = facts[fact]
        setattr(build, fact, _tupled(value))
    build.callees = tuple(callees)
    build.consulted = consulted
    return build


def _referenced(described):
    """The live object a closure reference describes, or None when it is gone or changed."""
    kind = described[0]
    if kind == "module":
        value = sys.modules.get(described[1])
    elif kind == "ufunc":
        value = getattr(numpy, described[1], None)
    else:
        value = locate(described[1], described[2])
    return value if value is not None and of_object(value) == described else None


def _tupled(value):
    """JSON's lists back as the tuples the options were made of."""
    return tuple(_tupled(item) for item in value) if isinstance(value, list) else value


def forget():
    """Forget what this process computed about functions' sources (``st.clear_cache``)."""
    fingerprint.forget()


def clear():
    """Delete every entry of the persistent cache; the number deleted."""
    place = directory.location()
    return directory.clear(place) if place is not None else 0

"""When a built derivative still holds, and what its callees decide of it.

Requires: a :class:`~srctrans.builds.Build` whose ``callees`` are ``(function, instance)``
pairs of what it differentiates through, each instance an :class:`Assumed`.
Guarantees: :class:`Assumed` records what a build fixed for one function object (the
objects its called names denote, its defaults, the rules' and call sites' versions) and
:meth:`Assumed.current` checks them here and in every callee, at any depth
(:func:`callees_current`, a loop over the call graph); :func:`link_callees` sets what the
callees decide of a build (its call depth, whether it may be specialised), and
:func:`why_unspecialisable` says in a phrase why it may not.
"""

import builtins

from srctrans.builds import callee_name
from srctrans.parse.resolve import current_value
from srctrans.rules import REGISTRY
from srctrans.runtime import objects

# Specialised code is measured and keyed call by call down the chain of user functions
# a build differentiates through; a longer chain keeps its generic code.
MAX_SPECIALISED_DEPTH = 32

_MISSING = object()


class Assumed:
    """What the build behind an instance fixed for one function object, and whether it holds.

    The generated functions read the user's globals and closure cells live. What the build
    fixed is which objects the called names denote (a called helper, the ``np`` module) and
    the defaults it copied; :meth:`current` checks those in a few dictionary look-ups, here
    and in every called user function, so a rebound helper (at any depth), new
    ``__defaults__`` or a rule registered since (``st.register_vjp``) get a fresh instance.
    """

    __slots__ = ("_defaults", "_kwdefaults", "_globals", "_cells", "_chains", "_rules", "_sites")

    def _assume(self, fn, build):
        """Record what ``build`` fixed of ``fn`` (``self.build`` is ``build``)."""
        self._defaults, self._kwdefaults = fn.__defaults__, fn.__kwdefaults__
        self._rules = REGISTRY.version          # a rule registered later needs a new build
        self._sites = objects.VERSION[0]        # a callee a call through a value met since too
        closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        assumed = [(name, value) for name, value in build.assumptions.items() if "." not in name]
        self._cells = [(closure[name], value) for name, value in assumed if name in closure]
        self._globals = [(name, value) for name, value in assumed if name not in closure]
        self._chains = [(name, value) for name, value in build.assumptions.items() if "." in name]

    def current(self, fn):
        """True while ``fn``'s defaults and the objects its called names denote are unchanged,
        here and in every user function it differentiates through."""
        return self.current_here(fn) and (not self.build.callees or callees_current(self.build))

    def current_here(self, fn):
        """`current` but for the callees."""
        if fn.__defaults__ is not self._defaults or fn.__kwdefaults__ is not self._kwdefaults:
            return False
        if self._rules != REGISTRY.version:
            return False
        if self._sites != objects.VERSION[0]:
            if not objects.sites_covered(self.build.sites):
                return False
            self._sites = objects.VERSION[0]
        if self.build.methods and not objects.methods_unchanged(self.build.methods):
            return False                         # Net.act rebound
        namespace = fn.__globals__
        for name, value in self._globals:
            now = namespace.get(name, _MISSING)
            if now is _MISSING:
                now = getattr(builtins, name, _MISSING)
            if now is not value:
                return False
        for cell, value in self._cells:
            try:
                if cell.cell_contents is not value:
                    return False
            except ValueError:                   # the enclosing scope deleted it
                return False
        # helpers.smooth: rebound, or its module reloaded
        return all(current_value(fn, name) is value for name, value in self._chains)

    def assumed_globals(self):
        """(name, object) of each global or builtin name the build resolved, as `current` checks."""
        return list(self._globals)

    def assumed_chains(self):
        """(dotted chain, function) of each attribute chain ending at a user's function the
        build resolved (``"helpers.smooth"``), as `current` checks."""
        return list(self._chains)

    def assumed_cells(self):
        """(cell, object) of each closure variable the build resolved, as `current` checks."""
        return list(self._cells)


def callees_current(build):
    """True while every user function the build differentiates through is unchanged too
    (at any depth: a loop over the call graph, not a recursion as deep as its chains)."""
    pending, seen = list(build.callees), set()
    while pending:
        callee, found = pending.pop()
        if id(found) not in seen:
            seen.add(id(found))
            if not found.current_here(callee):
                return False
            pending.extend(found.build.callees)
    return True


def why_unspecialisable(build):
    """Why ``build`` cannot be specialised on a call's shapes (``build.specialisable`` false)."""
    if build.shape_obstacle is not None:
        return f"a shape in it depends on values ({build.shape_obstacle})"
    if not build.follows_inputs:
        return "it was built without the optimisation passes"
    if build.notes_effects:
        return ("it calls a function of yours that may change what it is passed (specialising "
                "runs a call once more, to measure it)")
    if build.call_depth > MAX_SPECIALISED_DEPTH:
        return (f"it calls a chain of {build.call_depth - 1} functions of yours (code is "
                f"specialised down chains of at most {MAX_SPECIALISED_DEPTH})")
    for callee, found in build.callees:
        name = getattr(callee, "__qualname__", "a function")
        if _unfed(build, callee, found.build):
            return (f"it calls {name}, which indexes by values read from its arguments, "
                    "with values computed here (specialise on them by passing them in)")
        if not found.build.specialisable:
            return f"it calls {name}, which is not specialised: {why_unspecialisable(found.build)}"
    return "it cannot be"


def link_callees(build):
    """Set what a build's callees decide: its call depth, whether it may be specialised."""
    callees = build.callees
    build.call_depth = 1 + max((found.build.call_depth for _, found in callees), default=0)
    build.specialisable = build.follows_inputs and build.call_depth <= MAX_SPECIALISED_DEPTH \
        and not build.notes_effects \
        and all(found.build.specialisable and not _unfed(build, callee, found.build)
                for callee, found in callees)
    if build.specialisable and any(found.build.indexes_by_arguments for _, found in callees):
        build.indexes_by_arguments = True      # its callees' indices are read from its arguments


def _unfed(build, callee, callee_build):
    """Whether ``callee`` indexes by values read from its arguments, and ``build`` passes it
    values its own shape key does not fix (``analyse.indices``)."""
    return callee_build.indexes_by_arguments and callee_name(callee) not in build.fed_callees

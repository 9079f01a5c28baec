"""What a build records for the cache to specialise it on a call's shapes.

Requires: a compilation unit (:class:`srctrans.front_end.Unit`) after activity analysis,
before it is differentiated.
Guarantees: :class:`ShapeFacts` reads off the function whether its shapes follow its
inputs (or what stops them), which names' shapes depend on the path a call takes or on
values (a mask's count), the
tests the shape key decides, and whether a float's value may decide a shape, and
:meth:`ShapeFacts.record` writes them on the :class:`~srctrans.builds.Build`;
:func:`nonlocal_data` names the non-local values it reads (their shapes matter too).
"""

import gast
import numpy

from srctrans import annotations as anno
from srctrans.analyse.indices import Indexing
from srctrans.analyse.branch_tests import branch_tests, rebound_in_blocks
from srctrans.analyse.keyed_tests import keyed_tests
from srctrans.annotations import Anno
from srctrans.nodes import parameter_names
from srctrans.analyse.fixed_shapes import (path_dependent_names, shape_obstacle,
                                           value_dependent_names, value_dependent_roots)
from srctrans.treewalk import walk, walk_names


class ShapeFacts:
    """What the cache needs to specialise a build on the shapes of a call (see
    ``instances.Instance.for_call``), for a build of ``unit`` that may be specialised
    (``specialisable``: optimised, and not specialised already).

    Read off the function before it is differentiated: inlining then shares
    expressions between statements.
    """

    def __init__(self, unit, specialisable):
        self.float_values_matter = _rounds_numbers(unit.function)
        self.has_loops = any(isinstance(n, (gast.For, gast.While)) for n in walk(unit.function))
        indexing = Indexing(unit.function) if specialisable else None
        self.shape_obstacle = shape_obstacle(unit.function, indexing) if specialisable else None
        self.follows_inputs = specialisable and self.shape_obstacle is None
        self.value_dependent = value_dependent_roots(unit.function, indexing) \
            if self.follows_inputs else set()
        self.indexes_by_arguments = self.follows_inputs and indexing.arguments_read
        self.fed_callees = indexing.fed_callees() if self.follows_inputs else ()
        self.parameters = parameter_names(unit.function)
        self.selected = unit.wrt
        vararg = unit.function.args.vararg
        self.vararg = vararg.id if vararg is not None else None
        self.keyed_tests = ()
        self.value_floats = ()
        self.path_dependent, self.path_conditions = set(), {}
        self.branch_tests, self.guessed = (), (set(), {})
        self.rebound_in_blocks = False

    def find_paths(self, statements):
        """The names of ``statements`` (those the measuring call runs) whose shape depends
        on the path a call takes (:func:`path_dependent_names`)."""
        if self.follows_inputs:
            keyed, roots = keyed_tests(statements, self.parameters, self.vararg, self.selected)
            # a test of values is decided by the key only when a call's values are numbers
            # (not 0-d arrays): its branches' shapes stay path dependent
            by_shape = {name for name, operands in keyed.items() if not operands}
            self.path_dependent, self.path_conditions = path_dependent_names(statements, by_shape)
            # (a mask's count decides what it picks: those shapes are left out as well)
            decided = value_dependent_names(statements, self.value_dependent)
            self.path_dependent |= decided
            self.rebound_in_blocks = rebound_in_blocks(statements, self.parameters)
            self.keyed_tests = tuple(sorted(keyed.items()))
            self.value_floats = tuple(sorted(roots))
            # specialised code that takes every if as the measuring call did is straight-line
            self.branch_tests = branch_tests(statements)
            tests = {name for name, _ in self.branch_tests}
            if tests <= by_shape:          # no if but those the key decides: the same names
                self.guessed = (set(self.path_dependent), dict(self.path_conditions))
            else:
                self.guessed = path_dependent_names(statements, by_shape | tests)
                self.guessed[0].update(decided)

    def same_shape(self, name, like):
        """``name`` has the shape of ``like`` (the output's cotangent, the output's)."""
        for names, conditions in ((self.path_dependent, self.path_conditions), self.guessed):
            if like in names:
                names.add(name)
            if like in conditions:
                conditions[name] = conditions[like]

    def record(self, build, data_names):
        build.follows_inputs = self.follows_inputs
        build.shape_obstacle = self.shape_obstacle
        build.data_names = data_names
        build.float_values_matter = self.float_values_matter
        build.indexes_by_arguments = self.indexes_by_arguments
        build.fed_callees = self.fed_callees
        build.keyed_tests = self.keyed_tests
        build.value_floats = self.value_floats
        build.has_loops = self.has_loops
        build.path_dependent = tuple(sorted(self.path_dependent))
        build.path_conditions = _conditions(self.path_conditions)
        build.branch_tests = self.branch_tests
        build.rebound_in_blocks = self.rebound_in_blocks
        names, conditions = self.guessed
        build.guessed_paths = (tuple(sorted(names)), _conditions(conditions))


# Calls that turn numbers into integers: after them a float's value may decide a shape.
_ROUNDING = (int, round, numpy.floor, numpy.ceil, numpy.round, numpy.rint, numpy.trunc, numpy.fix)


def _rounds_numbers(function):
    """True when ``function`` turns numbers into integers (``int(s)``, ``np.floor``, ``.astype``)."""
    for node in walk(function):
        if isinstance(node, gast.Call):
            callee = anno.get(node, Anno.CALLEE)
            if any(callee is rounding for rounding in _ROUNDING):
                return True
            if callee is None and isinstance(node.func, gast.Attribute) and node.func.attr == "astype":
                return True
    return False


def nonlocal_data(function, resolver):
    """Non-local names the function reads as values (not as the functions it calls)."""
    names = {n.id for n in walk_names(function)
             if isinstance(n.ctx, gast.Load) and n.id not in resolver.local_names}
    called = set()
    for node in walk(function):
        if isinstance(node, gast.Call):
            root = node.func
            while isinstance(root, gast.Attribute):
                root = root.value
            if isinstance(root, gast.Name):
                called.add(root.id)
    return tuple(sorted(names - called))


def _conditions(conditional):
    """``path_dependent_names``'s conditional names as sorted ``(name, counters)`` pairs."""
    return tuple((name, tuple(sorted(counters))) for name, counters in sorted(conditional.items()))

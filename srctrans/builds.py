"""What a build is: the compiled derivative of one function and what it assumed.

Requires: nothing but :mod:`srctrans.emit.compile`'s :class:`Compiled`.
Guarantees: :class:`Build` and :class:`ForwardBuild` hold the compiled code
and the facts the cache needs to reuse it; the pipeline makes them, and the
persistent cache (``srctrans.persist``) makes them from an entry without
importing the pipeline. :func:`builds_reached` walks a build and its callees'.
"""


def builds_reached(*builds):
    """``builds`` and the builds of every function they call, callers before callees (breadth
    first), each once (``build.callees``: ``(function, instance)`` pairs)."""
    pending, seen = list(builds), set()
    while pending:
        build = pending.pop(0)
        if id(build) not in seen:
            seen.add(id(build))
            yield build
            pending.extend(callee.build for _, callee in build.callees)


def callee_name(fn):
    """``module:qualname`` of a called function, as ``Build.fed_callees`` names it."""
    return f"{getattr(fn, '__module__', None)}:{getattr(fn, '__qualname__', None)}"


class Build:
    """A compiled reverse-mode derivative of one function for one selection.

    Attributes:
      compiled: the :class:`~srctrans.emit.compile.Compiled` module.
      wrt: the selected parameter names.
      assumptions: the non-local names the build resolved, and their objects.
    """

    def __init__(self, compiled, wrt, assumptions):
        self.compiled = compiled
        self.wrt = wrt
        self.assumptions = assumptions
        self.callees = ()          # (function, Instance) of called user functions; set by the cache
        self.callee_residuals = {}   # residual name -> Instance of the callee that saved it
        self.callee_outputs = ()   # (residual name, name of that call's output) pairs
        self.residuals = ()        # names of the values the forward pass saves, in order
        self.seed = None           # name of the output's cotangent in the backward pass
        self.spread_seed = None    # NAME_spread_grad's number parameter, when it has one
        self.tape_index = None     # where the tape is among the residuals (the backward pass empties it)
        self.follows_inputs = False   # shapes fixed by input shapes: may be specialised
        self.shape_obstacle = None    # else what makes a shape depend on values, if found
        self.specialisable = False    # follows_inputs, and so do all callees; set by the cache
        self.call_depth = 1        # the longest chain of user functions it calls, itself included
        self.options = None        # the cache options it was built for; set by the cache
        self.data_names = ()       # non-local names read as values (their shapes matter)
        self.float_values_matter = False   # a float's value may decide a shape (int(s))
        self.indexes_by_arguments = False  # a subscript reads an index from the arguments
        self.fed_callees = ()      # module:qualname of callees passed only indices (analyse.indices)
        self.keyed_tests = ()      # (test, operands) the shape key decides (analyse.keyed_tests)
        self.value_floats = ()     # parameters whose floats the key holds by value (those tests')
        self.has_loops = True      # the function has a loop (names may change shape as it runs)
        self.path_dependent = ()   # names whose shape depends on the path a call takes
        self.path_conditions = ()  # (name, trip counters): its shape holds if each counted a step
        self.branch_tests = ()     # (if test, enclosing (test, side) pairs) (analyse.branch_tests)
        self.guessed_paths = ((), ())   # path_dependent, path_conditions when every if is taken
        self.rebound_in_blocks = False  # measure by watching lines (branch_tests.rebound_in_blocks)
        self.speculates = False    # it, or a callee, checks a branch it took as measured; set
                                   # by the cache
        self.notes_effects = False  # its code counts calls of user functions that may write
        self.may_write = False     # it, or a callee, does (no run again after one); set by the cache
        self.consulted = ()        # the callables whose rules the build looked up; set by the cache
        self.sites = {}            # call site through a value -> the kinds of callee compiled
        self.methods = ()          # (class, name, function) of the methods those calls run

    @property
    def source(self):
        return self.compiled.source


class ForwardBuild:
    """A compiled forward-mode derivative (JVP) of one function for one selection.

    Attributes:
      compiled: the :class:`~srctrans.emit.compile.Compiled` module (one function,
        ``NAME_jvp(*params, *, d<p>...)`` -> ``(output, d<output>)``).
      wrt: the selected parameter names.
      tangents: selected parameter name -> the keyword naming its tangent.
      assumptions: the non-local names the build resolved, and their objects.
    """

    def __init__(self, compiled, wrt, tangents, assumptions):
        self.compiled = compiled
        self.wrt = wrt
        self.tangents = tangents
        self.assumptions = assumptions
        self.callees = ()          # (function, instance) of called user functions; set by the cache
        self.options = None
        self.consulted = ()        # the callables whose rules the build looked up; set by the cache
        self.sites = {}            # call site through a value -> the kinds of callee compiled
        self.methods = ()          # (class, name, function) of the methods those calls run
        self.backward_code = False  # it left out a `with st.grad_of(h)` block (backward-pass code)
        # what specialising it on a call's shapes needs, as for a reverse build (see Build)
        self.follows_inputs = False
        self.shape_obstacle = None
        self.specialisable = False
        self.call_depth = 1
        self.data_names = ()
        self.float_values_matter = False
        self.indexes_by_arguments = False
        self.fed_callees = ()
        self.keyed_tests = ()
        self.value_floats = ()
        self.has_loops = True
        self.path_dependent = ()
        self.path_conditions = ()
        self.branch_tests = ()
        self.guessed_paths = ((), ())
        self.rebound_in_blocks = False
        self.speculates = False
        self.notes_effects = False
        self.may_write = False

    @property
    def source(self):
        return self.compiled.source

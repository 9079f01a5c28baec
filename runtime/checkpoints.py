"""Binomial checkpointing of a loop (Griewank's *revolve*): which states to keep.

A loop marked ``for t in st.checkpointed(range(T), snapshots):`` keeps at most
``snapshots`` copies of its state instead of every step's values. Its backward
pass reverses the steps ``T - 1, ..., 0``; before reversing step ``i`` it
restores the latest state kept at a step ``c <= i``, runs steps ``c, ..., i - 1``
again (keeping some of the states it passes, as the schedule says), then runs
step ``i`` once more, saving what its backward step reads, and reverses it.

The schedule is Griewank and Walther's optimal one: with ``s`` snapshots, the
``T`` steps are run again at most ``r`` times each, for the least ``r`` with
``C(s + r, s) >= T``, and the total number of steps run again is the least any
schedule with ``s`` snapshots achieves, ``r * T - C(s + r + 1, r - 1)``.

Generated code keeps the states in a list of its own, so that derivatives of
the derivative see them; a :class:`CheckpointPlan` only says which step's state
to keep and which to restore (integers and booleans, constants to every mode:
generated code asks through :func:`checkpoint_keeps` and :func:`checkpoint_start`,
which have no derivative, so a derivative of the derivative asks the same).
"""

import functools
import math
import operator

from .refusals import unsupported


def checkpointed(iterable, snapshots=None):
    """Mark a ``for`` loop for binomial checkpointing: ``for t in checkpointed(range(T), s):``.

    The backward pass of a differentiated function keeps at most ``snapshots``
    copies of the loop's state (the values its steps carry from one to the
    next) instead of every step's intermediates, and runs steps again from the
    nearest copy when it needs them, on Griewank's optimal schedule (*revolve*):
    with ``s`` copies, each step runs again at most ``r`` times, for the least
    ``r`` with ``C(s + r, s) >= T``. The gradient is the unmarked loop's.

    Args:
      iterable: what the loop runs over: a ``range``, or any sequence with a
        length (``enumerate``/``zip`` of sequences too), as in any loop.
      snapshots: how many states to keep at most, the first included; None
        (the default) keeps ``ceil(sqrt(T))``.

    Returns ``iterable`` itself: run as Python, the loop is a plain loop, and
    forward mode (which keeps nothing) runs it as one. Only the iterable of a
    ``for`` loop can be marked, and the loop may not ``break`` or ``return``:
    its number of steps must be known when it starts.

    >>> def rnn(W, xs, h):
    ...     for t in checkpointed(range(len(xs)), snapshots=8):
    ...         h = np.tanh(xs[t] @ W + h)
    ...     return np.sum(h)
    """
    if snapshots is not None:
        snapshot_count(0, snapshots)
    return iterable


def checkpoint_plan(steps, snapshots):
    """The plan of a checkpointed loop of ``steps`` steps keeping at most ``snapshots`` states
    (``None``: ``ceil(sqrt(steps))``, at least 1)."""
    return CheckpointPlan(steps, snapshot_count(steps, snapshots))


def checkpoint_keeps(plan, step):
    """Whether the loop keeps its state on entry to ``step`` (:meth:`CheckpointPlan.keep`)."""
    return plan.keep(step)


def checkpoint_start(plan, step):
    """The step whose kept state reverses ``step`` (:meth:`CheckpointPlan.restore`)."""
    return plan.restore(step)


def snapshot_count(steps, snapshots):
    """How many states a loop of ``steps`` steps keeps when asked for ``snapshots`` (``None``
    for the default); a count that is not a positive integer is an error."""
    if snapshots is None:
        return max(1, math.isqrt(max(steps - 1, 0)) + 1)
    try:
        if isinstance(snapshots, bool):
            raise TypeError
        snapshots = operator.index(snapshots)
    except TypeError:
        unsupported(f"st.checkpointed(..., snapshots={snapshots!r})",
                    "pass a positive integer, or None for about the square root of the steps")
    if snapshots < 1:
        unsupported(f"st.checkpointed(..., snapshots={snapshots})",
                    "keep at least one state: the loop's first")
    return snapshots


class CheckpointPlan:
    """Which states a checkpointed loop keeps, asked step by step.

    The forward pass asks :meth:`keep` at each step (before running it); the
    backward pass, for each step ``i`` from the last down, calls
    :meth:`restore` to learn the step whose kept state to start from, and asks
    :meth:`keep` after each step it runs again. At most ``snapshots`` states
    are kept at once: the kept steps form a stack, and a state above the step
    being reversed is never read again.
    """

    __slots__ = ("_keeps", "_target", "_kept", "snapshots")

    def __init__(self, steps, snapshots):
        self.snapshots = snapshots
        self._keeps = _schedule(steps, min(snapshots, max(steps, 1)))
        self._target = steps - 1
        self._kept = []

    def keep(self, step):
        """Whether to keep the state on entry to ``step`` (the step after a run, or the first)."""
        if step in self._keeps.get(self._target, ()):
            self._kept.append(step)
            return True
        return False

    def restore(self, step):
        """The step whose kept state to run again from, to reverse ``step``."""
        kept = self._kept
        while kept[-1] > step:
            kept.pop()
        self._target = step
        return kept[-1]


@functools.lru_cache(maxsize=64)
def _schedule(steps, snapshots):
    """``{i: steps whose states are kept while running towards step i}``, for the steps ``i``
    that keep any; the first state is kept on the way to the last step.

    Reversing steps ``[a, b)`` from the state at ``a`` with ``free`` more
    snapshots: run to a split ``m``, keep it, reverse ``[m, b)`` with one
    snapshot fewer, then ``[a, m)`` with all of them again. With no free
    snapshot, each step is reached by running again from ``a``. A stack of
    segments replaces the recursion.
    """
    keeps = {}
    if steps == 0:
        return keeps
    pending = [0]
    segments = [(0, steps, snapshots - 1)]
    while segments:
        a, b, free = segments.pop()
        if b - a == 1 or free == 0:
            if pending:
                keeps[b - 1] = frozenset(pending)
                pending = []
            continue
        m = a + _first_split(b - a, free + 1)
        pending.append(m)
        segments.append((a, m, free))           # reversed second
        segments.append((m, b, free - 1))       # reversed first
    return keeps


def _first_split(steps, snapshots):
    """How many steps an optimal schedule runs before keeping its next state, for ``steps``
    steps and ``snapshots`` states (the first included, at least two).

    With ``r`` the least repetition number (``beta(snapshots, r) >= steps``), a
    split is optimal when the steps after it fit ``snapshots - 1`` states and
    ``r`` repetitions and those before it ``snapshots`` states and ``r - 1``;
    the least such split is taken.
    """
    r = repetitions(steps, snapshots)
    return max(1, steps - _beta(snapshots - 1, r), _beta(snapshots, r - 2))


def repetitions(steps, snapshots):
    """The least ``r`` with ``C(snapshots + r, snapshots) >= steps``: how many times an
    optimal schedule runs a step again, at most."""
    r = 0
    while _beta(snapshots, r) < steps:
        r += 1
    return r


def recomputed_steps(steps, snapshots):
    """How many steps an optimal schedule runs again in all (Griewank and Walther)."""
    if steps <= 1:
        return 0
    snapshots = min(snapshots, steps)
    r = repetitions(steps, snapshots)
    return r * steps - _beta(snapshots + 1, r - 1)


def _beta(snapshots, r):
    """``C(snapshots + r, snapshots)``: the most steps ``snapshots`` states reverse with ``r``
    repetitions (1 for a negative ``r``, the least split's floor)."""
    return math.comb(snapshots + r, snapshots) if r >= 0 else 1


def state_copy(value):
    """A copy of a kept state's value that the loop's steps change in place: a new list or
    dict (entries shared: the steps replace entries, not change them) or a new array."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value.copy() if hasattr(value, "copy") and hasattr(value, "shape") else value

"""Branches specialised code took as the measuring call took them, checked as it runs.

Specialised code (``instances.Instance.for_call``) is built for one shape key. A test the key
decides (an argument's class, a dict's keys, ``v is None``) takes the same branch on every
call with the key, so the specialised code keeps that branch alone. Any other ``if`` whose
test took the same value all through the measuring call (``np.all(np.isinf(df))`` of a
float attribute, ``len(axes) == 1`` of an axis computed in a helper) is kept as that branch
too, as a JIT compiler keeps the branch a guard checks: specialised code tests it with
:func:`expect_branch`, which raises :class:`MissedBranch` when a call takes the other one.
The API then runs the call again on the generic code (the forward pass runs once more for
that call, as on the call that specialised it), and later calls with that shape key get
code specialised on it that keeps its branches (``Instance.run_for_call``).
"""


class MissedBranch(Exception):
    """A call of specialised code took a branch the measuring call had not taken."""


def expect_branch(test, taken):
    """Nothing when ``bool(test)`` is ``taken`` (the branch the specialised code keeps);
    else raise :class:`MissedBranch`."""
    if bool(test) is not taken:
        raise MissedBranch(f"a test the specialised code took as {taken} was {not taken}: "
                           "this call runs the generic code")


def expect_divisor(s):
    """Nothing when the number ``s`` is neither 0 nor NaN (so ``0 / s`` is 0: the quotients
    by it need no guard); else raise :class:`MissedBranch`."""
    if not (s != 0 and s == s):
        raise MissedBranch(f"a number the specialised code divides by is {s}: "
                           "this call runs the generic code")


def expect_positive(s):
    """Nothing when every entry of the array ``s`` is above 0 (so ``0 / s`` is 0 throughout:
    the quotients by it need no guard; one reduction, which a NaN fails too); else raise
    :class:`MissedBranch`."""
    if not s.min() > 0:
        raise MissedBranch("an array the specialised code divides by has an entry that is "
                           "not above 0: this call runs the generic code")

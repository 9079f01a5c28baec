"""Shortcuts that generated code takes where the general path costs more per iteration.

``pop_many`` hands a reversed loop the values it would pop one by one from the
tape, so that the loop iterates over them (``for x in rt.pop_many(tape, trips)``)
instead of calling ``tape.pop()`` at each iteration.
"""


def pop_many(tape, count):
    """The values ``count`` successive ``tape.pop()`` would return, in that order, popped.

    >>> tape = [1, 2, 3, 4]
    >>> pop_many(tape, 3), tape
    ([4, 3, 2], [1])
    >>> pop_many(tape, 0), tape
    ([], [1])
    """
    start = len(tape) - count
    if start < 0:
        raise IndexError("pop from empty list")          # as the pops would
    values = tape[start:]
    del tape[start:]
    values.reverse()
    return values

"""A count of the calls of a user's function that may change what it is passed.

Generated code calls a function of the user's as it is when its value needs no derivative (a
helper that sets ``layer.act = np.sin``, or appends to a list it is given). Such a call may
change objects the caller holds. The API runs a call again when its code meets a kind of
callee through a value it was not compiled for (``objects.UnseenCallee``), and a run again
after such a change starts from changed objects: a wrong derivative. So generated code calls
:func:`note_effect` before each call of a user's function that may write what something
reads (``normalize.callees.writes_of``; the pass ``emit/effect_notes.py``), and the API
compares :func:`effects_noted` before a call's run with after it before running it again
(``reporting.rerun_refusal``). (Code that counts is not specialised, so no failed check of
specialised code runs such a call again.) The count is per thread, as a call runs in one
thread.
"""

import threading

_state = threading.local()


def note_effect():
    """Count one call, about to be made, that may change what the program holds."""
    _state.count = getattr(_state, "count", 0) + 1


def effects_noted():
    """How many calls :func:`note_effect` has counted in this thread."""
    return getattr(_state, "count", 0)

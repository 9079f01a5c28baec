"""Keys of the annotations passes attach to AST nodes.

An annotation lives in the node attribute ``__srctrans__`` (a dict); the keys
are members of :class:`Anno`, whose values say what they hold.
"""

import enum

_ATTRIBUTE = "__srctrans__"


class Anno(enum.Enum):
    ORIGIN = "the user's statement this node came from: an Origin (line and text)"
    CALLEE = "on a Call: the resolved live object being called"
    SAVES = "on a tape push, pop or placeholder: the name whose overwritten value it saves"
    TEMPLATE_NUMPY = ("on a Call a rule's template wrote as `np.f(...)`: NumPy's f (the "
                      "template's np is NumPy, whatever name generated code gives it)")
    NO_GRADIENT = ("on a statement: it came from a `with st.stop_recording():` block, so it "
                   "contributes no gradient and what it assigns is a constant")
    CONSTANT = ("on a Call: its result is a constant whatever its arguments (an integer cast "
                "such as `x.astype(int)`)")
    REVERSES = "on a backward loop: the forward loop (a gast.For or gast.While) it reverses"
    CHECKPOINTED = ("on a `for` loop marked `st.checkpointed(...)`: the name holding how many of "
                    "its states the backward pass may keep (None: the default)")
    CHANGES_ONLY = ("on a statement `L.append(v)` of a loop `optimise/row_loops.py` batched: "
                    "the name of the list it changes, which no other name holds (the "
                    "statement is dead with it)")
    NORM_QUOTIENT = ("on a Call `rt.ratio_or_zero(x, n)`: `n` holds the Euclidean norms of "
                     "`x`'s slices, so `x` is zeros wherever `n` is 0")
    COTANGENTS_OF = ("on an assignment unpacking a called user function's backward pass into "
                     "names: the primals (names or None) whose cotangents they are, each of "
                     "its primal's shape")

    # A member is its own only instance: hashed by identity, in C, rather than by Enum's
    # hash of its name in Python (the passes look annotations up millions of times a run).
    __hash__ = object.__hash__


def get(node, key, default=None):
    store = getattr(node, _ATTRIBUTE, None)
    return default if store is None else store.get(key, default)


def set_(node, key, value):
    store = getattr(node, _ATTRIBUTE, None)
    if store is None:
        store = {}
        setattr(node, _ATTRIBUTE, store)
    store[key] = value


def own_store(node):
    """Give ``node`` a dict of annotations of its own (a copy of the one it shares)."""
    store = node.__dict__.get(_ATTRIBUTE)
    if store:
        node.__dict__[_ATTRIBUTE] = dict(store)


def copy(source, target):
    """Give ``target`` all of ``source``'s annotations (shallow)."""
    store = getattr(source, _ATTRIBUTE, None)
    if store:
        setattr(target, _ATTRIBUTE, dict(store))
    return target


class Origin:
    """Where a generated statement came from: the user's line number and text."""

    __slots__ = ("lineno", "text")

    def __init__(self, lineno, text):
        self.lineno = lineno
        self.text = text

    def comment(self):
        return f"# line {self.lineno}: {self.text}"

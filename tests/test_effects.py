"""A call is not run again after it called a function of the user's that may change what it is
passed, or a global something reads (runtime/effects.py, emit/effect_notes.py,
normalize.callees.writes_of, reporting.rerun_refusal): such a run again would differentiate
another computation."""

import numpy as np
import pytest

import srctrans as st
from srctrans.normalize.callees import writes_of

XS = [np.array([0.3, -0.2]), np.array([0.5, 0.1]), np.array([0.2, 0.4])]
W = np.array([0.7, -1.1])


def _switch_to_sine(layer, step):
    if step == 1:
        layer.act = np.sin                 # an attribute of its own, set between two steps


def _calls_switch(layer, step):
    _switch_to_sine(layer, step)


def _reads(layer, step):
    return step * 2 + len(layer.__dict__)


class Switching:
    def act(self, z):
        return np.tanh(z)

    def run(self, w, xs):
        total = 0.0
        for i in range(len(xs)):
            total = total + np.sum(self.act(w * xs[i]))
            _switch_to_sine(self, i)
        return total


class Reading(Switching):
    def run(self, w, xs):
        total = 0.0
        for i in range(len(xs)):
            total = total + np.sum(self.act(w * xs[i]))
            _reads(self, i)
        return total


def _switching_gradient():
    """What Python computes: tanh at the first two steps, the sine at the third."""
    return sum(x * (1 - np.tanh(W * x) ** 2) for x in XS[:2]) + XS[2] * np.cos(W * XS[2])


def test_a_call_that_met_a_new_kind_after_a_helper_wrote_is_refused_not_run_again():
    """The third step meets an object holding its own ``act`` (set by the helper at the
    second): compiling it means running the call again, on an object whose ``act`` is the
    sine from the start. srctrans gave every step the sine's derivative; it stops now, naming
    the call site, and the derivative has the kind for the next call."""
    layer = Switching()
    gradient = st.grad(layer.run)
    with pytest.raises(st.UsageError, match="may change what it is passed") as raised:
        gradient(W, XS)
    assert raised.value.location.lineno == Switching.run.__code__.co_firstlineno + 3
    assert "call it again with the objects as they were" in str(raised.value)
    # from a fresh object: the next call meets the kind inside (what the attribute holds,
    # np.sin), refused alike; from then on every call has every kind
    with pytest.raises(st.UsageError, match="may change what it is passed"):
        st.grad(Switching().run)(W, XS)
    for _ in range(4):
        np.testing.assert_allclose(st.grad(Switching().run)(W, XS), _switching_gradient())


def test_a_new_kind_met_after_a_helper_that_only_reads_is_run_again():
    layer = Reading()
    want = sum(x * (1 - np.tanh(W * x) ** 2) for x in XS)
    np.testing.assert_allclose(st.grad(layer.run)(W, XS), want)
    layer.act = np.sin                 # a new kind at the site: noted, and the call run again
    np.testing.assert_allclose(st.grad(layer.run)(W, XS), sum(x * np.cos(W * x) for x in XS))


def _log_value(log, v):
    log.append(float(np.sum(v)))


def logged_clip(w, log, c):
    """A helper that writes (its value needs no derivative), then a branch on a value."""
    _log_value(log, w)
    if np.sum(w) > c:
        return np.sum(np.sin(w))
    return np.sum(w ** 2)


def test_code_that_calls_a_writing_helper_is_not_specialised_and_runs_once_a_call():
    """Specialising runs a call once more (to measure it), and specialised code's failed check
    (``rt.expect_branch``) runs it again: such a function runs its generic code, with no
    short path, and the helper runs once a call."""
    log = []
    gradient = st.grad(logged_clip)
    for k, c in enumerate((-5.0, -5.0, -5.0, 5.0, 5.0, -5.0, 5.0)):
        got = gradient(W, log, c)
        want = np.cos(W) if np.sum(W) > c else 2 * W
        np.testing.assert_allclose(got, want)
        assert len(log) == k + 1
    source = st.source(logged_clip, args=(W, [], -5.0))
    assert "rt.note_effect()" in source and "expect_branch" not in source
    assert "may change what it is passed" in source.split("def ")[0]      # the reason, on top


def _pure_helper(v):
    return np.sum(v) * 2.0


def _writes_global(v):
    global _LAST
    _LAST = v


_LAST = None
_SEEN = []
SCALE = {"factor": 1.0}


def _writes_own_array(v):
    out = np.zeros(3)
    out[0] = np.sum(v)
    return out


def _notes(v):                      # a log no other function of the module reads
    _SEEN.append(float(np.sum(v)))


def _rescales(v):                   # a global that scaled_by_global reads
    SCALE["factor"] = SCALE["factor"] * 2.0


@pytest.mark.parametrize("function, held, names", [
    (_switch_to_sine, True, ()), (_calls_switch, True, ()), (_log_value, True, ()),
    (_writes_global, False, ("_LAST",)), (_notes, False, ("_SEEN",)),
    (_rescales, False, ("SCALE",)), (_reads, False, ()), (_pure_helper, False, ()),
    (_writes_own_array, False, ()), (np.sum, False, ()), (len, False, ()),
    (Switching().act, False, ()),
])
def test_writes_of(function, held, names):
    assert writes_of(function) == (held, frozenset(names))


def _helper(v):                     # rebound below to one that writes
    return np.sum(v)


def _calls_helper(v):
    return _helper(v) * 2.0


def _deeper(v):
    return _calls_helper(v) + 1.0


def test_writes_of_sees_a_helper_rebound_since_it_answered(monkeypatch):
    """An answer remembered for a function's code holds while each call it followed still
    denotes the function it did, at any depth: a helper rebound to one that writes makes its
    callers write too."""
    assert writes_of(_deeper) == writes_of(_calls_helper) == (False, frozenset())
    monkeypatch.setitem(globals(), "_helper", _writes_global)
    assert writes_of(_calls_helper) == (False, frozenset({"_LAST"}))
    assert writes_of(_deeper) == (False, frozenset({"_LAST"}))
    monkeypatch.setitem(globals(), "_helper", _switch_to_sine)
    assert writes_of(_deeper) == (True, frozenset())


def noted_then_called(layer, w, xs):
    _notes(w)
    return np.sum(layer.act(w * xs[0]))


def scaled_by_global(layer, w, xs):
    _rescales(w)
    return np.sum(layer.act(w * xs[0])) * SCALE["factor"]


def test_a_helper_writing_a_log_nothing_reads_is_run_again_with_the_call():
    """A log no function reads changes no computation: the call runs again for a new kind
    (the log gets both runs' entries, as a traced function's side effects run again when it
    is traced again), and its code counts nothing."""
    assert "note_effect" not in st.source(noted_then_called, args=(Reading(), W, XS), wrt=1)
    gradient = st.grad(noted_then_called, wrt=1)
    np.testing.assert_allclose(gradient(Reading(), W, XS), XS[0] * (1 - np.tanh(W * XS[0]) ** 2))
    layer = Reading()
    layer.act = np.sin                 # kinds the site has not met: run again after the log
    np.testing.assert_allclose(gradient(layer, W, XS), XS[0] * np.cos(W * XS[0]))


def test_a_helper_writing_a_global_the_function_reads_is_counted():
    """The function reads the global the helper doubles: the first call, meeting the site's
    first kind after the helper ran, is refused; then the code counts the helper's calls."""
    with pytest.raises(st.UsageError, match="may change what it is passed"):
        st.grad(scaled_by_global, wrt=1)(Reading(), W, XS)
    factor = SCALE["factor"]
    got = st.grad(scaled_by_global, wrt=1)(Reading(), W, XS)
    np.testing.assert_allclose(got, XS[0] * (1 - np.tanh(W * XS[0]) ** 2) * factor * 2.0)
    assert "rt.note_effect()" in st.source(scaled_by_global, args=(Reading(), W, XS), wrt=1)


def test_the_generated_code_counts_the_calls_of_a_writing_helper_alone():
    source = st.source(Switching().run, args=(W, XS))
    lines = [line.strip() for line in source.splitlines()]
    position = lines.index("_switch_to_sine(self, i)")
    assert lines[position - 1] == "rt.note_effect()"
    assert lines.count("rt.note_effect()") == lines.count("_switch_to_sine(self, i)")
    assert "note_effect" not in st.source(Reading().run, args=(W, XS))


def _recursive(v, n):
    return v if n == 0 else _recursive(v * 0.5, n - 1)


def test_a_recursive_functions_answer_is_remembered_and_holds():
    from srctrans.normalize import callees
    first = writes_of(_recursive)
    memo = callees._WRITES[_recursive.__code__]
    assert writes_of(_recursive) == first and callees._WRITES[_recursive.__code__] is memo

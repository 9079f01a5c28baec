"""A dict of states kept by step becomes names (normalize/step_dicts.py): ``hs[t]`` a name per
step, ``hs[t - 1]`` the step before's, so the derivatives go through the loop's lists of
saved values, with no entry saved and restored and no dict of cotangents. A dict used any
other way stays a dict. Either way the derivatives are finite differences', in both modes and
to second order, and Python's own errors are kept."""

import ast
import inspect
import textwrap

import gast
import numpy as np
import pytest

import srctrans as st
from srctrans.naming import Namer, identifiers
from srctrans.normalize.desugar import desugar
from srctrans.normalize.step_dicts import replace_step_dicts

R = np.random.default_rng(71)


def char_rnn(Wxh, Whh, Why, inputs, targets, hprev):
    """As min-char-rnn writes it: one-hot inputs written into fresh entries, four dicts."""
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0.0
    for t in range(len(inputs)):
        xs[t] = np.zeros((Wxh.shape[1], 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(Wxh @ xs[t] + Whh @ hs[t - 1])
        ys[t] = Why @ hs[t]
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    return loss


def from_one(W, xs):
    """A range starting at 1, its step before written at 0, and the last step read after."""
    hs = {}
    hs[0] = np.sin(xs[0])
    for t in range(1, 4):
        hs[t] = np.tanh(W @ hs[t - 1] + xs[t]) * hs[t - 1]
    return np.sum(hs[3] ** 2)


def entries_of_the_step(W, xs):
    """Read only at the step that wrote them: no name for the step before."""
    ys = {}
    total = 0.0
    for t in range(len(xs)):
        ys[t] = W @ xs[t]
        total = total + np.sum(np.cos(ys[t]) * ys[t])
    return total


# the dict stays a dict: each breaks one of the conditions
def two_steps_back(W, xs):
    hs = {-2: xs[0] * 0.5, -1: xs[1] * 1.0}
    for t in range(len(xs)):
        hs[t] = np.tanh(W @ hs[t - 1]) + hs[t - 2]
    return np.sum(hs[len(xs) - 1])


def read_after_at_the_first_step(W, xs):
    hs = {}
    hs[-1] = xs[0] * 1.0
    for t in range(len(xs)):
        hs[t] = np.tanh(W @ hs[t - 1] + xs[t])
    return np.sum(hs[0] * hs[len(xs) - 1])


def its_length_read(W, xs):
    hs = {}
    hs[-1] = xs[0] * 1.0
    for t in range(len(xs)):
        hs[t] = np.tanh(W @ hs[t - 1]) / len(hs)
    return np.sum(hs[len(xs) - 1])


def written_in_a_branch(W, xs):
    hs = {}
    hs[-1] = xs[0] * 1.0
    for t in range(len(xs)):
        if t % 2 == 0:
            hs[t] = np.tanh(W @ hs[t - 1])
        else:
            hs[t] = np.sin(W @ hs[t - 1])
    return np.sum(hs[len(xs) - 1])


def rewritten_at_the_step(W, xs):
    hs = {}
    hs[-1] = xs[0] * 1.0
    for t in range(len(xs)):
        hs[t] = W @ hs[t - 1]
        hs[t] = np.tanh(hs[t])
    return np.sum(hs[len(xs) - 1])


def by_enumerate(W, xs):
    """The step is enumerate's index (desugared to ``t = _index`` at the body's top)."""
    hs = {}
    hs[-1] = xs[0] * 0.5
    total = 0.0
    for t, x in enumerate(xs):
        hs[t] = np.tanh(W @ hs[t - 1] + x)
        total = total + np.sum(hs[t] * hs[t - 1])
    return total


def step_rebound(W, xs):
    """The step's name is assigned again in the loop: the ``hs[t]`` after it is the first
    step's entry, not this step's."""
    hs = {}
    hs[-1] = xs[0] * 0.5
    total = 0.0
    for t, x in enumerate(xs):
        hs[t] = np.tanh(W @ hs[t - 1] + x)
        t = 0
        total = total + np.sum(hs[t] ** 2)
    return total


REWRITTEN = [char_rnn, from_one, entries_of_the_step, by_enumerate]
KEPT = [two_steps_back, read_after_at_the_first_step, its_length_read, written_in_a_branch,
        rewritten_at_the_step, step_rebound]


def args_of(f):
    if f is char_rnn:
        V, H = 5, 3
        return (R.standard_normal((H, V)) * 0.4, R.standard_normal((H, H)) * 0.4,
                R.standard_normal((V, H)) * 0.4, [0, 3, 1, 4], [3, 1, 4, 2],
                R.standard_normal((H, 1)) * 0.1)
    return R.standard_normal((3, 3)) * 0.5, [R.standard_normal(3) for _ in range(4)]


def rewritten(f):
    """``f``'s source after desugaring (loops over ranges) and the rewrite."""
    function = gast.parse(textwrap.dedent(inspect.getsource(f))).body[0]
    namer = Namer(identifiers(function))
    desugar(function, namer)
    replace_step_dicts(function, namer)
    return ast.unparse(gast.gast_to_ast(function))


def test_the_states_become_a_name_per_step_and_one_for_the_step_before():
    code = rewritten(char_rnn)
    assert "{}" not in code and "[t]" not in code.replace("inputs[t]", "").replace("targets[t]", "")
    assert "hs_prev = np.copy(hprev)" in code and code.rstrip().endswith("return loss")
    assert "hs_t = np.tanh(Wxh @ xs_t + Whh @ hs_prev)" in code
    assert "xs_t[inputs[t]] = 1" in code and "hs_prev = hs_t" in code
    assert "ys_prev" not in code                      # ys is read at its step only


def test_the_step_of_enumerate():
    code = rewritten(by_enumerate)
    assert "hs_t = np.tanh(W @ hs_prev + x)" in code and "hs_prev = xs[0] * 0.5" in code


def test_a_range_from_one_and_the_last_step_read_after_the_loop():
    code = rewritten(from_one)
    assert "hs_prev = np.sin(xs[0])" in code and "return np.sum(hs_prev ** 2)" in code


@pytest.mark.parametrize("f", KEPT, ids=[f.__name__ for f in KEPT])
def test_a_dict_used_any_other_way_stays_a_dict(f):
    assert "hs_t" not in rewritten(f) and "hs_prev" not in rewritten(f)


def test_the_fused_gradient_saves_no_entry_and_makes_no_dict_of_cotangents():
    args = args_of(char_rnn)
    fused = st.source(char_rnn, args=args, wrt=(0, 1, 2)).split("def char_rnn_grad(")[1]
    for helper in ("saved_entry", "restored_entry", "added_at_key", "entry_cotangent", "tape"):
        assert helper not in fused, (helper, fused)
    assert "rt.restored_at" not in fused           # the one-hot entries are made afresh each step


@pytest.mark.parametrize("f", REWRITTEN + KEPT, ids=[f.__name__ for f in REWRITTEN + KEPT])
def test_derivatives_match_finite_differences_in_both_modes_to_second_order(f):
    args = args_of(f)
    wrt = (0, 1, 2) if f is char_rnn else 0
    st.check_grads(f, args, order=2, wrt=wrt)
    gradient = st.grad(f, wrt=wrt)
    want = st.grad(f, wrt=wrt, optimize=False)(*args)
    for _ in range(3):                                    # generic, specialised, short path
        got = gradient(*args)
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_float32_states():
    W, xs = args_of(from_one)
    W, xs = W.astype(np.float32), [x.astype(np.float32) for x in xs]
    got = st.grad(from_one)(W, xs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, st.grad(from_one, optimize=False)(W, xs), rtol=1e-5)


def test_a_step_before_the_first_that_was_never_written_is_pythons_key_error():
    def missing_start(W, xs):
        hs = {}
        for t in range(len(xs)):
            hs[t] = np.tanh(W @ hs[t - 1])
        return np.sum(hs[len(xs) - 1])

    assert "hs_prev" not in rewritten(missing_start)
    with pytest.raises(KeyError):
        st.grad(missing_start)(*args_of(missing_start))

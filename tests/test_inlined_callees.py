"""Small helpers of the same module are inlined into their caller's derivative
(srctrans/normalize/callees.py): the derivative computes their values and cotangents in
the caller's own code, and a helper that does not qualify is built and called as before."""

import re
import sys

import numpy as np
import pytest

import srctrans as st
from srctrans.normalize import callees
from corpus import estimators
from programs import callees_elsewhere as elsewhere

R = np.random.default_rng(5)
SHIFT = 0.25


def _scaled(v, scale=2.0):
    """A docstring, which is not part of the inlined body."""
    w = v * scale
    w = np.tanh(w) + SHIFT
    return w


def calls_scaled(x, y):
    return np.sum(_scaled(x) * _scaled(y, 0.5))


class Layer:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)


def per_example(layer, X, Y):
    total = 0.0
    for x, y in zip(X, Y):
        err = layer(x) - y
        total = total + err @ err
    return total / len(X)


def _fills(x):                    # writes only into an array it makes: inlined
    out = np.zeros_like(x)
    out[0] = x[0] * 2.0
    out[1:] += x[1:] * x[1:]
    return out + x


def calls_fills(x):
    return np.sum(_fills(x) ** 2)


def _fills_copy(x):               # writes into an array a method made: not known to be
    out = (x * 1.0).copy()          # its own, so it is called
    out[0] = x[0] * 2.0
    return out + x


def calls_fills_copy(x):
    return np.sum(_fills_copy(x) ** 2)


def _scatters(x):                 # np.add.at writes into its first argument: called
    out = np.zeros(x.shape[0] + 1)
    np.add.at(out, np.array([0, 1, 1]), x[:3, 0])
    return out


def calls_scatters(x):
    return np.sum(_scatters(x) ** 2)


def _returns_early(x):
    if np.sum(x) > 0.0:
        return x * x
    return -x


def calls_returns_early(x):
    return np.sum(_returns_early(x))


@st.checkpoint
def _checkpointed(x):
    return np.sin(x) * x


def calls_checkpointed(x):
    return np.sum(_checkpointed(x))


def _binds_scale(x):              # binds `scale`, which its caller reads from the module
    scale = 3.0
    return x * scale


scale = 0.5


def reads_scale(x):
    return np.sum(_binds_scale(x) * scale)


def _star(x, *rest):
    scale = rest[1] if len(rest) > 1 else 1.0
    return x * rest[0] * scale + np.sin(rest[-1])


def calls_star(x, y):
    return np.sum(_star(x, y, 2.0)) + np.sum(_star(y, x))


def _keywords(x, **options):
    return x * options["scale"]


def calls_keywords(x):
    return np.sum(_keywords(x, scale=2.0))


def _numeric(f, args, index, eps=1e-6):
    x = args[index]
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        up, down = list(args), list(args)
        up[index], down[index] = x + e, x - e
        g[i] = (f(*up) - f(*down)) / (2 * eps)
    return g


def _line_of(marker):
    with open(__file__) as source:
        return next(number for number, text in enumerate(source, 1) if marker in text)


def _defines_fwd_of(text, helper):
    return re.search(rf"^def _*{helper}_fwd\(", text, re.M) is not None


def test_a_helper_of_the_module_is_the_callers_own_code():
    x, y = R.standard_normal(4), R.standard_normal(4)
    text = st.source(calls_scaled)
    assert not _defines_fwd_of(text, "scaled") and "np.tanh(" in text
    g = st.grad(calls_scaled, wrt=(0, 1))
    for _ in range(3):                        # generic, specialised, short path
        got = g(x, y)
        for index in (0, 1):
            np.testing.assert_allclose(got[index], _numeric(calls_scaled, (x, y), index),
                                       rtol=1e-6, atol=1e-8)
    specialised = st.source(calls_scaled, args=(x, y), wrt=(0, 1))
    assert not _defines_fwd_of(specialised, "scaled") and "A docstring" not in specialised


def test_a_helper_taking_args_is_inlined_with_its_entries_known():
    """``*rest`` is the tuple of the call's other arguments: ``rest[0]``, ``rest[-1]`` and
    ``len(rest)`` read them where the helper is inlined, so its ``if`` on the count is a
    constant."""
    x, y = R.standard_normal(3), R.standard_normal(3)
    g = st.grad(calls_star, wrt=(0, 1))
    for _ in range(3):
        got = g(x, y)
        for index in (0, 1):
            np.testing.assert_allclose(got[index], _numeric(calls_star, (x, y), index),
                                       rtol=1e-6, atol=1e-8)
    text = st.source(calls_star, args=(x, y), wrt=(0, 1))
    fused = [line for line in text[text.index("def calls_star_grad("):].splitlines()
             if not line.lstrip().startswith("#")]
    assert not _defines_fwd_of(text, "star") and not any("rest" in line for line in fused)


def test_forward_mode_and_second_order_through_an_inlined_helper():
    x, y, v = R.standard_normal(3), R.standard_normal(3), R.standard_normal(3)
    _, tangent = st.jvp(calls_scaled, (x, y), (v, np.zeros(3)))
    np.testing.assert_allclose(tangent, _numeric(calls_scaled, (x, y), 0) @ v, rtol=1e-6)
    hessian = st.hessian(calls_scaled)(x, y)
    gradient = st.grad(calls_scaled)
    columns = [(gradient(x + e, y) - gradient(x - e, y)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-5, atol=1e-7)


def test_a_method_called_through_an_argument_in_a_loop_is_inlined():
    layer = Layer(R.standard_normal((2, 3)), R.standard_normal(2))
    X, Y = R.standard_normal((5, 3)), R.standard_normal((5, 2))
    g = st.grad(per_example)
    out = np.tanh(X @ layer.W.T + layer.b)
    want_W = 2 * ((out - Y) * (1 - out ** 2)).T @ X / 5
    for _ in range(3):
        np.testing.assert_allclose(g(layer, X, Y)["W"], want_W, rtol=1e-10)
    text = st.source(per_example, args=(layer, X, Y))
    assert "Layer_call_fwd" not in text and "layer.W @ x" in text


def test_a_helper_filling_an_array_it_makes_is_inlined():
    x = R.standard_normal((3, 2))
    text = st.source(calls_fills, wrt=0)
    assert not _defines_fwd_of(text, "fills") and "out" in text
    np.testing.assert_allclose(st.grad(calls_fills)(x), _numeric(calls_fills, (x,), 0),
                               rtol=1e-5, atol=1e-7)
    st.check_grads(calls_fills, (x,), order=2)


@pytest.mark.parametrize("caller, helper", [
    (calls_fills_copy, "fills_copy"), (calls_scatters, "scatters"),
    (calls_returns_early, "returns_early"),
    (calls_checkpointed, "checkpointed"), (reads_scale, "binds_scale"),
    (calls_keywords, "keywords"),
    (elsewhere.calls_helper, "dense_relu"),
], ids=["writes-in-place", "scatters", "returns-early", "checkpointed", "scope-clash", "keywords",
        "another-module"])
def test_a_helper_that_does_not_qualify_is_built_on_its_own(caller, helper):
    args = (R.standard_normal((3, 2)),) + ((R.standard_normal((2, 2)),)
                                           if caller is elsewhere.calls_helper else ())
    text = st.source(caller, wrt=0)
    assert _defines_fwd_of(text, helper)
    np.testing.assert_allclose(st.grad(caller)(*args), _numeric(caller, args, 0),
                               rtol=1e-5, atol=1e-7)


def _recursive_b(x):
    return _recursive_a(x) + 1.0  # marker: recursion


def _recursive_a(x):
    return _recursive_b(x) * 2.0


def test_recursion_through_helpers_is_still_refused_at_its_line():
    with pytest.raises(st.UnsupportedSyntaxError, match="recursive call") as info:
        st.grad(_recursive_a)(np.ones(2))
    line = _line_of("marker: recursion")
    assert f"test_inlined_callees.py:{line}" in str(info.value)


def test_a_chain_of_helpers_is_inlined_so_deep_and_its_calls_kept_below(tmp_path):
    """Helpers are inlined at most MAX_INLINED_DEPTH deep: the helper below keeps its call
    and is built on its own (inlining its own chain), so no build recurses with the chain."""
    deepest = callees.MAX_INLINED_DEPTH
    count = 2 * deepest + 3
    lines = ["import numpy as np"]
    lines += [f"def h{i}(x):\n    return h{i + 1}(x) * 1.01" for i in range(count)]
    lines.append(f"def h{count}(x):\n    return np.sin(x)")
    (tmp_path / "helper_chain.py").write_text("\n".join(lines) + "\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import helper_chain
    finally:
        sys.path.remove(str(tmp_path))
    text = st.source(helper_chain.h0, wrt=0)
    built = set(re.findall(r"^def h(\d+)_fwd\(", text, re.M))
    assert built == {"0", str(deepest + 1), str(2 * deepest + 2)}
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(st.grad(helper_chain.h0)(x), 1.01 ** count * np.cos(x))


def _no_rule(x):
    return np.i0(x) + x   # marker: no rule


def calls_no_rule(x):
    return np.sum(_no_rule(x) * x)


def test_an_error_in_an_inlined_helper_names_the_helpers_line():
    with pytest.raises(st.MissingRuleError) as info:
        st.grad(calls_no_rule)(np.ones(3))
    line = _line_of("marker: no rule")
    assert f"test_inlined_callees.py:{line}" in str(info.value)



def test_a_method_inlined_through_self_keeps_its_softmax_shift_free():
    """The corpus's attention head (tests/corpus/estimators.py): its keyed ``if``
    (``self.scale is not None``, inside the branch the class decides) is folded too, and
    the maximum subtracted, copied into the method's ``S``, carries no derivative: the
    fused gradient has no term for it (analyse/invariance.py follows the copies)."""
    head = estimators.Attention()
    args = (R.standard_normal((3, 2)), R.standard_normal((3, 2)), R.standard_normal((3, 2)),
            R.standard_normal((4, 3)), R.standard_normal((4, 2)))
    g = st.grad(head.loss)
    for _ in range(3):
        np.testing.assert_allclose(g(*args), _numeric(head.loss, args, 0), rtol=1e-6, atol=1e-8)
    text = st.source(head.loss, args=args)
    text = text[text.index("def Attention_loss_grad("):]
    assert "extremum_grad" not in text and not re.search(r"^\s*if ", text, re.M)
    # and its sum of exponentials is never zero: dividing by it is not guarded
    assert not re.search(r"zero_guard\((\w+), \1 / _sum\)", text)

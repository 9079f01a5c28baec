"""An ``if`` on an argument's value (``if clip > 0:``) is decided by the shape key when the
values it compares are numbers the key holds by value (``analyse.keyed_tests``): the code
specialised for a call takes that branch alone, with no tape and no test. A call whose
values differ gets other code. A test the key does not decide (of an array's value, or a
helper's test of values its caller computed) takes the branch the measuring call took,
checked as the code runs (``runtime.branches``); a call that takes the other branch runs the
generic code."""

import numpy as np
import pytest

import srctrans as st
from programs import callees_elsewhere as elsewhere

R = np.random.default_rng(23)


def clipped_loss(w, X, y, clip):
    r = X @ w - y
    if clip > 0:
        r = np.clip(r, -clip, clip)
    else:
        r = r * 1.5
    return np.sum(r ** 2)


def bounded_loss(w, X, y, bound):       # clipped_loss, for a test of its own cache
    r = X @ w - y
    if bound > 0:
        r = np.clip(r, -bound, bound)
    else:
        r = r * 1.5
    return np.sum(r ** 2)


def moded_loss(w, X, y, mode, scale):
    r = X @ w - y
    if mode == "huber" and scale >= 1.0:      # (`and` desugars to two tests)
        r = np.sqrt(1.0 + r * r) - 1.0
    elif scale < 0.5:
        r = r * scale
    return np.sum(r ** 2)


class Model:
    def __init__(self, clip):
        self.clip = clip

    def loss(self, w, X, y):
        r = X @ w - y
        if self.clip > 0:
            r = np.tanh(r / self.clip) * self.clip
        return np.sum(r ** 2)


def dict_loss(w, X, y, options):
    r = X @ w - y
    if options["clip"] > 0:
        r = np.clip(r, -options["clip"], options["clip"])
    return np.sum(r ** 2)


def computed_clip(w, X, y):          # the helper's c is computed here, from data: its
    r = X @ w - y                    # sign is no part of this function's key
    return np.sum(elsewhere.clipped_or_scaled(r, float(np.mean(y))) ** 2)


def _data():
    X, w = R.standard_normal((6, 3)), R.standard_normal(3)
    y = X @ w + R.standard_normal(6) * 2.0
    return w * 0.5, X, y


def _numeric(f, w, *rest, eps=1e-6):
    g = np.zeros_like(w)
    for i in range(w.size):
        e = np.zeros_like(w)
        e[i] = eps
        g[i] = (f(w + e, *rest) - f(w - e, *rest)) / (2 * eps)
    return g


def _fused(text):
    body = text[text.index("_grad("):]
    return [line for line in body.splitlines() if not line.lstrip().startswith("#")]


def test_an_if_on_a_float_arguments_value_is_the_branch_taken():
    w, X, y = _data()
    for clip in (0.7, -1.0):
        fused = _fused(st.source(clipped_loss, args=(w, X, y, clip)))
        assert not any("if " in line or "tape" in line for line in fused)
        assert any("np.clip(" in line for line in fused) == (clip > 0)


@pytest.mark.parametrize("clips", [
    (0.7, -1.0, 0.7, 0.3, -1.0, 0.7),                              # floats: each its code
    (np.array(0.7), np.array(-1.0), np.array(0.7), np.array(-2.0)),  # 0-d arrays: one key
    (np.float32(0.7), np.float32(-1.0), np.float32(0.7)),           # float32: by type only
    (1, -1, 1, 0),                                                   # ints
], ids=["floats", "0-d arrays", "float32", "ints"])
def test_every_call_takes_its_own_branch(clips):
    w, X, y = _data()
    g = st.grad(clipped_loss)
    for clip in clips * 2:              # generic, specialised, short path, in turn
        np.testing.assert_allclose(g(w, X, y, clip), _numeric(clipped_loss, w, X, y, clip),
                                   rtol=1e-6, atol=1e-8)


def test_an_array_bound_takes_the_measured_branch_and_checks_it():
    """A 0-d array's value is no part of the key: the specialised code takes the branch the
    measuring call took and checks the test as it runs; a call that takes the other branch
    runs the generic code, and later calls with that key code specialised on it that keeps
    its branches."""
    w, X, y = _data()
    fused = _fused(st.source(bounded_loss, args=(w, X, y, np.array(0.7))))
    assert not any("if " in line for line in fused)
    assert "rt.expect_branch(bound > 0, True)" in "\n".join(fused)
    g = st.grad(bounded_loss)
    for bound in (0.7, 0.7, 0.7, -1.0):                # generic, specialised, short path, missed
        bound = np.array(bound)
        np.testing.assert_allclose(g(w, X, y, bound), _numeric(bounded_loss, w, X, y, bound),
                                   rtol=1e-6, atol=1e-8)
    found = st.cache.instance(bounded_loss, ("w",))
    assert "took a branch" in found.why_generic(bounded_loss, (w, X, y, np.array(-1.0)), {})
    for bound in (0.7, -1.0, 0.7, -1.0):      # generic once more, then code that keeps its if
        bound = np.array(bound)
        np.testing.assert_allclose(g(w, X, y, bound), _numeric(bounded_loss, w, X, y, bound),
                                   rtol=1e-6, atol=1e-8)
    kept = list(found.unguessed.values())
    assert len(kept) == 1 and not found.variants
    assert "if " in kept[0].build.source and "expect_branch" not in kept[0].build.source


def test_strings_and_several_tests():
    w, X, y = _data()
    g = st.grad(moded_loss)
    for mode, scale in [("huber", 1.5), ("plain", 0.25), ("huber", 0.25), ("plain", 0.75),
                        ("huber", 1.5)] * 2:
        np.testing.assert_allclose(g(w, X, y, mode, scale),
                                   _numeric(moded_loss, w, X, y, mode, scale),
                                   rtol=1e-6, atol=1e-8)
    fused = _fused(st.source(moded_loss, args=(w, X, y, "huber", 1.5)))
    assert not any("if " in line for line in fused) and any("np.sqrt(" in line for line in fused)


def test_an_attribute_of_self_and_an_entry_of_a_dict():
    w, X, y = _data()
    model = Model(0.8)
    g = st.grad(model.loss)
    for clip in (0.8, -1.0, 0.8, 0.5) * 2:
        model.clip = clip                   # the same object, changed between calls
        np.testing.assert_allclose(g(w, X, y), _numeric(model.loss, w, X, y),
                                   rtol=1e-6, atol=1e-8)
    model.clip = 0.8
    assert not any("if " in line for line in _fused(st.source(model.loss, args=(w, X, y))))
    g = st.grad(dict_loss)
    for clip in (0.7, -1.0, 0.7) * 2:
        options = {"clip": clip}
        np.testing.assert_allclose(g(w, X, y, options), _numeric(dict_loss, w, X, y, options),
                                   rtol=1e-6, atol=1e-8)


def test_a_helpers_test_of_a_value_its_caller_computed_stays_a_branch():
    g = st.grad(computed_clip)
    signs = set()
    for k in range(12):
        w, X, y = _data()                      # the same shapes; c's sign varies
        signs.add(np.mean(y) > 0)
        np.testing.assert_allclose(g(w, X, y), _numeric(computed_clip, w, X, y),
                                   rtol=1e-5, atol=1e-7)
    assert signs == {True, False}


def test_forward_mode_and_second_order_through_a_value_branch():
    w, X, y = _data()
    v = R.standard_normal(3)
    for clip in (0.7, -1.0, 0.7):
        want = _numeric(clipped_loss, w, X, y, clip) @ v
        _, tangent = st.jvp(clipped_loss, (w, X, y, clip), (v, None, None, None))
        np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-8)
        gradient = st.grad(clipped_loss)
        hv = (gradient(w + 1e-5 * v, X, y, clip) - gradient(w - 1e-5 * v, X, y, clip)) / 2e-5
        got = st.hvp(clipped_loss, (w, X, y, clip), (v, None, None, None))[0]
        np.testing.assert_allclose(got, hv, rtol=1e-5, atol=1e-6)


def piecewise(x, c):
    if x > c:
        return x * x
    return -x * c


def test_a_test_of_a_differentiated_value_is_not_keyed():
    """``if x > c`` with ``x`` differentiated: a scalar function called at many ``x`` keeps
    one specialisation (its branch stays), and ``c``'s value alone does not decide it."""
    from srctrans import cache
    g = st.grad(piecewise)
    for x in np.linspace(-2.0, 2.0, 21):
        assert g(float(x), 0.5) == (2 * x if x > 0.5 else -0.5)
    assert cache.instance(piecewise, ("x",), True, True).build.value_floats == ()


def test_vmap_of_the_gradient_keeps_the_branch_each_member_takes():
    """st.vmap(st.grad(f)) batches code specialised on one member's shapes; a test of a
    value is each member's own, so the generic gradient is batched (selecting per member)."""
    w, X, y = _data()
    clips = np.array([0.7, -1.0, 0.3])
    members = [st.grad(clipped_loss)(w, X, y, float(c)) for c in clips]
    got = st.vmap(st.grad(clipped_loss), in_axes=(None, None, None, 0))(w, X, y, clips)
    np.testing.assert_allclose(got, np.array(members), rtol=1e-10)


def mixed_test(w, X, y, c, d):
    r = X @ w - y
    if c > 0.5:                       # keyed: c's floats are in the key
        f = np.mean(r) > 1.0          # a test of data: `f` is no keyed test
    else:
        f = d > 0.3
    if f:
        r = r * 2.0
    return np.sum(r ** 2)


def test_floats_are_keyed_by_value_only_for_the_tests_the_key_decides():
    """A comparison of ``d`` that ends up in no keyed test leaves ``d``'s floats out of the
    key (each value of ``d`` would otherwise get code of its own, for nothing)."""
    from srctrans import cache
    w, X, y = _data()
    g = st.grad(mixed_test)
    for c, d in ((0.2, 0.1), (0.9, 0.5), (0.9, 0.1), (0.2, 0.5)):
        np.testing.assert_allclose(g(w, X, y, c, d), _numeric(mixed_test, w, X, y, c, d),
                                   rtol=1e-6, atol=1e-8)
    assert cache.instance(mixed_test, ("w",), True, True).build.value_floats == ("c",)

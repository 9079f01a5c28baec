"""The gradient with respect to one number by forward mode (srctrans/scalar_gradients.py): a
function with a loop, differentiated with respect to one Python float, runs its tangent
along 1.0 from the third call with a shape key on; the same derivative as the reverse pass to
rounding, checked against central differences; straight-line code, several selected
arguments, arrays, `grad_of` blocks and users' rules keep the reverse pass."""

import numpy as np
import pytest

import srctrans as st
from srctrans.rules import REGISTRY

R = np.random.default_rng(404)
pytestmark = pytest.mark.usefixtures("no_persistent_cache")


@pytest.fixture(autouse=True)
def own_registry():
    """Undo the rules a test registers, so no other test sees them."""
    saved = REGISTRY.user_rules()
    yield
    REGISTRY.restore_user_rules(saved)
    st.clear_cache()


def smoothing(alpha, y):
    level = np.zeros(len(y))
    level[0] = y[0]
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + (1.0 - alpha) * level[t - 1]
    return np.sum((y[1:] - level[:-1]) ** 2)


def growth(rate, x0, steps, data):
    """Explicit Euler steps of logistic growth, a scalar carried through the loop."""
    x, total = x0, 0.0
    for t in range(steps):
        x = x + 0.1 * rate * x * (1.0 - x)
        total = total + (x - data[t]) ** 2
    return total


def scaled_tail(alpha, y):
    """A loop, then a transcendental tail whose tangent reads the loop's array."""
    s = np.zeros(len(y))
    for t in range(1, len(y)):
        s[t] = np.tanh(alpha * s[t - 1] + y[t])
    return np.sum(np.log1p(s ** 2)) * alpha


def straight(alpha, y):
    return np.sum(np.exp(alpha * y)) / alpha


def hooked(alpha, y):
    level = np.zeros(len(y))
    for t in range(1, len(y)):
        level[t] = alpha * y[t] + 0.5 * level[t - 1]
    total = np.sum(level ** 2)
    with st.grad_of(total) as d_total:
        d_total = 3.0 * d_total
    return total


def clipped(x):
    return x


def calls_clipped(alpha, y):
    total = 0.0
    for t in range(len(y)):
        total = total + clipped(alpha * y[t]) ** 2
    return total


class Smoother:
    def __init__(self, y):
        self.y = y

    def loss(self, alpha):
        level = self.y[0]
        total = 0.0
        for t in range(1, len(self.y)):
            total = total + (self.y[t] - level) ** 2
            level = alpha * self.y[t] + (1.0 - alpha) * level
        return total


def _central(f, args, position, eps=1e-6):
    up, down = list(args), list(args)
    up[position] += eps
    down[position] -= eps
    return (f(*up) - f(*down)) / (2 * eps)


def _runs_forward(gradient):
    """Whether the short path of ``gradient`` (an st.grad object called thrice) runs the
    forward-mode gradient."""
    repeat = gradient._repeat
    assert repeat is not None
    return "forward mode" in (repeat.__globals__["fused"].__doc__ or "")


def _calls(f, args, times=4, **options):
    gradient = st.grad(f, **options)
    return gradient, [gradient(*args) for _ in range(times)]


@pytest.mark.parametrize("f, args", [
    (smoothing, (0.4, np.cumsum(R.standard_normal(12)))),
    (smoothing, (0.7, np.cumsum(R.standard_normal(40)))),        # its loop on lists
    (growth, (0.8, 0.1, 9, R.uniform(0.1, 0.9, 9))),
    (scaled_tail, (0.6, R.standard_normal(7))),
])
def test_a_loop_differentiated_by_one_number_runs_forward_mode(f, args):
    gradient, results = _calls(f, args)
    assert _runs_forward(gradient)
    reverse = results[0]                      # the first calls run the reverse pass
    for result in results[2:]:
        assert type(result) is np.float64
        np.testing.assert_allclose(result, reverse, rtol=1e-12)
    np.testing.assert_allclose(results[-1], _central(f, args, 0), rtol=1e-6)


def test_float32_arrays_give_a_float64_gradient_of_the_number():
    y = np.cumsum(R.standard_normal(12)).astype(np.float32)
    gradient, results = _calls(smoothing, (0.4, y))
    assert _runs_forward(gradient)
    assert all(type(r) is np.float64 for r in results)
    np.testing.assert_allclose(results[-1], results[0], rtol=1e-5)


def test_other_shapes_get_their_own_forward_gradient():
    gradient = st.grad(smoothing)
    for n in (12, 20, 12, 20, 12, 20):
        y = np.linspace(0.0, 1.0, n) ** 2
        np.testing.assert_allclose(gradient(0.3, y), _central(smoothing, (0.3, y), 0),
                                   rtol=1e-6)
    assert _runs_forward(gradient)


def test_a_method_of_a_number_runs_forward_mode():
    model = Smoother(np.cumsum(R.standard_normal(15)))
    gradient, results = _calls(model.loss, (0.35,))
    assert _runs_forward(gradient)
    np.testing.assert_allclose(results[-1], results[0], rtol=1e-12)
    np.testing.assert_allclose(results[-1], _central(model.loss, (0.35,), 0), rtol=1e-6)


@pytest.mark.parametrize("f, args, options", [
    (straight, (0.3, R.standard_normal(5)), {}),                   # no loop
    (smoothing, (0.4, np.cumsum(R.standard_normal(12))), {"wrt": (0, 1)}),
    (smoothing, (np.float64(0.4), np.cumsum(R.standard_normal(12))), {}),  # not a float
])
def test_other_selections_keep_the_reverse_pass(f, args, options):
    gradient, results = _calls(f, args, **options)
    if gradient._repeat is not None:
        assert "forward mode" not in (gradient._repeat.__globals__["fused"].__doc__ or "")
    for result in results[1:]:
        for got, want in zip(result if type(result) is tuple else (result,),
                             results[0] if type(result) is tuple else (results[0],)):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def _forward_build_is_kept(f, args):
    """Whether scalar_gradients takes the forward build of ``f`` for the derivative the
    reverse pass gives (before it compares the two on a call)."""
    from srctrans import cache, scalar_gradients
    generic = cache.forward_instance(f, ("alpha",), tangent_only="gradient")
    return scalar_gradients._same_derivative(generic.build)


def test_a_grad_of_block_keeps_the_reverse_pass():
    """Forward mode leaves out a grad_of block: the gradient tripled by it stays tripled."""
    args = (0.4, R.standard_normal(8))
    assert not _forward_build_is_kept(hooked, args)
    assert _forward_build_is_kept(smoothing, args)
    gradient, results = _calls(hooked, args)
    assert not _runs_forward(gradient)
    for result in results:
        np.testing.assert_allclose(result, 3.0 * _central(hooked, args, 0), rtol=1e-6)


def test_a_users_rule_keeps_the_reverse_pass():
    """A registered VJP need not be the transpose of the registered JVP: the VJP decides."""
    st.register_vjp(clipped, lambda g, ans, x: (0.5 * g,))
    st.register_jvp(clipped, lambda tangents, ans, x: tangents[0])
    y = R.standard_normal(6)
    assert not _forward_build_is_kept(calls_clipped, (0.7, y))
    gradient, results = _calls(calls_clipped, (0.7, y))
    assert not _runs_forward(gradient)
    want = np.sum(2.0 * 0.7 * y * y) * 0.5
    for result in results:
        np.testing.assert_allclose(result, want, rtol=1e-12)


def test_the_tangent_is_checked_against_the_reverse_gradient(monkeypatch):
    """A forward gradient that disagrees with the reverse pass on the call it is made for is
    not used (here one made to disagree)."""
    from srctrans import scalar_gradients
    monkeypatch.setattr(scalar_gradients, "_agree", lambda tangent, gradient: False)
    args = (0.4, np.cumsum(R.standard_normal(12)))
    gradient, results = _calls(smoothing, args)
    assert not _runs_forward(gradient)
    assert results[-1] == results[0]


def test_the_forward_gradients_source_folds_the_tangent_in():
    from srctrans import cache
    y = np.cumsum(R.standard_normal(12))
    generic = cache.forward_instance(smoothing, ("alpha",), tangent_only="gradient")
    specialised = generic.for_call(smoothing, (0.4, y), {}, now=True)
    text = specialised.build.source
    assert "def smoothing_grad(alpha, y):" in text and "dalpha" not in text.split('"""')[2]
    assert "_invariant = 1.0 - alpha" in text          # hoisted out of the loop
    assert "1.0 *" not in text and "-1.0 *" not in text


def test_source_shows_the_forward_gradient_calls_run():
    y = np.cumsum(R.standard_normal(12))
    text = st.source(smoothing, args=(0.4, y))
    head = " ".join(line.lstrip("# ") for line in text.split("\n\ndef ")[0].splitlines())
    assert head.startswith("The code a call with these arguments runs: specialised")
    assert "From the third call with these shapes on, the forward-mode gradient" in head
    assert text.index("def smoothing_fwd(") < text.index("(forward mode)")
    assert "forward mode" not in st.source(straight, args=(0.4, y))
    assert "forward mode" not in st.source(smoothing, args=(0.4, y), wrt=(0, 1))


def test_a_stored_forward_build_remembers_its_backward_code(tmp_path):
    """A forward build read back from the persistent cache knows it left out a grad_of block,
    so a later process keeps the reverse pass too."""
    from srctrans import cache
    from srctrans.persist import directory
    st.set_cache_directory(tmp_path / "entries")
    try:
        kept = []
        for _ in range(2):                  # built, then read back after forgetting memory
            st.clear_cache()
            build = cache.forward_instance(hooked, ("alpha",), tangent_only="gradient").build
            kept.append(build.backward_code)
        assert kept == [True, True]
        assert any((tmp_path / "entries").iterdir())
    finally:
        directory.set_location()
        st.clear_cache()


def test_check_grads_checks_the_short_paths_gradient(monkeypatch):
    """st.check_grads runs a gradient thrice, so it checks the forward-mode gradient the
    short path runs (here one made wrong)."""
    from srctrans import scalar_gradients
    real = scalar_gradients.forward_gradient

    def doubled(*args, **kwargs):
        made = real(*args, **kwargs)
        return None if made is None else (lambda *a: (2.0 * made(*a)[0],))
    y = np.cumsum(R.standard_normal(12))
    st.check_grads(smoothing, (0.4, y), wrt=(0,))
    st.clear_cache()
    monkeypatch.setattr(scalar_gradients, "forward_gradient", doubled)
    with pytest.raises(AssertionError, match="short path"):
        st.check_grads(smoothing, (0.4, y), wrt=(0,))

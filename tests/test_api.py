"""The public API: grad, value_and_grad, vjp, source, check_grads, and the cache.

Every expected value is either a closed form written next to the call or a
finite-difference check (st.check_grads); inputs come from seeded generators.
"""

import inspect
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import numpy as np
import pytest

import srctrans as st
import srctrans.cache
import srctrans.pipeline
from srctrans.rules import REGISTRY
from programs import basic, line_of
from programs import callees_elsewhere as elsewhere


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


@pytest.fixture
def fresh_cache():
    st.clear_cache()
    yield
    st.clear_cache()


# -- grad and wrt ----------------------------------------------------------------

# (wrt, expected gradients of sum(x * y * z**2) as a function of x, y, z)
WRT_TABLE = [
    (0, lambda x, y, z: y * z ** 2),
    (1, lambda x, y, z: x * z ** 2),
    (-1, lambda x, y, z: 2 * x * y * z),
    ("y", lambda x, y, z: x * z ** 2),
    ((2, 0), lambda x, y, z: (2 * x * y * z, y * z ** 2)),
    (("x", "z"), lambda x, y, z: (y * z ** 2, 2 * x * y * z)),
    ((1,), lambda x, y, z: (x * z ** 2,)),
    (["z", 1], lambda x, y, z: (2 * x * y * z, x * z ** 2)),
]


@pytest.mark.parametrize("wrt, expected", WRT_TABLE, ids=[repr(w) for w, _ in WRT_TABLE])
def test_wrt_selects_arguments_in_order(rng, wrt, expected):
    x, y, z = (rng.standard_normal(4) for _ in range(3))
    got = st.grad(basic.three, wrt=wrt)(x, y, z)
    want = expected(x, y, z)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    else:
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_default_wrt_is_the_first_argument(rng):
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    np.testing.assert_allclose(st.grad(basic.scale_sum)(x, y), y)


def test_wrt_accepts_keyword_arguments_and_keyword_only_parameters(rng):
    x = rng.standard_normal(3)
    d_scale = st.grad(basic.keyword_only, wrt="scale")(x, scale=3.0)
    np.testing.assert_allclose(d_scale, np.sum(x * x))
    d_scale, dx = st.grad(basic.keyword_only, wrt=("scale", 0))(x)    # the default 2.0
    np.testing.assert_allclose(dx, 2 * 2.0 * x)
    np.testing.assert_allclose(d_scale, np.sum(x * x))
    y = rng.standard_normal(3)
    np.testing.assert_allclose(st.grad(basic.scale_sum, wrt="y")(x=x, y=y), x)


def test_plain_decorator(rng):
    @st.grad
    def d_square(x):
        return x * x

    x = rng.standard_normal(3)
    np.testing.assert_allclose(d_square(x), 2 * x)
    assert d_square.__name__ == "d_square"


def test_decorator_with_options(rng):
    @st.grad(wrt=(1, 0))
    def d_product(x, y):
        return x * y * y

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    dy, dx = d_product(x, y)
    np.testing.assert_allclose(dy, 2 * x * y)
    np.testing.assert_allclose(dx, y * y)


def test_bound_method(rng):
    x = rng.standard_normal(3)
    np.testing.assert_allclose(st.grad(basic.Scaler(2.5).apply)(x), 2 * 2.5 * x)


@pytest.mark.parametrize("wrt, words", [
    (5, "positional"), ("w", "no parameter named 'w'"), ((), "selects no argument"),
    ((0, "x"), "same argument twice"), (1.5, "indices or names"), (True, "indices or names"),
])
def test_bad_wrt_is_a_usage_error(wrt, words):
    with pytest.raises(st.UsageError, match=words):
        st.grad(basic.scale_sum, wrt=wrt)(np.ones(2), np.ones(2))


# -- output_gradients ------------------------------------------------------------------

def test_output_gradients_is_the_v_of_jtv(rng):
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    v = rng.standard_normal(4)
    dx, dy = st.grad(basic.two_outputs, wrt=(0, 1))(x, y, output_gradients=(v, np.zeros(4)))
    np.testing.assert_allclose(dx, v * y)
    np.testing.assert_allclose(dy, v * x)


def test_tuple_output_takes_a_tuple_of_output_gradients(rng):
    """f(x, y) = (x y, x + y): J^T (v1, v2) = (v1 y + v2, v1 x + v2)."""
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    v1, v2 = rng.standard_normal(4), rng.standard_normal(4)
    dx, dy = st.grad(basic.two_outputs, wrt=(0, 1))(x, y, output_gradients=(v1, v2))
    np.testing.assert_allclose(dx, v1 * y + v2)
    np.testing.assert_allclose(dy, v1 * x + v2)
    dx, dy = st.grad(basic.two_outputs, wrt=(0, 1))(x, y, output_gradients=[v1, None])
    np.testing.assert_allclose(dx, v1 * y + 1.0)
    dx, dy = st.grad(basic.two_outputs, wrt=(0, 1))(x, y)              # ones for both
    np.testing.assert_allclose(dx, y + 1.0)
    np.testing.assert_allclose(dy, x + 1.0)


@pytest.mark.parametrize("cotangent, shapes", [
    (np.ones(3), ("(3,)", "(2,)")),
    (np.ones((2, 1)), ("(2, 1)", "(2,)")),
    (1.0, ("()", "(2,)")),
])
def test_wrong_shape_cotangent_names_expected_and_received(cotangent, shapes):
    with pytest.raises(st.ShapeError) as info:
        st.grad(basic.square)(np.array([1.0, 2.0]), output_gradients=cotangent)
    received, expected = shapes
    assert received in str(info.value) and expected in str(info.value)


def test_wrong_number_of_cotangents_for_a_tuple_output():
    x = np.ones(2)
    with pytest.raises(st.ShapeError, match="2 outputs"):
        st.grad(basic.two_outputs)(x, x, output_gradients=np.ones(2))
    with pytest.raises(st.ShapeError, match="3 entries"):
        st.grad(basic.two_outputs)(x, x, output_gradients=(x, x, x))
    with pytest.raises(st.ShapeError, match=r"output_gradients\[1\].*\(3,\)"):
        st.grad(basic.two_outputs)(x, x, output_gradients=(x, np.ones(3)))


def test_parameter_named_output_gradients_is_rejected():
    with pytest.raises(st.SrcTransError) as info:
        st.grad(basic.has_reserved)(np.ones(2), np.ones(2))
    message = str(info.value)
    assert "output_gradients" in message and "reserve" in message and "rename" in message
    assert f"basic.py:{line_of(basic, 'reserved')}" in message


# -- value_and_grad ------------------------------------------------------------------------

def test_value_and_grad_returns_value_then_gradients(rng):
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    value, (dy, dx) = st.value_and_grad(basic.scale_sum, wrt=(1, 0))(x, y)
    np.testing.assert_allclose(value, np.sum(x * y))
    np.testing.assert_allclose(dy, x)
    np.testing.assert_allclose(dx, y)
    value, dx = st.value_and_grad(basic.scale_sum)(x, y)
    np.testing.assert_allclose(dx, y)


def test_value_and_grad_as_decorator(rng):
    @st.value_and_grad(wrt=1)
    def f(x, y):
        return np.sum(x * y * y)

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    value, dy = f(x, y)
    np.testing.assert_allclose(value, np.sum(x * y * y))
    np.testing.assert_allclose(dy, 2 * x * y)


# -- vjp ---------------------------------------------------------------------------------------

def test_vjp_returns_output_and_pullback(rng):
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    out, pullback = st.vjp(basic.cubic, x, y)
    np.testing.assert_allclose(out, x * x * y)
    v = rng.standard_normal(3)
    dx, dy = pullback(v)
    np.testing.assert_allclose(dx, 2 * x * y * v)
    np.testing.assert_allclose(dy, x * x * v)


def test_vjp_selection_and_integer_arguments(rng):
    x = rng.standard_normal(3)
    out, pullback = st.vjp(basic.int_and_bool, x, 2, True)
    grads = pullback(1.0)
    assert len(grads) == 3 and grads[1] is None and grads[2] is None
    np.testing.assert_allclose(grads[0], 2 * x + 1.0)
    y, z = rng.standard_normal(3), rng.standard_normal(3)
    _, pullback = st.vjp(basic.three, x, y, z, wrt=(2, 0))
    dz, dx = pullback(1.0)
    np.testing.assert_allclose(dz, 2 * x * y * z)
    np.testing.assert_allclose(dx, y * z ** 2)
    _, pullback = st.vjp(basic.three, x, y, z, wrt="y")
    (dy,) = pullback(1.0)
    np.testing.assert_allclose(dy, x * z ** 2)


def test_vjp_pullback_reuses_the_forward_pass(rng, monkeypatch, fresh_cache):
    """The pullback runs only the backward pass: no generated forward runs after vjp returns."""
    calls = {"fwd": 0, "bwd": 0}
    real = srctrans.cache.instance

    class Counted:
        def __init__(self, found):
            self._found = found._found if isinstance(found, Counted) else found

        def fwd(self, *a, **k):
            calls["fwd"] += 1
            return self._found.fwd(*a, **k)

        def bwd(self, *a, **k):
            calls["bwd"] += 1
            return self._found.bwd(*a, **k)

        def for_call(self, fn, args, kwargs):
            return Counted(self._found.for_call(fn, args, kwargs))

        def run_for_call(self, fn, args, kwargs, run):
            return self._found.run_for_call(fn, args, kwargs, lambda found: run(Counted(found)))

        @property
        def build(self):
            return self._found.build

    monkeypatch.setattr(srctrans.cache, "instance", lambda *a, **k: Counted(real(*a, **k)))
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    out, pullback = st.vjp(basic.cubic, x, y)
    forward_runs = calls["fwd"]
    assert forward_runs >= 1 and calls["bwd"] == 0
    vs = [rng.standard_normal(3) for _ in range(4)]
    for v in vs:
        dx, dy = pullback(v)
        np.testing.assert_allclose(dx, 2 * x * y * v)
        np.testing.assert_allclose(dy, x * x * v)
    assert calls == {"fwd": forward_runs, "bwd": len(vs)}
    # linear in v, and the same v gives the same answer again
    a, b = pullback(vs[0] + 2.0 * vs[1]), pullback(vs[0])
    np.testing.assert_allclose(a[0], b[0] + 2.0 * pullback(vs[1])[0])


def test_vjp_pullback_checks_the_cotangent_shape(rng):
    _, pullback = st.vjp(basic.cubic, rng.standard_normal(3), rng.standard_normal(3))
    with pytest.raises(st.ShapeError, match=r"\(4,\).*\(3,\)"):
        pullback(np.ones(4))


# -- source and tracebacks ----------------------------------------------------------------------

def test_source_shows_forward_backward_and_user_lines():
    text = st.source(basic.matmul_error, mode="reverse", wrt=(0, 1))
    assert "def matmul_error_fwd(a, b):" in text
    assert "def matmul_error_bwd(" in text
    n = line_of(basic, "matmul")
    assert f"# line {n}: d = c @ b" in text
    assert f"# line {n - 1}: c = np.sin(a)" in text
    assert f"# line {n + 1}: return np.sum(d)" in text
    compile(text, "<source>", "exec")          # the text is valid Python


def test_source_rejects_unknown_mode():
    with pytest.raises(st.UsageError, match="mode"):
        st.source(basic.square, mode="sideways")


def test_generated_functions_have_inspectable_source():
    fwd, bwd, _ = srctrans.cache.reverse_pair(basic.matmul_error, ("a",))
    fwd_text, bwd_text = inspect.getsource(fwd), inspect.getsource(bwd)
    assert "def matmul_error_fwd(a, b):" in fwd_text and "d = c @ b" in fwd_text
    assert "def matmul_error_bwd(" in bwd_text
    assert f"# line {line_of(basic, 'matmul')}:" in fwd_text


def test_errors_inside_generated_code_show_the_generated_line(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 2))    # 3 != 4
    with pytest.raises(ValueError) as info:
        st.grad(basic.matmul_error)(a, b)
    text = "".join(traceback.format_exception(info.value))
    assert "<srctrans matmul_error reverse #" in text   # the generated code's pseudo file
    assert "in matmul_error_fwd" in text
    assert "d = c @ b" in text                # the generated line's text is shown
    code = info.traceback[-1].frame.raw.f_code      # the innermost frame is generated code
    assert code.co_name == "matmul_error_fwd"
    assert "d = c @ b" in inspect.getsource(code)


def test_uncaught_errors_in_generated_code_show_the_generated_line(tmp_path):
    script = tmp_path / "uncaught.py"
    script.write_text(
        "import sys, numpy as np, srctrans as st\n"
        f"sys.path.insert(0, {str(Path(basic.__file__).parent.parent)!r})\n"
        "from programs import basic\n"
        "st.grad(basic.matmul_error)(np.ones((2, 3)), np.ones((4, 2)))\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "in matmul_error_fwd" in run.stderr, run.stderr
    if sys.version_info >= (3, 11):           # a note names the user's line
        assert f"line {line_of(basic, 'matmul')} of {basic.__file__}" in run.stderr, run.stderr
        assert "d = c @ b" in run.stderr, run.stderr


# -- check_grads ----------------------------------------------------------------------------------

def test_check_grads_passes_for_correct_functions(rng):
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    st.check_grads(basic.cubic, (x, y))
    st.check_grads(basic.three, (x, y, rng.standard_normal(4)))
    st.check_grads(basic.two_outputs, (x, y))
    st.check_grads(basic.int_and_bool, (x, 3, True))
    st.check_grads(basic.layer, (rng.standard_normal((2, 3)), rng.standard_normal((3, 4)),
                                 rng.standard_normal(4)))


def wrong_sin_rule(g, ans, x):
    return g * np.sin(x)


@pytest.fixture
def wrong_sin(monkeypatch):
    """np.sin's rule replaced by a wrong one (g sin x) for one test, then restored."""
    rule = REGISTRY.lookup(np.sin)
    monkeypatch.setattr(rule, "vjp", wrong_sin_rule)
    monkeypatch.setattr(rule, "_template", None)
    st.clear_cache()
    yield
    monkeypatch.undo()
    st.clear_cache()


def test_check_grads_catches_a_wrong_rule(rng, wrong_sin):
    x = rng.uniform(0.2, 1.2, 5)
    with pytest.raises(AssertionError, match="finite differences"):
        st.check_grads(basic.sin_sum, (x,))


def test_wrong_rule_is_restored(rng):
    x = rng.uniform(0.2, 1.2, 5)
    st.check_grads(basic.sin_sum, (x,))
    np.testing.assert_allclose(st.grad(basic.sin_sum)(x), np.cos(x))


# -- semantics: shapes, dtypes, non-differentiable arguments ---------------------------------------

BROADCAST_TABLE = [((3, 2), (2,)), ((3, 2), (1, 2)), ((3, 2), (3, 1)), ((4, 3, 2), (3, 2)),
                   ((3, 2), ())]


@pytest.mark.parametrize("x_shape, b_shape", BROADCAST_TABLE)
def test_gradient_is_summed_over_broadcast_axes(rng, x_shape, b_shape):
    """f = (x + b) x: df/db = x summed to b's shape."""
    x, b = rng.standard_normal(x_shape), rng.standard_normal(b_shape)
    dx, db = st.grad(basic.broadcast_add, wrt=(0, 1))(x, b)
    assert dx.shape == x.shape and np.shape(db) == b.shape
    np.testing.assert_allclose(dx, 2 * x + b)
    axes = tuple(range(x.ndim - b.ndim)) + tuple(
        x.ndim - b.ndim + i for i, n in enumerate(b_shape) if n == 1)
    np.testing.assert_allclose(db, np.sum(x, axis=axes).reshape(b_shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_has_the_input_dtype(rng, dtype):
    x = rng.standard_normal(3).astype(dtype)
    g = st.grad(basic.square)(x)
    assert g.dtype == dtype and g.shape == (3,)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)
    scalar = st.grad(basic.square)(dtype(1.5))
    assert type(scalar) is dtype and scalar == 3.0


def test_python_float_gives_numpy_float64():
    g = st.grad(basic.square)(1.5)
    assert type(g) is np.float64 and g == 3.0
    assert "numpy.float64" in st.grad.__doc__


@pytest.mark.parametrize("fn, wrt, args, kind", [
    (basic.power_int, 1, (np.ones(2), 2), "'n' is selected for differentiation but is an int"),
    (basic.int_and_bool, "flag", (np.ones(2), 2, True), "'flag' .* is a bool"),
    (basic.masked_sum, 1, (np.ones(2), np.array([True, False])), "'mask' .* is a bool array"),
    (basic.square, 0, (np.array([1, 2]),), "'x' .* is an int64 array"),
    (basic.square, 0, (3,), "'x' .* is an int"),
    (basic.square, 0, (np.int32(3),), "'x' .* is an int32"),
])
def test_selecting_an_int_or_bool_is_an_error(fn, wrt, args, kind):
    with pytest.raises(st.NonDifferentiableError, match=kind) as info:
        st.grad(fn, wrt=wrt)(*args)
    assert isinstance(info.value, st.SrcTransError)
    assert "hint:" in str(info.value) and "wrt" in str(info.value)


def test_unselected_int_and_bool_arguments_are_constants(rng):
    x = rng.standard_normal(3)
    np.testing.assert_allclose(st.grad(basic.power_int)(x, 3), 3 * x ** 2)
    mask = np.array([True, False, True])
    np.testing.assert_allclose(st.grad(basic.masked_sum)(x, mask), mask.astype(float))
    np.testing.assert_allclose(st.grad(basic.int_and_bool)(x, 2, False), np.ones(3))


def test_unconnected_gradients(rng):
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    dx, dy = st.grad(basic.uses_first, wrt=(0, 1))(x, y)
    assert dy is None
    dx, dy = st.grad(basic.uses_first, wrt=(0, 1), unconnected_gradients="zero")(x, y)
    np.testing.assert_array_equal(dy, np.zeros(3))
    with pytest.raises(st.UsageError):
        st.grad(basic.uses_first, unconnected_gradients="nan")


# -- the cache ----------------------------------------------------------------------------------------

class Builds(list):
    """Generic builds (function names) in the list; shape-specialised ones in ``specialised``."""

    def __init__(self):
        super().__init__()
        self.specialised = []


@pytest.fixture
def count_builds(monkeypatch, fresh_cache, no_persistent_cache):
    """The times the compiler ran (srctrans.pipeline.build_reverse calls), in this process only."""
    calls = Builds()
    real = srctrans.pipeline.build_reverse

    def counting(fn, *args, **kwargs):
        shapes = args[4] if len(args) > 4 else kwargs.get("shapes")
        (calls.specialised if shapes else calls).append(fn.__qualname__)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(srctrans.pipeline, "build_reverse", counting)
    return calls


def test_grad_again_is_a_cache_hit(rng, count_builds):
    x = rng.standard_normal(3)
    first = st.grad(basic.cubic)(x, x)
    assert count_builds == ["cubic"] and count_builds.specialised == []      # generic first
    np.testing.assert_allclose(st.grad(basic.cubic)(x, x), first, rtol=1e-14)
    assert count_builds == ["cubic"] and count_builds.specialised == ["cubic"]
    for _ in range(3):
        np.testing.assert_array_equal(st.grad(basic.cubic)(x, x), first)
    st.vjp(basic.cubic, x, x, wrt=0)
    assert count_builds == ["cubic"] and count_builds.specialised == ["cubic"]
    st.grad(basic.cubic, wrt=1)(x, x)                         # another selection: one build
    assert count_builds == ["cubic", "cubic"]


def test_new_shapes_get_one_specialised_build_each(rng, count_builds):
    for n in (3, 4, 3, 4, 5, 5, 3):
        x = rng.standard_normal(n)
        np.testing.assert_allclose(st.grad(basic.cubic)(x, x), 2 * x * x)   # d(x x y)/dx at y = x
    # the second call with each shape specialises: 3 and 4 twice, 5 once, then 5 again
    assert count_builds == ["cubic"] and count_builds.specialised == ["cubic"] * 3


def test_a_gradient_called_once_is_not_specialised(rng, count_builds):
    """Tiered: a first call runs the generic code (building the specialised code
    would cost more than a call gains); ``st.source`` with example arguments and
    second derivatives specialise at once."""
    x = rng.standard_normal(3)
    st.grad(basic.cubic)(x, x)
    st.vjp(basic.cubic, x, x)[1](np.ones(3))          # another selection, also called once
    assert count_builds.specialised == []
    assert "rt.unbroadcast" not in st.source(basic.cubic, args=(x, x))
    assert count_builds.specialised == ["cubic"]


def test_specialised_and_generic_code_agree(rng):
    x, W, b, t = (rng.standard_normal((5, 3)), rng.standard_normal((3, 2)),
                  rng.standard_normal(2), rng.standard_normal((5, 2)))
    generic = st.grad(basic.full_loss, wrt=(1, 2), specialize=False)(x, W, b, t)
    st.grad(basic.full_loss, wrt=(1, 2))(x, W, b, t)
    specialised = st.grad(basic.full_loss, wrt=(1, 2))(x, W, b, t)      # the second call's code
    for a, b_ in zip(generic, specialised):
        np.testing.assert_allclose(a, b_, rtol=1e-12)
    assert "rt.unbroadcast" in st.source(basic.full_loss, wrt=(1, 2))
    assert "rt.unbroadcast" not in st.source(basic.full_loss, wrt=(1, 2), args=(x, W, b, t))


@pytest.mark.parametrize("program, built_alone", [
    (elsewhere, ["full_loss", "layer", "mse"]),     # helpers of another module: built on their own
    (basic, ["full_loss"]),                         # of its own module: inlined into its build
])
def test_callees_are_built_once(rng, count_builds, program, built_alone):
    x = rng.standard_normal((2, 3))
    st.grad(program.full_loss, wrt="W")(x, rng.standard_normal((3, 2)), np.zeros(2), np.zeros((2, 2)))
    built = sorted(count_builds)
    st.grad(program.full_loss, wrt="W")(x, rng.standard_normal((3, 2)), np.zeros(2), np.zeros((2, 2)))
    assert sorted(count_builds) == built == built_alone


def test_clear_cache_forces_a_rebuild(rng, count_builds):
    x = rng.standard_normal(3)
    st.grad(basic.square)(x)
    st.clear_cache()
    st.grad(basic.square)(x)
    assert count_builds == ["square", "square"]


def test_concurrent_first_calls_build_once(rng, monkeypatch, count_builds):
    real = srctrans.pipeline.build_reverse
    barrier = threading.Barrier(8)
    entered = threading.Event()

    def slow_build(*args, **kwargs):          # widen the race window
        entered.set()
        threading.Event().wait(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(srctrans.pipeline, "build_reverse", slow_build)
    inputs = [rng.standard_normal(5) for _ in range(8)]
    results, errors = [None] * 8, []

    def worker(i):
        try:
            barrier.wait()
            results[i] = st.grad(basic.scale_sum, wrt=(0, 1))(inputs[i], 2.0 * inputs[i])
        except BaseException as error:            # reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert count_builds == ["scale_sum"]
    for x, (dx, dy) in zip(inputs, results):
        np.testing.assert_allclose(dx, 2.0 * x)
        np.testing.assert_allclose(dy, x)


def test_one_gradient_function_called_with_changing_arguments(rng):
    """Repeated calls take a shortcut; every change of dtype, shape or kind still counts."""
    g = st.grad(basic.cubic, wrt=(0, 1))
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    for _ in range(3):                                             # same shapes: the shortcut
        dx, dy = g(x, y)
        np.testing.assert_allclose(dx, 2 * x * y)
        np.testing.assert_allclose(dy, x * x)
    dx32, _ = g(x.astype(np.float32), y.astype(np.float32))         # same shapes, float32
    assert dx32.dtype == np.float32
    with pytest.raises(st.NonDifferentiableError):                  # same shapes, ints
        g(np.arange(3), y)
    x4, y4 = rng.standard_normal(4), rng.standard_normal(4)         # new shapes
    np.testing.assert_allclose(g(x4, y4)[0], 2 * x4 * y4)
    np.testing.assert_allclose(g(x, y)[1], x * x)                   # and back


def test_a_float_that_decides_a_shape_gets_its_own_specialisation():
    g = st.grad(basic.rows_from_float)
    x = np.arange(4.0)
    for _ in range(2):                  # the second call with a key specialises on it
        np.testing.assert_allclose(g(x, 2.0), [1.0, 1.0, 5.0, 5.0])
        np.testing.assert_allclose(g(x, 4.0), [0.0, 0.5, 1.0, 1.5])      # rows of one element
    np.testing.assert_allclose(g(x, 2.0), [1.0, 1.0, 5.0, 5.0])

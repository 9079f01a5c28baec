"""Complex numbers, in both modes and to second order (docs/complex.md).

srctrans pairs a cotangent ``g`` with a tangent ``dz`` as ``Re(sum(g * dz))``, the
convention of autograd and JAX; ``st.check_grads`` checks with that pairing, drawing
complex directions and cotangents for complex values. Each function of the table runs
on complex128 arrays (with broadcasting where it takes two), complex64 arrays, real
arrays meeting complex constants, and Python complex numbers; holomorphic and
non-holomorphic functions alike.
"""

import numpy as np
import pytest

import srctrans as st


def crandom(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# -- holomorphic elementwise functions: their real rules hold ------------------
def f_negative(z): return np.negative(z)
def f_positive(z): return np.positive(z)
def f_square(z): return np.square(z)
def f_sqrt(z): return np.sqrt(z)
def f_reciprocal(z): return np.reciprocal(z)
def f_exp(z): return np.exp(z)
def f_exp2(z): return np.exp2(z)
def f_expm1(z): return np.expm1(z)
def f_log(z): return np.log(z)
def f_log2(z): return np.log2(z)
def f_log10(z): return np.log10(z)
def f_log1p(z): return np.log1p(z)
def f_sin(z): return np.sin(z)
def f_cos(z): return np.cos(z)
def f_tan(z): return np.tan(z)
def f_arcsin(z): return np.arcsin(z)
def f_arccos(z): return np.arccos(z)
def f_arctan(z): return np.arctan(z)
def f_sinh(z): return np.sinh(z)
def f_cosh(z): return np.cosh(z)
def f_tanh(z): return np.tanh(z)
def f_arcsinh(z): return np.arcsinh(z)
def f_arccosh(z): return np.arccosh(z)
def f_arctanh(z): return np.arctanh(z)
def f_sinc(z): return np.sinc(z)
def f_power_int(z): return z ** 3
def f_power_complex(z): return np.power(z, 0.5 + 0.25j)
def f_operators(z): return (z * 2.0 - 1j) / (z + 3.0)

# -- not holomorphic ------------------------------------------------------------
def f_abs(z): return np.abs(z)
def f_abs_builtin(z): return abs(z)
def f_real(z): return np.real(z)
def f_imag(z): return np.imag(z)
def f_real_attribute(z): return z.real * z.imag
def f_conj(z): return np.conj(z) * z
def f_conj_method(z): return z.conj() + z.conjugate()
def f_angle(z): return np.angle(z)
def f_angle_degrees(z): return np.angle(z, deg=True)
def f_sign(z): return np.sign(z)
def f_abs_squared(z): return np.abs(z) ** 2 + np.real(z * np.conj(z))

UNARY = [f_negative, f_positive, f_square, f_sqrt, f_reciprocal, f_exp, f_exp2, f_expm1,
         f_log, f_log2, f_log10, f_log1p, f_sin, f_cos, f_tan, f_arcsin, f_arccos, f_arctan,
         f_sinh, f_cosh, f_tanh, f_arcsinh, f_arccosh, f_arctanh, f_sinc, f_power_int,
         f_power_complex, f_operators,
         f_abs, f_abs_builtin, f_real, f_imag, f_real_attribute, f_conj, f_conj_method, f_angle,
         f_angle_degrees, f_sign, f_abs_squared]


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__[2:])
def test_unary_both_modes_second_order(fn):
    z = crandom(np.random.default_rng(0), (2, 3))
    st.check_grads(fn, (z,), order=2, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__[2:])
def test_unary_complex64(fn):
    z = crandom(np.random.default_rng(1), (4,))
    reference = st.vjp(fn, z)[1](np.ones(4))[0]
    out, pullback = st.vjp(fn, z.astype(np.complex64))
    cotangent = np.ones(np.shape(out), dtype=np.float32)
    gradient = pullback(cotangent)[0]
    assert gradient.dtype == np.complex64
    np.testing.assert_allclose(gradient, reference, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("fn", [f for f in UNARY if f is not f_conj_method],  # no complex.conj
                         ids=lambda f: f.__name__[2:])
def test_unary_python_complex(fn):
    z = complex(0.3, -0.7)
    st.check_grads(fn, (z,), rtol=1e-4, atol=1e-6)


# -- two arguments, broadcasting, real and complex mixed ------------------------
def f_add(z, w): return np.add(z, w)
def f_subtract(z, w): return np.subtract(z, w)
def f_multiply(z, w): return np.multiply(z, w)
def f_divide(z, w): return np.divide(z, w)
def f_true_divide(z, w): return np.true_divide(z, w)
def f_power(z, w): return np.power(z, w)
def f_float_power(z, w): return np.float_power(z, w)
def f_where(z, w): return np.where(np.real(z) > 0, z, w)
def f_mixed(z, w): return np.abs(z * w) + np.angle(z + w) * np.real(w)

BINARY = [f_add, f_subtract, f_multiply, f_divide, f_true_divide, f_power, f_float_power,
          f_where, f_mixed]


@pytest.mark.parametrize("kinds", ["complex-complex", "real-complex", "complex-real"])
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__[2:])
def test_binary_broadcasting(fn, kinds):
    rng = np.random.default_rng(2)
    left, right = kinds.split("-")
    z = crandom(rng, (3, 1)) if left == "complex" else rng.uniform(0.5, 2.0, (3, 1))
    w = crandom(rng, (4,)) if right == "complex" else rng.uniform(0.5, 2.0, (4,))
    st.check_grads(fn, (z, w), order=2, rtol=1e-4, atol=1e-6)
    gradients = st.vjp(fn, z, w)[1](np.ones((3, 4)))
    for gradient, argument in zip(gradients, (z, w)):
        assert gradient.shape == argument.shape
        assert gradient.dtype == argument.dtype     # a real argument's gradient is real


# -- real inputs whose values pass through complex numbers ----------------------
def r_phase(x):
    return np.sum(np.real(np.exp(1j * x)))

def r_rotate(x):
    return np.sum(np.abs(x * (1 + 1j)))

def r_astype(x):
    w = x.astype(complex)
    return np.sum((w * w).imag + np.abs(w))

def r_builtin_complex(x, y):
    return abs(complex(x, y)) + np.angle(complex(x, y))

def r_stacked(x):
    z = np.array([x, 1j * x])
    return np.sum(np.abs(z) ** 3)

def r_matrix(x, m):
    z = m @ (x + 0.5j)
    return np.sum(np.abs(z) ** 2)

def r_reductions(x):
    z = np.exp(1j * x) * x
    return np.abs(np.sum(z)) + np.abs(np.prod(z)) + np.real(np.mean(np.cumsum(z)))

def c_pinv(z):
    return np.sum(np.abs(np.linalg.pinv(z)))


def test_decompositions_of_complex_matrices_are_refused():
    """Their rules read conjugate transposes as transposes: a clear error, not a guess."""
    z = crandom(np.random.default_rng(9), (3, 5))
    with pytest.raises(st.UnsupportedSyntaxError, match="np.linalg.pinv of a complex matrix"):
        st.grad(c_pinv)(z)
    with pytest.raises(st.UnsupportedSyntaxError, match="np.linalg.svd of a complex matrix"):
        st.grad(c_svd)(z)


def c_svd(z):
    return np.sum(np.linalg.svd(z, compute_uv=False))


def r_linear_algebra(a):
    z = a + 1j * np.eye(3)
    return np.abs(np.linalg.det(z)) + np.sum(np.abs(np.linalg.inv(z)))


def r_complex_constant(x):
    # a complex constant added to a real value: the real value's cotangent is the real part
    # (it then reaches np.deg2rad's rule, which takes no complex numbers)
    return np.sum(np.abs(np.sqrt(np.deg2rad(x) + 3.0j)) + np.abs(np.deg2rad(x) * 2j))


def test_real_inputs_through_complex_values():
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, 4)
    for fn, args in ((r_phase, (x,)), (r_rotate, (x,)), (r_astype, (x,)),
                     (r_builtin_complex, (0.4, -0.8)), (r_stacked, (x,)),
                     (r_matrix, (x, crandom(rng, (3, 4)))), (r_reductions, (x,)),
                     (r_linear_algebra, (rng.standard_normal((3, 3)),)),
                     (r_complex_constant, (x,)), (r_complex_constant, (0.5,))):
        st.check_grads(fn, args, order=2, rtol=1e-4, atol=1e-6, wrt=0)
        gradient = st.grad(fn)(*args)
        assert not np.iscomplexobj(gradient), fn.__name__


def test_known_values():
    """The convention itself, on values worked by hand."""
    z = np.array([3.0 + 4.0j])
    # |z|**2 = x**2 + y**2: dL/dx - 1j dL/dy = 2x - 2yj = 2 conj(z)
    np.testing.assert_allclose(st.grad(lambda_abs2)(z), 2 * np.conj(z))
    # the real part of a holomorphic function: its derivative
    np.testing.assert_allclose(st.grad(real_of_square)(z), 2 * z)
    # grad of a complex output: that of its real part (f'(z) for a holomorphic f)
    np.testing.assert_allclose(st.grad(cube)(z), 3 * z ** 2)
    # the tangent of |z| along dz: Re(conj(z) dz) / |z|
    _, tangent = st.jvp(abs_sum, (z,), (np.array([1j]),))
    np.testing.assert_allclose(tangent, 4.0 / 5.0)


def lambda_abs2(z):
    return np.sum(np.abs(z) ** 2)

def real_of_square(z):
    return np.sum(np.real(z * z))

def cube(z):
    return np.sum(z ** 3)

def abs_sum(z):
    return np.sum(np.abs(z))


def test_gradient_descent_with_the_conjugate():
    """Step against the conjugate of the gradient to descend (docs/complex.md)."""
    target = np.array([1.0 - 2.0j, 0.5j])
    z = np.zeros(2, dtype=complex)
    for _ in range(200):
        z = z - 0.1 * np.conj(st.grad(distance)(z, target))
    np.testing.assert_allclose(z, target, atol=1e-6)


def distance(z, target):
    return np.sum(np.abs(z - target) ** 2)


def test_a_real_argument_rejects_a_complex_tangent():
    with pytest.raises(st.NonDifferentiableError, match="tangent is complex"):
        st.jvp(r_phase, (np.ones(3),), (np.ones(3) * 1j,))


# -- every elementwise rule NumPy defines for complex numbers ------------------------
def call_one(fn, z):
    return fn(z)

def call_two(fn, z, w):
    return fn(z, w)


def _elementwise_primals():
    """The NumPy and scipy.special functions with elementwise rules, and how many arrays
    they take."""
    import scipy.special  # noqa: F401  (loads the rules of scipy.special)
    from srctrans.rules import REGISTRY
    import srctrans.rules.scipy_special  # noqa: F401
    found = []
    for rule in REGISTRY.rules():
        primal = rule.primal
        if rule.vjp is None or rule.vjp.__module__ not in (
                "srctrans.rules.elementwise", "srctrans.rules.complex_numbers",
                "srctrans.rules.scipy_special"):
            continue
        if not (isinstance(primal, np.ufunc) or getattr(primal, "__module__", "").startswith("numpy")):
            continue                                  # math.* take real numbers only
        arity = primal.nin if isinstance(primal, np.ufunc) else \
            len([p for p in rule.template.signature.parameters.values()
                 if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD])
        if arity in (1, 2):
            found.append((primal, arity))
    return found


def _complex_arguments(arity):
    rng = np.random.default_rng(4)
    return (crandom(rng, (2, 3)),) if arity == 1 else (crandom(rng, (2, 3)), crandom(rng, (3,)))


def _defined_for_complex(primal, arity):
    try:
        with np.errstate(all="ignore"):
            primal(*_complex_arguments(arity))
    except TypeError:
        return False
    return True


# the functions NumPy refuses for complex numbers are left to NumPy's error: not generated
ELEMENTWISE = [(p, arity) for p, arity in _elementwise_primals() if _defined_for_complex(p, arity)]


@pytest.mark.parametrize("primal, arity", ELEMENTWISE, ids=[p.__name__ for p, _ in ELEMENTWISE])
def test_every_elementwise_rule_numpy_defines_for_complex(primal, arity):
    """Each elementwise rule whose function NumPy evaluates on complex numbers, on complex
    arguments (broadcast against each other), in both modes and to second order."""
    args = _complex_arguments(arity)
    caller = call_one if arity == 1 else call_two
    wrt = tuple(range(1, arity + 1))
    refused_from = POLYGAMMA_ORDER.get(primal.__name__)
    if refused_from is not None:
        if refused_from == 2:
            st.check_grads(caller, (primal,) + args, wrt=wrt, rtol=1e-4, atol=1e-6)
        with pytest.raises(st.UnsupportedSyntaxError, match="polygamma"):
            st.check_grads(caller, (primal,) + args, order=2, wrt=wrt)
        return
    st.check_grads(caller, (primal,) + args, order=2, wrt=wrt, rtol=1e-4, atol=1e-6)


# SciPy's polygamma takes real numbers only, so at complex numbers the derivatives that
# need it are refused: digamma's (psi's) first, gamma's second
POLYGAMMA_ORDER = {"psi": 1, "gamma": 2}


def test_the_sweep_covers_the_complex_functions():
    """A guard on the sweep above: it reaches the functions of complex numbers."""
    names = {p.__name__ for p, _ in ELEMENTWISE}
    assert {"exp", "sqrt", "absolute", "multiply", "divide", "power", "arcsin", "erf",
            "gamma"} <= names


# -- matrices of derivatives ----------------------------------------------------------
def spectrum_weighted(x):
    return np.fft.rfft(x) * np.exp(1j * x[:3])

def rows_through_fft(x):
    return np.fft.fft(x, axis=-1) * np.exp(1j * x)

def modulus_loss(z):
    return np.sum(np.abs(np.sin(z) * z) ** 2)


def test_jacobians_of_complex_outputs_agree_in_both_modes():
    """A real argument's Jacobian of a complex output is a complex matrix; reverse mode takes
    two pullbacks per row for it (the cotangent of a real argument is real)."""
    x = np.array([0.3, -1.2, 0.8, 0.5])
    reverse = st.jacobian(spectrum_weighted, mode="reverse")(x)
    forward = st.jacobian(spectrum_weighted, mode="forward")(x)
    assert reverse.dtype == np.complex128 and reverse.shape == (3, 4)
    np.testing.assert_allclose(reverse, forward, atol=1e-12)
    step = 1e-6 * np.eye(4)[1]
    numeric = (spectrum_weighted(x + step) - spectrum_weighted(x - step)) / 2e-6
    np.testing.assert_allclose(reverse[:, 1], numeric, atol=1e-8)
    batch = np.array([[0.3, -1.2, 0.8], [0.5, 0.1, -0.7]])
    np.testing.assert_allclose(st.batch_jacobian(rows_through_fft, mode="reverse")(batch),
                               st.batch_jacobian(rows_through_fft, mode="forward")(batch))


def test_matrices_of_derivatives_refuse_complex_arguments():
    z = np.array([0.3 + 0.2j, -0.5 + 1j])
    for transform in (st.jacobian, st.batch_jacobian, st.hessian):
        with pytest.raises(st.NonDifferentiableError, match="holomorphic"):
            transform(modulus_loss)(z)


def test_hessian_vector_products_of_complex_arguments():
    """st.hvp is the JVP of the gradient, which is defined for complex arguments too."""
    z = np.array([0.3 + 0.2j, -0.5 + 1j, 0.1 - 0.4j])
    v = np.array([1.0 + 0.5j, -0.3j, 0.7])
    step = 1e-6
    numeric = (st.grad(modulus_loss)(z + step * v) - st.grad(modulus_loss)(z - step * v)) / (2 * step)
    np.testing.assert_allclose(st.hvp(modulus_loss, (z,), (v,))[0], numeric, rtol=1e-5, atol=1e-6)


# -- complex values through the language: loops, branches, writes, containers, calls ----
def loop_state(z):
    h = z * 0.5
    for t in range(3):
        h = np.tanh(h * z + 0.1j * t)
    return np.sum(np.abs(h) ** 2)
def while_state(z):
    h = z
    k = 0
    while k < 3:
        h = h * 0.9 + np.sin(h) * 0.1j
        k = k + 1
    return np.sum(np.real(h * np.conj(h)))
def branch(z):
    if np.sum(np.real(z)) > 0:
        w = z * z
    else:
        w = np.exp(z)
    return np.sum(np.abs(w))
def writes(z):
    y = np.zeros(4, dtype=complex)
    y[0] = z[1] * 2.0
    y[1:] = np.conj(z[:3]) * z[1:]
    y[2] += 1j * z[0]
    return np.sum(np.abs(y) ** 2)
def writes_real_into_complex(x):
    y = np.zeros(4, dtype=complex)
    y[1:] = x[:3] * 1j
    y[0] = x[3]
    return np.sum(np.abs(y + 0.5) ** 2)
def containers(z):
    parts = [z * 2.0, np.conj(z)]
    d = {"a": parts[0], "b": parts[1] * 1j}
    total = 0.0
    for k, v in d.items():
        total = total + np.sum(np.abs(v) ** 2)
    return total + np.abs(np.sum(np.stack(parts)))
def helper(w):
    return np.sum(w * np.conj(w)).real
def calls_helper(z):
    return helper(z * (1 + 2j)) + helper(np.sin(z))
def rows(z):
    m = np.outer(z, z)
    total = 0.0
    for row in m:
        total = total + np.abs(np.sum(row))
    return total
def comprehension(z):
    return sum([np.abs(np.sum(z ** k)) for k in range(1, 4)])
def matmul_loop(z):
    A = np.outer(z, np.conj(z)) + np.eye(4)
    v = z
    for _ in range(3):
        v = A @ v / np.linalg.norm(v)
    return np.abs(np.vdot(v, z)) + np.abs(np.sum(v * np.conj(z)))

LANGUAGE = [loop_state, while_state, branch, writes, containers, calls_helper, rows,
            comprehension, matmul_loop]


@pytest.mark.parametrize("fn", LANGUAGE, ids=lambda f: f.__name__)
def test_complex_values_through_the_language(fn):
    """Loops and their tapes, branches, writes into complex arrays, containers, calls of
    user functions: complex arguments to second order, generic and repeated calls."""
    z = crandom(np.random.default_rng(5), (4,))
    st.check_grads(fn, (z,), order=2, rtol=1e-4, atol=1e-6)
    for _ in range(3):                       # the calls that would specialise real code
        st.grad(fn)(z)
    st.check_grads(fn, (z,), rtol=1e-4, atol=1e-6)


def test_real_values_written_into_a_complex_array():
    x = np.random.default_rng(6).normal(size=4)
    st.check_grads(writes_real_into_complex, (x,), order=2, rtol=1e-4, atol=1e-6)
    assert st.grad(writes_real_into_complex)(x).dtype == np.float64


def test_complex_values_on_dask_arrays_stay_lazy():
    """np.fft and complex arithmetic on a Dask array: the gradient is a Dask array, equal to
    NumPy's (the rule harness of tests/test_duck_arrays.py compares floats only)."""
    da = pytest.importorskip("dask.array")
    x = np.linspace(0.0, 1.0, 8)
    for fn in (high_frequency_power, rotated_modulus):
        lazy = st.grad(fn)(da.from_array(x, chunks=8))
        assert isinstance(lazy, da.Array)
        np.testing.assert_allclose(lazy.compute(), st.grad(fn)(x), rtol=1e-12)


def high_frequency_power(signal):
    return np.sum(np.abs(np.fft.rfft(signal)[2:]) ** 2)

def rotated_modulus(x):
    return np.sum(np.abs(x * (1 + 2j)) + np.angle(x + 0.5j))


# -- scipy.linalg with complex matrices -------------------------------------------------
def l_expm(z): return np.sum(np.abs(sl.expm(z)) ** 2)
def l_solve(z): return np.sum(np.abs(sl.solve(z, B)) ** 2)
def l_solve_symmetric(z): return np.sum(np.abs(sl.solve(z + z.T, B, assume_a="sym")) ** 2)
def l_inv_det(z): return np.sum(np.abs(sl.inv(z))) + np.abs(sl.det(z))
def l_triangular(z):
    return np.sum(np.abs(sl.solve_triangular(np.triu(z), B, trans=1)) ** 2)
def l_lu(z): return np.sum(np.abs(sl.lu_solve(sl.lu_factor(z), B, trans=1)) ** 2)
def l_sqrtm(z): return np.sum(np.abs(sl.sqrtm(z)) ** 2)
def l_sylvester(z): return np.sum(np.abs(sl.solve_sylvester(z, z.T + 3 * np.eye(3), np.outer(B, B))))
def l_cholesky(z): return np.sum(np.abs(sl.cho_solve(sl.cho_factor(z @ np.conj(z).T), B)))
def l_positive(z): return np.sum(np.abs(sl.solve(z @ np.conj(z).T, B, assume_a="pos")))
def l_conjugate_transpose(z):
    return np.sum(np.abs(sl.solve_triangular(np.triu(z), B, trans="C")))

sl = pytest.importorskip("scipy.linalg")
B = np.array([1.0 + 0.5j, -0.3j, 0.7])


@pytest.mark.parametrize("fn", [l_expm, l_solve, l_solve_symmetric, l_inv_det, l_triangular,
                                l_lu, l_sqrtm, l_sylvester], ids=lambda f: f.__name__[2:])
def test_scipy_linalg_of_complex_matrices(fn):
    z = crandom(np.random.default_rng(7), (3, 3)) * 0.5 + 2.0 * np.eye(3)
    st.check_grads(fn, (z,), order=2, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("fn", [l_cholesky, l_positive, l_conjugate_transpose],
                         ids=lambda f: f.__name__[2:])
def test_scipy_linalg_refuses_what_it_reads_as_hermitian(fn):
    """A Hermitian matrix read from one triangle, and conjugate-transposed solves, have
    derivatives these rules do not compute for complex matrices: a clear error."""
    z = crandom(np.random.default_rng(7), (3, 3)) * 0.5 + 2.0 * np.eye(3)
    with pytest.raises(st.UnsupportedSyntaxError, match="complex matrix"):
        st.grad(fn)(z)


# -- convolutions: np.correlate and scipy.signal.correlate conjugate their second input --
def c_np_convolve(z, w): return np.convolve(z, w)
def c_np_correlate(z, w): return np.correlate(z, w, "full")
def c_signal_convolve(z, w): return signal.convolve(z, w, mode="same")
def c_signal_correlate(z, w): return signal.correlate(z, w, mode="valid")

signal = pytest.importorskip("scipy.signal")


@pytest.mark.parametrize("kinds", ["complex-complex", "real-complex", "complex-real"])
@pytest.mark.parametrize("fn", [c_np_convolve, c_np_correlate, c_signal_convolve,
                                c_signal_correlate], ids=lambda f: f.__name__[2:])
def test_convolutions_of_complex_signals(fn, kinds):
    rng = np.random.default_rng(8)
    left, right = kinds.split("-")
    z = crandom(rng, (6,)) if left == "complex" else rng.normal(size=6)
    w = crandom(rng, (3,)) if right == "complex" else rng.normal(size=3)
    st.check_grads(fn, (z, w), order=2, rtol=1e-4, atol=1e-6)


def eigenvalue_energy(x, W):
    v = np.linalg.eigvals(W + x * np.array([[0.0, 1.0], [-1.0, 0.0]]))
    return np.sum(np.abs(v)) + np.max(np.real(v))


def test_eigenvalues_real_at_one_call_and_complex_at_the_next_keep_the_generic_code():
    """``np.linalg.eigvals`` is real or complex as the values decide: code specialised on a
    call whose eigenvalues were real gave a wrong gradient at a call of the same shapes whose
    eigenvalues were complex (the fuzzer's seed 20261129191, program 216)."""
    W = np.array([[0.19655619068993935, -0.3164966352035068],
                  [-0.25596100545142847, -0.4249100737012642]])
    real, complex_ = (0.05, W), (0.9, W * 0.5 + 0.7)
    if not np.isrealobj(np.linalg.eigvals(np.diag([1.0, 2.0]))):
        pytest.skip("this NumPy (2.5 and later) returns complex eigenvalues for every matrix: "
                    "no two calls of one shape differ in kind")
    assert np.isrealobj(np.linalg.eigvals(W + 0.05 * np.array([[0.0, 1.0], [-1.0, 0.0]])))
    assert np.iscomplexobj(np.linalg.eigvals(W * 0.5 + 0.7 + 0.9 * np.array([[0.0, 1.0], [-1.0, 0.0]])))
    gradient = st.grad(eigenvalue_energy, wrt=(0, 1))
    for args in (real, real, real, complex_, complex_):
        for got, want in zip(gradient(*args), st.grad(eigenvalue_energy, wrt=(0, 1),
                                                      optimize=False)(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-10)
    assert "real or complex as values decide" in st.source(eigenvalue_energy, wrt=(0, 1), args=real)
    st.check_grads(eigenvalue_energy, complex_, order=1)


def test_unbroadcast_keeps_a_real_operands_cotangent_real_at_one_shape():
    """rt.unbroadcast's short path for two arrays of one shape returns the cotangent as it is
    but for a complex cotangent of a real operand: its real part (docs/complex.md)."""
    from srctrans import runtime as rt
    g = np.array([[1.0 + 2.0j, -3.0j]])
    real = rt.unbroadcast(g, np.zeros((1, 2)))
    assert real.dtype == np.float64
    np.testing.assert_array_equal(real, [[1.0, 0.0]])
    assert rt.unbroadcast(g, np.zeros((1, 2), complex)) is g
    narrow = np.ones((1, 2), np.float32)
    assert rt.unbroadcast(narrow, np.zeros((1, 2))) is narrow
    np.testing.assert_array_equal(rt.unbroadcast(g.astype(np.complex64), np.zeros((1, 2), np.float32)),
                                  np.array([[1.0, 0.0]], np.float32))

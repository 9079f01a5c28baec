"""Jacobians, batch Jacobians, Hessians, HVPs and nested derivatives (numbers from the seeds)."""

import numpy as np
import pytest

import srctrans as st
from programs import composed as programs


def _rng(seed=0):
    return np.random.default_rng(seed)


# -- Jacobians -------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_jacobian_of_a_dense_relu_layer_wrt_its_kernel(mode):
    rng = _rng(0)
    x, kernel, bias = rng.standard_normal((7, 5)), rng.standard_normal((5, 10)), rng.standard_normal(10)
    j = st.jacobian(programs.dense_relu, wrt=1, mode=mode)(x, kernel, bias)
    assert j.shape == (7, 10, 5, 10)
    gradient = st.grad(programs.dense_relu, wrt=1)(x, kernel, bias)
    np.testing.assert_allclose(j.sum(axis=(0, 1)), gradient, rtol=1e-12, atol=1e-12)


def test_jacobian_against_finite_differences_in_both_modes():
    rng = _rng(1)
    x, y = rng.standard_normal(3), rng.uniform(0.5, 1.5, 3)
    reverse = st.jacobian(programs.smooth, wrt=(0, 1), mode="reverse")(x, y)
    forward = st.jacobian(programs.smooth, wrt=(0, 1), mode="forward")(x, y)
    eps = 1e-6
    for k, (r, f) in enumerate(zip(reverse, forward)):
        np.testing.assert_allclose(r, f, rtol=1e-12, atol=1e-12)
        for column in range(3):
            step = np.zeros(3)
            step[column] = eps
            args_plus = [x, y]
            args_minus = [x, y]
            args_plus[k] = args_plus[k] + step
            args_minus[k] = args_minus[k] - step
            numeric = (programs.smooth(*args_plus) - programs.smooth(*args_minus)) / (2 * eps)
            np.testing.assert_allclose(r[:, column], numeric, rtol=1e-6, atol=1e-8)


def test_jacobian_of_a_100_to_100_function():
    x = _rng(2).standard_normal(100)
    for mode in ("reverse", "forward"):
        j = st.jacobian(programs.cube, mode=mode)(x)
        np.testing.assert_allclose(j, np.diag(3 * x ** 2))


def test_batch_jacobian_of_two_elu_layers_is_the_diagonal_of_the_full_one():
    rng = _rng(3)
    x = rng.standard_normal((7, 5))
    W1, b1 = rng.standard_normal((5, 8)), rng.standard_normal(8)
    W2, b2 = rng.standard_normal((8, 6)), rng.standard_normal(6)
    full = st.jacobian(programs.two_elu_layers)(x, W1, b1, W2, b2)
    assert full.shape == (7, 6, 7, 5)
    for mode in ("reverse", "forward", "auto"):
        batch = st.batch_jacobian(programs.two_elu_layers, mode=mode)(x, W1, b1, W2, b2)
        assert batch.shape == (7, 6, 5)
        np.testing.assert_allclose(batch, np.einsum("bxby->bxy", full), rtol=1e-12, atol=1e-12)


def test_batch_jacobian_needs_a_shared_batch_axis():
    with pytest.raises(st.ShapeError, match="batch"):
        st.batch_jacobian(programs.dense_relu, wrt=1)(np.ones((7, 5)), np.ones((5, 10)), np.ones(10))


def named_outputs(x, params):
    return {"h": np.tanh(x @ params["W"]), "norm": np.sum(x * x), "count": 3}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_container_outputs_nests_outputs_outside(mode):
    rng = _rng(5)
    x, params = rng.standard_normal((2, 3)), {"W": rng.standard_normal((3, 4)), "k": 2}
    Jx, Jp = st.jacobian(named_outputs, wrt=(0, 1), mode=mode)(x, params)
    assert Jx["count"] is None and Jp["count"] is None and Jp["h"]["k"] is None
    assert Jx["h"].shape == (2, 4, 2, 3) and Jp["h"]["W"].shape == (2, 4, 3, 4)
    np.testing.assert_allclose(Jx["norm"], 2 * x, rtol=1e-12)
    eps = 1e-6
    for index in np.ndindex(3, 4):
        moved = [dict(params, W=params["W"] + sign * eps * (np.arange(12).reshape(3, 4) ==
                                                             np.ravel_multi_index(index, (3, 4))))
                 for sign in (1, -1)]
        numeric = (named_outputs(x, moved[0])["h"] - named_outputs(x, moved[1])["h"]) / (2 * eps)
        np.testing.assert_allclose(Jp["h"]["W"][(...,) + index], numeric, rtol=1e-6, atol=1e-9)
    values = st.jacobian(programs.returns_tuple, wrt=(0, 1))(np.ones(2), np.full(2, 2.0))
    assert isinstance(values[0], tuple) and len(values[0]) == 2
    np.testing.assert_allclose(values[0][0], np.diag([2.0, 2.0]), rtol=1e-12)     # d(x y)/dx
    np.testing.assert_allclose(values[0][1], np.diag(np.cos([1.0, 1.0])), rtol=1e-12)
    np.testing.assert_allclose(values[1][1], np.zeros((2, 2)))                  # sin(x) by y


# -- Hessians and HVPs ----------------------------------------------------------------
def test_hessian_of_a_two_layer_loss_wrt_a_5_by_8_kernel_is_symmetric_and_gives_a_newton_step():
    rng = _rng(4)
    W1, b1 = rng.standard_normal((5, 8)), rng.standard_normal(8)
    W2, b2 = rng.standard_normal((8, 6)), rng.standard_normal(6)
    x = rng.standard_normal((7, 5))
    h = st.hessian(programs.two_relu_layers_loss)(W1, b1, W2, b2, x)
    assert h.shape == (5, 8, 5, 8)
    h_mat = h.reshape(40, 40)
    np.testing.assert_allclose(h_mat, h_mat.T, rtol=1e-10, atol=1e-12)
    # the Hessian against finite differences of the gradient, column by column
    gradient = st.grad(programs.two_relu_layers_loss)
    eps = 1e-6
    for column in (0, 13, 39):
        step = np.zeros(40)
        step[column] = eps
        step = step.reshape(5, 8)
        numeric = (gradient(W1 + step, b1, W2, b2, x) - gradient(W1 - step, b1, W2, b2, x)) / (2 * eps)
        np.testing.assert_allclose(h_mat[:, column], numeric.ravel(), rtol=1e-5, atol=1e-7)
    # a Newton step on the loss as a function of W1 (regularised, as in the seed)
    g_vec = gradient(W1, b1, W2, b2, x).reshape(40, 1)
    update = np.linalg.solve(h_mat + 1e-3 * np.eye(40), g_vec)
    assert update.shape == (40, 1) and np.all(np.isfinite(update))


def test_hvp_of_sum_of_cubes():
    (hv,) = st.hvp(programs.sum_of_cubes, (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(hv, [6.0, 0.0])


def test_hvp_equals_hessian_times_vector():
    rng = _rng(5)
    args = (rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal(5),
            rng.standard_normal((5, 2)), rng.standard_normal((4, 2)))
    v = rng.standard_normal((3, 5))
    h = st.hessian(programs.mlp_loss, wrt=1)(*args)
    hv = st.hvp(programs.mlp_loss, args, (None, v, None, None, None))
    assert hv[0] is None and hv[2] is None
    np.testing.assert_allclose(hv[1], np.einsum("ijkl,kl->ij", h, v), rtol=1e-10, atol=1e-12)


def test_hessian_of_several_arguments_is_blocks():
    blocks = st.hessian(programs.smooth, wrt=(0, 1))(np.array([0.3, 0.4]), np.array([1.2, 0.8]))
    assert [[b.shape for b in row] for row in blocks] == [[(2, 2)] * 2] * 2
    np.testing.assert_allclose(blocks[0][1], blocks[1][0].T, rtol=1e-12)


# -- nesting ------------------------------------------------------------------------------
def test_second_derivative_of_cube_at_1_is_6():
    assert st.grad(st.grad(programs.cube))(1.0) == pytest.approx(6.0)


def test_nested_jvps_of_p_to_the_3_5():
    first, second = st.jvp(programs.first_derivative_of_power, (1.1,), (1.0,))
    assert first == pytest.approx(4.4417, abs=1e-4)
    assert second == pytest.approx(10.0948, abs=1e-4)


@pytest.mark.parametrize("name", ["grad_of_smooth_wrt_x", "jvp_of_smooth_along_x", "via_global_gradient"])
def test_derivatives_of_functions_that_call_srctrans(name):
    st.check_grads(getattr(programs, name), (0.3, 1.4), modes=("forward", "reverse"))


@pytest.mark.parametrize("outer", ["grad", "jvp"])
@pytest.mark.parametrize("inner", ["grad", "jvp"])
def test_nesting_in_any_order(outer, inner):
    x, y = 0.3, 1.4
    eps = 1e-6
    first = programs.grad_of_smooth_wrt_x if inner == "grad" else programs.jvp_of_smooth_along_x
    numeric = (first(x + eps, y) - first(x - eps, y)) / (2 * eps)
    if outer == "grad":
        value = st.grad(first)(x, y)
    else:
        _, value = st.jvp(first, (x, y), (1.0, None))
    assert value == pytest.approx(numeric, rel=1e-6)


def test_input_gradient_regularisation_matches_finite_differences():
    rng = _rng(6)
    x, kernel, bias = rng.standard_normal((7, 5)), rng.standard_normal((5, 10)), rng.standard_normal(10)
    st.check_grads(programs.input_gradient_norm, (kernel, bias, x), modes=("reverse",), wrt=(0, 1))
    d_kernel, d_bias = st.grad(programs.input_gradient_norm, wrt=(0, 1))(kernel, bias, x)
    assert d_kernel.shape == (5, 10) and d_bias.shape == (10,)


def test_check_grads_order_2():
    st.check_grads(programs.smooth, (np.array([0.3, 0.5]), np.array([1.1, 0.7])), order=2)
    st.check_grads(programs.mlp_loss, (_rng(7).standard_normal((4, 3)), _rng(8).standard_normal((3, 5)),
                                       _rng(9).standard_normal(5), _rng(10).standard_normal((5, 2)),
                                       _rng(11).standard_normal((4, 2))), order=2, wrt=(1, 3))


def test_check_grads_order_2_catches_a_wrong_second_derivative():
    """A wrong JVP of cos goes unseen at first order on sin(x) * y (cos appears only
    in the tangent code) and is caught at second order."""
    from srctrans.rules import REGISTRY
    original = REGISTRY.lookup(np.cos).jvp
    args = (np.array([0.3]), np.array([1.1]))
    try:
        REGISTRY.register_jvp(np.cos, _wrong_cos_jvp, replace=True)
        st.clear_cache()
        st.check_grads(programs.smooth, args, modes=("forward",))
        with pytest.raises(AssertionError, match=r"forward-mode \(generic code\) derivative of the (gradient|JVP) of smooth"):
            st.check_grads(programs.smooth, args, order=2, modes=("forward",))
    finally:
        REGISTRY.register_jvp(np.cos, original, replace=True)
        st.clear_cache()


def _wrong_cos_jvp(dx, ans, x):
    return dx * np.sin(x)


def test_second_derivatives_of_a_loop_forward_over_reverse():
    """The gradient of a loop pushes to and pops from a tape; forward mode pops its tangents."""
    x, w = np.array([0.7, -0.4]), 0.9
    h = st.hessian(programs.rolled, wrt=(0, 1))(x, w)
    gradient = st.grad(programs.rolled, wrt=(0, 1))
    eps = 1e-6
    for k in range(2):
        step = np.zeros(2)
        step[k] = eps
        plus, minus = gradient(x + step, w), gradient(x - step, w)
        np.testing.assert_allclose(h[0][0][:, k], (plus[0] - minus[0]) / (2 * eps), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(h[1][0][k], (plus[1] - minus[1]) / (2 * eps), rtol=1e-6, atol=1e-8)
    st.check_grads(st.grad(programs.rolled, wrt=(0, 1)), (x, w), modes=("forward",))


def test_reverse_over_reverse_through_a_loop():
    """The gradient's tape is popped in its reversed loop; reverse mode pushes the
    cotangents of what it popped back onto the tape's cotangent."""
    x, w = np.array([0.7, -0.4]), 0.9
    h = st.hessian(programs.rolled, wrt=(0, 1))(x, w)
    second = st.grad(lambda_free_sum_of_gradient, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(second[0], h[0][0].sum(axis=0) + h[1][0], rtol=1e-10)
    np.testing.assert_allclose(second[1], h[0][1].sum() + h[1][1], rtol=1e-10)
    st.check_grads(programs.rolled, (x, w), order=2)
    st.check_grads(programs.loop_with_branch, (np.array([0.3, -0.2, 0.5]), 3), order=2)


def lambda_free_sum_of_gradient(x, w):
    dx, dw = rolled_gradient(x, w)
    return np.sum(dx) + dw


rolled_gradient = st.grad(programs.rolled, wrt=(0, 1))


# -- pytrees: arguments that are dicts, lists and tuples of arrays ------------------------

def _params(rng):
    return {"mu": rng.standard_normal(3), "log_sigma": np.asarray(0.2 * rng.standard_normal()),
            "count": 2}


def _moved(params, key, index, step):
    moved = dict(params)
    value = np.array(params[key], dtype=float)
    value.reshape(-1)[index] += step
    moved[key] = value
    return moved


def test_hessian_of_a_dict_of_parameters_is_nested_by_pairs_of_entries():
    """H["mu"]["log_sigma"] has shape mu.shape + log_sigma.shape (JAX's layout); an int
    entry is a constant, with no block."""
    rng = np.random.default_rng(4)
    params, data = _params(rng), rng.standard_normal(3)
    H = st.hessian(programs.gaussian_nll)(params, data)
    assert set(H) == {"mu", "log_sigma", "count"} and H["count"] is None
    assert H["mu"]["count"] is None and H["mu"]["mu"].shape == (3, 3)
    assert H["mu"]["log_sigma"].shape == (3,) and H["log_sigma"]["mu"].shape == (3,)
    grad = st.grad(programs.gaussian_nll)
    step = 1e-6
    for column in ("mu", "log_sigma"):
        for index in range(np.size(params[column])):
            plus = grad(_moved(params, column, index, step), data)
            minus = grad(_moved(params, column, index, -step), data)
            for row in ("mu", "log_sigma"):
                expected = (plus[row] - minus[row]) / (2 * step)
                got = np.reshape(H[row][column], np.shape(params[row]) + (-1,))[..., index]
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_list_of_layers_is_nested_like_the_list(mode):
    rng = np.random.default_rng(5)
    layers = [(rng.standard_normal((3, 4)), rng.standard_normal(4)),
              (rng.standard_normal((4, 2)), rng.standard_normal(2))]
    x = rng.standard_normal(3)
    J = st.jacobian(programs.layered_outputs, mode=mode)(layers, x)
    assert [[block.shape for block in pair] for pair in J] == [[(2, 3, 4), (2, 4)],
                                                              [(2, 4, 2), (2, 2)]]
    step = 1e-6
    for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)):
        for index in range(layers[i][j].size):
            moved = [list(pair) for pair in layers]
            plus, minus = (np.array(layers[i][j]) for _ in range(2))
            plus.reshape(-1)[index] += step
            minus.reshape(-1)[index] -= step
            moved[i][j] = plus
            high = programs.layered_outputs(moved, x)
            moved[i][j] = minus
            low = programs.layered_outputs(moved, x)
            got = np.reshape(J[i][j], (2, -1))[:, index]
            np.testing.assert_allclose(got, (high - low) / (2 * step), rtol=1e-6, atol=1e-8)


def test_hessian_of_a_dict_and_an_array_is_a_tuple_of_rows_of_nested_blocks():
    rng = np.random.default_rng(6)
    params, data = _params(rng), rng.standard_normal(3)
    H = st.hessian(programs.gaussian_nll, wrt=(0, 1))(params, data)
    assert H[0][1]["mu"].shape == (3, 3) and H[1][0]["log_sigma"].shape == (3,)
    np.testing.assert_allclose(H[0][1]["mu"], H[1][0]["mu"].T, rtol=1e-12)
    np.testing.assert_allclose(H[1][1], H[1][1].T, rtol=1e-12)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_the_jvp_of_a_gradient_reads_no_tangent_known_to_be_zero():
    """The tangent of the gradient's seed (``rt.unreduce(1.0, ...)``) is zero: forward mode
    leaves the products with it out instead of multiplying zeros, and then drops the zeros
    themselves (dead code: a resolved runtime call)."""
    import ast
    gradient = st.grad(rosenbrock)
    text = st.source(gradient, mode="forward")
    tree = ast.parse(text)
    zeros = {node.targets[0].id for node in ast.walk(tree)
             if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
             and isinstance(node.value.func, ast.Attribute)
             and node.value.func.attr in ("zeros_of", "zeros_like")
             and isinstance(node.targets[0], ast.Name)}
    assert not zeros, text                         # neither read nor written
    x, v = np.linspace(-1.0, 1.5, 6), np.cos(np.arange(6.0))
    _, hv = st.jvp(gradient, (x,), (v,))
    step = 1e-6
    fd = (gradient(x + step * v) - gradient(x - step * v)) / (2 * step)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-6)

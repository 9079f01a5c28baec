"""Specialised code knows which values hold floats: it reads them without ``1.0 *``.

A parameter that is not differentiated (a mask, labels, an upstream gradient) may hold ints or
booleans, so the generic code multiplies it by ``1.0`` before it is a cotangent. The shape key
holds the kind of each int or bool array, and the measuring run notes the names that held
floats, so code specialised for float arrays reads them as they are, and a call with int arrays
of the same shapes gets code of its own.
"""

import numpy as np

import srctrans as st


def product_of_three(w, a, b):
    return np.sum((w * a) * b)


def product_and_copy(w, v, a, b):
    return np.sum((w * a) * b) + np.sum(v * b)


def kind_changes_in_loop(w, m):
    s = m
    total = 0.0
    for _ in range(2):
        total = total + np.sum((w * s) * s)
        s = s * 1.5
    return total


def upstream(x, dout):
    return np.sum(np.tanh(x) * dout)


def _calls(gradient, *args, times=3):
    return [gradient(*args) for _ in range(times)]


def _fused_source(fn, args, **options):
    return st.source(fn, args=args, **options).split("_grad(")[-1]


def test_a_float_argument_not_differentiated_is_read_without_a_copy():
    x, dout = np.linspace(-1, 1, 6), np.linspace(0.5, 2, 6)
    fused = _fused_source(upstream, (x, dout))
    assert "1.0 *" not in fused and "dout" in fused
    ints = _fused_source(upstream, (x, np.arange(6)))
    assert "1.0 * dout" in ints


def test_int_arrays_of_a_float_calls_shapes_get_code_of_their_own():
    # float code multiplies b * a; on int8 arrays that wraps round (100 * 100 is 16)
    w, floats = np.ones(3), np.array([100.0, 2.0, 3.0])
    ints = floats.astype(np.int8)
    gradient = st.grad(product_of_three)
    for answer in _calls(gradient, w, floats, floats) + _calls(gradient, w, ints, ints):
        np.testing.assert_array_equal(answer, [1e4, 4.0, 9.0])
        assert answer.dtype == np.float64


def test_the_short_path_of_a_gradient_it_copies_checks_every_dtype():
    # the gradient of v is b itself (the short path copies it), and that of w needs b's kind
    w, floats = np.ones(3), np.array([100.0, 2.0, 3.0])
    ints = floats.astype(np.int8)
    gradient = st.grad(product_and_copy, wrt=(0, 1))
    for dw, dv in _calls(gradient, w, w, floats, floats) + _calls(gradient, w, w, ints, ints):
        np.testing.assert_array_equal(dw, [1e4, 4.0, 9.0])
        np.testing.assert_array_equal(dv, [100.0, 2.0, 3.0])


def test_a_name_holding_ints_then_floats_in_a_loop_is_no_float():
    # s is int8 in the first step, a float after it: the step's 1.0 * s stays
    w, m = np.ones(3), np.array([100, 2, 3], dtype=np.int8)
    expected = [100.0 ** 2 + 150.0 ** 2, 4.0 + 9.0, 9.0 + 20.25]
    for answer in _calls(st.grad(kind_changes_in_loop), w, m):
        np.testing.assert_allclose(answer, expected)

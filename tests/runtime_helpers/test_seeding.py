"""Tests for runtime.seeding: the starting cotangent and the finished gradients."""

import doctest

import numpy as np
import pytest

import srctrans.runtime.seeding
from srctrans import runtime
from srctrans.runtime.seeding import conform_gradient, seed_cotangent
from srctrans.errors import NonDifferentiableError, ShapeError

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.mark.parametrize("out, expected_type, expected_dtype, expected_shape", [
    (np.zeros((2, 3)), np.ndarray, np.float64, (2, 3)),
    (np.zeros(3, np.float32), np.ndarray, np.float32, (3,)),
    (np.array(2.0), np.ndarray, np.float64, ()),
    (np.float32(2.0), np.float32, np.float32, ()),
    (np.float64(2.0), np.float64, np.float64, ()),
], ids=["float64", "float32", "0-d", "float32-scalar", "float64-scalar"])
def test_default_seed_is_ones_like_the_output(out, expected_type,
                                              expected_dtype, expected_shape):
    seed = seed_cotangent(out, None)
    assert type(seed) is expected_type
    assert seed.dtype == expected_dtype
    assert np.shape(seed) == expected_shape
    assert np.all(seed == 1)


def test_default_seed_of_a_python_scalar_is_one_point_zero():
    seed = seed_cotangent(2.5, None)
    assert type(seed) is float and seed == 1.0


@pytest.mark.parametrize("out, kind", [
    (3, "an int"), (True, "a bool"), (np.int32(3), "an int32"), (np.zeros(3, np.int64), "int64"),
    (np.zeros(2, bool), "bool"), (None, "None"), ("done", "a str")])
@pytest.mark.parametrize("given", [None, 1.0], ids=["default", "given"])
def test_an_output_without_a_derivative_is_refused(out, kind, given):
    if given is not None:
        given = np.ones(np.shape(out))
    with pytest.raises(NonDifferentiableError, match=kind) as raised:
        seed_cotangent(out, given)
    assert raised.value.about_output and "has_aux=True" in raised.value.hint


def test_an_entry_without_a_derivative_takes_none_or_zeros_when_cotangents_are_given():
    out = (np.zeros(2), 3, np.zeros(2, np.int64))
    seed = seed_cotangent(out, (np.ones(2), None, np.zeros(2)))
    assert seed[1] is None and seed[2] is None
    np.testing.assert_array_equal(seed[0], [1.0, 1.0])
    with pytest.raises(NonDifferentiableError, match="output_gradients\\[2\\] gives a nonzero"):
        seed_cotangent(out, (None, None, np.ones(2)))
    with pytest.raises(NonDifferentiableError, match="a container holding an int"):
        seed_cotangent(out, None)                     # ones asked of the int entry
    assert seed_cotangent({"a": 1.0, "n": 2}, {"a": 2.0, "n": 0})["n"] is None


def test_given_cotangent_is_converted_to_an_array():
    seed = seed_cotangent(np.zeros(2), [1.0, 2.0])
    assert isinstance(seed, np.ndarray)
    np.testing.assert_array_equal(seed, [1.0, 2.0])


def test_given_cotangent_takes_a_floating_output_dtype():
    assert seed_cotangent(np.zeros(2, np.float32), np.ones(2)).dtype == np.float32


def test_given_cotangent_for_a_python_float():
    seed = seed_cotangent(2.5, 3.0)
    assert np.shape(seed) == () and seed == 3.0


def test_cotangent_of_the_wrong_shape_raises():
    with pytest.raises(ShapeError, match=r"output_gradients has shape \(3,\) "
                                         r"but the output has shape \(2,\)"):
        seed_cotangent(np.zeros(2), np.ones(3))


def test_several_outputs_default_to_ones_each():
    seeds = seed_cotangent((np.zeros(2, np.float32), 1.5), None)
    assert isinstance(seeds, tuple) and len(seeds) == 2
    assert seeds[0].dtype == np.float32 and seeds[1] == 1.0


@pytest.mark.parametrize("cotangents", [
    (np.ones(2), 3.0), [np.ones(2), 3.0]], ids=["tuple", "list"])
def test_several_outputs_take_one_cotangent_each(cotangents):
    seeds = seed_cotangent((np.zeros(2), 1.5), cotangents)
    assert isinstance(seeds, tuple)
    np.testing.assert_array_equal(seeds[0], [1.0, 1.0])
    assert seeds[1] == 3.0


def test_several_outputs_with_none_entries():
    seeds = seed_cotangent((np.zeros(2), np.zeros(3)), (None, np.arange(3.0)))
    np.testing.assert_array_equal(seeds[0], [1.0, 1.0])
    np.testing.assert_array_equal(seeds[1], [0.0, 1.0, 2.0])


def test_several_outputs_with_the_wrong_count_raise():
    with pytest.raises(ShapeError, match="has 1 entries but the function "
                                         "returns 2 outputs"):
        seed_cotangent((np.zeros(2), 1.0), (np.ones(2),))


def test_several_outputs_with_a_single_array_raise():
    with pytest.raises(ShapeError, match="must be a tuple or list"):
        seed_cotangent((np.zeros(2), 1.0), np.ones(2))


def test_several_outputs_name_the_mismatched_entry():
    with pytest.raises(ShapeError, match=r"output_gradients\[1\] has shape"):
        seed_cotangent((np.zeros(2), np.zeros(3)), (np.ones(2), np.ones(2)))


def test_conform_none_is_none():
    assert conform_gradient(None, np.zeros(3)) is None


def test_conform_keeps_a_matching_writable_gradient():
    g = np.ones(3)
    assert conform_gradient(g, np.zeros(3)) is g


def test_conform_sums_a_broadcast_gradient():
    g = conform_gradient(np.ones((4, 3)), np.zeros((1, 3)))
    np.testing.assert_array_equal(g, [[4.0, 4.0, 4.0]])


def test_conform_broadcasts_a_scalar_gradient_into_a_writable_array():
    g = conform_gradient(0.0, np.zeros((2, 2)))
    assert g.shape == (2, 2) and g.flags.writeable


def test_conform_copies_a_read_only_view():
    view = np.broadcast_to(np.ones(1), (3,))
    g = conform_gradient(view, np.zeros(3))
    assert g.flags.writeable
    np.testing.assert_array_equal(g, [1.0, 1.0, 1.0])


def test_conform_casts_to_float32():
    g = conform_gradient(np.ones(3), np.zeros(3, np.float32))
    assert g.dtype == np.float32


def test_conform_keeps_float_gradient_of_integer_input():
    g = conform_gradient(np.full(3, 0.5), np.zeros(3, np.int64))
    assert g.dtype == np.float64


@pytest.mark.parametrize("x, g, expected_type", [
    (2.0, np.array(3.0), np.float64),
    (2, np.float32(3.0), np.float64),
    (2.0, np.ones(3), np.float64),
    (np.float32(2.0), np.array(3.0), np.float32),
    (np.int64(2), np.array(3.0), np.float64),
], ids=["float", "int", "float-broadcast", "float32-scalar", "int64-scalar"])
def test_conform_scalar_inputs_get_numpy_scalars(x, g, expected_type):
    result = conform_gradient(g, x)
    assert type(result) is expected_type
    assert result == np.sum(g)


def test_conform_zero_d_array_input_gets_a_zero_d_array():
    result = conform_gradient(np.float64(2.0), np.array(1.0))
    assert isinstance(result, np.ndarray) and result.shape == ()


def test_conform_list_input_gets_a_list():
    # a list is a container: its gradient is a list with one gradient per entry
    result = conform_gradient([np.float64(2.0), 3], [1.0, 2.0])
    assert isinstance(result, list) and result == [2.0, 3.0]
    assert all(type(g) is np.float64 for g in result)


def test_conform_incompatible_shape_raises():
    with pytest.raises(ShapeError, match=r"gradient has shape \(2, 3\) but the "
                                         r"input has shape \(4,\)"):
        conform_gradient(np.ones((2, 3)), np.zeros(4))


def test_docstring_examples():
    assert doctest.testmod(runtime.seeding).failed == 0

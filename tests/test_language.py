"""The straight-line language: every supported construct, checked against finite differences.

Each row of LANGUAGE names a function of tests/programs/language.py and the
shapes (or constant values) of its arguments; float arguments are drawn from
a seeded generator on a domain where every function is smooth.
"""

import numpy as np
import pytest

import srctrans as st
from programs import language


def floats(*shape):
    """An argument spec: a float array of ``shape`` (a Python float for ())."""
    return ("float", shape)


def const(value):
    """An argument spec: a constant passed as is (ints, bools)."""
    return ("const", value)


# (function name, argument specs)
LANGUAGE = [
    ("assign", [floats(3), floats(3)]),
    ("assign", [floats(), floats()]),
    ("unpack_tuple", [floats(2, 3), floats(2, 3)]),
    ("unpack_nested", [floats(3), floats(3)]),
    ("unpack_from_helper", [floats(4), floats(4)]),
    ("operators", [floats(3), floats(3)]),
    ("operators", [floats(2, 3), floats(3)]),
    ("matmul", [floats(3, 4), floats(4, 2)]),
    ("matmul", [floats(4), floats(4, 2)]),
    ("comparisons", [floats(5), floats(5)]),
    ("numpy_calls", [floats(2, 3), floats(2, 3)]),
    ("methods_and_attributes", [floats(3, 4), floats(4, 3)]),
    ("keyword_arguments", [floats(3, 4), floats(3, 4)]),
    ("default_arguments", [floats(3)]),
    ("default_arguments", [floats(3), floats(3)]),
    ("default_arguments", [floats(3), floats(), const(2)]),
    ("calls_helper", [floats(3), floats(3)]),
    ("calls_helper_keywords", [floats(3), floats(3)]),
    ("calls_helper_twice", [floats(3), floats(3)]),
    ("calls_helper_of_helper", [floats(3), floats(3)]),
    ("calls_helper_tuple", [floats(3), floats(3)]),
    ("reads_globals", [floats(3)]),
    ("int_and_bool", [floats(3), const(3), const(True)]),
    ("int_and_bool", [floats(3), const(2), const(False)]),
    ("reassign", [floats(3), floats(3)]),
    ("augmented", [floats(3), floats(3)]),
]


def make_args(specs, rng):
    args = []
    for kind, value in specs:
        if kind == "const":
            args.append(value)
        elif value == ():
            args.append(float(rng.uniform(0.5, 1.5)))
        else:
            args.append(rng.uniform(0.5, 1.5, value))
    return tuple(args)


@pytest.mark.parametrize("name, specs", LANGUAGE,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(LANGUAGE)])
def test_construct_matches_finite_differences(name, specs):
    rng = np.random.default_rng(7)
    fn = getattr(language, name)
    args = make_args(specs, rng)
    st.check_grads(fn, args, order=2)
    # the gradient of every float argument has its shape
    indices = tuple(i for i, (kind, _) in enumerate(specs) if kind == "float")
    grads = st.grad(fn, wrt=indices)(*args)
    for i, g in zip(indices, grads):
        assert np.shape(g) == np.shape(args[i])


# -- constructs with closed forms ---------------------------------------------------------------

def test_indexing_a_tuple_returned_by_a_helper():
    """p = (x + y, x - y); out = p[0] p[1] = x^2 - y^2."""
    x, y, v = np.array([1.0, 2.0]), np.array([3.0, 5.0]), np.array([2.0, -1.0])
    dx, dy = st.grad(language.indexes_helper_tuple, wrt=(0, 1))(x, y, output_gradients=v)
    np.testing.assert_allclose(dx, 2 * x * v)
    np.testing.assert_allclose(dy, -2 * y * v)
    st.check_grads(language.indexes_helper_tuple, (x, y))


def test_tuple_unpacking_values():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    dx, dy = st.grad(language.unpack_tuple, wrt=(0, 1))(x, y)      # (xy)(x - y)
    np.testing.assert_allclose(dx, 2 * x * y - y * y)
    np.testing.assert_allclose(dy, x * x - 2 * x * y)


def test_comparisons_carry_no_gradient():
    x, y = np.array([2.0, 0.5, -1.0]), np.array([1.0, 0.5, 3.0])
    dx, dy = st.grad(language.comparisons, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(dx, [2 * 2.0 + 1.0, 0.0, 1.0 + 1.0])
    np.testing.assert_allclose(dy, [0.0, 1.0, 1.0])


def test_default_arguments_are_used_and_overridable():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(st.grad(language.default_arguments)(x), 3 * x ** 2 * 2.0)
    np.testing.assert_allclose(st.grad(language.default_arguments)(x, 0.5, 2), 2 * x * 0.5)
    np.testing.assert_allclose(st.grad(language.default_arguments, wrt="y")(x, 0.5), np.sum(x ** 3))
    np.testing.assert_allclose(st.grad(language.default_arguments)(x, power=1), 2.0 * np.ones(2))


def test_helper_called_twice():
    """a = x e^y, b = a e^x, out = a + b."""
    x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    dx, dy = st.grad(language.calls_helper_twice, wrt=(0, 1))(x, y)
    a = x * np.exp(y)
    np.testing.assert_allclose(dx, np.exp(y) * (1 + np.exp(x)) + a * np.exp(x))
    np.testing.assert_allclose(dy, a * (1 + np.exp(x)))


def test_globals_are_constants():
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(st.grad(language.reads_globals)(x),
                               language.SCALE + 2 * language.OFFSETS * x)


@pytest.mark.parametrize("first, second", [((2.0, 0.5), (-1.0, 3.0)), ((0.0, 1.0), (1.0, 0.0))])
def test_two_closures_from_one_factory(first, second):
    x = np.random.default_rng(3).uniform(-1, 1, 4)
    f1, f2 = language.make_scaled(*first), language.make_scaled(*second)
    for f, (factor, shift) in ((f1, first), (f2, second), (f1, first)):
        np.testing.assert_allclose(st.grad(f)(x), factor * np.cos(x) + 2 * shift * x)
        st.check_grads(f, (x,))


def test_int_and_bool_arguments_are_constants():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(st.grad(language.int_and_bool)(x, 3, True), 3 * x ** 2 + 4)
    np.testing.assert_allclose(st.grad(language.int_and_bool)(x, 3, False), 4 * np.ones(2))


def test_reassignment():
    x, h = np.array([0.3, -0.7]), np.array([0.5, 1.5])
    h1 = np.tanh(h * x)
    h2 = np.tanh(h1 * x)
    dh2 = 2 * h2
    dx = 1.0 + dh2 * (1 - h2 ** 2) * h1
    dh1 = dh2 * (1 - h2 ** 2) * x
    dx = dx + dh1 * (1 - h1 ** 2) * h
    np.testing.assert_allclose(st.grad(language.reassign)(x, h), dx)


def test_augmented_assignment():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 0.5])
    # a = ((x + y) x - 2y) / y; out = a^2
    a = ((x + y) * x - 2 * y) / y
    np.testing.assert_allclose(st.grad(language.augmented)(x, y), 2 * a * (2 * x + y) / y)


def test_rebinding_a_closure_variable_is_seen():
    weighted, set_w = language.make_rebindable(1.0)
    d_weighted = st.grad(weighted)
    assert d_weighted(3.0) == 6.0
    set_w(2.0)
    assert d_weighted(3.0) == 12.0
    assert st.grad(weighted)(3.0) == 12.0


def test_rebinding_a_global_helper_is_seen(monkeypatch):
    x, y = np.array([0.5, 1.0]), np.array([0.2, -0.3])
    before = st.grad(language.calls_helper)(x, y)
    np.testing.assert_allclose(before, 2 * x * np.exp(2 * y))
    monkeypatch.setattr(language, "helper_scale", language.helper_cube)
    np.testing.assert_allclose(st.grad(language.calls_helper)(x, y), 6 * x ** 5 * y ** 2)


def releases_its_temporaries(x, W):
    h = np.tanh(x @ W)
    z = h * h
    del h                                   # the value is released, as in plain Python
    loss = np.sum(z)
    if loss > 0.0:
        del z
    return loss


def test_a_del_that_only_releases_a_value_is_accepted():
    x, W = np.array([[0.5, -1.0]]), np.array([[0.3, 0.2], [-0.4, 0.1]])
    st.check_grads(releases_its_temporaries, (x, W), order=2)
    assert "del" not in st.source(releases_its_temporaries).split("_fwd")[1].split("return")[0]


def swapped_in_a_loop(a, b):
    for _ in range(3):
        a, b = b, a * b            # every value is read before any name is assigned
    return a + 2.0 * b


def rotated(x, y, z):
    x, (y, z) = y * z, (z + x, x)  # nested, each value reading names assigned beside it
    return x * y - z ** 2


def split_pair(w):
    first, second = np.exp(w[0]), np.sin(w[1])
    return first * second


@pytest.mark.parametrize("fn, args", [
    (swapped_in_a_loop, (1.3, 0.7)), (rotated, (0.4, -1.1, 0.9)),
    (split_pair, (np.array([0.3, -0.8]),))])
def test_assignments_of_tuple_displays_keep_pythons_order(fn, args):
    """``a, b = e1, e2`` is read as two assignments (no tuple for the reverse pass to pack
    and pick apart), with Python's order: every value before any name is assigned."""
    wrt = tuple(range(len(args)))
    st.check_grads(fn, args, order=2, wrt=wrt)
    assert st.grad(fn, wrt=wrt)(*args) is not None


def test_an_assignment_of_a_tuple_display_makes_no_tuple():
    source = st.source(split_pair, args=(np.array([0.3, -0.8]),))
    assert "first = np.exp(" in source and "second = np.sin(" in source
    assert "d_tuple" not in source and "[0]" not in source.split("_grad(")[-1].replace("w[0]", "")

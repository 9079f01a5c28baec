"""Branches the shape key decides (srctrans/analyse/keyed_tests.py): a method called through
``self``, ``d.get(key, default)`` and ``x is None`` take the same branch on every call with
the same key, so such code gets a fused gradient, and a call with another class, other keys
or a None where there was none gets code of its own, and the right gradient."""

import re

import numpy as np

import srctrans as st

R = np.random.default_rng(11)


class Scaled:
    def __init__(self, w):
        self.w = w

    def transform(self, x):
        return np.tanh(x * self.w)

    def loss(self, x):
        return np.sum(self.transform(x) ** 2)


class Shifted(Scaled):
    def transform(self, x):
        return np.sin(x + self.w)


def penalised(x, options):
    scale = options.get("scale", 0.5)
    return np.sum((x * scale) ** 2)


def with_offset(x, offset=None):
    y = np.tanh(x) * 2.0
    if offset is not None:
        y = y + offset
    return np.sum(y ** 2)


def _numeric(f, x, *rest, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return g


def _fused(f, *args, wrt=0):
    text = st.source(f, args=args, wrt=wrt)
    return re.search(rf"^def (\w+_)?{f.__name__}_grad\(", text, re.M) is not None   # fused


def test_a_method_called_through_self_gets_a_fused_gradient_per_class():
    x = R.standard_normal(4)
    scaled, shifted = Scaled(R.standard_normal(4)), Shifted(R.standard_normal(4))
    assert _fused(Scaled.loss, scaled, x, wrt=1)
    specialised = st.source(Scaled.loss, args=(scaled, x), wrt=1)
    assert "rt.has_class(self" not in specialised and "tape" not in specialised   # folded
    g = st.grad(Scaled.loss, wrt=1)
    for model in (scaled, scaled, scaled, shifted, shifted, scaled, shifted):
        np.testing.assert_allclose(g(model, x), _numeric(lambda v: model.loss(v), x), rtol=1e-6)


def test_a_dict_default_gets_a_fused_gradient_per_set_of_keys():
    x = R.standard_normal(3)
    assert _fused(penalised, x, {"other": 1})
    assert "if _cond" not in st.source(penalised, args=(x, {"other": 1}))      # folded
    g = st.grad(penalised)
    for options in ({}, {}, {}, {"scale": np.array([1.0, 2.0, 3.0])}, {}, {"scale": 2.0}):
        np.testing.assert_allclose(g(x, options), _numeric(penalised, x, options), rtol=1e-6)


def test_an_optional_argument_gets_a_fused_gradient_with_and_without_it():
    x = R.standard_normal((2, 3))
    assert _fused(with_offset, x, None)
    g = st.grad(with_offset)
    for offset in (None, None, None, R.standard_normal(3), None, R.standard_normal((2, 1))):
        np.testing.assert_allclose(g(x, offset), _numeric(with_offset, x, offset), rtol=1e-6)


def _pieces(r, *args):
    delta = args[0]
    scale = args[1] if len(args) > 1 else 1.0
    small = np.abs(r) <= delta
    return scale * np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta))


def huber_of_arguments(w, X, y, *options):
    if X.ndim != 2:
        raise ValueError("X must be a matrix")
    return np.mean(_pieces(X @ w - y, *options))


def test_the_count_of_star_args_and_an_arrays_axes_are_decided_by_the_key():
    """``len(args) > 1`` of a ``*args`` helper and a check of ``X.ndim`` take one branch per
    key: the helper is specialised inside its caller without its ``if``, the check is gone
    from the fused gradient, and a call with another count of arguments gets its own code."""
    w, X, y = R.standard_normal(3), R.standard_normal((8, 3)), R.standard_normal(8)
    assert _fused(huber_of_arguments, w, X, y, 0.5, 2.0)
    text = st.source(huber_of_arguments, args=(w, X, y, 0.5, 2.0))
    assert "X.ndim" not in text.split("def huber_of_arguments_grad")[1]
    assert "if _cond" not in text and "scale = args[1]" in text, text
    g = st.grad(huber_of_arguments)
    for options in ((0.5, 2.0), (0.5, 2.0), (0.5, 2.0), (0.5,), (0.5,), (0.3, 3.0), (0.5,)):
        np.testing.assert_allclose(g(w, X, y, *options),
                                   _numeric(huber_of_arguments, w, X, y, *options), rtol=1e-6)
    g(w, X, y, 0.5, 2.0)
    try:
        g(w, X[0], y[0], 0.5)                       # a vector: the check runs, and raises
    except ValueError as error:
        assert "matrix" in str(error)
    else:
        raise AssertionError("the check of X.ndim did not run")


def huber_with_literal_options(w, X, y, delta=1.0):
    return np.mean(_pieces(X @ w - y, delta, 2.0))


def test_a_choice_on_the_count_of_literal_star_args_is_its_branch():
    """Called with literals, ``_pieces(r, delta, 2.0)``'s ``args[1] if len(args) > 1 else 1.0``
    is ``2.0 if 2 > 1 else 1.0``: the code has the branch taken, not the choice."""
    rng = np.random.default_rng(11)           # (R's draws stay those of the tests below)
    w, X, y = rng.standard_normal(3), rng.standard_normal((8, 3)), rng.standard_normal(8)
    text = st.source(huber_with_literal_options, args=(w, X, y))
    assert " if 2 > 1 else " not in text and "scale_2 = 2.0" in text, text
    st.check_grads(huber_with_literal_options, (w, X, y), order=2)


def both_counts(r, w):
    return np.sum(_pieces(r * w, 0.5) + _pieces(r, 0.5, 2.0))


def test_a_helper_called_with_two_counts_of_star_args_keeps_its_branch():
    """One caller calls the ``*args`` helper with one argument and with two: its test takes
    both branches in one call, so the helper's code specialised inside the caller keeps
    the ``if`` (it had folded the last call's branch, and read ``args[1]`` of one)."""
    r, w = R.standard_normal(6), R.standard_normal(6)
    g = st.grad(both_counts, wrt=(0, 1))
    for _ in range(4):
        dr, dw = g(r, w)
        np.testing.assert_allclose(dr, _numeric(lambda v: both_counts(v, w), r), rtol=1e-6)
        np.testing.assert_allclose(dw, _numeric(lambda v: both_counts(r, v), w), rtol=1e-6)


def normalised(S, V, mask=None):
    if mask is None:                     # keyed: specialised code runs this branch alone
        S = S - S.max(axis=-1, keepdims=True)
        A = np.exp(S)
        A = A / A.sum(axis=-1, keepdims=True)
    else:
        A = S * mask
    return np.sum((A @ V) * V)


def test_names_a_taken_branch_reassigns_keep_each_value_its_gradient_reads():
    """The branch the key decides becomes straight-line code, where a name assigned twice
    (``A = A / A.sum(...)``, the parameter ``S``) is renamed as in the function's own
    block: the gradient reads ``exp(S)`` and the shifted ``S``, not what replaced them."""
    S, V = R.standard_normal((3, 3)), R.standard_normal((3, 2))
    g = st.grad(normalised)
    for _ in range(3):                   # generic, specialised, short path
        np.testing.assert_allclose(g(S, V), _numeric(normalised, S, V), rtol=1e-6, atol=1e-8)
    assert _fused(normalised, S, V)

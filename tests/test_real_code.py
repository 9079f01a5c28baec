"""Code as people write it (issue 30): the reproducers of what srctrans refused or got
wrong, each differentiated as written, in both modes and to second order, or refused with a
hint that, applied, works."""

import numpy as np
import pytest

import srctrans as st
from programs import stores

X = np.array([0.5, -1.0, 2.0])

AS_WRITTEN = [stores.filled_in_a_loop, stores.rows_stored, stores.tuple_bound_then_added_to,
              stores.counter_bound_in_a_tuple, stores.new_key_beside_a_read_entry,
              stores.ndarray_then_written, stores.view_read_in_a_loop_copied,
              stores.fresh_array_stored_then_changed_copied]


@pytest.mark.parametrize("fn", AS_WRITTEN, ids=[f.__name__ for f in AS_WRITTEN])
def test_differentiates_as_written(fn):
    st.check_grads(fn, (X.copy(),), order=2)


def test_the_stored_values_have_the_gradients_python_computes():
    np.testing.assert_allclose(st.grad(stores.filled_in_a_loop)(X), 2 * X)
    np.testing.assert_allclose(st.grad(stores.rows_stored)(X), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(st.grad(stores.tuple_bound_then_added_to)(X), 2 * X + 1.0)


# (refused function, the hint it gives, the function with the hint applied)
HINTED = [
    (stores.view_read_in_a_loop, "`v = y[0:2].copy()`", stores.view_read_in_a_loop_copied),
    (stores.fresh_array_stored_then_changed, "`d[t] = v.copy()`",
     stores.fresh_array_stored_then_changed_copied),
]


@pytest.mark.parametrize("refused, hint, applied", HINTED, ids=[h[0].__name__ for h in HINTED])
def test_memory_that_is_shared_is_refused_with_a_hint_that_works(refused, hint, applied):
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(refused)(X)
    assert hint in str(info.value) and "stores.py:" in str(info.value)
    st.check_grads(applied, (X.copy(),), order=2)


def test_an_ndarray_over_a_buffer_is_refused():
    with pytest.raises(st.UnsupportedSyntaxError, match="over a buffer"):
        st.grad(stores.ndarray_over_a_buffer)(X)


# -- the source srctrans reads is the code Python runs ------------------------------------

@pytest.mark.parametrize("fn, want", [
    (stores.Model().loss, lambda x: 2 * x),
    (stores.Model.Inner().energy, np.cos),
    (stores.decorated, lambda x: 3 * x ** 2),
    (stores.closure_with_a_docstring(1.5), lambda x: 3.0 * x),
], ids=["method", "nested-class", "decorated", "closure"])
def test_docstrings_of_several_lines_are_read_as_written(fn, want):
    np.testing.assert_allclose(st.grad(fn)(X), want(X))


@pytest.mark.parametrize("write_bytecode", [True, False])
def test_an_edit_that_keeps_names_and_constants_is_seen(tmp_path, monkeypatch, write_bytecode):
    """The issue's reproducer: the edit changes only instructions (x * x -> x * x * x), so the
    names and constants agree; the function still runs x * x, so there is no derivative to
    read from the file."""
    import importlib.util
    import os
    import sys
    monkeypatch.setattr(sys, "dont_write_bytecode", not write_bytecode)
    path = tmp_path / "real_code_edited.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x * x) + 0.125\n")
    spec = importlib.util.spec_from_file_location("real_code_edited", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "real_code_edited", module)
    spec.loader.exec_module(module)
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x * x * x) + 0.125\n")
    stat = os.stat(path)
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))
    with pytest.raises(st.NoSourceError, match="has changed since Python compiled it"):
        st.grad(module.f)(X)
    with pytest.raises(st.NoSourceError, match="has changed since Python compiled it"):
        st.jvp(module.f, (X,), (X,))


def test_a_local_name_for_numpy_is_numpy():
    """`xp = np; xp.sum(x * x, 0)` gave a gradient of None (its call was read as a method of
    a value named xp); with `axis=0` it was refused."""
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    _, pullback = st.vjp(stores.namespace_positional_axis, x)
    np.testing.assert_allclose(pullback(np.array([1.0, 2.0]))[0], 2 * x * [1.0, 2.0])
    st.check_grads(stores.namespace_positional_axis, (x,), order=2)
    st.check_grads(stores.namespace_keyword_axis, (x,), order=2)


def test_the_namespace_pass_example():
    import doctest

    from srctrans.normalize import namespaces
    assert doctest.testmod(namespaces).failed == 0


def test_a_string_entry_of_a_dict_shifts_no_block():
    """`jacobian` (reverse) and `hessian` of a dict with a string entry put each block under
    its own key (they were shifted by one), and every transform gives the string None."""
    def f(p):
        return np.sum(p["a"] * p["b"])
    p = {"activation": "tanh", "a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    want = {"a": [3.0, 4.0], "b": [1.0, 2.0]}
    for jacobian in (st.jacobian(f), st.jacobian(f, mode="forward"), st.grad(f)):
        got = jacobian(p)
        assert got["activation"] is None
        for key in want:
            np.testing.assert_allclose(got[key], want[key])
    h = st.hessian(f)(p)
    assert h["activation"] is None and h["a"]["activation"] is None
    np.testing.assert_allclose(h["a"]["b"], np.eye(2))
    np.testing.assert_allclose(h["a"]["a"], np.zeros((2, 2)))


def test_raise_in_a_branch_not_taken_costs_nothing_and_taken_raises():
    st.check_grads(stores.validated, (X,), order=2)
    st.check_grads(stores.validated_in_a_loop, (X, 3), order=2, wrt=(0,))
    for call in (lambda: st.grad(stores.validated)(np.ones((2, 2))),
                 lambda: st.jvp(stores.validated, (np.ones((2, 2)),), (np.ones((2, 2)),))):
        with pytest.raises(ValueError, match="x must be 1-D"):
            call()
    for transform in (lambda f: f and st.grad(f)(X), lambda f: st.jvp(f, (X,), (X,)),
                      lambda f: st.hvp(f, (X,), (X,)), lambda f: st.hessian(f)(X)):
        with pytest.raises(ValueError, match="rejected"):
            transform(stores.rejects_everything)


def test_second_order_through_a_loop_accumulating_into_a_dict_entry():
    """st.hessian, st.hvp and st.jvp(st.grad(f)) of it were internal errors (iteration over
    a 0-d array: the zero tangent of a dict)."""
    w = np.array([0.3, 0.2, -0.1])
    xs = [np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.5, -1.0])]
    data = np.stack(xs)
    f = stores.accumulates_into_a_dict_entry
    np.testing.assert_allclose(st.hessian(f)(w, xs), 2 * data.T @ data)
    zero = [np.zeros(3), np.zeros(3)]
    np.testing.assert_allclose(st.jvp(st.grad(f), (w, xs), (w, zero))[1], 2 * data.T @ data @ w)
    st.check_grads(f, (w, xs), order=2, wrt=(0,))


@pytest.mark.parametrize("fn", [stores.chained_in_a_loop, stores.chained_into_a_dict_of_arrays,
                                stores.chained_three_deep, stores.chained_into_a_row_view,
                                stores.chained_seen_through_an_alias_copied],
                         ids=lambda fn: fn.__name__)
def test_chained_subscript_writes(fn):
    st.check_grads(fn, (X.copy(),), order=2)


def test_a_chained_write_an_alias_would_see_is_refused_with_a_working_hint():
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(stores.chained_seen_through_an_alias)(X)
    assert "`first = xs[0].copy()`" in str(info.value)


def test_a_chained_write_leaves_the_caller_s_list_and_arrays_as_they_were():
    def f(xs, x):
        xs[0][1] = x[0] * 3.0
        return np.sum(xs[0] * xs[1] * x)
    xs = [np.ones(3), np.full(3, 2.0)]
    st.check_grads(f, (xs, X), order=2)
    g = st.grad(f, wrt=(0, 1))(xs, X)
    # f = 2 x0 + 6 x0 x1 + 2 x2 (xs[0] becomes [1, 3 x0, 1] inside)
    np.testing.assert_allclose(g[1], [2.0 + 6.0 * X[1], 6.0 * X[0], 2.0])
    assert [a.tolist() for a in xs] == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]


def test_st_vjp_inside_a_differentiated_function_is_refused_at_the_user_s_line():
    """It was refused after seconds by "one call met more than 64 new kinds of callee" (and
    then at a `try` in srctrans's own file); the hint's rewrite works."""
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(stores.vjp_inside)(X)
    message = str(info.value)
    assert "stores.py:" in message and "`st.vjp`" in message and "srctrans/" not in message
    st.check_grads(stores.vjp_inside_as_the_hint_writes_it, (X,), order=2)


def test_the_tangent_of_a_numpy_result_of_floats_has_numpy_s_methods():
    """np.add(p, p) of a float p is an np.float64 (with .reshape); its tangent was a Python
    float, so the tangent of v.reshape(-1) failed in generated code."""
    out, tangent = st.jvp(stores.float_through_a_ufunc, (0.7,), (1.0,))
    assert np.isclose(out, 4.2) and np.isclose(tangent, 6.0)
    st.check_grads(stores.float_through_a_ufunc, (0.7,), order=2)


@pytest.mark.parametrize("fn", [stores.huber_with_args, stores.options_unpacked,
                                stores.active_entries_unpacked], ids=lambda fn: fn.__name__)
def test_unpacking_a_display_in_a_call(fn):
    st.check_grads(fn, (np.array([0.5, -1.5, 2.0]),), order=2)


@pytest.mark.parametrize("call", [lambda: st.grad(stores.unpacks_a_list_it_changes)(X),
                                  lambda: st.grad(stores.unpacks_its_own_varargs)(X, 2.0)])
def test_unpacking_of_a_length_the_source_does_not_fix_is_refused(call):
    with pytest.raises(st.UnsupportedSyntaxError, match="does not fix") as info:
        call()
    assert "stores.py:" in str(info.value)


def test_an_array_made_anew_each_step_and_stored_is_not_an_alias():
    """`v = np.zeros(2); v[0] = 1.0; d[t] = v` in a loop was refused: each step's write goes
    into the array made in that step, never into one a dict already holds."""
    st.check_grads(stores.fresh_array_stored_each_step, (X,), order=2)
    # the same store of one array kept across steps does share: refused
    with pytest.raises(st.UnsupportedSyntaxError, match="`d` may share its memory"):
        st.grad(stores.array_stored_then_changed_next_step)(X)


def test_imports_inside_the_function_bind_what_a_module_level_import_binds():
    from programs import statements
    x = np.array([1.0, 2.0, 3.0])
    expected = (np.pi * (1 - np.tanh(x) ** 2) + x / np.linalg.norm(x)
                + np.exp(-x) / (1 + np.exp(-x)) ** 2)
    np.testing.assert_allclose(st.grad(statements.imports_where_used)(x), expected, rtol=1e-12)
    st.check_grads(statements.imports_where_used, (x,), order=2)
    with pytest.raises(st.UnsupportedSyntaxError, match="`import` inside the function") as raised:
        st.grad(statements.import_also_assigned)(x)
    assert raised.value.location.lineno == \
        statements.import_also_assigned.__code__.co_firstlineno + 1


def test_a_dict_copied_with_keys_added():
    from programs import statements
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(st.grad(statements.dict_of_pairs_with_keys)(x), 12 * x)
    st.check_grads(statements.dict_of_pairs_with_keys, (x,), order=2)
    p = {"w": np.array([0.5, -1.0, 2.0]), "name": "linear"}
    dp, dx = st.grad(statements.parameters_updated, wrt=(0, 1))(p, x)
    np.testing.assert_allclose(dp["w"], 2 * x + 1)
    np.testing.assert_allclose(dx, 2 * p["w"])
    assert set(p) == {"w", "name"}                   # the caller's dict is unchanged
    st.check_grads(statements.parameters_updated, (p, x), order=2)


@pytest.mark.parametrize("fn, args", [
    ("gradient_penalty", (np.array([0.3, -0.5, 0.9]),)),
    ("two_arguments", (np.array([0.3, -0.5, 0.9]), 1.3)),
    ("directional", (np.array([0.3, -0.5, 0.9]),)),
])
def test_a_closure_passed_to_st_grad_or_st_jvp_inside(fn, args):
    """Nested derivatives of closures, as autograd and JAX users write them: to second order."""
    from programs import closures
    st.check_grads(getattr(closures, fn), args, order=2)


def test_the_nested_derivative_of_a_closure_matches_the_one_written_out():
    from programs import closures
    x = np.array([0.3, -0.5, 0.9])
    np.testing.assert_allclose(st.grad(closures.gradient_penalty)(x),
                               st.grad(closures.gradient_penalty_by_hand)(x), rtol=1e-12)
    with pytest.raises(st.UnsupportedSyntaxError, match="with defaults") as raised:
        st.grad(closures.with_defaults)(x)
    assert raised.value.location.lineno == closures.with_defaults.__code__.co_firstlineno + 3


def test_the_function_s_own_args_passed_on_whole():
    from programs import forwarding
    R = np.random.default_rng(5)
    X, w, y = R.standard_normal((6, 2)), R.standard_normal(2), R.standard_normal(6)
    dw, ddelta, dscale = st.grad(forwarding.huber_named, wrt=(0, 3, 4))(w, X, y, 0.8, 2.0)
    np.testing.assert_allclose(st.grad(forwarding.huber)(w, X, y, 0.8, 2.0), dw, rtol=1e-12)
    got_w, got_args = st.grad(forwarding.huber, wrt=(0, "args"))(w, X, y, 0.8, 2.0)
    np.testing.assert_allclose(got_w, dw, rtol=1e-12)
    assert isinstance(got_args, tuple) and len(got_args) == 2
    np.testing.assert_allclose(got_args, [ddelta, dscale], rtol=1e-12)
    st.check_grads(forwarding.huber, (w, X, y, 0.8, 2.0), modes=("reverse",), order=2, wrt=0)
    st.check_grads(forwarding.outer, (w, 0.8, 2.0), order=2)         # forward mode through it
    with pytest.raises(st.UnsupportedSyntaxError, match="starred expression") as raised:
        st.grad(forwarding.stacked, wrt="args")(w, (w, w))
    assert raised.value.location.lineno == forwarding.stacked.__code__.co_firstlineno + 1

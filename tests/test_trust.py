"""Programs that once returned silently wrong derivatives (issue 9): each now gives the
derivative of what Python computes, checked against finite differences in both modes and
at second order, or a clear error at the user's line."""

import importlib.util
import os
import sys

import numpy as np
import pytest

import srctrans as st
from programs import trust

R = np.random.default_rng(9)


def vector(n=3):
    return lambda: (R.standard_normal(n),)


# (function, arguments): derivatives agree with finite differences, to second order
CORRECT = [
    (trust.augmented_constant, vector()),
    (trust.for_else_over_an_array, vector()),
    (trust.for_else_over_a_list, vector()),
    (trust.for_else_over_a_range, vector()),
    (trust.while_else, vector()),
    (trust.for_else_with_a_break_taken, vector()),
    (trust.for_else_with_a_break_not_taken, vector()),
    (trust.nested_loop_else, vector()),
    (trust.loop_else_with_a_return, vector()),
    (trust.augmented_constant_kinds, vector(5)),
    (trust.augmented_constant_in_loop, vector()),
    (trust.sum_seeds_a_loop_carried_adjoint, vector()),
    (trust.add_at, vector()),
    (trust.copy_to, vector()),
    (trust.put, vector()),
    (trust.fill, vector()),
    (trust.sort_in_place, vector()),
    (trust.repeated_index_write, vector()),
    (trust.repeated_index_augmented, vector()),
    (trust.loop_variable_reused, vector()),
    (trust.copy_call, vector()),
    (trust.subscript_write_loop, vector()),
    (trust.stack_rows, vector()),
    (trust.local_function, vector()),
    (trust.local_function_nested, vector()),
    (trust.local_lambda, vector()),
    (trust.relu_masks, lambda: (np.array([0.3, -0.7, 1.2]),)),
    (trust.max_of_list, lambda: (0.7, 0.2)),
    (trust.min_of_list, lambda: (0.7, 0.2)),
    (trust.builtin_max_args, lambda: (0.7, 0.2)),
    (trust.einsum_second, lambda: (R.standard_normal((2, 2)),)),
    (trust.einsum_interleaved, lambda: (R.standard_normal((2, 2)),)),   # literal axes: subscripts
    (trust.decorated, lambda: (3.0,)),
    (trust.r_concat, vector()),
    (trust.c_concat, vector()),
    (trust.linspace_active, lambda: (0.3, 1.2)),
    (trust.full_of, lambda: (0.7,)),
    (trust.arange_from, lambda: (0.3,)),
    (trust.sin_loop, vector()),
    (trust.unused_list_loop, vector()),
    (trust.cubic_loop, vector()),
    (trust.stacked, vector()),
    (trust.hstacked, vector()),
    (trust.loop_over_list, lambda: ([R.standard_normal(2), R.standard_normal(2)],)),
    (trust.loop_over_dict, lambda: ({"a": R.standard_normal(2), "b": R.standard_normal(2)},)),
    (trust.list_call_append, vector()),
    (trust.named_tuple_loss, lambda: (trust.Params(R.standard_normal(2), 0.5, 3),)),
    (trust.display_to_helper, lambda: (R.standard_normal(3), R.standard_normal(3))),
    (trust.display_appended, lambda: (R.standard_normal(3), R.standard_normal(3))),
    (trust.lists_made_in_one_statement, lambda: (R.standard_normal(3), R.standard_normal(3))),
    (trust.grows_from_last, lambda: (R.uniform(0.5, 1.0, 3),)),
    (trust.matrix_powers, lambda: (np.eye(3) + 0.2 * R.standard_normal((3, 3)),
                                   R.standard_normal((3, 3)))),
    (trust.grows_from_stack, lambda: (R.uniform(0.5, 1.0, 3),)),
    (trust.grows_through_helper, lambda: (R.uniform(0.5, 1.0, 3),)),
    (trust.grows_from_slices, lambda: (R.uniform(0.5, 1.0, 3),)),
    (trust.grows_then_read_by_variable, lambda: (R.uniform(0.5, 1.0, 3),)),
    (trust.named_tuple_read_two_ways, lambda: (np.eye(3) * 2.0 + 0.3 * R.standard_normal((3, 3)),)),
    (trust.named_tuple_returned, lambda: (R.standard_normal((3, 3)),)),
    (trust.list_entry_replaced, lambda: (R.standard_normal(2), R.standard_normal(3))),
    (trust.list_entry_replaced, lambda: (R.standard_normal(2), R.standard_normal(2))),
    (trust.list_entry_reshaped, lambda: (R.standard_normal(3), R.standard_normal(3))),
    (trust.concatenated_lists, lambda: (R.standard_normal(3), R.standard_normal(3), R.standard_normal(3))),
    (trust.concatenated_tuples, lambda: (R.standard_normal(3), R.standard_normal(3), R.standard_normal(3))),
    (trust.repeated_list, lambda: (R.standard_normal(3), R.standard_normal(3))),
    (trust.list_rebound_in_its_loop, vector()),
    (trust.array_rebound_in_its_loop, vector()),
    (trust.loop_target_named_as_its_sequence, vector()),
    (trust.zip_rebound_in_its_loop, vector()),
    (trust.enumerate_rebound_in_its_loop, vector()),
    (trust.items_rebound_in_their_loop, vector()),
    (trust.loop_over_a_slice, vector()),
    (trust.comprehension_over_a_slice, vector()),
    (trust.reversed_list, vector()),
    (trust.reversed_array, vector()),
    (trust.reversed_ranges, vector()),
    (trust.reversed_sorted, vector()),
]

# (function, arguments, words the error must contain): refused at the user's line
REFUSED = [
    (trust.out_keyword, vector(), ["out=", "trust.py:"]),
    (trust.out_keyword_clip, vector(), ["out=", "trust.py:"]),
    (trust.writes_through_helper, vector(), ["writing into `buf`", "fill_into", "trust.py:"]),
    (trust.alias_augmented, vector(), ["`v` is changed in place", "`u`", "trust.py:"]),
    (trust.view_before_write, vector(), ["`y` is changed in place", "`v`", ".copy()"]),
    (trust.reshape_view_before_write, vector(), ["`y` is changed in place", "`v`"]),
    (trust.sum_initial, vector(), ["np.sum", "initial", "trust.py:"]),
    (trust.einsum_computed_axes, lambda: (R.standard_normal((2, 2)),),
     ["interleaved", "trust.py:"]),
    (trust.sorts_a_list, vector(), ["sorting a list in place", "np.sort", "trust.py:"]),
    # the loop's sequence is bound to a name of srctrans's before the loop: the message
    # names the user's loop variable, which shares the memory too
    (trust.loop_writes_and_rebinds_its_sequence, vector(), ["`X` is changed in place", "`row`"]),
]


@pytest.mark.parametrize("fn, build", CORRECT, ids=[c[0].__name__ for c in CORRECT])
def test_derivatives_match_finite_differences(fn, build):
    st.check_grads(fn, build(), order=2)


@pytest.mark.parametrize("fn, build, words", REFUSED, ids=[c[0].__name__ for c in REFUSED])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_effects_srctrans_cannot_follow_are_refused(fn, build, words, mode):
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        if mode == "reverse":
            st.grad(fn)(*build())
        else:
            args = build()
            st.jvp(fn, args, tuple(np.ones_like(a) for a in args))
    for word in words:
        assert word in str(info.value), str(info.value)


def test_the_issue_s_first_reproducer():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(st.grad(trust.augmented_constant)(x), [4.0, 4.0])
    _, tangent = st.jvp(trust.augmented_constant, (x,), (np.array([1.0, 0.0]),))
    assert tangent == pytest.approx(4.0)


def test_a_write_with_repeated_indices_keeps_the_last_value_s_gradient():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(st.grad(trust.repeated_index_write)(x), [2.0, 4.0, 6.0])


def test_boolean_masks_count_in_the_fused_gradient():
    x = np.array([0.3, -0.7, 1.2])
    for _ in range(2):                  # generic code, then the fused gradient
        np.testing.assert_allclose(st.grad(trust.relu_masks)(x), [2.0, 1.0, 1.0])


def test_builtin_max_of_a_list_in_reverse_mode():
    assert st.grad(trust.max_of_list, wrt=(0, 1))(0.7, 0.2) == (1.0, 0.0)


NO_DERIVATIVE = [
    (lambda: st.grad(trust.returns_none)(np.ones(2)), "returns None here"),
    (lambda: st.grad(trust.returns_string)(np.ones(2)), "returns a str here"),
    (lambda: st.vjp(trust.returns_none, np.ones(2))[1](None), "returns None here"),
    (lambda: st.jvp(trust.returns_none, (np.ones(2),), (np.ones(2),)), "returns None here"),
    (lambda: st.grad(trust.uses_label, wrt=1)(np.ones(2), "a"), "'label'"),
    (lambda: st.jvp(trust.abs_of, (np.ones(2),), (np.ones(2) + 1j,)), "tangent is complex"),
]


def test_complex_values_have_derivatives():
    """Complex numbers were refused; they follow docs/complex.md now (tests/test_complex.py
    checks every rule)."""
    np.testing.assert_array_equal(st.grad(trust.complex_output)(np.ones(2)), [0.0, 0.0])
    assert st.jvp(trust.complex_output, (np.ones(2),), (np.ones(2),))[1] == 2j
    z = np.ones(2) + 1j
    np.testing.assert_allclose(st.grad(trust.abs_of)(z), np.conj(z) / np.abs(z))
    assert st.jvp(trust.abs_of, (z,), (np.ones(2) + 0j,))[1] == pytest.approx(np.sqrt(2))


@pytest.mark.parametrize("call, words", NO_DERIVATIVE)
def test_values_without_a_derivative_are_errors(call, words):
    with pytest.raises(st.NonDifferentiableError) as info:
        call()
    assert words in str(info.value)


def test_a_functools_wraps_decorator_is_differentiated_as_called():
    assert st.grad(trust.decorated)(3.0) == pytest.approx(12.0)
    assert st.jvp(trust.decorated, (3.0,), (1.0,)) == pytest.approx((18.0, 12.0))


def _module(path, name, text):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_same_function_text_in_two_modules_reads_each_module_s_globals(tmp_path):
    text = "SCALE = {}\n\ndef f(x):\n    return SCALE * x * x\n"
    one = _module(tmp_path / "trust_scale_one.py", "trust_scale_one", text.format(1.0))
    five = _module(tmp_path / "trust_scale_five.py", "trust_scale_five", text.format(5.0))
    assert st.grad(one.f)(1.0) == 2.0
    assert st.grad(five.f)(1.0) == 10.0
    assert st.grad(one.f)(np.ones(2)).tolist() == [2.0, 2.0]
    assert st.grad(five.f)(np.ones(2)).tolist() == [10.0, 10.0]
    assert st.jvp(five.f, (1.0,), (1.0,)) == (5.0, 10.0)


def test_a_file_edited_after_import_is_an_error(tmp_path):
    path = tmp_path / "trust_edited.py"
    module = _module(path, "trust_edited", "def f(x):\n    return x * x\n")
    path.write_text("def f(x):\n    return x * x * x + 1.0\n")
    stat = os.stat(path)
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))
    with pytest.raises(st.NoSourceError) as info:
        st.grad(module.f)(2.0)
    assert "has changed since Python compiled it" in str(info.value)
    assert "reload" in str(info.value)


def test_a_module_reloaded_without_writing_bytecode_is_read_as_it_is(tmp_path, monkeypatch):
    """Python compiles an edited module again on reload but, told not to write bytecode,
    leaves the old cached bytecode: srctrans once took that for an edit after import and
    refused the reloaded function (Python 3.11 compiles a def alone with other instructions
    than in its module, which sends srctrans to the cached bytecode)."""
    path = tmp_path / "trust_reloaded.py"
    module = _module(path, "trust_reloaded",
                     "import numpy as np\n\ndef f(x):\n    return np.sum(np.sin(x))\n")
    import py_compile
    py_compile.compile(str(path), cfile=module.__cached__)      # the bytecode of the old text
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(np.sin(x) * 2.0)\n")
    stat = os.stat(path)
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    spec = importlib.util.spec_from_file_location("trust_reloaded", path)
    reloaded = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "trust_reloaded", reloaded)
    spec.loader.exec_module(reloaded)                            # compiled again, not written
    assert reloaded.__cached__ == module.__cached__
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(st.grad(reloaded.f)(x), 2.0 * np.cos(x))


def test_second_order_over_a_list_selected_as_a_tuple():
    xs = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    _, pullback = st.vjp(st.grad(trust.loop_over_list, wrt=(0,)), xs)
    (cotangent,) = pullback(([np.ones(2), np.ones(2)],))
    np.testing.assert_allclose(cotangent[0], [6.0, 12.0])
    np.testing.assert_allclose(cotangent[1], [18.0, 24.0])


@pytest.mark.parametrize("trips", [0, 2])
def test_second_order_through_a_loop_that_never_runs_its_call(trips):
    st.check_grads(trust.loop_that_never_runs_calls_a_function, (R.standard_normal(2), trips),
                   order=2, wrt=0)


@pytest.mark.parametrize("s", [1.0, -1.0])
def test_a_self_assignment_passes_the_adjoint_unchanged(s):
    st.check_grads(trust.self_assignment_in_a_branch, (R.standard_normal(3), s), order=2, wrt=0)


def test_a_list_read_before_an_append_nothing_reads():
    st.check_grads(trust.read_then_appended_after, (R.standard_normal(3), R.standard_normal(3)),
                   order=2, wrt=(0, 1))


def test_third_derivative_through_a_loop():
    x = np.array([0.3, 0.5, 0.9])
    third = st.grad(st.grad(st.grad(trust.cubic_loop)))(x)
    second = st.grad(st.grad(trust.cubic_loop))
    numeric = (second(x + 1e-6) - second(x - 1e-6)) / 2e-6
    np.testing.assert_allclose(third, numeric, rtol=1e-5)


def test_hessian_of_a_loop():
    x = np.array([0.3, 0.5, 0.9])
    hessian = st.hessian(trust.sin_loop)(x)
    gradient = st.grad(trust.sin_loop)
    numeric = np.stack([(gradient(x + 1e-6 * e) - gradient(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-8)


def test_an_integer_field_is_a_constant_to_every_order():
    p = trust.Params(np.array([1.0, 2.0]), 0.5, 3)
    assert st.grad(t_loss := trust.named_tuple_loss)(p).n is None
    second = st.grad(st.grad(t_loss))(p)
    np.testing.assert_allclose(second.w, [18.0, 36.0])
    assert second.b == pytest.approx(3.0)
    (hvp,) = st.hvp(t_loss, (p,), (trust.Params(np.ones(2), 1.0, 0),))
    assert hvp.n == 0.0
    with pytest.raises(st.NonDifferentiableError, match="integer entry"):
        st.jvp(t_loss, (p,), (trust.Params(np.ones(2), 1.0, 1.0),))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_appending_to_the_caller_s_list_is_refused_in_both_modes(mode):
    xs = [np.ones(2)]
    with pytest.raises(st.UnsupportedSyntaxError, match="appending to `xs`"):
        if mode == "reverse":
            st.grad(trust.appends_to_argument, wrt=1)(xs, np.ones(2))
        else:
            st.jvp(trust.appends_to_argument, (xs, np.ones(2)), (None, np.ones(2)))
    assert len(xs) == 1


def test_a_loop_value_that_changes_shape_is_not_specialised_on_its_last_shape():
    from programs import control
    x, y = 0.25, np.array([0.79, 0.25, 0.44])      # a scalar carried into an array
    st.check_grads(control.two_carried_values, (x, y), order=2)


THIRD_ORDER = ["nested_loops", "branch_inside_loop", "not_condition", "two_carried_values",
               "early_return", "loop_over_zip"]


@pytest.mark.parametrize("name", THIRD_ORDER)
def test_third_derivatives_of_loops_and_branches(name):
    from programs import control
    from srctrans.api import _Differentiated
    fn = getattr(control, name)
    rng = np.random.default_rng(3)
    args = tuple(rng.uniform(0.2, 0.9, 3) if p != "W" else rng.uniform(0.2, 0.9, (3, 3))
                 for p in __import__("inspect").signature(fn).parameters)
    gradient = _Differentiated(fn, (0,), "zero", True, False).plain_function()
    st.check_grads(gradient, args, order=2, wrt=(0,), rtol=1e-4)


def test_concatenating_lists_srctrans_cannot_see_are_refused_in_reverse_mode():
    """``xs + ys`` of two list parameters: reverse mode cannot tell concatenation from
    arithmetic, so it refuses (forward mode's tangents concatenate as Python does)."""
    xs, ys = [R.standard_normal(2)], [R.standard_normal(2), R.standard_normal(2)]
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(trust.concatenated_parameters)(xs, ys)
    message = str(info.value)
    assert "list or tuple operand" in message and "list(xs) + list(ys)" in message
    assert "trust.py:" in message
    out, tangent = st.jvp(trust.concatenated_parameters, (xs, ys),
                          ([np.ones(2)], [np.zeros(2), np.ones(2)]))
    assert np.isclose(tangent, np.sum(xs[0] + ys[-1]))


def test_a_pullback_whose_callee_loops_can_be_called_again():
    """The backward pass pops saved values from its tape; a callee's tape lives in its
    caller's residuals, so a second call of the pullback (one per row of a Jacobian)
    once found it empty."""
    x = R.standard_normal(3)
    _, pullback = st.vjp(trust.through_a_looping_helper, x)
    first, = pullback(np.ones(3))
    again, = pullback(np.ones(3))
    np.testing.assert_array_equal(first, again)
    J = st.jacobian(trust.through_a_looping_helper)(x)
    np.testing.assert_allclose(np.diag(J), first, rtol=1e-12)
    st.check_grads(trust.through_a_looping_helper, (x,), order=2)


def test_a_loop_s_else_block_is_not_dropped():
    """The issue's reproducer: the else block doubles the sum, so the gradient is 2, not 1."""
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(st.grad(trust.for_else_over_an_array)(x), [2.0, 2.0, 2.0])
    _, tangent = st.jvp(trust.for_else_over_an_array, (x,), (np.array([1.0, 2.0, 3.0]),))
    np.testing.assert_allclose(tangent, 12.0)
    # a break that is taken skips the else block
    np.testing.assert_allclose(st.grad(trust.for_else_with_a_break_taken)(x), [1.0, -2.0, 0.0])

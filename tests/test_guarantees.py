"""The README's "What srctrans guarantees", claim by claim: each bullet names the tests that
show it, those tests exist (and run in this suite), and a new bullet needs its tests here.
Claims no other test showed are shown below."""

import ast
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import srctrans as st
from programs import guarded

TESTS = Path(__file__).resolve().parent
README = (TESTS.parent / "README.md").read_text()

# the bold lead of each bullet -> the tests that show what it says ("file::function")
SHOWN_BY = {
    "Effects are modelled or refused.": [
        "test_mutation.py::test_matches_finite_differences",
        "test_mutation.py::test_put_along_axis_is_a_functional_write",
        "test_trust.py::test_a_write_with_repeated_indices_keeps_the_last_value_s_gradient",
        "test_trust.py::test_effects_srctrans_cannot_follow_are_refused",
        "test_mutation.py::test_writing_into_an_argument_differentiates_its_value_on_entry",
        "test_mutation.py::test_writing_into_a_view_of_an_argument_is_an_error",
        "test_guarantees.py::test_out_and_a_helper_writing_into_its_buffer_are_errors",
    ],
    "Aliases are refused, and only aliases.": [
        "test_guards.py::test_a_view_read_before_its_base_is_written_in_a_loop_is_refused",
        "test_real_code.py::test_a_chained_write_an_alias_would_see_is_refused_with_a_working_hint",
        "test_real_code.py::test_an_array_made_anew_each_step_and_stored_is_not_an_alias",
        "test_guarantees.py::test_an_alias_read_after_a_change_is_refused_with_the_copy_to_make",
    ],
    "Results are yours.": [
        "test_ownership.py::test_gradients_are_the_caller_s_own_on_every_call",
        "test_ownership.py::test_an_in_place_update_of_a_gradient_changes_no_argument",
        "test_ownership.py::test_a_tangent_is_the_caller_s_own_on_every_call",
        "test_guards.py::test_a_gradient_that_is_a_view_of_an_argument_is_copied_on_every_path",
    ],
    "What is called is what is differentiated.": [
        "test_trust.py::test_a_functools_wraps_decorator_is_differentiated_as_called",
        "test_trust.py::test_a_file_edited_after_import_is_an_error",
        "test_trust.py::test_the_same_function_text_in_two_modules_reads_each_module_s_globals",
        "test_real_code.py::test_a_local_name_for_numpy_is_numpy",
    ],
    "No derivative, no answer.": [
        "test_api.py::test_selecting_an_int_or_bool_is_an_error",
        "test_trust.py::test_values_without_a_derivative_are_errors",
        "test_outputs.py::test_an_output_without_a_derivative_is_an_error_at_its_return",
        "test_outputs.py::test_check_grads_fails_on_an_int_output_instead_of_passing",
        "test_gradient_control.py::test_missing_rule_error_suggests_register_vjp",
        "test_guarantees.py::test_a_str_or_none_argument_selected_is_an_error",
    ],
    "Every derivative differentiates again": [
        "test_trust.py::test_third_derivative_through_a_loop",
        "test_trust.py::test_third_derivatives_of_loops_and_branches",
        "test_trust.py::test_hessian_of_a_loop",
        "test_corpus.py::test_agrees_with_finite_differences_in_both_modes_to_second_order",
    ],
    "No internal error reaches you as one.": [
        "test_bad_inputs.py::test_internal_failures_are_internal_errors_at_the_users_line",
        "test_errors.py::test_an_entry_point_called_with_the_wrong_arguments_is_a_call_error",
        "test_bad_inputs.py::test_full_tracebacks_keep_the_original_error",
        "test_robustness.py::test_deep_call_chains_and_long_expressions_build",
        "test_guarantees.py::test_a_traceback_shows_the_user_s_frames_and_one_line_of_srctrans",
    ],
    "Nothing leaks, and a new process does not build again.": [
        "test_robustness.py::test_inline_gradients_do_not_leak",
        "test_robustness.py::test_clear_cache_gives_back_builds",
        "test_persistent_cache.py::test_a_second_process_reads_the_build_back_without_the_compiler",
        "test_robustness.py::test_a_users_runtime_module_does_not_shadow_srctrans",
    ],
}


def _bullets():
    section = README[README.index("## What srctrans guarantees"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"^- \*\*(.+?)\*\*", section, re.M)


def _defined(path):
    tree = ast.parse((TESTS / path).read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_guarantee_names_tests_that_exist():
    bullets = _bullets()
    assert len(bullets) >= 8
    assert set(bullets) == set(SHOWN_BY), set(bullets) ^ set(SHOWN_BY)
    for lead, tests in SHOWN_BY.items():
        assert len(tests) >= 3, lead
        for test in tests:
            path, name = test.split("::")
            assert name in _defined(path), f"{lead}: {test} does not exist"


# -- claims no other test showed -------------------------------------------------------

def test_out_and_a_helper_writing_into_its_buffer_are_errors():
    with pytest.raises(st.UnsupportedSyntaxError, match="`out=`") as info:
        st.grad(guarded.sine_into)(np.ones(3))
    assert "guarded.py:" in str(info.value) and "assign the result" in str(info.value)
    with pytest.raises(st.UnsupportedSyntaxError, match="would change its caller's array"):
        st.grad(guarded.fills_a_buffer)(np.ones(3))


def test_an_alias_read_after_a_change_is_refused_with_the_copy_to_make():
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(guarded.alias_read_after_a_change)(np.ones(3))
    message = str(info.value)
    assert "`v` is changed in place here while `u` may share its memory" in message
    assert "`v = u.copy()`" in message and "guarded.py:" in message


def test_a_name_bound_anew_to_a_new_array_shares_memory_no_more():
    """``x, y = xy`` may bind one array twice; after ``x = x * 1.0`` and ``y = y * 1.0`` a
    change of ``x`` in place is seen by no other name (and a name bound to the old array
    before is not the new one's); a rebinding under a branch may not run: still refused."""
    a, b = np.ones(3), np.arange(3.0)
    dx, dy = st.grad(guarded.unpacked_then_copied)([a, b])
    np.testing.assert_allclose(dx, b * np.array([2.0, 1.0, 1.0]))
    np.testing.assert_allclose(dy, a * np.array([2.0, 1.0, 1.0]))
    st.check_grads(guarded.copied_after_an_alias, (np.linspace(0.1, 0.9, 3),), order=2)
    with pytest.raises(st.UnsupportedSyntaxError, match="may share its memory"):
        st.grad(guarded.copied_in_a_branch)(np.ones(3), True)


def test_a_str_or_none_argument_selected_is_an_error():
    for value in ("label", None):
        with pytest.raises(st.NonDifferentiableError):
            st.grad(guarded.scaled_attribute, wrt=0)(value, np.ones(3))


def test_a_traceback_shows_the_user_s_frames_and_one_line_of_srctrans():
    """An error in the user's code: the traceback holds the caller's frames, srctrans's entry
    point's `raise` (one line of srctrans), the generated line that raised it and a note
    naming the user's line; no frame of the compiler."""
    import traceback
    try:
        st.grad(guarded.raises_on_negative)(np.array([-1.0, 2.0]))
    except ValueError as error:
        frames = traceback.extract_tb(error.__traceback__)
        notes = getattr(error, "__notes__", [])
    files = [frame.filename for frame in frames]
    assert files[0].endswith("test_guarantees.py")
    assert len([f for f in files if "/srctrans/" in f]) == 1, files
    assert [f for f in files if f.startswith("<srctrans")] == files[-1:], files
    if sys.version_info >= (3, 11):                    # (exceptions have notes from 3.11)
        assert any("guarded.py" in note and "raise ValueError" in note for note in notes), notes

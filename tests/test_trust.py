"""Programs that once returned silently wrong derivatives (issue 9): each now gives the
derivative of what Python computes, checked against finite differences in both modes and
at second order, or a clear error at the user's line."""

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
    (trust.augmented_constant_kinds, vector(5)),
    (trust.augmented_constant_in_loop, vector()),
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
]

# (function, arguments, words the error must contain): refused at the user's line
REFUSED = [
    (trust.out_keyword, vector(), ["out=", "trust.py:"]),
    (trust.out_keyword_clip, vector(), ["out=", "trust.py:"]),
    (trust.writes_through_helper, vector(), ["writing into `buf`", "fill_into", "trust.py:"]),
    (trust.alias_augmented, vector(), ["`v` is changed in place", "`u`", "trust.py:"]),
    (trust.view_before_write, vector(), ["`y` is changed in place", "`v`", ".copy()"]),
    (trust.reshape_view_before_write, vector(), ["`y` is changed in place", "`v`"]),
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
    np.testing.assert_allclose(st.grad(trust.relu_masks)(x), [2.0, 1.0, 1.0])

"""Every rejected construct raises a SrcTransError naming the file, line, construct and a hint.

ERRORS is the table: the function of tests/programs/unsupported.py, its
arguments, the error class, the marker of the line the error must name, and
words the message must contain (the construct, and what to do instead).
"""

import contextlib
import os

import numpy as np
import pytest

import srctrans as st
from programs import basic, line_of, unsupported

X = np.array([0.5, 1.5])
FILE = os.path.basename(unsupported.__file__)

# (function, args, error class, marker, words the message contains)
ERRORS = [
    (unsupported.uses_try, (X,), st.UnsupportedSyntaxError, "try", ["`try`", "hint:"]),
    (unsupported.uses_with, (X, contextlib.nullcontext()), st.UnsupportedSyntaxError, "with",
     ["`with`", "hint:"]),
    (unsupported.uses_yield, (X,), st.UnsupportedSyntaxError, "yield", ["`yield`", "return"]),
    (unsupported.uses_await, (X,), st.UnsupportedSyntaxError, "async", ["`async def`", "non-async"]),
    (unsupported.uses_global, (X,), st.UnsupportedSyntaxError, "global", ["`global`", "argument"]),
    (unsupported.make_nonlocal(), (X,), st.UnsupportedSyntaxError, "nonlocal",
     ["`nonlocal`", "argument"]),
    (unsupported.uses_del, (X,), st.UnsupportedSyntaxError, "del", ["`del`", "hint:"]),
    (unsupported.del_in_a_loop_of_a_name_it_reads, (X,), st.UnsupportedSyntaxError,
     "release-in-loop", ["`del`", "never reads after"]),
    (unsupported.del_twice, (X,), st.UnsupportedSyntaxError, "released-twice", ["`del`"]),
    (unsupported.del_of_a_name_a_local_function_reads, (X,), st.UnsupportedSyntaxError,
     "released-before-closure", ["`del`"]),
    (unsupported.uses_import, (X,), st.UnsupportedSyntaxError, "import",
     ["`import`", "module level"]),
    (unsupported.uses_from_import, (X,), st.UnsupportedSyntaxError, "from-import",
     ["`import`", "module level"]),
    (unsupported.calls_remainder, (X,), st.MissingRuleError, "remainder",
     ["math.remainder", "no derivative rule", "hint:"]),
    (unsupported.calls_vectorize, (X,), st.MissingRuleError, "vectorize",
     ["vectorized_square", "no derivative rule", "hint:"]),
    (unsupported.calls_lambda_helper, (X,), st.NoSourceError, "lambda-call",
     ["lambda", "`def`"]),
    (unsupported.recursive, (X, 3), st.SrcTransError, "recursion",
     ["recursive call of recursive", "hint:"]),
    (unsupported.mutual_a, (X,), st.SrcTransError, "mutual-b",
     ["recursive call of mutual_a", "hint:"]),
    (unsupported.loops_over_items, (X,), st.UnsupportedSyntaxError, "for-items",
     ["`for` loop over this kind of iterable", "not supported yet"]),
    (unsupported.calls_writing_helper, (X,), st.UnsupportedSyntaxError, "subscript-write",
     ["writing into `x`", "(a view of) an argument", "x.copy()"]),
]


@pytest.mark.parametrize("fn, args, error, marker, words", [
    pytest.param(*row, id=f"{row[3]}-{row[0].__name__}") for row in ERRORS])
def test_rejected_construct(fn, args, error, marker, words):
    with pytest.raises(error) as info:
        st.grad(fn)(*args)
    assert isinstance(info.value, st.SrcTransError)
    message = str(info.value)
    assert f"{FILE}:{line_of(unsupported, marker)}" in message, message
    for word in words:
        assert word in message, (word, message)
    assert info.value.hint


@pytest.mark.parametrize("entry", ["vjp", "value_and_grad", "source"])
def test_every_entry_point_rejects_the_same_way(entry):
    line = line_of(unsupported, "try")
    with pytest.raises(st.UnsupportedSyntaxError, match=f"{FILE}:{line}"):
        if entry == "vjp":
            st.vjp(unsupported.uses_try, X)
        elif entry == "value_and_grad":
            st.value_and_grad(unsupported.uses_try)(X)
        else:
            st.source(unsupported.uses_try)


def test_lambda_names_its_file_and_line():
    square = lambda v: v * v  # noqa: E731  # marker: lambda
    with pytest.raises(st.NoSourceError) as info:
        st.grad(square)(X)
    message = str(info.value)
    assert f"{os.path.basename(__file__)}:{square.__code__.co_firstlineno}" in message
    assert "lambda" in message and "`def`" in message


def test_builtin_without_source():
    with pytest.raises(st.NoSourceError) as info:
        st.grad(len)(X)
    message = str(info.value)
    assert "len" in message and "builtin" in message and "hint:" in message


def test_callable_object_without_source():
    with pytest.raises(st.NoSourceError, match="vectorize"):
        st.grad(unsupported.vectorized_square)(X)


def test_reserved_parameter_names_file_and_line():
    with pytest.raises(st.UnsupportedSyntaxError) as info:
        st.grad(basic.has_reserved)(X, X)
    assert f"basic.py:{line_of(basic, 'reserved')}" in str(info.value)


def test_error_names_the_function():
    with pytest.raises(st.UnsupportedSyntaxError, match=r"\(in loops_over_items\)"):
        st.grad(unsupported.loops_over_items)(X)


def test_errors_are_not_cached_as_successes():
    for _ in range(2):
        with pytest.raises(st.UnsupportedSyntaxError):
            st.grad(unsupported.loops_over_items)(X)


@pytest.mark.parametrize("call, words", [
    (lambda: st.hessian(), "srctrans.hessian: missing 1 required positional argument"),
    (lambda: st.jvp(basic.square, (1.0,)), "srctrans.jvp: missing 1 required positional"),
    (lambda: st.grad(basic.square, 0, 1), "srctrans.grad: takes from 0 to 2 positional"),
])
def test_an_entry_point_called_with_the_wrong_arguments_is_a_call_error(call, words):
    """Not an InternalError ("a bug in srctrans"): the call did not fit the signature."""
    with pytest.raises(st.CallError, match=words) as caught:
        call()
    assert "help(srctrans." in str(caught.value) and "bug in srctrans" not in str(caught.value)

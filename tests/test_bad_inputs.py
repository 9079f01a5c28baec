"""The bad-input catalogue: every bad input is a SrcTransError that says where and what to do.

Each row of ERRORS runs one bad input through srctrans and asserts the error
class (so no other exception type escapes), that the message names the
user's file and line (or, for a bad call, the argument), the words that say
what is wrong and what to do, and that the traceback holds the user's frames,
not srctrans's. Together with tests/test_errors.py (the constructs of
tests/programs/unsupported.py) this is the catalogue of issue 10.
"""

import linecache
import os
import traceback

import numpy as np
import pytest

import srctrans as st
from programs import bad_inputs as b
from programs import line_of

X = np.array([0.5, 1.5])
FILE = os.path.basename(b.__file__)
SRCTRANS = os.path.dirname(st.__file__)
RUNTIME = os.path.dirname(st.runtime.__file__)


def grad(fn, *args, **options):
    return lambda: st.grad(fn, **options)(*args)


def fwd(fn, *args):
    return lambda: st.jvp(fn, args, tuple(np.ones_like(a) for a in args))


SYNTAX, MISSING = st.UnsupportedSyntaxError, st.MissingRuleError

# (id, call, error class, marker of the line named (None: no line), words the message holds)
ERRORS = [
    ("class", grad(b.defines_class, X), SYNTAX, "class", ["class"]),
    ("yield-from", grad(b.yields_from, X), SYNTAX, "yield-from", ["yield"]),
    ("attribute-write", grad(b.writes_attribute, X, b.Box()), SYNTAX, "attribute-write",
     ["local variable"]),
    ("jump-out-of-block", grad(b.leaves_stop_recording, X), SYNTAX, "jump-out-of-block",
     ["break"]),
    ("range-variable", grad(b.assigns_loop_variable, X), SYNTAX, "range-variable",
     ["another name"]),
    ("unpacking-loop", grad(b.unpacks_items, X, [(1.0, 2.0)]), SYNTAX, "unpacking-loop",
     ["unpacking each item into something other than names", "assign inside the loop"]),
    ("reversed", grad(b.loops_over_reversed, X), SYNTAX, "reversed", ["range(...)"]),
    ("chained-write", grad(b.chained_subscript_write, X), SYNTAX, "chained-write",
     ["one named array at a time"]),
    ("out", grad(b.out_keyword, X), SYNTAX, "out", ["out="]),
    ("unused-call", grad(b.unused_numpy_call, X), SYNTAX, "unused-call", ["assign"]),
    ("partition", grad(b.partitions_in_place, X), SYNTAX, "partition", ["partition"]),
    ("list-sort", grad(b.sorts_list_in_place, X), SYNTAX, "list-sort", ["sort"]),
    ("alias", grad(b.aliases, X), SYNTAX, "alias", ["`u`", "copy"]),
    ("set-display", grad(b.set_display, X), SYNTAX, "set-display", ["set"]),
    ("wide-qr", grad(b.wide_qr, np.ones((2, 3)) + np.eye(2, 3)), SYNTAX, "wide-qr",
     ["np.linalg.qr", "2 x 3", "transpose"]),
    ("pinv-rcond", grad(b.pinv_rcond, np.eye(3)), SYNTAX, "pinv-rcond", ["pinv", "rcond"]),
    ("list-slice-write", grad(b.list_slice_write, X, X), SYNTAX, "list-slice-write",
     ["slice of a list", "xs[:i] + [v]"]),
    ("unseen-concatenation", grad(b.concatenates_parameters, [X], [X]), SYNTAX,
     "unseen-concatenation", ["list or tuple operand", "list(xs) + list(ys)"]),
    ("set-comprehension", grad(b.set_comprehension, X), SYNTAX, "set-comprehension", ["set"]),
    ("dict-unpack", grad(b.dict_unpacking, X), SYNTAX, "dict-unpack", ["explicit keys"]),
    ("lambda-argument", grad(b.lambda_argument, X), SYNTAX, "lambda-argument", ["lambda"]),
    ("starred-call", grad(b.starred_call, X), SYNTAX, "starred-call", ["one by one"]),
    ("walrus", grad(b.walrus, X), SYNTAX, "walrus", [":="]),
    ("def-in-branch", grad(b.def_in_branch, X), SYNTAX, "def-in-branch", ["top of the function"]),
    ("local-early-return", grad(b.local_early_return, X), SYNTAX, "local-early-return",
     ["return"]),
    ("local-keyword-args", grad(b.local_keyword_args, X), SYNTAX, "local-keyword-args",
     ["module level"]),
    ("local-recursion", grad(b.local_recursion, X), SYNTAX, "local-recursion", ["recursive"]),
    ("reserved", grad(b.reserved_parameter, X), SYNTAX, "reserved", ["output_gradients"]),
    ("grad-of-local", grad(b.grad_of_local, X), SYNTAX, "grad-of-local",
     ["`inner`", "st.grad", "defaults", "positional parameters"]),
    ("jvp-of-local", grad(b.jvp_of_local, X), SYNTAX, "jvp-of-local",
     ["`inner`", "calls the local function `square`", "module level"]),
    ("einsum-axes", grad(b.einsum_computed_axes, X, [0]), SYNTAX, "einsum-axes",
     ["interleaved", "literal"]),
    ("global-append", grad(b.appends_to_global, X), SYNTAX, "global-append",
     ["`LOG`", "items = list(LOG)"]),
    ("argument-append", grad(b.appends_to_argument, X, []), SYNTAX, "argument-append",
     ["`items`", "items = list(items)"]),
    ("r-slice", grad(b.r_with_slice, X), SYNTAX, "r-slice", ["np.r_"]),
    ("scipy", grad(b.calls_scipy, np.eye(2)), MISSING, "scipy",
     ["logm", "installed package", "st.register_vjp(scipy.linalg.logm",
      "st.register_jvp(scipy.linalg.logm", "st.differentiate_through"]),
    ("scipy-forward", fwd(b.calls_scipy, np.eye(2)), MISSING, "scipy",
     ["logm", "installed package"]),
    ("stdlib", grad(b.calls_stdlib_python, 0.5), MISSING, "stdlib",
     ["fmean", "installed package"]),
    ("three-missing", grad(b.calls_three_without_rules, 0.5), MISSING, "three-missing",
     ["3 calls have no derivative rule", "math.remainder", "logm", "i0e",
      "st.register_vjp(math.remainder", "st.register_vjp(scipy.special.i0e"]),
    ("unresolved", grad(b.calls_unknown_name, X), MISSING, "unresolved",
     ["helper_that_does_not_exist"]),
    ("unknown-method", grad(b.calls_unknown_method, X), MISSING, "unknown-method", ["tobytes"]),
    ("reverse-only", fwd(b.calls_reverse_only, X), MISSING, "reverse-only",
     ["custom_gradient", "st.register_jvp"]),
    ("pad-mode", grad(b.pads_with_mean, X), SYNTAX, "pad-mode", ["mode='mean'", "edge"]),
    ("pad-mode-forward", fwd(b.pads_with_mean, X), SYNTAX, "pad-mode", ["mode='mean'"]),
    ("pad-keyword", grad(b.pads_with_values, X), SYNTAX, "pad-keyword", ["constant_values"]),
    ("exec", grad(b.from_exec, X), st.NoSourceError, None, ["from_exec", "in a .py file"]),
    ("prompt-lambda", grad(b.typed_lambda, X), st.NoSourceError, None,
     ["lambda", "in a .py file", "Jupyter"]),
    ("ufunc", grad(np.sin, X), st.NoSourceError, None, ["sin", "ufunc", "def f(x)"]),
    ("builtin", grad(len, X), st.NoSourceError, None, ["len", "def"]),
    ("none-output", grad(b.returns_none, X), st.NonDifferentiableError, None, ["None"]),
    ("string-output", grad(b.returns_string, X), st.NonDifferentiableError, None, ["str"]),
    ("int-argument", grad(b.plain, 3, X), st.NonDifferentiableError, None, ["'x'", "int"]),
    ("string-argument", grad(b.plain, "a", X), st.NonDifferentiableError, None, ["'x'", "str"]),
    ("complex-tangent-of-real", lambda: st.jvp(b.plain, (X, X), (X + 1j, X)),
     st.NonDifferentiableError, None, ["'x'", "real", "complex"]),
    ("wrt-name", grad(b.plain, X, X, wrt="z"), st.UsageError, None, ["'z'", "x, y"]),
    ("wrt-index", grad(b.plain, X, X, wrt=5), st.UsageError, None, ["wrt=5"]),
    ("wrt-index-rest", grad(b.rest_args, X, X, X, wrt=1), st.UsageError, None,
     ["wrt='rest'"]),
    ("wrt-type", grad(b.plain, X, X, wrt=1.5), st.UsageError, None, ["1.5"]),
    ("wrt-twice", grad(b.plain, X, X, wrt=(0, "x")), st.UsageError, None, ["twice"]),
    ("too-many-arguments", grad(b.plain, X, X, X), st.CallError, "plain",
     ["plain() takes 2 positional arguments", "plain(x, y)"]),
    ("missing-argument", grad(b.plain, X), st.CallError, "plain",
     ["missing 1 required positional argument: 'y'"]),
    ("unknown-keyword", lambda: st.grad(b.plain)(X, X, z=1.0), st.CallError, "plain", ["'z'"]),
    ("vjp-arguments", lambda: st.vjp(b.plain, X), st.CallError, "plain", ["'y'"]),
    ("output-gradients-shape", lambda: st.grad(b.plain)(X, X, output_gradients=np.ones(3)),
     st.ShapeError, None, ["output_gradients"]),
    ("source-mode", lambda: st.source(b.plain, mode="sideways"), st.UsageError, None,
     ["sideways"]),
    ("jvp-not-tuples", lambda: st.jvp(b.plain, X, X), st.UsageError, None, ["tuples"]),
    ("jvp-count", lambda: st.jvp(b.plain, (X, X, X), (X, X, X)), st.UsageError, None,
     ["3 primals", "one primal"]),
    ("hvp-lengths", lambda: st.hvp(b.plain, (X, X), (X,)), st.UsageError, None, ["same length"]),
    ("jacobian-mode", lambda: st.jacobian(b.plain, mode="sideways"), st.UsageError, None,
     ["sideways"]),
    ("unconnected", lambda: st.grad(b.plain, unconnected_gradients="maybe"), st.UsageError, None,
     ["maybe"]),
    ("not-callable", lambda: st.grad(3), st.UsageError, None, ["not callable"]),
    ("value-and-grad-of-derivative", lambda: st.grad(st.value_and_grad(b.plain))(X, X),
     st.UsageError, None, ["value_and_grad"]),
    ("differentiate-through-builtin", lambda: st.differentiate_through(len), st.UsageError, None,
     ["register"]),
]


@pytest.mark.parametrize("call, error, marker, words",
                         [pytest.param(*row[1:], id=row[0]) for row in ERRORS])
def test_bad_input_gets_a_clear_error(call, error, marker, words):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, st.SrcTransError)
    message = str(info.value)
    if marker is not None:
        assert f"{FILE}:{line_of(b, marker)}" in message, message
    for word in words:
        assert word in message, (word, message)
    assert not isinstance(info.value, st.InternalError), message
    _assert_users_frames_only(info.value)


def _assert_users_frames_only(error):
    """At most one frame of srctrans (the entry point that re-raised), none of generated code."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if f.filename.startswith((SRCTRANS, RUNTIME))
           or f.filename.startswith("<srctrans ")]
    assert len(own) <= 1, [f"{f.filename}:{f.lineno}" for f in own]


def test_the_catalogue_is_large_enough():
    from test_errors import ERRORS as UNSUPPORTED
    assert len(ERRORS) + len(UNSUPPORTED) >= 60


@pytest.mark.parametrize("kept", [
    "import os\n\nprint(os.sep)\n",                   # the text of `python -c` (Python 3.13)
    "def from_exec(x):\n    return x * 3.0\n",        # another exec() of the same name
    "x = 1 +\n",                                       # text that does not parse
])
def test_a_pseudo_files_text_of_another_exec_is_not_the_functions(monkeypatch, kept):
    # Python 3.13 keeps the text `python -c` ran under "<string>", the name exec() gives its
    # code too: that text must not be read as the exec'd function's source
    monkeypatch.setitem(linecache.cache, "<string>", (len(kept), None, kept.splitlines(True),
                                                      "<string>"))
    with pytest.raises(st.NoSourceError) as caught:
        st.grad(b.from_exec)(X)
    assert "in a .py file" in str(caught.value)
    assert "from_exec" in str(caught.value)


def test_wrt_selects_extra_positional_and_keyword_arguments():
    dx, drest = st.grad(b.rest_args, wrt=("x", "rest"))(X, 2 * X, 3 * X)
    np.testing.assert_allclose(dx, 2 * X)
    assert isinstance(drest, tuple)
    np.testing.assert_allclose(drest[0], X)
    np.testing.assert_allclose(drest[1], 6 * X)
    options = st.grad(b.keyword_args, wrt="options")(X, scale=2 * X)
    np.testing.assert_allclose(options["scale"], X)


def test_differentiate_through_reads_an_installed_function():
    import statistics
    snapshot = st.rules.REGISTRY.user_rules()
    try:
        assert st.differentiate_through(statistics.fmean) is statistics.fmean
        try:                               # its source is read now: a result, or an error there
            assert st.grad(b.calls_stdlib_python)(0.5) == pytest.approx(1.5)
        except st.SrcTransError as error:
            assert "installed package" not in str(error) and "statistics.py" in str(error)
    finally:
        st.rules.REGISTRY.restore_user_rules(snapshot)
        st.clear_cache()


def test_restoring_users_rules_keeps_what_srctrans_registered_meanwhile():
    """A test's snapshot undoes the user's registrations alone: a module of srctrans's own
    rules imported during the test (SciPy's, on first use) keeps its registrations, which it
    would not make again (a later test's gradient of a SciPy function had no rule)."""
    from srctrans.rules.registry import RuleRegistry
    registry = RuleRegistry()              # (what it registers stays: not srctrans's registry)
    snapshot = registry.user_rules()

    def own(x):
        return x

    def users(x):
        return x

    def constant(x):
        return x

    def declared(x):
        return x

    try:
        registry.differentiate_through(own)                 # as a rule module does
        registry.nondifferentiable(constant)
        registry.differentiate_through(users, by_user=True)
        registry.nondifferentiable(declared, by_user=True)
    finally:
        registry.restore_user_rules(snapshot)
    assert registry.differentiated_through(own) and registry.is_nondifferentiable(constant)
    assert not registry.differentiated_through(users)
    assert not registry.is_nondifferentiable(declared)


def _broken_helper():
    """A runtime helper with a bug: its code claims the runtime's file, as a real one would."""
    namespace = {}
    exec(compile("def unreduce(*args):\n    return 1.0 + {}\n", st.runtime.__file__, "exec"),
         namespace)
    return namespace["unreduce"]


def test_internal_failures_are_internal_errors_at_the_users_line(monkeypatch):
    from srctrans import runtime
    monkeypatch.setattr(runtime, "unreduce", _broken_helper())
    st.clear_cache()
    try:
        with pytest.raises(st.InternalError) as info:
            st.grad(b.plain, specialize=False)(X, X)
        assert f"{FILE}:{line_of(b, 'plain') + 1}" in str(info.value), str(info.value)
        assert "this is a bug in srctrans" in str(info.value)
        assert isinstance(info.value.internal, TypeError)
        _assert_users_frames_only(info.value)
    finally:
        monkeypatch.undo()
        st.clear_cache()


def test_full_tracebacks_keep_the_original_error(monkeypatch):
    from srctrans import runtime
    monkeypatch.setattr(runtime, "unreduce", _broken_helper())
    monkeypatch.setenv("SRCTRANS_TRACEBACK", "full")
    st.clear_cache()
    try:
        with pytest.raises(TypeError):
            st.grad(b.plain, specialize=False)(X, X)
    finally:
        monkeypatch.undo()
        st.clear_cache()

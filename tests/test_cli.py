"""The command line: ``srctrans FILE.py:FUNCTION`` prints the generated derivative.

Each case runs in-process through ``srctrans.cli.main`` (fast, and checks the
return value); a few also run ``python -m srctrans`` in a subprocess, to check
the entry point and that errors never reach the user as a traceback.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srctrans
from srctrans import cli

MODEL = """
    import numpy as np
    import helper

    def loss(w, b, x):
        y = np.tanh(x @ w + b)
        unused = np.cos(x)
        return np.sum(y * y) * helper.SCALE

    class Model:
        def energy(self, w, x):
            return np.sum(w * x)
"""

BROKEN = {
    "try_statement": """
        def f(x):
            try:
                return x * x
            except ValueError:
                return x
    """,
    "no_rule": """
        import math

        def f(x):
            return math.remainder(x, 0.3)
    """,
}


@pytest.fixture
def model(tmp_path):
    (tmp_path / "helper.py").write_text("SCALE = 2.0\n")      # a sibling import
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(MODEL))
    return path


def run(args, capsys):
    """(exit status, stdout, stderr) of ``main(args)`` in this process."""
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def run_subprocess(args, cwd=None):
    return subprocess.run([sys.executable, "-m", "srctrans", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=60)


def assert_one_line_error(status, err, *fragments):
    assert status == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("srctrans: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def backward_header(out):
    """The docstring line of the backward pass, which names the selected arguments."""
    lines = out.splitlines()
    return lines[lines.index(next(l for l in lines if l.startswith("def loss_bwd"))) + 1]


def test_prints_the_adjoint(model, capsys):
    status, out, err = run([f"{model}:loss"], capsys)
    assert status == 0 and err == ""
    assert "def loss_fwd(w, b, x):" in out
    assert "def loss_bwd" in out
    assert "# line 6: y = np.tanh(x @ w + b)" in out
    assert "cotangents of w given" in backward_header(out)


def test_matches_the_api(model, capsys):
    status, out, _ = run([f"{model}:loss", "--wrt", "b"], capsys)
    module = cli._import_file(str(model))
    assert status == 0
    assert out == srctrans.source(module.loss, wrt="b")


def test_mode_forward_prints_the_tangent_code(model, capsys):
    status, out, err = run([f"{model}:loss", "--mode", "forward", "--wrt", "w,b"], capsys)
    module = cli._import_file(str(model))
    assert status == 0 and err == ""
    assert "def loss_jvp(w, b, x, *, dw, db):" in out
    assert out == srctrans.source(module.loss, mode="forward", wrt=("w", "b"))


@pytest.mark.parametrize("wrt, selected", [
    ("w", "w"), ("b", "b"), ("1", "b"), ("-1", "x"),
    ("0,b", "w, b"), ("b,w", "b, w"), ("x, 0", "x, w"),
])
def test_wrt_by_name_index_and_tuple(model, capsys, wrt, selected):
    status, out, _ = run([f"{model}:loss", "--wrt", wrt], capsys)
    assert status == 0
    assert f"cotangents of {selected} given" in backward_header(out)


def test_single_wrt_returns_a_one_tuple_and_several_a_tuple(model, capsys):
    _, one, _ = run([f"{model}:loss", "--wrt", "w"], capsys)
    _, two, _ = run([f"{model}:loss", "--wrt", "w,b"], capsys)
    assert "return (dw,)" in one
    assert "return (dw, db)" in two


def test_no_optimize_keeps_dead_code(model, capsys):
    _, optimised, _ = run([f"{model}:loss"], capsys)
    status, raw, _ = run([f"{model}:loss", "--no-optimize"], capsys)
    assert status == 0
    assert raw != optimised
    assert "unused = np.cos(x)" in raw and "unused" not in optimised


def test_mode_reverse_is_accepted(model, capsys):
    _, default, _ = run([f"{model}:loss"], capsys)
    status, out, _ = run([f"{model}:loss", "--mode", "reverse"], capsys)
    assert status == 0 and out == default


def test_method_indices_skip_self(model, capsys):
    status, out, _ = run([f"{model}:Model.energy"], capsys)
    assert status == 0
    assert "def Model_energy_bwd" in out and "cotangents of w given" in out    # as callers name it
    _, by_index, _ = run([f"{model}:Model.energy", "--wrt", "1"], capsys)
    assert "cotangents of x given" in by_index


def test_version(capsys):
    status, out, _ = run(["--version"], capsys)
    assert status == 0 and out.strip() == f"srctrans {srctrans.__version__}"


def test_subprocess_success(model):
    result = run_subprocess([f"{model}:loss", "--wrt", "w,b"], cwd=model.parent.parent)
    assert result.returncode == 0, result.stderr
    assert "def loss_bwd" in result.stdout and "# line" in result.stdout


# --- errors: exit status 2, one line on stderr, never a traceback ---

def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def error_cases(tmp_path, model):
    """(arguments, fragments the message must contain) for each user error."""
    syntax = _write(tmp_path, "syntax.py", "def f(x:\n    return x\n")
    failing = _write(tmp_path, "failing.py", "raise RuntimeError('boom at import')\n")
    exiting = _write(tmp_path, "exiting.py", "import sys\nsys.exit(3)\n")
    try_statement = _write(tmp_path, "try_statement.py", BROKEN["try_statement"])
    no_rule = _write(tmp_path, "no_rule.py", BROKEN["no_rule"])
    return {
        "missing_file": ([f"{tmp_path / 'absent.py'}:f"], ["no such file"]),
        "syntax_error": ([f"{syntax}:f"], ["cannot import", "SyntaxError", "line 1"]),
        "import_raises": ([f"{failing}:f"], ["RuntimeError: boom at import"]),
        "import_exits": ([f"{exiting}:f"], ["SystemExit"]),
        "unknown_function": ([f"{model}:nope"], ["has no attribute 'nope'"]),
        "unknown_method": ([f"{model}:Model.nope"], ["Model has no attribute 'nope'"]),
        "not_a_function": ([f"{model}:np"], ["module, not a function"]),
        "missing_function": ([str(model)], ["FILE.py:FUNCTION"]),
        "unknown_wrt": ([f"{model}:loss", "--wrt", "z"], ["no parameter named 'z'", "hint:"]),
        "wrt_out_of_range": ([f"{model}:loss", "--wrt", "5"], ["wrt=5"]),
        "empty_wrt_entry": ([f"{model}:loss", "--wrt", "w,"], ["empty entry"]),
        "try_statement": ([f"{try_statement}:f"],
                          ["try_statement.py:3", "`try` statement is not supported", "; hint:"]),
        "no_rule": ([f"{no_rule}:f"], ["no_rule.py:5", "math.remainder", "no derivative rule"]),
    }


ERROR_NAMES = ["missing_file", "syntax_error", "import_raises", "import_exits",
               "unknown_function", "unknown_method", "not_a_function", "missing_function",
               "unknown_wrt", "wrt_out_of_range", "empty_wrt_entry", "try_statement", "no_rule"]


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_errors_in_process(tmp_path, model, capsys, name):
    args, fragments = error_cases(tmp_path, model)[name]
    status, out, err = run(args, capsys)
    assert out == ""
    assert_one_line_error(status, err, *fragments)


@pytest.mark.parametrize("name", ["missing_file", "syntax_error", "unknown_function",
                                  "missing_function", "try_statement", "no_rule"])
def test_errors_in_subprocess(tmp_path, model, name):
    args, fragments = error_cases(tmp_path, model)[name]
    result = run_subprocess(args)
    assert result.stdout == ""
    assert_one_line_error(result.returncode, result.stderr, *fragments)


@pytest.mark.parametrize("args", [[], ["--mode", "sideways", "f.py:f"], ["f.py:f", "--bogus"]])
def test_usage_errors_exit_2(capsys, args):
    status, _, err = run(args, capsys)
    assert status == 2
    assert "usage: srctrans" in err and "Traceback" not in err


def test_import_leaves_sys_path_as_it_was(tmp_path, model, capsys):
    failing = _write(tmp_path, "failing.py", "raise RuntimeError('boom')\n")
    before = list(sys.path)
    run([f"{model}:loss"], capsys)
    run([f"{failing}:f"], capsys)
    assert sys.path == before


def _broken_pass(*args, **kwargs):
    raise RuntimeError("a bug in a pass")


def test_an_internal_failure_is_one_line_and_exit_2(model, capsys, monkeypatch):
    from srctrans import pipeline
    monkeypatch.setattr(pipeline, "build_reverse", _broken_pass)
    srctrans.clear_cache()
    status, out, err = run([f"{model}:loss"], capsys)
    assert out == ""
    assert_one_line_error(status, err, "srctrans failed", "a bug in a pass", "this is a bug")
    srctrans.clear_cache()


def test_traceback_flag_shows_the_full_traceback(model, capsys, monkeypatch):
    from srctrans import pipeline
    monkeypatch.setattr(pipeline, "build_reverse", _broken_pass)
    monkeypatch.setenv("SRCTRANS_TRACEBACK", "")     # restored (unset) after the test
    srctrans.clear_cache()
    with pytest.raises(RuntimeError, match="a bug in a pass"):
        cli.main([f"{model}:loss", "--traceback"])
    srctrans.clear_cache()


def test_help_says_the_file_runs(capsys):
    assert cli.main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "top-level code runs" in text and "--traceback" in text


def test_help_names_the_other_commands(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "srctrans export FILE.py:FUNCTION -o OUT.py" in out and "srctrans cache" in out


@pytest.mark.parametrize("environment, coloured", [
    ({}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)])
def test_colour_only_on_a_terminal_that_wants_it(monkeypatch, environment, coloured):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(cli.sys.stdout, "isatty", lambda: True, raising=False)
    assert cli._colour() is coloured


def test_vmap_prints_the_batched_gradient_and_the_batched_function(model, capsys):
    batched = "np.ones((3, 2)), np.zeros(3), np.ones((5, 4, 3))"    # x batched: 5 members
    status, out, err = run([f"{model}:loss", "--vmap", "None,None,0", "--args", batched], capsys)
    module = cli._import_file(str(model))
    assert status == 0 and err == ""
    args = (np.ones((3, 2)), np.zeros(3), np.ones((5, 4, 3)))
    assert out == srctrans.source(srctrans.vmap(srctrans.grad(module.loss),
                                                in_axes=(None, None, 0)), args=args)
    assert "def loss_grad_vmap(w, b, x):" in out and "x batched along axis 0" in out
    status, out, _ = run([f"{model}:loss", "--mode", "batch", "--vmap", "None,None,0",
                          "--args", batched], capsys)
    assert status == 0 and out.startswith("def loss_vmap(w, b, x):")
    assert "rt.batch.loop" not in out


@pytest.mark.parametrize("extra, fragment", [
    (["--vmap", "0"], "need the batched example arguments: --args"),
    (["--vmap", "x", "--args", "1.0"], "each entry is an int or None"),
    (["--vmap", "0", "--mode", "forward", "--args", "1.0"], "forward mode is not batched"),
])
def test_vmap_usage_errors_are_one_line(model, capsys, extra, fragment):
    status, _, err = run([f"{model}:loss", *extra], capsys)
    assert_one_line_error(status, err, fragment)


def test_export_vmap_writes_the_batched_module(model, tmp_path, capsys):
    out = tmp_path / "batched.py"
    status, printed, err = run(["export", f"{model}:loss", "--vmap", "None,None,0", "--args",
                                "np.ones((3, 2)), np.zeros(2), np.ones((5, 4, 3))", "-o", out],
                               capsys)
    assert status == 0 and err == "" and printed.strip() == f"wrote {out}"
    assert "def loss_vmap(w, b, x):" in out.read_text()

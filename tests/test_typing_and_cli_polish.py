"""What editors and terminals see: type hints on the public API, py.typed, and the CLI's
highlighting (its --version is in test_cli.py)."""

import importlib.resources
import inspect
import io
import typing

import pytest

import srctrans as st
from srctrans import cli
from programs import exportable

PUBLIC_FUNCTIONS = ["grad", "value_and_grad", "vjp", "jvp", "jacobian", "batch_jacobian",
                    "hessian", "hvp", "source", "export", "check_grads", "stop_gradient",
                    "stop_recording", "grad_of", "custom_gradient", "register_vjp",
                    "register_jvp", "nondifferentiable", "differentiate_through"]


def test_the_package_is_marked_typed():
    assert importlib.resources.files("srctrans").joinpath("py.typed").is_file()


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_every_public_function_is_annotated(name):
    fn = getattr(st, name)
    hints = typing.get_type_hints(fn)              # resolvable, not just present
    parameters = inspect.signature(fn).parameters
    assert "return" in hints
    assert set(parameters) <= set(hints), sorted(set(parameters) - set(hints))


def test_printed_code_is_highlighted_on_a_terminal(monkeypatch):
    out = io.StringIO()
    out.isatty = lambda: True
    monkeypatch.setattr("sys.stdout", out)
    assert cli.main([f"{exportable.__file__}:mlp_loss"]) == 0
    assert "\x1b[" in out.getvalue() and "mlp_loss_bwd" in out.getvalue()
    # comments in cyan, not the grey (ANSI 37, white) that fades on a light background
    assert "\x1b[36m# line" in out.getvalue() and "\x1b[37m" not in out.getvalue()


def test_a_dark_background_gets_the_bright_colours(monkeypatch):
    out = io.StringIO()
    out.isatty = lambda: True
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setenv("COLORFGBG", "15;0")
    assert cli.main([f"{exportable.__file__}:mlp_loss"]) == 0
    assert "\x1b[96m# line" in out.getvalue()


def test_printed_code_is_plain_in_a_pipe(capsys):
    assert cli.main([f"{exportable.__file__}:mlp_loss"]) == 0
    assert "\x1b[" not in capsys.readouterr().out


"""Every script in samples/ runs to completion and prints what it promises."""

import pathlib
import re
import subprocess
import sys

import pytest

SAMPLES = pathlib.Path(__file__).resolve().parent.parent / "samples"


def run_sample(name):
    result = subprocess.run([sys.executable, str(SAMPLES / name)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def test_mlp_trains_and_shows_its_gradient():
    out = run_sample("mlp.py")
    losses = [float(v) for v in re.findall(r"^step +\d+ +loss ([\d.]+)$", out, re.M)]
    assert len(losses) == 5                                   # steps 0, 50, ..., 200
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))
    final = float(re.search(r"^final loss ([\d.]+)$", out, re.M).group(1))
    assert final < losses[0] / 10
    assert "def loss_bwd" in out and "# line" in out


def test_vjp_output_gradients():
    out = run_sample("vjp_output_gradients.py")
    assert "VJP with v = [2, 3]: [ 4. 12.]" in out
    assert "default (v = ones):  [2. 4.]" in out
    assert "the two agree" in out


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_every_sample_runs(path):
    run_sample(path.name)


def test_newton_converges_quadratically_with_the_hessian():
    out = run_sample("newton.py")
    norms = [float(v) for v in re.findall(r"\|gradient\| ([\d.e+-]+)$", out, re.M)]
    assert len(norms) == 6 and norms[-1] < 1e-7
    assert "HVP equals the Hessian times v: True" in out
    assert "JVP equals the gradient dotted with v: True" in out
    assert "def loss_jvp(w, x, y, *, dw):" in out

"""Every script in samples/ runs to completion and prints what it promises."""

import pathlib
import re
import subprocess
import sys
import warnings

import pytest

SAMPLES = pathlib.Path(__file__).resolve().parent.parent / "samples"


def run_sample(name, *args, cwd=None):
    result = subprocess.run([sys.executable, str(SAMPLES / name), *args],
                            capture_output=True, text=True, timeout=120, cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in _without_heartbeat_teardown(result.stderr), result.stderr
    return result.stdout


# A Dask worker whose heartbeat meets the scheduler closing as the sample's cluster shuts
# down logs the closed connection with its traceback (distributed's worker.heartbeat, on a
# loaded machine): a log record of the library's teardown, after the sample has finished.
_HEARTBEAT_TEARDOWN = "Failed to communicate with scheduler during heartbeat."
_LOG_RECORD = re.compile(r"^(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", re.M)


def _without_heartbeat_teardown(stderr):
    """``stderr`` without the log records of that teardown (each record starts with its
    time stamp); everything else, tracebacks included, stays."""
    return "".join(record for record in _LOG_RECORD.split(stderr)
                   if _HEARTBEAT_TEARDOWN not in record)


def test_only_the_heartbeat_teardown_record_is_left_out():
    teardown = ("2026-11-30 05:34:01,123 - distributed.worker - ERROR - " + _HEARTBEAT_TEARDOWN
                + "\nTraceback (most recent call last):\n  ...\nCommClosedError: closed\n")
    other = "2026-11-30 05:34:02,000 - distributed.core - ERROR - x\nTraceback (most recent"
    assert "Traceback" not in _without_heartbeat_teardown(teardown)
    assert "Traceback" in _without_heartbeat_teardown(teardown + other)
    assert "Traceback" in _without_heartbeat_teardown("Traceback (most recent call last):\n")


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


def test_projectile_recovers_the_drag_and_the_speed_and_plots_the_fit(tmp_path):
    out = run_sample("projectile.py", "--plot", str(tmp_path / "fit.png"))
    misfits = [float(v) for v in re.findall(r"misfit +([\d.]+)", out)]
    assert len(misfits) == 6 and misfits[-1] < misfits[0] / 100
    k, true_k, speed, true_speed = map(float, re.search(
        r"fitted k ([\d.]+) \(true ([\d.]+)\), speed ([\d.]+) m/s \(true ([\d.]+)\)", out).groups())
    assert abs(k - true_k) < 0.1 * true_k and abs(speed - true_speed) < 0.05 * true_speed
    assert (tmp_path / "fit.png").read_bytes()[:4] == b"\x89PNG"


def test_gaussian_process_finds_a_minimum_of_the_likelihood():
    out = run_sample("gaussian_process.py")
    values = [float(v) for v in re.findall(r"-log likelihood +([-\d.]+)", out)]
    assert values[-1] < values[0] - 40
    noise = float(re.search(r"noise variance ([\d.]+)", out).group(1))
    assert 0.005 < noise < 0.02                          # the data's noise variance is 0.01
    assert "a minimum: True" in out


def test_spectral_fits_through_fft_complex_numbers_and_eigenvalues():
    out = run_sample("spectral.py")
    width = float(re.search(r"blur width: fitted ([\d.]+)", out).group(1))
    assert abs(width - 2.0) < 0.05
    fitted, best = (complex(v) for v in re.search(
        r"complex gain: fitted (\S+) \(least squares (\S+)\)", out).groups())
    assert abs(fitted - best) < 1e-3 and abs(best - (0.8 + 0.6j)) < 0.05
    rate = float(re.search(r"slowest decay rate ([\d.]+)", out).group(1))
    assert abs(rate - 0.25) < 1e-3
    assert "checked against finite differences: passed" in out


def test_the_notebook_runs_in_a_real_kernel():
    """samples/notebook.ipynb, executed by nbclient in an IPython kernel: functions defined in
    cells differentiate (reverse, Hessian, methods with wrt="self", dicts, a model calling
    its layers) and st.source reads them."""
    import nbclient             # the test extra installs both, with ipykernel
    import nbformat
    with warnings.catch_warnings():           # every cell has an id: nbformat warns otherwise
        warnings.simplefilter("error")
        notebook = nbformat.read(SAMPLES / "notebook.ipynb", as_version=4)
        nbformat.validate(notebook)
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    outputs = ["".join(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
               for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not any(o.get("output_type") == "error" for cell in notebook.cells
                   if cell.cell_type == "code" for o in cell.outputs)
    assert "(['b', 'w'], (3,)" in outputs[0]
    assert outputs[1] == "(array([ 1. , -2. ,  0.5]), 0.3)"
    assert outputs[3] == "True"
    assert outputs[4] == "((3, 8), True)"          # a model calling its layers, trained
    assert "def energy_bwd(residuals, d_out):" in outputs[5]

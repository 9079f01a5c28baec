"""The benchmark script's chart (benchmarks/plot.py), on results shaped as the script reports them."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _plot_module():
    spec = importlib.util.spec_from_file_location("bench_plot", ROOT / "benchmarks" / "plot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RESULTS = [
    {"case": "mlp_small", "us_per_call": {"forward": {"best": 10.0}, "hand": {"best": 25.0},
                                           "srctrans": {"best": 27.0}, "torch": {"best": 80.0}}},
    {"case": "rnn_small", "us_per_call": {"forward": {"best": 100.0}, "hand": {"best": 300.0},
                                           "srctrans": {"best": 290.0}}},
]


def test_ratios_divide_each_gradient_by_the_forward_pass():
    table = _plot_module().ratios(RESULTS)
    assert list(table) == ["hand", "srctrans", "torch"]
    assert table["hand"] == [2.5, 3.0]
    assert table["srctrans"] == [2.7, 2.9]
    assert table["torch"] == [8.0, None]          # not measured on the second case


def test_plot_writes_a_png(tmp_path):
    path = tmp_path / "chart.png"
    _plot_module().plot(RESULTS, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 5_000

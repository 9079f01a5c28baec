"""The memory benchmark (benchmarks/bench_memory.py) runs, and measures what it says."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _bench_module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_memory",
                                                  ROOT / "benchmarks" / "bench_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_peak_counts_what_a_call_allocates_and_not_what_existed_before():
    bench = _bench_module()
    kept = np.ones(10 ** 6)                                 # 8 MB allocated before: not counted
    measured = bench.peak(lambda: (np.ones(2 * 10 ** 5), np.ones(2 * 10 ** 5)))  # 2 x 1.6 MB
    assert 3.2e6 <= measured < 3.3e6
    assert kept.size


def test_the_benchmark_runs_every_case_and_the_rnn_variants(capsys):
    _bench_module().main(["--steps", "5"])
    printed = capsys.readouterr().out
    for name in ("mlp_small", "softmax_xent_large", "scalar_recurrence", "plain loop",
                 "step marked @st.checkpoint", "loop marked st.checkpointed", "time of the checkpointed"):
        assert name in printed
    assert "differs" not in printed

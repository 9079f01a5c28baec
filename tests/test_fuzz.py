"""The differential fuzzer in CI: programs it once failed on (each under st.vmap too), and a
fixed-seed batch of new ones (an eighth of them under st.vmap too).

``python tests/fuzz.py --programs N --seed S`` runs any number with any seed
(see tests/fuzz.py); ``SRCTRANS_FUZZ_PROGRAMS`` and ``SRCTRANS_FUZZ_SEED``
change the batch run here.
"""

import importlib.util
import os
import random
import tempfile

import numpy as np
import pytest

from srctrans import runtime as rt
import srctrans as st
from fuzzing.check import check, vmap_difference
from fuzzing.generator import generate
from fuzzing.regressions import files

PROGRAMS = int(os.environ.get("SRCTRANS_FUZZ_PROGRAMS", "16"))   # more: tests/fuzz.py
SEED = int(os.environ.get("SRCTRANS_FUZZ_SEED", "20261123"))
BATCHES = 8


@pytest.fixture(scope="module")
def directory():
    with tempfile.TemporaryDirectory() as path:
        yield path


@pytest.mark.parametrize("path", files(), ids=[os.path.basename(p)[:-3] for p in files()])
def test_a_program_the_fuzzer_once_failed_on(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    st.check_grads(module.program, module.ARGS, order=2, wrt=(0, 1, 2, 3), rtol=1e-4)
    assert vmap_difference(module.program, module.ARGS) is None      # st.vmap of it, and of its
                                                                     # gradient: a loop's values


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_programs_match_finite_differences(batch, directory):
    rng = random.Random(SEED)
    seeds = [rng.randrange(2 ** 63) for _ in range(PROGRAMS)]
    failures, checked = [], 0
    for index in range(batch, PROGRAMS, BATCHES):
        program = generate(random.Random(seeds[index]), (SEED, index))
        outcome = check(program.text, program.args, directory, vmap=index % 8 == 0)
        checked += outcome.kind != "invalid"
        if outcome.kind not in ("ok", "invalid"):
            failures.append(f"program {index} (seed {SEED}): {outcome.kind}\n{outcome.message[:2000]}"
                            f"\n{program.text}")
    assert checked > 0
    assert not failures, "\n\n".join(failures)


def _sums_only_the_first_leading_axis(g, x):
    """A wrong rt.unbroadcast: for a bias broadcast over two leading axes it sums over one."""
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    lead = np.ndim(g) - len(shape)
    if lead >= 1 and np.shape(g)[lead:] == shape:
        g = g.sum(axis=0)
        return g if np.shape(g) == shape else np.broadcast_to(g.sum(axis=0) * 0.5, shape)
    return _right_unbroadcast(g, x)


_right_unbroadcast = rt.unbroadcast


def test_the_fuzzer_catches_a_wrong_unbroadcast(monkeypatch, directory):
    """The batch reaches generic code (branches, loops) that broadcasts over two leading axes:
    a mutation of rt.unbroadcast there must not survive it."""
    monkeypatch.setattr(rt, "unbroadcast", _sums_only_the_first_leading_axis)
    rng = random.Random(SEED)
    seeds = [rng.randrange(2 ** 63) for _ in range(PROGRAMS)]
    for index in range(PROGRAMS):
        program = generate(random.Random(seeds[index]), (SEED, index))
        if check(program.text, program.args, directory).kind == "wrong":
            return
    pytest.fail("no program of the batch noticed a wrong rt.unbroadcast")


def steep(x, y, s, W):             # smooth, but its derivative is 1e6 times its scale
    return np.sum(np.sin(1e3 * x) * 1e3) + np.sum(y * s) + np.sum(W)


def chaotic(x, y, s, W):           # the logistic map at r = 3.9: no step is fair
    v = x * 0.0 + 0.3 + 0.01 * np.tanh(x)
    for _ in range(80):
        v = 3.9 * v * (1.0 - v)
    return np.sum(v) + np.sum(y * s) + np.sum(W)


def wrongly_ruled(x, y, s, W):
    return np.sum(_doubled(x)) + np.sum(y * s) + np.sum(W)


def _doubled(x):
    return x * 2.0


@pytest.fixture
def wrong_rule():
    """Rules of ``_doubled`` that give 3 in reverse and forward mode alike, while it computes
    2 x (finite differences settle at 2); undone after the test."""
    from srctrans.rules import REGISTRY
    saved = REGISTRY.user_rules()
    st.register_vjp(_doubled, lambda g, ans, x: (g * 3.0,))
    st.register_jvp(_doubled, lambda tangents, ans, x: tangents[0] * 3.0)
    yield
    REGISTRY.restore_user_rules(saved)
    st.clear_cache()


ARGS = (np.array([0.31, -0.2]), np.array([0.5]), 0.7, np.ones((2, 2)))


def test_careful_differences_pass_a_steep_program_and_set_aside_a_chaotic_one():
    from fuzzing.check import _reference_verdict
    assert _reference_verdict(steep, ARGS) == "agrees"
    verdict = _reference_verdict(chaotic, ARGS)
    assert isinstance(verdict, tuple) and verdict[0] == "unsettled"


def test_careful_differences_keep_a_wrong_derivative_wrong(wrong_rule):
    from fuzzing.check import _reference_verdict
    assert _reference_verdict(wrongly_ruled, ARGS) is None


SCALE_FREE = '''import numpy as np


def program(x, y, s, W):
    v = np.linspace(0.5, 1.5, 20) * np.sum(W + W)   # a scale the output does not depend on
    u = v / np.sqrt(np.sum(v * v))
    return np.sum(np.tanh(u) * u) + x * s + y
'''


def test_a_derivative_zero_by_cancellation_may_round_otherwise_on_each_path(directory):
    """W's derivative is 0 (a normalised vector's scale), computed as rounding noise; the fused
    gradient's norm, a dot product, rounds otherwise than the generic code's sum: the paths
    agree to rounding (what the fuzzer asks of other code computing one derivative), and each
    path read back from the persistent cache gives its own numbers exactly."""
    args = (-0.08869728270934273, 0.4880230461464344, 1.089450366770782,   # (a fuzzer's)
            np.array([[0.5445655136088274, 0.07255336651354119],
                      [-0.2755675209307062, -0.09082436128547018]]))
    assert check(SCALE_FREE, args, directory).kind == "ok"

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

PROGRAMS = int(os.environ.get("SRCTRANS_FUZZ_PROGRAMS", "32"))   # more: tests/fuzz.py
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

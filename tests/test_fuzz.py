"""The differential fuzzer in CI: programs it once failed on, and a fixed-seed batch of new ones.

``python tests/fuzz.py --programs N --seed S`` runs any number with any seed
(see tests/fuzz.py); ``SRCTRANS_FUZZ_PROGRAMS`` and ``SRCTRANS_FUZZ_SEED``
change the batch run here.
"""

import importlib.util
import os
import random
import tempfile

import pytest

import srctrans as st
from fuzzing.check import check
from fuzzing.generator import generate
from fuzzing.regressions import files

PROGRAMS = int(os.environ.get("SRCTRANS_FUZZ_PROGRAMS", "120"))
SEED = int(os.environ.get("SRCTRANS_FUZZ_SEED", "20261123"))
BATCHES = 6


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


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_programs_match_finite_differences(batch, directory):
    rng = random.Random(SEED)
    seeds = [rng.randrange(2 ** 63) for _ in range(PROGRAMS)]
    failures, checked = [], 0
    for index in range(batch, PROGRAMS, BATCHES):
        program = generate(random.Random(seeds[index]), (SEED, index))
        outcome = check(program.text, program.args, directory)
        checked += outcome.kind != "invalid"
        if outcome.kind not in ("ok", "invalid"):
            failures.append(f"program {index} (seed {SEED}): {outcome.kind}\n{outcome.message[:2000]}"
                            f"\n{program.text}")
    assert checked > 0
    assert not failures, "\n\n".join(failures)
